"""
Bags the package writes, read back by readers that are neither rosbags nor the package.

Oracles: foxglove's ``mcap`` reader with ``mcap-ros2-support``'s decoder (MCAP) and plain
``sqlite3`` against rosbag2's schema with the same decoder (SQLite3), support/independent_readers.
What they decode must be the data written, bit for bit, with the stamps and times to the ns.
"""

import numpy as np
import pytest

from bag_messages import puma_run
from independent_readers import independent_messages, joint_state_rows
from robot_dynamics_ros.bags import load_joint_states, write_joint_states
from robot_dynamics_ros.bags.process import ProcessOptions, process_bag
from robot_dynamics_ros.bags.recover import recover
from robot_dynamics_ros.core import gravity_torques

T0 = 1_712_345_678_901_234_567          # a wall-clock start, exact to the ns


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_written_joint_states_decode_the_same_in_independent_readers(tmp_path, puma, storage):
    run = puma_run(puma, 0.2)
    write_joint_states(tmp_path / "run", puma.joint_names, run.t, run.q, run.qd, run.tau,
                       storage=storage, start_ns=T0)
    rows = joint_state_rows(independent_messages(tmp_path / "run"), "/joint_states")
    stamps = T0 + np.rint(run.t * 1e9).astype(np.int64)
    assert rows["stamp"] == rows["time"] == stamps.tolist()
    assert all(names == list(puma.joint_names) for names in rows["name"])
    for field, values in (("position", run.q), ("velocity", run.qd), ("effort", run.tau)):
        np.testing.assert_array_equal(rows[field], values)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_processed_and_recovered_bags_decode_the_same_in_independent_readers(
        tmp_path, puma, storage):
    run = puma_run(puma, 0.2)
    write_joint_states(tmp_path / "run", puma.joint_names, run.t, run.q, run.qd, run.tau,
                       start_ns=T0)
    process_bag(tmp_path / "run", tmp_path / "out", puma,
                ProcessOptions(storage=storage, reference_topic="/none"))
    messages = independent_messages(tmp_path / "out")
    assert {topic for topic, _, _ in messages} == {"/robot_dynamics/gravity_effort",
                                                   "/robot_dynamics/effort_residual"}
    gravity = joint_state_rows(messages, "/robot_dynamics/gravity_effort")
    ours = load_joint_states(tmp_path / "out", "/robot_dynamics/gravity_effort",
                             require_position=False)
    assert gravity["stamp"] == ours.stamp.tolist() == gravity["time"]
    np.testing.assert_array_equal(gravity["effort"], ours.effort)
    np.testing.assert_allclose(gravity["effort"], gravity_torques(puma, run.q), atol=1e-12)
    assert gravity["position"] == gravity["velocity"] == [[]] * len(run.t)
    # recovered (the metadata removed as a crash leaves none): the same messages again
    (tmp_path / "out" / "metadata.yaml").unlink()
    recover(tmp_path / "out", tmp_path / "recovered")
    again = independent_messages(tmp_path / "recovered")
    assert [(t, m.effort) for _, t, m in again] == [(t, m.effort) for _, t, m in messages]
