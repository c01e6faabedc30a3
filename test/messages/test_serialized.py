"""
The serialized joint_states input and effort outputs (robot_dynamics_ros.messages.serialized).

Oracles: rclpy's own (de)serialisation through rmw, and
``messages.conversions.joint_state_values`` on the deserialised message: the reader must give
exactly what the standard path gives (values, or the same rejection), the writers' bytes must
read back as the message they were written from.
"""
import random
import struct

import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_dynamics_ros.messages import serialized as serialized_messages
from robot_dynamics_ros.nodes.outputs import EffortOutputs
from robot_dynamics_ros.messages.conversions import JointOrder, MessageRejected, joint_state_values
from robot_dynamics_ros.messages.serialized import (KNOWN_LAYOUTS, Float64ArrayWriter,
                                                    JointStateReader, JointStateWriter)

NAMES = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]


def outcome(read, *args):
    """(values...) or ('rejected', kind, text) of ``read(*args)``."""
    try:
        return tuple(read(*args))
    except MessageRejected as exc:
        return ("rejected", exc.kind, str(exc))


def standard(msg, order, need_velocity):
    """Return what the standard path gives: joint_state_values and the header stamp."""
    q, qd = joint_state_values(msg, order, need_velocity)
    return (msg.header.stamp.sec, msg.header.stamp.nanosec), q, qd


@pytest.fixture
def deserialisations(monkeypatch):
    """Count the reader's calls of rclpy's deserialize_message (the slow path)."""
    calls = []

    def counting(raw, msg_type):
        calls.append(len(raw))
        return deserialize_message(raw, msg_type)
    monkeypatch.setattr(serialized_messages, "deserialize_message", counting)
    return calls


# What robot drivers send: the same name list and frame id every time (three of them here).
DRIVERS = [(NAMES, ""), (["joint3", "gripper_a", "joint1", "joint2", "joint6", "joint5", "joint4"],
                         "base"), (NAMES[::-1] + ["gripper_xyz0", "g"], "b" * 7)]


def random_message(rng: random.Random) -> JointState:
    """Make a JointState that is usually valid for NAMES, often not (each way it can fail)."""
    names, frame_id = rng.choice(DRIVERS)
    names = list(names)
    if rng.random() < 0.05:                             # a name list seen once
        names += [f"gripper_{'x' * rng.randrange(4)}{k}" for k in range(rng.choice([1, 3]))]
        rng.shuffle(names)
        frame_id = "b" * rng.randrange(0, 9)
    if rng.random() < 0.05:
        names = names[:-1]                              # a joint missing (or an extra one)
    if rng.random() < 0.03:
        names = names + [names[0]]                      # a joint twice
    n = len(names)
    msg = JointState(name=names)
    msg.header.frame_id = frame_id
    msg.header.stamp.sec, msg.header.stamp.nanosec = rng.randrange(-5, 10 ** 9), \
        rng.randrange(10 ** 9)

    def values(count):
        row = [rng.uniform(-3.0, 3.0) for _ in range(count)]
        if row and rng.random() < 0.08:
            row[rng.randrange(count)] = rng.choice([float("nan"), float("inf"), -2e6, 1e300])
        return row
    msg.position = values(n if rng.random() > 0.04 else n - 1)
    msg.velocity = values(rng.choice([n, n, n, 0, 0, n + 1] if n else [0]))
    msg.effort = values(rng.choice([0, n, 2]))
    return msg


@pytest.mark.parametrize("need_velocity", [False, True])
def test_reader_gives_what_the_standard_path_gives(need_velocity, deserialisations):
    rng = random.Random(20261124 + need_velocity)
    order = JointOrder(NAMES)
    reader = JointStateReader(order)
    messages = [random_message(rng) for _ in range(400)]
    accepted = accepted_slowly = 0
    for msg in messages:
        expected = outcome(standard, msg, order, need_velocity)
        before = len(deserialisations)
        assert outcome(reader.read, serialize_message(msg), need_velocity) == expected, msg
        assert outcome(reader.read, msg, need_velocity) == expected       # message objects too
        if expected[0] != "rejected":
            accepted += 1
            accepted_slowly += len(deserialisations) > before
    assert 60 < accepted < 340                      # both outcomes were exercised
    # most valid messages repeat a known name list: they were read without deserialising
    assert accepted_slowly < 0.25 * accepted, (accepted_slowly, accepted)


