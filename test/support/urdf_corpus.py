"""
The corpus of real robot descriptions in test/data/urdf (see its README): what each entry is.

``CORPUS`` names each description with its file (a xacro file expanded with ``arguments``, or a
URDF as shipped), the tip link of the arm's chain (None: the end of the only chain) and the
quirks it is known to carry.  :func:`ament_prefix` lays an ament index over the xacro packages so
that ``$(find <package>)`` resolves as in a ROS workspace; :func:`expanded` is the text
robot_state_publisher would receive (``xacro file name:=value ...``).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from locations import DATA

URDF_DIR = DATA / "urdf"
XACRO_PACKAGES = ("ur_description", "xarm_description", "kortex_description",
                  "interbotix_xsarm_descriptions", "fanuc_crx_description", "franka_description")


class Entry(NamedTuple):
    """One corpus description."""

    name: str
    path: str                       # relative to test/data/urdf
    arguments: dict                 # xacro's name:=value (xacro files only)
    tip: str | None = None          # the arm's tool link (None: the end of the only chain)
    quirks: tuple = ()              # "inertia", "near_parallel", "unknown_limits", "xmlns_xacro"


CORPUS = (
    Entry("ur5e", "ur_description/urdf/ur.urdf.xacro", {"ur_type": "ur5e", "name": "ur5e"},
          "tool0"),
    Entry("lite6", "xarm_description/urdf/xarm_device.urdf.xacro",
          {"robot_type": "lite", "dof": "6", "ros2_control_params": "none"}, None,
          ("near_parallel",)),
    Entry("xarm6", "xarm_description/urdf/xarm_device.urdf.xacro",
          {"dof": "6", "ros2_control_params": "none"}, None, ("inertia",)),
    Entry("gen3", "kortex_description/robots/gen3.xacro", {"dof": "7"}, "end_effector_link"),
    Entry("gen3_6dof", "kortex_description/robots/gen3.xacro", {"dof": "6"},
          "end_effector_link", ("near_parallel",)),
    Entry("wx250s", "interbotix_xsarm_descriptions/urdf/wx250s.urdf.xacro", {},
          "wx250s/ee_gripper_link"),
    Entry("crx10ia", "fanuc_crx_description/robot/crx10ia.urdf.xacro", {}, "ee_link"),
    Entry("fr3", "franka_description/robots/fr3/fr3.urdf.xacro", {}, "fr3_hand_tcp"),
    Entry("m1013", "dsr_description2/urdf/m1013.urdf", {}, None, ("xmlns_xacro",)),
    Entry("erd_ur5", "example-robot-data/ur5_robot.urdf", {}, "tool0", ("xmlns_xacro",)),
    Entry("erd_ur10", "example-robot-data/ur10_robot.urdf", {}, "tool0", ("xmlns_xacro",)),
    Entry("erd_panda", "example-robot-data/panda.urdf", {}, "panda_hand_tcp", ("xmlns_xacro",)),
    Entry("erd_kinova", "example-robot-data/kinova.urdf", {}, None, ("xmlns_xacro",)),
    Entry("erd_baxter", "example-robot-data/baxter.urdf", {}, "right_gripper", ("xmlns_xacro",)),
    Entry("erd_double_pendulum", "example-robot-data/double_pendulum.urdf", {}, None,
          ("unknown_limits",)),
    Entry("erd_xarm7", "example-robot-data/xarm7.urdf", {}, None),
    Entry("erd_so101", "example-robot-data/so101.urdf", {}, "gripper_frame_link"),
)
BY_NAME = {entry.name: entry for entry in CORPUS}


def ament_prefix(root: Path) -> str:
    """Lay an ament prefix at ``root`` holding the corpus's xacro packages; return its path."""
    index = root / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True, exist_ok=True)
    for package in XACRO_PACKAGES:
        (index / package).write_text("")
        link = root / "share" / package
        if not link.exists():
            link.symlink_to(URDF_DIR / package, target_is_directory=True)
    return str(root)


def source_path(entry: Entry, prefix: str) -> Path:
    """Return the path of ``entry`` (inside ``prefix`` for a xacro package, as ROS finds it)."""
    package = entry.path.split("/", 1)[0]
    if package in XACRO_PACKAGES:
        return Path(prefix) / "share" / entry.path
    return URDF_DIR / entry.path


def expanded(entry: Entry, prefix: str) -> str:
    """Return the URDF text of ``entry`` as robot_state_publisher receives it."""
    path = source_path(entry, prefix)
    if not entry.path.endswith(".xacro"):
        return path.read_text()
    from robot_dynamics_ros.core.model.xacro_file import expand_xacro
    old = os.environ.get("AMENT_PREFIX_PATH")
    os.environ["AMENT_PREFIX_PATH"] = prefix
    try:
        return expand_xacro(path, entry.arguments)
    finally:
        if old is None:
            del os.environ["AMENT_PREFIX_PATH"]
        else:
            os.environ["AMENT_PREFIX_PATH"] = old
