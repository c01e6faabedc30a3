"""
The 1 kHz path's messages in serialized form: joint states in, effort outputs out.

At 1 kHz most of a torque node's CPU is not dynamics but turning messages into Python objects
and back: rclpy takes a sensor_msgs/JointState as a Python object (C struct -> lists, strings,
Header, Time) in about 64 us here, but as its serialized bytes in about 24 us, and publishes a
JointState object in about 14 us but its bytes in about 5 us (measured in one process; the
effect on the nodes: doc/benchmarks.md, "ROS throughput", bench/bench_ros_latency.py).  So the
torque nodes subscribe to joint_states raw and publish raw, reading and writing the few fields they
need with ``struct`` in the serialized form rmw uses, through the package's one JointState codec
(``cdr``, which the bag tools use too).

Nothing here decides what a valid message is: that stays :func:`conversions.joint_state_values`
(``checks``).

* :class:`JointStateReader` reads a serialized JointState directly only when its frame id and
  name list are, byte for byte (padding aside), those of an earlier message the standard path
  accepted, and only when every value it returns passes the same checks; anything else (a new
  name list, a bad length, a non-finite value, big-endian data, truncated bytes) is
  deserialised and goes through ``joint_state_values``, which accepts it or raises the same
  MessageRejected as before (bytes that are no JointState: MessageRejected ``malformed``).
* :class:`JointStateWriter` and :class:`Float64ArrayWriter` write an output from a template of
  its fixed part (names, empty frame id); when one is built, rclpy's ``deserialize_message``
  must read its bytes back as the message they were written from, else it is not used
  (``None``: the caller publishes message objects, as before).
"""
from __future__ import annotations

import struct
from typing import NamedTuple

from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .cdr import (HEADER, STAMP, UINT32, CdrBuilder, JointStateTemplate, NameLayouts, aligned,
                  arrays_after, name_layout)
from .conversions import JointOrder, MessageRejected, joint_state_values, plausible_joint_values

# Name lists a reader keeps, the most recent first (a robot driver sends one; a misbehaving
# publisher cannot grow the list, and a look-up tries them all).
KNOWN_LAYOUTS = 4


class JointStateValues(NamedTuple):
    """What a torque node takes from a joint_states message."""

    stamp: tuple[int, int]          # header.stamp (sec, nanosec)
    q: list                         # positions in the configured joint order
    qd: list | None                 # velocities, or None when the message has none


class JointStateReader:
    """
    (stamp, q, qd) of sensor_msgs/JointState messages, serialized or not, in ``order``.

    :meth:`read` gives exactly what ``joint_state_values`` gives for the same message (values,
    accepted or rejected, error kind and text); for bytes whose name list is known it only reads
    the numbers it needs.
    """

    def __init__(self, order: JointOrder, what: str = "joint_states"):
        self.order = order
        self.what = what
        self._layouts = NameLayouts(KNOWN_LAYOUTS)
        self._index: dict = {}          # known layout -> (index list, struct of its doubles)

    def read(self, msg, need_velocity: bool = False) -> JointStateValues:
        """Read ``msg`` (raw subscription bytes, or a JointState); MessageRejected if bad."""
        if isinstance(msg, (bytes, bytearray)):
            values = self._read_known(msg, need_velocity)
            if values is not None:
                return values
            return self._read_new(msg, need_velocity)
        q, qd = joint_state_values(msg, self.order, need_velocity)
        stamp = msg.header.stamp
        return JointStateValues((stamp.sec, stamp.nanosec), q, qd)

    def _read_known(self, raw: bytes, need_velocity: bool) -> JointStateValues | None:
        """Return the values if ``raw`` has a known name list and passes every check, else None."""
        layout = self._layouts.match(raw)
        arrays = None if layout is None else arrays_after(raw, layout.end)
        if arrays is None:
            return None
        count = len(layout.names)
        positions, velocities, _ = arrays.counts
        if positions != count or velocities not in (0, count) or \
                (velocities == 0 and need_velocity):
            return None                     # "length", "no velocity": the standard path says so
        index, doubles = self._index[layout]
        values = doubles.unpack_from(raw, arrays.offsets[0])
        q = [values[i] for i in index]
        if not plausible_joint_values(q):       # the standard path names the bad value
            return None
        qd = None
        if velocities:
            values = doubles.unpack_from(raw, arrays.offsets[1])
            qd = [values[i] for i in index]
            if not plausible_joint_values(qd):
                return None
        return JointStateValues(STAMP.unpack_from(raw, HEADER), q, qd)

    def _read_new(self, raw: bytes, need_velocity: bool) -> JointStateValues:
        """Deserialise ``raw`` and check it the standard way; remember an accepted name list."""
        try:
            msg = deserialize_message(raw, JointState)
        except Exception as exc:  # noqa: BLE001 -- rmw's error types vary: say what it was
            raise MessageRejected("malformed", f"{self.what}: {len(raw)} bytes that are not a "
                                               f"serialized sensor_msgs/JointState ({exc})") \
                from None
        values = self.read(msg, need_velocity)
        layout = self._layouts.learn(raw)
        if layout is not None and layout.names == tuple(msg.name):
            self._index = {known: self._index[known] for known in self._layouts.known
                           if known in self._index}
            self._index[layout] = (self.order.index_list(msg.name, self.what),
                                   struct.Struct(f"<{len(msg.name)}d"))
        elif layout is not None:
            self._layouts.known.remove(layout)      # (not what rclpy read: never used)
        return values


