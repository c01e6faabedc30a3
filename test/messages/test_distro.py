"""
messages/distro.py, nodes/lifecycle.py: which distribution runs, the behaviours each one gets.

Runs on each supported distribution (``make test ROS_DISTRO=jazzy|kilted``); oracles: the
requirement files' rclpy pins (which distribution each venv is), rclpy's package.xml read as
text, rosbags' own type stores of the two distributions, and rclpy's lifecycle state machine.
"""
import re

import pytest
from rosbags.typesys import Stores, get_typestore

from locations import REPO
from robot_dynamics_ros.messages import distro as ros_distro
from robot_dynamics_ros.messages.distro import DISTRIBUTIONS, current, distribution_of

# the message packages whose types the package publishes, subscribes or records
PACKAGES = ("builtin_interfaces", "std_msgs", "sensor_msgs", "trajectory_msgs",
            "diagnostic_msgs", "geometry_msgs", "rosgraph_msgs", "rcl_interfaces",
            "lifecycle_msgs")


def pinned_rclpy(distro):
    text = (REPO / "requirements" / f"ros-{distro}.txt").read_text(encoding="utf-8")
    return re.search(r"^ros-rclpy==(\S+)$", text, re.M)[1]


@pytest.mark.parametrize("distro", sorted(DISTRIBUTIONS))
def test_each_distribution_is_recognised_by_its_pinned_rclpy(distro):
    assert distribution_of(pinned_rclpy(distro)).name == distro
    assert (REPO / "requirements" / f"ros-{distro}.txt").is_file()
    assert ros_distro.DEFAULT in DISTRIBUTIONS


def test_the_running_distribution_is_that_of_the_installed_rclpy():
    # rclpy's package.xml read as text, not through ros_distro's parser
    import rclpy
    from pathlib import Path
    manifest = Path(rclpy.__file__).resolve().parents[4] / "share" / "rclpy" / "package.xml"
    version = re.search(r"<version>([^<]+)</version>", manifest.read_text())[1]
    assert ros_distro.rclpy_version() == version
    assert current().rclpy_major == int(version.split(".")[0])


def test_an_unsupported_rclpy_is_refused_naming_the_supported_ones():
    with pytest.raises(RuntimeError, match=r"rclpy 4\.2\.0 .*jazzy \(rclpy 7\.x\).*kilted"):
        distribution_of("4.2.0")


def test_rclpy_version_is_read_from_the_prefix_of_the_rclpy_module(tmp_path):
    module = tmp_path / "lib" / "python3.11" / "site-packages" / "rclpy" / "__init__.py"
    module.parent.mkdir(parents=True)
    module.write_text("")
    manifest = tmp_path / "share" / "rclpy" / "package.xml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text('<?xml version="1.0"?>\n<package format="3"><name>rclpy</name>'
                        "<version>7.1.11</version></package>")
    assert ros_distro.rclpy_version(str(module)) == "7.1.11"
    manifest.unlink()
    with pytest.raises(RuntimeError, match="cannot read rclpy's version from .*package.xml"):
        ros_distro.rclpy_version(str(module))


def test_the_message_types_hash_alike_in_every_distribution_store():
    # why a bag recorded under one distribution is read under the other: rosbags' stores of the
    # two distributions give each of the package's message types the same RIHS01 hash
    stores = {name: get_typestore(Stores(d.rosbags_store)) for name, d in DISTRIBUTIONS.items()}
    first, *others = stores.values()
    names = sorted(n for n in first.fielddefs if n.split("/")[0] in PACKAGES)
    assert "sensor_msgs/msg/JointState" in names and len(names) > 100
    for store in others:
        assert [store.hash_rihs01(n) for n in names] == [first.hash_rihs01(n) for n in names]
    assert {d.bag_version for d in DISTRIBUTIONS.values()} == {9}


@pytest.mark.ros
def test_lifecycle_refuses_an_unavailable_transition_and_keeps_running():
    # activate from unconfigured: ERROR (what ~/change_state answers as success: false), the
    # state unchanged, and the next valid transitions work, on Jazzy as on Kilted
    import rclpy
    from rclpy.lifecycle import TransitionCallbackReturn

    from robot_dynamics_ros.nodes.lifecycle import lifecycle_node_class
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = lifecycle_node_class()("distro_lifecycle", context=context)
        assert node.trigger_activate() == TransitionCallbackReturn.ERROR
        assert node._state_machine.current_state[1] == "unconfigured"
        assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
        assert node.trigger_activate() == TransitionCallbackReturn.SUCCESS
        assert node._state_machine.current_state[1] == "active"
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


def test_the_bag_tools_use_the_default_distribution_without_rclpy(monkeypatch):
    # bag processing needs no ROS: without an importable rclpy the bag tools read with the
    # default distribution's types (the same hashes as the other's), instead of failing
    import importlib.util
    real = importlib.util.find_spec

    def blocked(name, *args, **kwargs):
        if name == "rclpy":
            raise ModuleNotFoundError("No module named 'rclpy' (blocked by the test)")
        return real(name, *args, **kwargs)
    monkeypatch.setattr(importlib.util, "find_spec", blocked)
    assert ros_distro.bag_distribution() == DISTRIBUTIONS[ros_distro.DEFAULT]
    monkeypatch.setattr(importlib.util, "find_spec", real)
    assert ros_distro.bag_distribution() == current()
