"""
A wheel holds the compiled kernels: ``pip install`` then compiles nothing (issue 27).

pip runs no code where it installs a wheel, so the wheel's build does the compiling: setup.py's
``build_py`` builds the dynamics kernels and the scaling's passes into the package as extensions
for any CPU of the architecture (``core.precompile.ship``, ``core/jit.py`` ``ship``).  Here the
checkout's wheel is built as pip builds it (without build isolation: the venv's numba; pip's
isolated build gets the same from pyproject.toml's build requirements), installed with pip into a
fresh prefix, and used as a new user uses it, with an empty cache and no ``robot-dynamics
compile``:

* the wheel is tagged for this Python and platform and holds both extensions and their index;
* a fresh process computes a vendor URDF's rnea, forward dynamics and mass matrix and a
  time-optimal scaling without importing numba (so nothing compiles) and writes nothing to the
  cache; its numbers are this process's (another compilation of the same texts: test_route.py's
  tolerance);
* a kernel file edited after install is another text: its shipped extension is not loaded.

The build takes a minute or two (numba.pycc); one wheel serves every test here.
"""

import json
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros.core import (JointTrajectory, RobotModel, forward_dynamics, jit,
                                     mass_matrix, rnea, time_optimal_scaling)
from robot_dynamics_ros.core.algorithms import compiled
from wheel_build import build_and_install

pytest.importorskip("numba")
ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "test" / "data" / "urdf" / "dsr_description2" / "urdf" / "m1013.urdf"
TOL = 1e-12             # test_route.py's: the same recursions in another compilation


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """Build the checkout's wheel and pip-install it into a new prefix; return (wheel, site)."""
    path, what = jit.build_ahead(compiled.spec())       # (the set-up's: present, or why not)
    if path is None:
        pytest.skip(f"numba.pycc cannot build here, so neither can a wheel: {what}")
    return build_and_install(tmp_path_factory.mktemp("wheel"))


def test_the_wheel_is_tagged_for_its_platform_and_holds_both_extensions(installed):
    wheel, _ = installed
    version = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert f"-{version}-{version}-linux_" in wheel.name, wheel.name      # not "py3-none-any"
    names = zipfile.ZipFile(wheel).namelist()
    shipped = [n for n in names if n.startswith("robot_dynamics_ros/core/shipped/")]
    index = json.loads(zipfile.ZipFile(wheel).read("robot_dynamics_ros/core/shipped/index.json"))
    assert set(index) == {"kernels", "topp_passes"}
    for prefix, entry in index.items():
        assert any(n.endswith(".so") and entry["name"] in n for n in shipped), (prefix, shipped)
        assert "core/jit.py" in entry["files"]


FRESH = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import robot_dynamics_ros
    from robot_dynamics_ros.core import (JointTrajectory, RobotModel, forward_dynamics,
                                         mass_matrix, rnea, time_optimal_scaling)
    from robot_dynamics_ros.core.algorithms import compiled
    model = RobotModel.from_description({urdf!r})
    q = np.linspace(-0.4, 0.5, model.n); qd = np.linspace(0.3, -0.2, model.n)
    x = np.linspace(1.0, -1.0, model.n)
    out = {{"rnea": rnea(model, q, qd, x).tolist(),
            "forward": forward_dynamics(model, q, qd, x).tolist(),
            "mass": mass_matrix(model, q).tolist(),
            "batch": rnea(model, np.tile(q, (3, 1)), np.tile(qd, (3, 1)),
                          np.tile(x, (3, 1))).tolist()}}
    zeros = np.zeros((3, model.n))
    traj = JointTrajectory(model.joint_names, [0.0, 1.0, 2.0], [0 * q, q, 0 * q], zeros, zeros)
    out["duration"] = float(time_optimal_scaling(model, traj).duration)
    out["numba"] = "numba" in sys.modules
    out["status"] = compiled.status()
    out["package"] = robot_dynamics_ros.__file__
    print(json.dumps(out))
    """)


def fresh(site: Path, cache: Path, script: str) -> dict:
    """Run ``script`` in a fresh process of the installed package, its caches under ``cache``."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site), "HOME": str(cache / "home"),
           "ROBOT_DYNAMICS_ROS_CACHE_DIR": str(cache / "robot_dynamics_ros"),
           "XDG_CACHE_HOME": str(cache / "xdg")}
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=600, env=env, cwd=cache.parent)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_fresh_install_computes_without_compiling_or_writing_a_cache(installed, tmp_path):
    _, site = installed
    cache = tmp_path / "cache"
    got = fresh(site, cache, FRESH.format(urdf=str(URDF)))
    assert got["package"].startswith(str(site)), got["package"]
    assert got["numba"] is False, got["status"]
    assert str(site) in got["status"] and "shipped" in got["status"], got["status"]
    assert not cache.exists() or not any(cache.rglob("*")), sorted(cache.rglob("*"))
    model = RobotModel.from_description(str(URDF))
    q, qd = np.linspace(-0.4, 0.5, model.n), np.linspace(0.3, -0.2, model.n)
    x = np.linspace(1.0, -1.0, model.n)
    want = {"rnea": rnea(model, q, qd, x), "forward": forward_dynamics(model, q, qd, x),
            "mass": mass_matrix(model, q), "batch": np.tile(rnea(model, q, qd, x), (3, 1))}
    for name, expected in want.items():
        np.testing.assert_allclose(got[name], expected, rtol=0,
                                   atol=TOL * max(1.0, np.abs(expected).max()), err_msg=name)
    zeros = np.zeros((3, model.n))
    traj = JointTrajectory(model.joint_names, [0.0, 1.0, 2.0], [0 * q, q, 0 * q], zeros, zeros)
    assert got["duration"] == pytest.approx(time_optimal_scaling(model, traj).duration, rel=1e-9)


PROBE = textwrap.dedent("""
    import json, sys
    from robot_dynamics_ros.core import jit
    from robot_dynamics_ros.core.algorithms import compiled
    from robot_dynamics_ros.core.trajectories.topp import passes
    print(json.dumps({"kernels": jit.load_ahead(compiled.spec()) is not None,
                      "passes": jit.load_ahead(passes.spec()) is not None,
                      "numba": "numba" in sys.modules}))
    """)


def test_a_kernel_file_edited_after_install_is_not_its_shipped_extension(installed, tmp_path):
    _, site = installed
    edited = tmp_path / "site"
    shutil.copytree(site, edited)
    assert fresh(edited, tmp_path / "before", PROBE) == {"kernels": True, "passes": True,
                                                         "numba": False}
    crba = edited / "robot_dynamics_ros" / "core" / "algorithms" / "crba.py"
    crba.write_text(crba.read_text() + "\n# edited after install\n")
    # the kernels' text changed (crba.py is one of its files); the passes' did not
    assert fresh(edited, tmp_path / "after", PROBE) == {"kernels": False, "passes": True,
                                                        "numba": False}
