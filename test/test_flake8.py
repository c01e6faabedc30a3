"""
ament_flake8 on the whole package, as ament_python packages run it (``colcon test``).

ament's default configuration: line length 99, pycodestyle and pyflakes (the ``ros-ament-flake8``
wheel brings no flake8 plugins, so the quote and import-order checks that a ROS installation's
plugins add are not run).

It runs in a process of its own: flake8 checks files in a pool of forked workers, and a fork of
this test session (which has threads of its own by now: tqdm's monitor, executors) can copy a lock
that another thread holds, so that a worker waits on it forever (seen in CI: the suite hung here).
"""
import subprocess
import sys

import pytest

from locations import REPO

ROOT = REPO
CHECKED = ["robot_dynamics_ros", "test", "bench", "launch", "doc", "setup.py"]


@pytest.mark.linter
def test_flake8():
    paths = [str(ROOT / p) for p in CHECKED if (ROOT / p).exists()]
    run = subprocess.run([sys.executable, "-m", "ament_flake8.main", *paths],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, "code style errors / warnings:\n" + run.stdout[-8000:] + run.stderr