def padding_filled(raw: bytes, filler: int) -> bytes:
    """``raw`` with every padding byte before the effort values set to ``filler``."""
    data = bytearray(raw)
    # re-derive the layout the way a CDR reader walks it: each field aligned to its size
    offset = 4 + 8

    def skip_to(size):
        nonlocal offset
        while (offset - 4) % size:
            data[offset] = filler
            offset += 1

    def string():
        nonlocal offset
        skip_to(4)
        offset += 4 + struct.unpack_from("<I", data, offset)[0]
    string()                                            # frame_id
    skip_to(4)
    count = struct.unpack_from("<I", data, offset)[0]
    offset += 4
    for _ in range(count):
        string()
    for _ in range(2):                                  # position, velocity
        skip_to(4)
        length = struct.unpack_from("<I", data, offset)[0]
        offset += 4
        if length:
            skip_to(8)
            offset += 8 * length
    return bytes(data)


def test_padding_bytes_do_not_matter(deserialisations):
    """Padding bytes (rmw leaves them as they were in its buffer) are not part of the match."""
    order = JointOrder(NAMES)
    reader = JointStateReader(order)
    # odd-length names and frame id: padding after each string
    msg = JointState(name=NAMES + ["abc"], position=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
                     velocity=[1.0] * 7)
    msg.header.frame_id = "tool"
    raw = serialize_message(msg)
    plain = padding_filled(raw, 0)
    noisy = padding_filled(raw, 0xAB)
    assert plain != noisy and deserialize_message(noisy, JointState) == msg
    expected = standard(msg, order, False)
    assert tuple(reader.read(plain)) == expected and len(deserialisations) == 1
    assert tuple(reader.read(noisy)) == expected and len(deserialisations) == 1
    # a different name of the same length is a different list
    other = JointState(name=list(msg.name[:-1]) + ["abd"], position=msg.position,
                       velocity=msg.velocity)
    assert tuple(reader.read(serialize_message(other))) == standard(other, order, False)
    assert len(deserialisations) == 2


def test_malformed_bytes_are_rejected_by_name():
    reader = JointStateReader(JointOrder(NAMES))
    valid = serialize_message(JointState(name=NAMES, position=[0.0] * 6))
    huge_count = (b"\x00\x01\x00\x00" + struct.pack("<iII", 1, 0, 1) + b"\x00\x00\x00\x00"
                  + struct.pack("<I", 0xFFFFFFF0) + b"x" * 40)
    for raw in (b"", b"\x00\x01\x00\x00", valid[:40], huge_count):
        with pytest.raises(MessageRejected, match="joint_states: .* bytes that are not a "
                                                  "serialized sensor_msgs/JointState") as info:
            reader.read(raw)
        assert info.value.kind == "malformed"
    reader.read(valid)                                  # learnt; a truncated copy still fails
    with pytest.raises(MessageRejected, match="not a serialized"):
        reader.read(valid[:-40])


def test_more_name_lists_than_kept_are_still_read_correctly(deserialisations):
    order = JointOrder(NAMES)
    reader = JointStateReader(order)
    messages = [JointState(name=NAMES + [f"extra{k}"], position=[0.1 * k] * 7)
                for k in range(KNOWN_LAYOUTS + 3)]
    for msg in messages + messages[-KNOWN_LAYOUTS:] + messages[:1]:
        for _ in range(2):
            assert tuple(reader.read(serialize_message(msg))) == standard(msg, order, False)
    assert len(reader._layouts) == KNOWN_LAYOUTS
    # each new list once; the last KNOWN_LAYOUTS kept, the first forgotten and learnt again
    assert len(deserialisations) == len(messages) + 1


# ----------------------------------------------------------------------------------- writers
@pytest.mark.parametrize("fields", [("effort",), ("effort", "position", "velocity"),
                                    ("position", "effort"), ("velocity",)])
@pytest.mark.parametrize("names", [["a"], NAMES, ["a", "bb", "ccc", "dddd", "eeeee"],
                                   ["shoulder_pan_joint", "j2"]])
def test_joint_state_writer_reads_back(fields, names):
    writer = JointStateWriter.create(names, fields)
    assert writer is not None
    for stamp in ((0, 0), (-3, 999_999_999), (1_700_000_000, 5)):
        values = {f: [0.5 * k - 1.25 * i for k in range(len(names))]
                  for i, f in enumerate(fields)}
        expected = JointState(name=names, **values)
        expected.header.stamp.sec, expected.header.stamp.nanosec = stamp
        assert deserialize_message(writer.serialize(stamp, **values), JointState) == expected


