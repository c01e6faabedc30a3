"""The bags' JointState CDR codec against rosbags' and rclpy's serializers."""

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState as RclpyJointState

from bag_messages import serialized, ts_joint_state
from robot_dynamics_ros.bags.joint_state_cdr import (JOINT_STATE, JointStateDecoder,
                                                     JointStateEncoder, layout_of)
from robot_dynamics_ros.bags.types import typestore

NS = 1_000_000_000


# --------------------------------------------------------------------------------- codec
def test_decoder_agrees_with_rosbags_and_rclpy_on_varied_messages():
    messages = [
        ts_joint_state(1 * NS + 5, ["a", "bb", "ccc"], [1, 2, 3], [4, 5, 6], [7, 8, 9], "base"),
        ts_joint_state(2 * NS, ["a", "bb", "ccc"], [1.5, 2, 3], [], [7, 8, 9], "base"),
        ts_joint_state(3 * NS, ["a", "bb", "ccc"], [1, 2, 3], [4, 5, 6], [], ""),
        ts_joint_state(4 * NS, ["j\u00e9"], [0.25], [], [], "x" * 7),
        ts_joint_state(5 * NS + 1, ["a", "bb", "ccc"], [1, 2, 3], [4, 5, 6], [7, 8, 9], "base"),
    ]
    raws = [serialized(m) for m in messages]
    # rclpy's serialisation (what DDS carries) and a big-endian message (decoded the slow way)
    rclpy_msg = RclpyJointState(name=["a", "bb", "ccc"], position=[9.0, 8.0, 7.0],
                                velocity=[1.0, 1.0, 1.0], effort=[0.5, 0.5, 0.5])
    rclpy_msg.header.stamp.sec, rclpy_msg.header.frame_id = 6, "base"
    raws.append(bytes(serialize_message(rclpy_msg))[:layout_of(raws[0]).size])
    raws.append(bytes(typestore().serialize_cdr(messages[0], JOINT_STATE, little_endian=False)))
    groups = JointStateDecoder().decode(raws)
    assert sorted(k for g in groups for k in g.rows) == list(range(len(raws)))
    for group in groups:
        for j, k in enumerate(group.rows):
            expected = typestore().deserialize_cdr(raws[k], JOINT_STATE)
            assert group.names == tuple(expected.name)
            assert group.frame_id == expected.header.frame_id
            assert group.stamp[j] == expected.header.stamp.sec * NS + expected.header.stamp.nanosec
            for field in ("position", "velocity", "effort"):
                np.testing.assert_array_equal(getattr(group, field)[j], getattr(expected, field))


def test_encoder_writes_what_rosbags_and_rclpy_read():
    names = ["shoulder", "elbow", "wrist_1"]
    encoder = JointStateEncoder(names, ("position", "velocity", "effort"))
    stamps = np.array([0, 1_700_000_000 * NS + 999_999_999], dtype=np.int64)
    values = {f: np.random.default_rng(1).normal(size=(2, 3)) for f in encoder.fields}
    rows = encoder.encode(stamps, **values)
    for k in range(2):
        expected = ts_joint_state(stamps[k], names, values["position"][k],
                                  values["velocity"][k], values["effort"][k])
        assert rows[k].tobytes() == serialized(expected)
        msg = deserialize_message(rows[k].tobytes(), RclpyJointState)
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == divmod(int(stamps[k]), NS)
        np.testing.assert_array_equal(msg.effort, values["effort"][k])
