"""
The 1 kHz path's messages in serialized form: joint states in, effort outputs out.

At 1 kHz most of a torque node's CPU is not dynamics but turning messages into Python objects
and back: rclpy takes a sensor_msgs/JointState as a Python object (C struct -> lists, strings,
Header, Time) in about 64 us here, but as its serialized bytes in about 24 us, and publishes a
JointState object in about 14 us but its bytes in about 5 us (measured in one process; the
effect on the nodes: doc/benchmarks.md, "ROS throughput", bench/bench_ros_latency.py).  So the
torque nodes subscribe to joint_states raw and publish raw, reading and writing the few fields they
need with ``struct`` in the serialized form rmw uses (OMG CDR, little endian, as rmw_fastrtps
and rmw_cyclonedds write it: a 4-byte encapsulation header, then each field aligned to its size,
counted from the end of that header).

Nothing here decides what a valid message is: that stays :func:`ros_messages.joint_state_values`.

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

from .ros_messages import (JointOrder, MessageRejected, joint_state_values,
                           plausible_joint_values)

# The encapsulation header of little-endian plain CDR (representation id CDR_LE, options 0).
CDR_LE = b"\x00\x01\x00\x00"
_HEADER = len(CDR_LE)                   # alignment is counted from the end of this header
_STAMP = struct.Struct("<iI")           # builtin_interfaces/Time: int32 sec, uint32 nanosec
_UINT32 = struct.Struct("<I")
# Name lists a reader keeps, the most recent first (a robot driver sends one; a misbehaving
# publisher cannot grow the list, and a look-up tries them all).
KNOWN_LAYOUTS = 4


def _aligned(offset: int, size: int) -> int:
    """Move ``offset`` (from the start) up to a multiple of ``size`` past the header."""
    return offset + (-(offset - _HEADER) % size)


class JointStateValues(NamedTuple):
    """What a torque node takes from a joint_states message."""

    stamp: tuple[int, int]          # header.stamp (sec, nanosec)
    q: list                         # positions in the configured joint order
    qd: list | None                 # velocities, or None when the message has none


class _NameLayout(NamedTuple):
    """A name list seen before: its bytes (frame id and names) and where its values are."""

    size: int                       # bytes of header.frame_id and name, from byte 12
    mask: int                       # of those bytes (little-endian int): 0xff except padding
    masked: int                     # those bytes & mask: what a message with this list holds
    count: int                      # names in the message
    index: list                     # for each configured joint, its index in the message
    doubles: struct.Struct          # ``count`` doubles


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
        self._layouts: list[_NameLayout] = []

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
        if not raw.startswith(CDR_LE):
            return None
        for layout in self._layouts:
            # padding bytes are not compared: rmw leaves them as they were in its buffer
            if int.from_bytes(raw[12:12 + layout.size], "little") & layout.mask == layout.masked:
                break
        else:
            return None
        try:
            offset = _aligned(12 + layout.size, 4)
            if _UINT32.unpack_from(raw, offset)[0] != layout.count:
                return None                 # "length": the standard path says so
            offset = _aligned(offset + 4, 8)
            positions = layout.doubles.unpack_from(raw, offset)
            offset = _aligned(offset + layout.doubles.size, 4)
            velocity_count = _UINT32.unpack_from(raw, offset)[0]
            velocities = None
            if velocity_count == layout.count:
                velocities = layout.doubles.unpack_from(raw, _aligned(offset + 4, 8))
            elif velocity_count != 0 or need_velocity:
                return None
        except struct.error:                # shorter than its counts say: the standard path
            return None
        index = layout.index
        q = [positions[i] for i in index]
        if not plausible_joint_values(q):       # the standard path names the bad value
            return None
        qd = None
        if velocities is not None:
            qd = [velocities[i] for i in index]
            if not plausible_joint_values(qd):
                return None
        return JointStateValues(_STAMP.unpack_from(raw, _HEADER), q, qd)

    def _read_new(self, raw: bytes, need_velocity: bool) -> JointStateValues:
        """Deserialise ``raw`` and check it the standard way; remember an accepted name list."""
        try:
            msg = deserialize_message(raw, JointState)
        except Exception as exc:  # noqa: BLE001 -- rmw's error types vary: say what it was
            raise MessageRejected("malformed", f"{self.what}: {len(raw)} bytes that are not a "
                                               f"serialized sensor_msgs/JointState ({exc})") \
                from None
        values = self.read(msg, need_velocity)
        mask = _name_mask(raw, len(msg.name)) if raw.startswith(CDR_LE) else None
        if mask is not None:
            # the most recent first; the oldest forgotten (a new driver is learnt at once)
            size = (mask.bit_length() + 7) // 8
            masked = int.from_bytes(raw[12:12 + size], "little") & mask
            self._layouts.insert(0, _NameLayout(size, mask, masked, len(msg.name),
                                                self.order.index_list(msg.name, self.what),
                                                struct.Struct(f"<{len(msg.name)}d")))
            del self._layouts[KNOWN_LAYOUTS:]
        return values


def _name_mask(raw: bytes, count: int) -> int | None:
    """
    Where header.frame_id and name are in ``raw``, from byte 12: a little-endian int mask.

    0xff for each byte of a length or a string (with its NUL), 0 for the padding between
    them; the mask's length is that of the name list.  None if ``raw`` does not hold ``count``
    names.
    """
    spans = []                                  # (start, end) of the bytes that carry content
    try:
        offset = _HEADER + _STAMP.size
        length = _UINT32.unpack_from(raw, offset)[0]                # frame_id: length, chars
        spans.append((offset, offset + 4 + length))
        offset = _aligned(offset + 4 + length, 4)
        if _UINT32.unpack_from(raw, offset)[0] != count:
            return None
        spans.append((offset, offset + 4))
        offset += 4
        for _ in range(count):
            offset = _aligned(offset, 4)
            length = _UINT32.unpack_from(raw, offset)[0]
            spans.append((offset, offset + 4 + length))
            offset += 4 + length
    except struct.error:
        return None
    if offset > len(raw):
        return None
    mask = 0
    for start, end in spans:
        mask |= ((1 << (8 * (end - start))) - 1) << (8 * (start - 12))
    return mask


# ------------------------------------------------------------------------------------ outputs
class _Template:
    """Serialized bytes built field by field, remembering where the variable parts go."""

    def __init__(self):
        self.data = bytearray(CDR_LE)

    def align(self, size: int):
        self.data += bytes(_aligned(len(self.data), size) - len(self.data))

    def uint32(self, value: int):
        self.align(4)
        self.data += _UINT32.pack(value)

    def string(self, text: str):
        encoded = text.encode()
        self.uint32(len(encoded) + 1)
        self.data += encoded + b"\x00"

    def doubles(self, count: int) -> int | None:
        """Add a sequence of ``count`` zeros (float64); return where they start (None if empty)."""
        self.uint32(count)
        if count == 0:
            return None
        self.align(8)
        start = len(self.data)
        self.data += bytes(8 * count)
        return start


class JointStateWriter:
    """
    Serialized sensor_msgs/JointState with fixed names and an empty frame id.

    ``fields``: which of position, velocity, effort carry one value per name (the others are
    empty).  Built by :meth:`create`, which checks it against rclpy.
    """

    FIELDS = ("position", "velocity", "effort")

    def __init__(self, names, fields):
        self.names, self.fields = list(names), tuple(fields)
        template = _Template()
        template.data += _STAMP.pack(0, 0)
        template.string("")
        template.uint32(len(self.names))
        for name in self.names:
            template.string(name)
        self._offsets = {field: template.doubles(len(self.names) if field in self.fields else 0)
                         for field in self.FIELDS}
        self._buffer = template.data
        self._doubles = struct.Struct(f"<{len(self.names)}d")

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
        buffer = self._buffer
        _STAMP.pack_into(buffer, _HEADER, *stamp)
        for field, value in values.items():
            self._doubles.pack_into(buffer, self._offsets[field], *value)
        return bytes(buffer)


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
        template = _Template()
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
