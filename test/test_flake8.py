"""
ament_flake8 on the whole package, as ament_python packages run it (``colcon test``).

ament's default configuration: line length 99, pycodestyle and pyflakes (the ``ros-ament-flake8``
wheel brings no flake8 plugins, so the quote and import-order checks that a ROS installation's
plugins add are not run).
"""

from ament_flake8.main import main_with_errors
import pytest

from locations import REPO

ROOT = REPO
CHECKED = ["robot_dynamics_ros", "test", "bench", "launch", "doc", "setup.py"]


@pytest.mark.linter
def test_flake8():
    paths = [str(ROOT / p) for p in CHECKED if (ROOT / p).exists()]
    rc, errors = main_with_errors(argv=paths)
    assert rc == 0, f"Found {len(errors)} code style errors / warnings:\n" + "\n".join(errors)
