"""
The ROS 2 distributions the package runs on: the one table of where the code differs by them.

Two are supported, each with its own venv (``make venv ROS_DISTRO=...``,
``requirements/ros-<distro>.txt``)
or as an installed ROS (``/opt/ros/<distro>``, doc/distributions.md):

* **Kilted** (rclpy 9.x, the default: the newest supported),
* **Jazzy** (rclpy 7.x, the long-term release, supported to May 2029).

Which one is running is read from rclpy's own ``package.xml`` beside the rclpy that Python imports
(:func:`current`), not from the ``ROS_DISTRO`` variable, which a shell may carry from another
installation.  Each :class:`Distribution` says which behaviour that distribution gets where rclpy,
rosidl or rosbag2 differ, and the code asks here instead of testing versions itself:

* **lifecycle** ``~/change_state`` for a transition not available in the current state (activate
  while unconfigured): Kilted's rclpy answers ``success: false``; Jazzy's (7.1) raises RCLError
  from the service callback, which stops the node, so ``nodes/lifecycle.py`` guards it to
  answer as Kilted does;
* **bags**: rosbags' type store of the distribution's messages (``ros2_jazzy``, ``ros2_kilted``);
  rosbag2's metadata version is 9 in both (rosbag2_storage's ``bag_metadata.hpp`` on its
  jazzy branch and in its later releases; ``bags/storage.py``'s BAG_VERSION).

The type hashes (RIHS01) of every message type the package uses are the same in the two stores,
and both write metadata version 9, so a bag recorded under one is read under the other
(test/bags/test_distributions.py).  doc/distributions.md has the table a user sees.
"""
from __future__ import annotations

import importlib.util
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class Distribution:
    """One supported ROS 2 distribution and the behaviours that differ in it."""

    name: str
    rclpy_major: int               # rclpy's major version in it (how it is recognised)
    rosbags_store: str             # rosbags.typesys.Stores value of its message types
    bag_version: int               # rosbag2's metadata.yaml version of its ``ros2 bag record``
    # rclpy's LifecycleNode answers ``success: false`` to a transition that is not available in
    # the current state (Kilted); Jazzy's raises RCLError from the service callback instead.
    lifecycle_refuses_unavailable_transition: bool


DISTRIBUTIONS = {
    "jazzy": Distribution("jazzy", 7, "ros2_jazzy", 9, False),
    "kilted": Distribution("kilted", 9, "ros2_kilted", 9, True),
}
DEFAULT = "kilted"                 # tools/setup_venv.sh's and the Makefile's default


def rclpy_version(origin: str | None = None) -> str:
    """
    Return the version of rclpy from its package.xml (``<prefix>/share/rclpy/package.xml``).

    ``origin``: the file of the rclpy package (default: the rclpy Python would import), under
    ``<prefix>/lib/pythonX.Y/site-packages/rclpy/`` in a venv and in ``/opt/ros/<distro>``.
    """
    if origin is None:
        spec = importlib.util.find_spec("rclpy")
        if spec is None or spec.origin is None:
            raise RuntimeError("ROS 2: rclpy is not installed (make venv, or source "
                               "/opt/ros/<distro>/setup.bash)")
        origin = spec.origin
    prefix = Path(origin).resolve().parents[4]
    manifest = prefix / "share" / "rclpy" / "package.xml"
    try:
        return ElementTree.parse(manifest).getroot().findtext("version").strip()
    except (OSError, ElementTree.ParseError, AttributeError) as exc:
        raise RuntimeError(f"ROS 2: cannot read rclpy's version from {manifest}: "
                           f"{exc}") from None


def distribution_of(rclpy_version_text: str) -> Distribution:
    """Return the distribution whose rclpy has this version; refuse an unsupported one."""
    major = int(rclpy_version_text.split(".")[0])
    for distribution in DISTRIBUTIONS.values():
        if distribution.rclpy_major == major:
            return distribution
    known = ", ".join(f"{d.name} (rclpy {d.rclpy_major}.x)" for d in DISTRIBUTIONS.values())
    raise RuntimeError(f"ROS 2: rclpy {rclpy_version_text} is of no supported "
                       f"distribution; supported: {known}")


@lru_cache(maxsize=1)
def current() -> Distribution:
    """Return the distribution of the rclpy this process imports (see the module docstring)."""
    return distribution_of(rclpy_version())


def bag_distribution() -> Distribution:
    """
    Return the distribution whose message types the bag tools use.

    The installed rclpy's; where no rclpy can be imported (reading and processing bags needs no
    ROS), the default's: the two stores give the same type hashes for every message type the
    package uses (test/messages/test_distro.py), so a bag reads the same either way.
    """
    try:
        found = importlib.util.find_spec("rclpy")
    except ImportError:
        found = None
    return current() if found is not None else DISTRIBUTIONS[DEFAULT]
