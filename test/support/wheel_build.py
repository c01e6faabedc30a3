"""
This checkout's wheel, built as pip builds it and pip-installed into a new prefix.

For test/test_wheel.py and bench/bench_first_contact.py: the package's own files (what setup.py
reads) are copied, ``pip wheel`` builds them without build isolation (the running venv's numba;
pip's isolated build gets the same from pyproject.toml), and ``pip install --prefix`` installs the
wheel where ``<prefix>/lib/python3.X/site-packages`` and ``<prefix>/share`` are laid out as in a
venv (the package finds its shipped robots there).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# what a wheel is built from (setup.py's files); the rest of the checkout is left out
SOURCES = ("robot_dynamics_ros", "config", "launch", "resource", "package.xml", "setup.py",
           "setup.cfg", "pyproject.toml", "LICENSE", "README.md")


def build_and_install(work: Path) -> tuple[Path, Path]:
    """Build the wheel and install it under ``work``; return (the wheel, its site-packages)."""
    source = work / "source"
    source.mkdir(parents=True)
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "shipped"))
        else:
            shutil.copy2(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run(pip + ["wheel", "--no-deps", "--no-build-isolation", "-w", str(work / "dist"),
                str(source)], work)
    wheel, = (work / "dist").glob("*.whl")
    # (--ignore-installed: else pip uninstalls the running venv's own install of the package)
    _run(pip + ["install", "--no-deps", "--ignore-installed", "--prefix", str(work / "prefix"),
                str(wheel)], work)
    ours = _run([sys.executable, "-c", "import robot_dynamics_ros as package\n"
                 "print(package.__file__)"], work)
    if not ours.startswith(str(ROOT)):
        raise RuntimeError(f"the venv's own install of the package was disturbed: {ours}")
    site, = (work / "prefix").glob("lib/python*/site-packages")
    return wheel, site


def _run(argv: list, cwd: Path) -> str:
    """Run ``argv`` in ``cwd``; return its output, or raise with its end."""
    run = subprocess.run(argv, capture_output=True, text=True, timeout=3600, cwd=cwd)
    if run.returncode != 0:
        raise RuntimeError(f"{argv[:5]}: {(run.stdout + run.stderr)[-3000:]}")
    return run.stdout
