"""
Joint states read from bags as arrays (robot_dynamics_ros.bags.joint_states) and written.

Oracles: a simulated run written and read back bit for bit; rosbags' serialisation of each
message; the torque nodes' own checks (``messages.conversions.joint_state_values``) on every
message.
"""

import numpy as np
import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState as RclpyJointState

from bag_messages import puma_run, raw_bag, serialized, ts_joint_state
from robot_dynamics_ros.bags import (bag_info, format_info, load_joint_states, read_joint_states,
                                     write_joint_states)
from robot_dynamics_ros.bags.joint_states import JointStateChecker
from robot_dynamics_ros.core import BagError
from robot_dynamics_ros.messages.cdr import JOINT_STATE
from robot_dynamics_ros.messages.conversions import JointOrder, MessageRejected, joint_state_values

NS = 1_000_000_000


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_round_trip_of_a_simulated_run(tmp_path, puma, storage):
    run = puma_run(puma, 0.3)
    bag = tmp_path / "run"
    write_joint_states(bag, puma.joint_names, run.t, run.q, run.qd, run.tau, storage=storage,
                       time_offset=100.0)
    info = bag_info(bag, check=True)
    assert info.storage == storage and info.message_count == run.t.size
    assert info.duration_ns == 300_000_000
    text = format_info(info)
    assert "Topic: /joint_states | Type: sensor_msgs/msg/JointState | Count: 301" in text
    # read in another joint order, in small chunks, the topic named without its slash
    order = puma.joint_names[::-1]
    chunks = list(read_joint_states(bag, "joint_states", joint_names=order, chunk_size=64))
    assert len(chunks) == 5
    states = load_joint_states(bag, joint_names=order)
    for chunk_field, field in (("position", "q"), ("velocity", "qd"), ("effort", "tau")):
        np.testing.assert_array_equal(getattr(states, chunk_field)[:, ::-1], getattr(run, field))
        np.testing.assert_array_equal(np.concatenate([getattr(c, chunk_field) for c in chunks]),
                                      getattr(states, chunk_field))
    np.testing.assert_array_equal(states.stamp, np.rint((run.t + 100.0) * 1e9).astype(np.int64))
    np.testing.assert_array_equal(states.time, states.stamp)
    assert states.joint_names == order and states.rejected == {}


def test_messages_are_matched_by_name_and_invalid_ones_named_or_counted(tmp_path):
    good = ["a", "b"]
    msgs = [ts_joint_state(1 * NS, ["b", "gripper", "a"], [2.0, 9.0, 1.0], [], [5.0, 0.0, 4.0]),
            ts_joint_state(2 * NS, ["a"], [1.0]),                                   # missing b
            ts_joint_state(3 * NS, ["a", "b", "a"], [1.0, 2.0, 3.0]),               # duplicate
            ts_joint_state(4 * NS, good, [1.0]),                                    # length
            ts_joint_state(5 * NS, good, [1.0, np.nan]),                            # NaN
            ts_joint_state(6 * NS, good, [1.0, 1e308]),                             # absurd
            ts_joint_state(7 * NS, good, [1.0, 2.0], [0.5, 0.25])]
    bag = tmp_path / "mixed"
    raw_bag(bag, {"/joint_states": (JOINT_STATE, [(k * NS, serialized(m))
                                                  for k, m in enumerate(msgs, 1)])})
    with pytest.raises(BagError, match=r"bag .*mixed: /joint_states message 1 \(t = "
                                       r"2.000000000 s\): .*missing joint\(s\) \['b'\]"):
        load_joint_states(bag, joint_names=good)
    states = load_joint_states(bag, joint_names=good, skip_invalid=True)
    assert states.rejected == {"joint names": 2, "length": 1, "non-finite": 1,
                               "out of range": 1}
    np.testing.assert_array_equal(states.position, [[1.0, 2.0], [1.0, 2.0]])
    np.testing.assert_array_equal(states.effort[0], [4.0, 5.0])
    assert np.isnan(states.velocity[0]).all() and np.isnan(states.effort[1]).all()
    np.testing.assert_array_equal(states.velocity[1], [0.5, 0.25])


def random_message(rng, names):
    """Make a JointState for ``names``, often invalid in one of the ways a node checks."""
    names = list(names)
    if rng.random() < 0.1:
        names = names[:-1]
    if rng.random() < 0.1:
        names = names + [names[0]]
    if rng.random() < 0.2:
        names = names + ["gripper"]
        rng.shuffle(names)
    n = len(names)

    def values(count):
        row = list(rng.uniform(-3.0, 3.0, count))
        if row and rng.random() < 0.15:
            row[rng.integers(count)] = rng.choice([np.nan, np.inf, -2e6, 1e308, 9e5])
        return row
    msg = RclpyJointState(name=names, position=values(n if rng.random() > 0.05 else n + 1),
                          velocity=values(rng.choice([n, n, 0, n - 1])), effort=values(n))
    msg.header.stamp.sec = int(rng.integers(100))
    return msg


@pytest.mark.parametrize("need_velocity", [False, True])
def test_the_bag_checks_are_exactly_the_nodes_checks(need_velocity):
    names = ["j1", "j2", "j3"]
    rng = np.random.default_rng(11)
    messages = [random_message(rng, names) for _ in range(600)]
    raws = [bytes(serialize_message(m)) for m in messages]
    raws.append(b"\x00\x01\x00\x00 not a joint state")
    raws.append(raws[0][:20])
    checked = JointStateChecker(names).check(raws)
    kinds = {}
    for problem in checked.problems:
        for k in problem.rows:
            kinds[int(k)] = problem.kind
    order = JointOrder(names)
    for k, msg in enumerate(messages):
        try:
            q, qd = joint_state_values(msg, order, need_velocity)
        except MessageRejected as exc:
            if exc.kind == "no velocity":       # refused by the outputs that need velocity
                assert checked.ok[k] and np.isnan(checked.velocity[k]).all()
            else:
                assert not checked.ok[k] and kinds[k] == exc.kind, (k, exc)
            continue
        assert checked.ok[k] and k not in kinds
        np.testing.assert_array_equal(checked.position[k], q)
        if qd is not None:
            np.testing.assert_array_equal(checked.velocity[k], qd)
    assert kinds[600] == kinds[601] == "malformed" and not checked.ok[600:].any()
    assert {"joint names", "length", "non-finite", "out of range"} <= set(kinds.values())
