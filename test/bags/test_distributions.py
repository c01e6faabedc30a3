"""
Bags across the supported ROS 2 distributions: recorded under one, read under the other.

The package's recorder records in this venv's distribution and in the other's venv (a
subprocess with that venv's Python, test/support/distro_bag.py), and the package's reader of the
other distribution reads each bag.  Oracles: the messages the recording process published (known
numbers), the independent readers (foxglove's mcap, plain sqlite3), and rosbag2's metadata
conventions of the writing distribution (rosbag2_storage's yaml.hpp on its jazzy and kilted
branches: version 9, QoS profiles as a YAML list, a type hash per topic, ros_distro).

The other distribution's venv is the repository's ``.venv`` or ``.venv-<distro>`` whose rclpy is
of it (messages/distro.py), or one of ROBOT_DYNAMICS_VENVS (os.pathsep-separated); without one the
cross-distribution tests skip with the reason.  CI
builds both venvs before either suite, so there they run.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from independent_readers import independent_messages
from locations import REPO
from robot_dynamics_ros.messages.distro import (DISTRIBUTIONS, current, distribution_of,
                                                rclpy_version)
from ros_fixtures import ros_environment

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

SCRIPT = REPO / "test" / "support" / "distro_bag.py"
COUNT = 20


def venvs() -> dict:
    """Return distribution -> venv prefix of the venvs found (this one included)."""
    found = {current().name: Path(sys.prefix)}
    candidates = sorted(REPO.glob(".venv*")) + [
        Path(p) for p in os.environ.get("ROBOT_DYNAMICS_VENVS", "").split(os.pathsep) if p]
    for prefix in candidates:
        modules = sorted(prefix.glob("lib/python3*/site-packages/rclpy/__init__.py"))
        if modules and (prefix / "bin" / "python").is_file():
            try:
                distro = distribution_of(rclpy_version(str(modules[0]))).name
            except RuntimeError:
                continue                      # not a venv of a supported distribution
            found.setdefault(distro, prefix)
    return found


def other_venv() -> tuple:
    others = {d: p for d, p in venvs().items() if d != current().name and d in DISTRIBUTIONS}
    if not others:
        pytest.skip(f"no venv of a distribution other than {current().name} (make venv "
                    "ROS_DISTRO=...; CI builds both)")
    return sorted(others.items())[0]


def run_in(prefix: Path, *args) -> dict:
    """Run distro_bag.py with the venv ``prefix``'s Python and this repository's package."""
    env = ros_environment()
    # the venv's own libraries: its bootstrapper sets LD_LIBRARY_PATH when this is unset
    for key in ("LD_LIBRARY_PATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE", "VIRTUAL_ENV"):
        env.pop(key, None)
    env["AMENT_PREFIX_PATH"] = str(prefix)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "test" / "support")])
    run = subprocess.run([str(prefix / "bin" / "python"), str(SCRIPT), *map(str, args)],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def check_rosbag2_metadata(bag: Path, distro: str, topic: str):
    # rosbag2's reader of that distribution: version, then each field by the version's rules
    info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["version"] == DISTRIBUTIONS[distro].bag_version == 9
    (entry,) = [t for t in info["topics_with_message_count"]
                if t["topic_metadata"]["name"] == topic]
    meta = entry["topic_metadata"]
    assert meta["type"] == "sensor_msgs/msg/JointState" and meta["serialization_format"] == "cdr"
    assert isinstance(meta["offered_qos_profiles"], list)               # version >= 9: a list
    assert meta["type_description_hash"].startswith("RIHS01_")          # version >= 7
    assert isinstance(info["ros_distro"], str)                          # version >= 8
    assert entry["message_count"] == COUNT == info["message_count"]
    for key in ("compression_format", "compression_mode", "files", "custom_data"):
        assert key in info, key


@pytest.mark.parametrize("direction", ["other_reads_this", "this_reads_other"])
def test_a_bag_recorded_under_one_distribution_is_read_under_the_other(direction, tmp_path):
    other, prefix = other_venv()
    this = (current().name, Path(sys.prefix))
    writer, reader = (this, (other, prefix)) if direction == "other_reads_this" \
        else ((other, prefix), this)
    storage = "mcap" if direction == "other_reads_this" else "sqlite3"
    bag, topic = tmp_path / "bag", f"/distro_bag_{os.getpid()}/joint_states"
    recorded = run_in(writer[1], "record", bag, storage, topic, COUNT)
    assert recorded["distro"] == writer[0] and recorded["published"]
    assert recorded["counts"] == {topic: COUNT}
    check_rosbag2_metadata(bag, writer[0], topic)

    read = run_in(reader[1], "read", bag, topic)
    assert read["distro"] == reader[0] and read["storage"] == storage
    assert read["count"] == COUNT
    numbers = np.arange(COUNT, dtype=float)
    np.testing.assert_array_equal(read["position"], np.column_stack([numbers, -numbers]))
    np.testing.assert_array_equal(read["stamp"], np.arange(COUNT) * 1_000_000_000)
    # and foxglove's reader / plain sqlite3 decode the same numbers from the file
    decoded = [m for t, _, m in independent_messages(bag) if t == topic]
    assert [list(m.position) for m in decoded] == [[float(i), -float(i)] for i in range(COUNT)]
