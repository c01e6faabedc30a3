"""ament_pep257 on the whole package, as ament_python packages run it (``colcon test``)."""

from ament_pep257.main import main
import pytest

from locations import REPO

ROOT = REPO
CHECKED = ["robot_dynamics_ros", "test", "bench", "launch", "doc", "setup.py"]


@pytest.mark.linter
def test_pep257():
    paths = [str(ROOT / p) for p in CHECKED if (ROOT / p).exists()]
    assert main(argv=paths) == 0, "Found docstring style errors (listed above)"