@pytest.mark.parametrize("count", range(1, 9))
def test_float64_array_writer_reads_back(count):
    writer = Float64ArrayWriter.create(count)
    data = [1.5 ** k - 2.0 for k in range(count)]
    assert deserialize_message(writer.serialize(data), Float64MultiArray) == \
        Float64MultiArray(data=data)


class Recorder:
    """A stand-in publisher: keeps what is published, bytes or message objects."""

    def __init__(self, msg_type):
        self.msg_type, self.published = msg_type, []

    def publish(self, msg):
        # a copy of a message object: EffortOutputs refills the same one
        self.published.append(msg if isinstance(msg, bytes) else
                              deserialize_message(serialize_message(msg), self.msg_type))

    def messages(self):
        return [deserialize_message(m, self.msg_type) if isinstance(m, bytes) else m
                for m in self.published]


@pytest.mark.parametrize("writers", [True, False])
def test_effort_outputs_publish_the_same_messages_with_or_without_writers(writers, monkeypatch):
    """Bytes from the writers, or message objects when a writer does not read back."""
    if not writers:
        monkeypatch.setattr(serialized_messages, "_reads_back", lambda data, message: False)
    state, command = Recorder(JointState), Recorder(Float64MultiArray)
    names = ["joint3", "joint1", "joint2"]
    outputs = EffortOutputs(state, command, names, [2, 0, 1])
    outputs.publish((7, 8), [1.0, 2.0, 3.0])
    outputs.publish((9, 10), [4.0, 5.0, 6.0], [0.1, 0.2, 0.3], [-1.0, -2.0, -3.0])
    assert all(isinstance(m, bytes) == writers for m in state.published + command.published)
    assert all(isinstance(m, bytes) or m.header.frame_id == "" for m in state.published)
    first, second = state.messages()
    assert (first.header.stamp.sec, first.header.stamp.nanosec) == (7, 8)
    assert list(first.name) == names and list(first.effort) == [3.0, 1.0, 2.0]
    assert (second.header.stamp.sec, second.header.stamp.nanosec) == (9, 10)
    assert list(second.effort) == [6.0, 4.0, 5.0]
    assert list(second.position) == [0.3, 0.1, 0.2]
    assert list(second.velocity) == [-3.0, -1.0, -2.0]
    assert [list(m.data) for m in command.messages()] == [[3.0, 1.0, 2.0], [6.0, 4.0, 5.0]]
    with pytest.raises(MessageRejected, match="torque of joint 'joint1' computed from this "
                                              "input is nan"):
        outputs.publish((1, 1), [float("nan"), 1.0, 1.0])
    assert len(state.published) == len(command.published) == 2


@pytest.mark.parametrize("frame_id, names, points", [
    ("", [], 0), ("base_link", ["a"], 3), ("w", NAMES, 1000),
    ("odd", ["j", "jj", "jjj", "jjjjj"], 7),                # names of every alignment
])
def test_trajectory_size_reads_the_counts_rclpy_writes(frame_id, names, points):
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    msg = JointTrajectory(joint_names=names, points=[
        JointTrajectoryPoint(positions=[0.5] * len(names)) for _ in range(points)])
    msg.header.frame_id = frame_id
    assert serialized_messages.trajectory_size(bytes(serialize_message(msg))) == (len(names),
                                                                                  points)


def test_trajectory_size_of_bytes_that_are_no_trajectory_is_malformed():
    from trajectory_msgs.msg import JointTrajectory
    raw = bytes(serialize_message(JointTrajectory(joint_names=NAMES)))
    for bad in (raw[:20], b"\x01\x00\x00\x00" + raw[4:], raw[:4] + struct.pack("<iI", 0, 0)
                + struct.pack("<I", 10**6)):
        with pytest.raises(MessageRejected, match="not a serialized trajectory_msgs") as error:
            serialized_messages.trajectory_size(bad)
        assert error.value.kind == "malformed"
    huge = raw[:20] + struct.pack("<I", 10**9) + raw[24:]        # 1e9 names in a few bytes
    with pytest.raises(MessageRejected, match="not a serialized trajectory_msgs"):
        serialized_messages.trajectory_size(huge)