# ------------------------------------------------------------------------------------ outputs
class JointStateWriter:
    """
    Serialized sensor_msgs/JointState with fixed names and an empty frame id.

    ``fields``: which of position, velocity, effort carry one value per name (the others are
    empty).  Built by :meth:`create`, which checks it against rclpy.
    """

    FIELDS = ("position", "velocity", "effort")

    def __init__(self, names, fields):
        self.names, self.fields = list(names), tuple(fields)
        self._template = JointStateTemplate(self.names, self.fields)

    @classmethod
    def create(cls, names, fields) -> JointStateWriter | None:
        """Make a writer if rclpy reads its bytes back as the message they came from; else None."""
        writer = cls(names, fields)
        sample = [0.5 + k * 1.25 for k in range(len(writer.names))]
        message = JointState(name=writer.names,
                             **{field: [s * (i + 1) for s in sample]
                                for i, field in enumerate(cls.FIELDS) if field in writer.fields})
        message.header.stamp.sec, message.header.stamp.nanosec = -7, 123_456_789
        values = {field: list(getattr(message, field)) for field in writer.fields}
        return writer if _reads_back(writer.serialize((-7, 123_456_789), **values), message) \
            else None

    def serialize(self, stamp: tuple[int, int], **values) -> bytes:
        """Serialize the message: ``stamp`` (sec, nanosec), a list of floats per given field."""
        return self._template.encode(stamp, **values)


def _reads_back(data: bytes, message) -> bool:
    """Tell whether rmw deserialises ``data`` into ``message``."""
    try:
        # (not a byte comparison: rmw leaves padding bytes as they were in its buffer)
        return deserialize_message(data, type(message)) == message
    except Exception:  # noqa: BLE001 -- no rmw to ask: do not use the writer
        return False


class Float64ArrayWriter:
    """Serialized std_msgs/Float64MultiArray of ``count`` values and an empty layout."""

    def __init__(self, count: int):
        template = CdrBuilder()
        template.uint32(0)              # layout.dim: empty
        template.uint32(0)              # layout.data_offset
        self._offset = template.doubles(count)
        self._buffer = template.data
        self._doubles = struct.Struct(f"<{count}d")

    @classmethod
    def create(cls, count: int) -> Float64ArrayWriter | None:
        """Make a writer if rclpy reads its bytes back as the message they came from; else None."""
        writer = cls(count)
        sample = [0.75 - 2.5 * k for k in range(count)]
        return writer if _reads_back(writer.serialize(sample), Float64MultiArray(data=sample)) \
            else None

    def serialize(self, data: list) -> bytes:
        """Serialize the message with ``data`` (``count`` floats)."""
        if self._offset is not None:
            self._doubles.pack_into(self._buffer, self._offset, *data)
        return bytes(self._buffer)


# ------------------------------------------------------------------------- trajectory sizes
def trajectory_size(raw: bytes) -> tuple[int, int]:
    """
    Return (joint names, points) of a serialized trajectory_msgs/JointTrajectory, cheaply.

    A JointTrajectory begins as a JointState does (Header, then the string[] of joint names:
    ``cdr.name_layout`` walks them); the points' count follows.  Nothing else is
    read: a node checks the size of a reference before it turns megabytes of points into Python
    objects (rclpy's conversion of a million points takes seconds and a gigabyte).
    MessageRejected ``malformed`` for bytes that are not one (as the full conversion would).
    """
    layout = name_layout(raw)
    try:
        if layout is None:
            raise struct.error("no header and joint names")
        points = UINT32.unpack_from(raw, aligned(layout.end, 4))[0]
    except struct.error as exc:
        raise MessageRejected("malformed", f"{len(raw)} bytes that are not a serialized "
                                           f"trajectory_msgs/JointTrajectory ({exc})") from None
    return len(layout.names), points
