"""
The documentation builds with rosdoc2, as the ROS build farm builds it, without a single warning.

``rosdoc2 build`` wraps doc/conf.py, copies doc/ and runs Sphinx: the Markdown pages (myst-parser),
the API pages of every module of the package (autodoc imports each one: a module that does not
import, a docstring that is not valid reStructuredText, a broken link or image is a warning), all
offline.  Any line of its output with WARNING or ERROR fails the test.  About half a minute.
"""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_rosdoc2_builds_the_documentation_without_warnings(tmp_path):
    bin_dir = Path(sys.executable).parent
    rosdoc2 = bin_dir / "rosdoc2"
    assert rosdoc2.is_file(), "rosdoc2 is not installed (requirements/doc.txt; make venv)"
    env = dict(os.environ)
    # rosdoc2 runs sphinx-apidoc by name; the package and its ROS imports come from this venv.
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    prefix = str(bin_dir.parent)
    if prefix not in env.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        env["AMENT_PREFIX_PATH"] = os.pathsep.join(
            p for p in (prefix, env.get("AMENT_PREFIX_PATH")) if p)
    out = tmp_path / "output"
    run = subprocess.run(
        [str(rosdoc2), "build", "--package-path", str(ROOT), "--output-directory", str(out),
         "--doc-build-directory", str(tmp_path / "build"),
         "--cross-reference-directory", str(tmp_path / "cross_reference")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    log = run.stdout + run.stderr
    problems = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    assert run.returncode == 0, log[-4000:]
    assert problems == [], "\n".join(problems)
    site = out / "robot_dynamics_ros"
    for page in ("index", "references", "architecture", "benchmarks",
                 "api/robot_dynamics_ros.core.algorithms.rnea"):
        assert (site / f"{page}.html").is_file(), page
    # Every image the pages show was copied into the site.
    images = {p.name for p in (ROOT / "doc" / "images").glob("*.png")}
    assert images <= {p.name for p in (site / "_images").glob("*.png")}
