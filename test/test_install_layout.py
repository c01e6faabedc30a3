"""
The installed package, looked up the way ``ros2 launch`` and ``ros2 run`` look it up.

ros2launch finds ``<launch file>`` by walking ``get_package_share_directory(pkg)`` with
``os.walk`` (which does not enter symlinked directories); ros2run lists the executable files
under ``get_package_prefix(pkg)/lib/<pkg>``.  Both go through the ament index, so this checks the
index entry, the copied share files and the executables, whether the package was installed by
``make venv`` (tools/setup_venv.sh) or by colcon (tools/colcon_check.sh runs this test too).
"""
import os
from pathlib import Path

import pytest

from robot_dynamics_ros.nodes.bringup import NODE_TYPES
from locations import REPO

ament = pytest.importorskip("ament_index_python.packages")

PACKAGE = "robot_dynamics_ros"


@pytest.fixture(autouse=True)
def ament_prefix_path(monkeypatch):
    """Set what the README's set-up sets (``source .venv/setup.bash``), unless already set."""
    import sys
    if not os.environ.get("AMENT_PREFIX_PATH"):
        monkeypatch.setenv("AMENT_PREFIX_PATH", sys.prefix)


def walk_files(top):
    """Files under ``top`` as ros2launch sees them (os.walk: symlinked directories not entered)."""
    return {Path(root, name).relative_to(top) for root, _, names in os.walk(top) for name in names}


def test_share_directory_holds_launch_and_config_files_as_ros2launch_finds_them():
    share = Path(ament.get_package_share_directory(PACKAGE))
    seen = walk_files(share)
    for folder in ("launch", "config"):
        for source in (REPO / folder).rglob("*"):
            if source.is_file() and "__pycache__" not in source.parts:
                relative = source.relative_to(REPO)
                assert relative in seen, f"{relative} not found under {share} by os.walk"
                assert (share / relative).read_bytes() == source.read_bytes(), \
                    f"{share / relative} differs from {source}: reinstall (make venv)"
    launch_files = [p for p in seen if p.name == "robot_dynamics.launch.py"]
    assert launch_files == [Path("launch/robot_dynamics.launch.py")]      # exactly one, as needed
    assert (share / "package.xml").read_bytes() == (REPO / "package.xml").read_bytes()


def test_executables_are_where_ros2run_looks():
    lib = Path(ament.get_package_prefix(PACKAGE)) / "lib" / PACKAGE
    executables = {p.name for p in map(Path, (os.path.join(lib, f) for f in walk_files(lib)))
                   if os.access(p, os.X_OK)}
    for node_type in NODE_TYPES.values():
        assert node_type.executable in executables, f"{node_type.executable} not in {lib}"


def test_ament_index_lists_the_package():
    assert PACKAGE in ament.get_packages_with_prefixes()
