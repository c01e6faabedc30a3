"""
The package's one JointState CDR codec (robot_dynamics_ros.messages.cdr).

Oracles: rosbags' and rclpy's own serialisers and deserialisers of sensor_msgs/JointState.
"""

import random

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState as RclpyJointState

from bag_messages import serialized, ts_joint_state
from robot_dynamics_ros.bags.types import typestore
from robot_dynamics_ros.messages.cdr import (JOINT_STATE, BatchDecoder, JointStateTemplate,
                                             NameLayouts, arrays_after, name_layout)

NS = 1_000_000_000
FIELDS = ("position", "velocity", "effort")


def expected_of(raw):
    """Read ``raw`` with rosbags: names, frame id, stamp ns, the three arrays."""
    msg = typestore().deserialize_cdr(raw, JOINT_STATE)
    return (tuple(msg.name), msg.header.frame_id,
            msg.header.stamp.sec * NS + msg.header.stamp.nanosec,
            *(np.asarray(getattr(msg, f)) for f in FIELDS))


def decoded(raws):
    """{index: (names, frame id, stamp, position, velocity, effort)} and the others."""
    groups, others = BatchDecoder().decode(raws)
    out = {}
    for group in groups:
        for j, k in enumerate(group.rows):
            out[int(k)] = (group.names, group.frame_id, int(group.stamp[j]),
                           *(getattr(group, f)[j] for f in FIELDS))
    return out, others


def assert_same(got, expected):
    assert got[:3] == expected[:3]
    for a, b in zip(got[3:], expected[3:]):
        np.testing.assert_array_equal(a, b)


def random_rclpy_message(rng: random.Random) -> RclpyJointState:
    """Make a JointState with random names (non-ASCII too), frame id, lengths and values."""
    names = ["".join(rng.choice("abcxyz_\u00e9") for _ in range(rng.randrange(0, 9)))
             for _ in range(rng.randrange(0, 8))]
    msg = RclpyJointState(name=names)
    msg.header.frame_id = "f" * rng.randrange(0, 6)
    msg.header.stamp.sec, msg.header.stamp.nanosec = rng.randrange(-2**31, 2**31), \
        rng.randrange(10 ** 9)
    for field in FIELDS:
        count = rng.choice([len(names), len(names), 0, rng.randrange(0, 9)])
        setattr(msg, field, [rng.choice([rng.uniform(-1e3, 1e3), float("inf"), -0.0, 1e308])
                             for _ in range(count)])
    return msg


def test_decoder_agrees_with_rosbags_and_rclpy_on_varied_messages():
    messages = [
        ts_joint_state(1 * NS + 5, ["a", "bb", "ccc"], [1, 2, 3], [4, 5, 6], [7, 8, 9], "base"),
        ts_joint_state(2 * NS, ["a", "bb", "ccc"], [1.5, 2, 3], [], [7, 8, 9], "base"),
        ts_joint_state(3 * NS, ["a", "bb", "ccc"], [1, 2, 3], [4, 5, 6], [], ""),
        ts_joint_state(4 * NS, ["j\u00e9"], [0.25], [], [], "x" * 7),
        ts_joint_state(5 * NS + 1, ["a", "bb", "ccc"], [1, 2, 3], [4, 5, 6], [7, 8, 9], "base"),
        ts_joint_state(-3 * NS + 7, [], [], [], [], ""),
    ]
    raws = [serialized(m) for m in messages]
    # rclpy's serialisation (what DDS carries), and a big-endian message (left to the caller)
    rclpy_msg = RclpyJointState(name=["a", "bb", "ccc"], position=[9.0, 8.0, 7.0],
                                velocity=[1.0, 1.0, 1.0], effort=[0.5, 0.5, 0.5])
    rclpy_msg.header.stamp.sec, rclpy_msg.header.frame_id = 6, "base"
    raws.append(bytes(serialize_message(rclpy_msg)))
    raws.append(bytes(typestore().serialize_cdr(messages[0], JOINT_STATE, little_endian=False)))
    got, others = decoded(raws)
    assert others == [len(raws) - 1] and sorted(got) == list(range(len(raws) - 1))
    for k in range(len(messages)):
        assert_same(got[k], expected_of(raws[k]))
    assert_same(got[6], (("a", "bb", "ccc"), "base", 6 * NS, [9.0, 8.0, 7.0], [1.0] * 3,
                         [0.5] * 3))


def test_random_messages_from_rclpy_decode_as_rclpy_reads_them_padding_aside():
    rng = random.Random(7)
    raws, messages = [], []
    for _ in range(400):
        msg = random_rclpy_message(rng)
        raw = bytearray(serialize_message(msg))
        layout = name_layout(raw)
        # rmw leaves padding bytes as they were in its buffer: fill them with garbage
        padding = ~layout.mask & ((1 << (8 * layout.size)) - 1)
        for i in range(layout.size):
            if padding >> (8 * i) & 0xff:
                raw[12 + i] = rng.randrange(256)
        raws.append(bytes(raw))
        messages.append(msg)
    got, others = decoded(raws)
    assert others == []
    for k, msg in enumerate(messages):
        assert deserialize_message(raws[k], RclpyJointState) == msg      # still the message
        stamp = msg.header.stamp.sec * NS + msg.header.stamp.nanosec
        assert_same(got[k], (tuple(msg.name), msg.header.frame_id, stamp,
                             *(list(getattr(msg, f)) for f in FIELDS)))


def test_cut_off_and_garbled_bytes_are_left_to_the_caller_never_misread():
    raw = serialized(ts_joint_state(NS, ["a", "bb"], [1, 2], [3, 4], [5, 6], "base"))
    cut = [raw[:k] for k in range(len(raw))]
    got, others = decoded(cut)
    assert got == {} and others == list(range(len(raw)))
    layouts = NameLayouts()
    layouts.learn(raw)                                  # known: a cut-off copy still fails
    assert all(arrays_after(c, layouts.match(c).end) is None for c in cut
               if layouts.match(c) is not None)
    rng = random.Random(3)
    garbage = [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
               for _ in range(300)]
    garbage += [b"\x00\x01\x00\x00" + g for g in garbage]
    got, others = decoded(garbage)
    for k, value in got.items():                        # whatever is read is what rosbags reads
        assert_same(value, expected_of(garbage[k]))


def test_template_writes_what_rosbags_writes_and_rclpy_reads():
    names = ["shoulder", "elbow", "wrist_1"]
    for fields in [("position", "velocity", "effort"), ("effort",), ("position", "effort")]:
        template = JointStateTemplate(names, fields, frame_id="base" if len(fields) == 1 else "")
        stamps = np.array([0, 1_700_000_000 * NS + 999_999_999, -NS + 1], dtype=np.int64)
        values = {f: np.random.default_rng(1).normal(size=(3, 3)) for f in fields}
        rows = template.encode_many(stamps, **values)
        for k in range(3):
            arrays = {f: values[f][k] if f in fields else [] for f in FIELDS}
            expected = ts_joint_state(stamps[k], names, **arrays,
                                      frame_id="base" if len(fields) == 1 else "")
            assert rows[k].tobytes() == serialized(expected)
            one = template.encode(divmod(int(stamps[k]), NS), **{f: values[f][k] for f in fields})
            assert one == serialized(expected)
            msg = deserialize_message(one, RclpyJointState)
            assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == divmod(int(stamps[k]), NS)
            for f in FIELDS:
                np.testing.assert_array_equal(getattr(msg, f), arrays[f])
