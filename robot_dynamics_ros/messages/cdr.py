"""
sensor_msgs/JointState in serialized form (CDR): the package's one codec, for nodes and bags.

ROS-free (``struct`` and numpy).  A robot driver sends the same joint names in every JointState,
so the byte layout of its messages is the same every time: only the stamp and the numbers
change.  This module finds that layout once and then reads and writes the numbers in place:

* :class:`NameLayouts` recognises a message's frame id and name list (byte for byte, padding
  aside: rmw leaves padding bytes as they were in its buffer) among those seen before, or walks
  a new message to learn them; :func:`arrays_after` then finds the three float64 sequences.
* The torque nodes read one message at a time with ``struct`` (``serialized``); the bag
  tools decode whole chunks with :class:`BatchDecoder` (messages grouped by layout, the numbers
  read as numpy views of the joined bytes).
* :class:`JointStateTemplate` writes messages with fixed names: one with ``struct``
  (:meth:`~JointStateTemplate.encode`), many at once with numpy
  (:meth:`~JointStateTemplate.encode_many`).

The format is OMG XCDR1 as ROS 2 uses it (rmw_fastrtps, rmw_cyclonedds): a 4-byte encapsulation
header (little endian: ``00 01 00 00``), then each primitive aligned to its size counted from the
end of that header; a string is a uint32 length (with the NUL) and its bytes, a sequence a uint32
count and its elements.  JointState is Header (Time stamp: int32 sec, uint32 nanosec; string
frame_id), string[] name, float64[] position, velocity, effort.  Only little-endian messages are
read here; anything else (big endian, malformed bytes) is left to the caller's library (rclpy in
the nodes, rosbags in the bags), which decides what it accepts.  Checked against rosbags' and
rclpy's serialisers in ``test/messages/test_cdr.py``; timed against them in
``bench/bench_joint_state_cdr.py``: it is hand-written for speed (decoding a chunk takes a
fraction of rosbags' or rclpy's time per message, encoding from a template a hundredth; the
figures are in doc/benchmarks.md).
"""
from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

JOINT_STATE = "sensor_msgs/msg/JointState"
CDR_LE = b"\x00\x01\x00\x00"            # representation CDR_LE, options 0
HEADER = len(CDR_LE)                    # alignment is counted from the end of this header
FIELDS = ("position", "velocity", "effort")
STAMP = struct.Struct("<iI")            # builtin_interfaces/Time: int32 sec, uint32 nanosec
UINT32 = struct.Struct("<I")
NAMES_START = HEADER + STAMP.size       # header.frame_id starts here


def aligned(offset: int, size: int) -> int:
    """Move ``offset`` (from the start) up to a multiple of ``size`` past the header."""
    return offset + (-(offset - HEADER) % size)


class NameLayout(NamedTuple):
    """A message's frame id and name list as serialised, and where the sequences start."""

    frame_id: str
    names: tuple
    end: int                        # offset just after the last name
    size: int                       # bytes compared, from NAMES_START
    mask: int                       # of those bytes (little-endian int): 0xff except padding
    masked: int                     # those bytes & mask


def name_layout(raw) -> NameLayout | None:
    """Walk header.frame_id and name of a little-endian JointState; None if they are not there."""
    if raw[:2] != CDR_LE[:2]:
        return None
    spans, names = [], []
    try:
        offset = NAMES_START
        length = UINT32.unpack_from(raw, offset)[0]                   # frame_id
        spans.append((offset, offset + 4 + length))
        frame_id = _text(raw, offset + 4, length)
        offset = aligned(offset + 4 + length, 4)
        count = UINT32.unpack_from(raw, offset)[0]
        spans.append((offset, offset + 4))
        offset += 4
        if count > (len(raw) - offset) // 5:       # each name takes at least 5 bytes
            return None
        for _ in range(count):
            offset = aligned(offset, 4)
            length = UINT32.unpack_from(raw, offset)[0]
            spans.append((offset, offset + 4 + length))
            names.append(_text(raw, offset + 4, length))
            offset += 4 + length
    except (struct.error, UnicodeDecodeError, ValueError):
        return None
    if offset > len(raw):
        return None
    mask = 0
    for start, end in spans:
        mask |= ((1 << (8 * (end - start))) - 1) << (8 * (start - NAMES_START))
    size = offset - NAMES_START
    masked = int.from_bytes(raw[NAMES_START:offset], "little") & mask
    return NameLayout(frame_id, tuple(names), offset, size, mask, masked)


def _text(raw, start: int, length: int) -> str:
    """Return a CDR string's characters (``length`` counts the NUL); ValueError if cut off."""
    if length == 0 or start + length > len(raw) or raw[start + length - 1] != 0:
        raise ValueError("not a CDR string")
    return bytes(raw[start:start + length - 1]).decode()


class Arrays(NamedTuple):
    """Where a message's position, velocity and effort are (each a float64 sequence)."""

    counts: tuple                   # lengths of position, velocity, effort
    offsets: tuple                  # where each one's first value is
    count_offsets: tuple            # where each one's length is
    end: int                        # offset after the effort values


def arrays_after(raw, start: int) -> Arrays | None:
    """Find the three float64 sequences of a message whose names end at ``start`` (None: cut)."""
    counts, offsets, count_offsets = [], [], []
    offset = start
    try:
        for _ in FIELDS:
            offset = aligned(offset, 4)
            count = UINT32.unpack_from(raw, offset)[0]
            count_offsets.append(offset)
            offset += 4
            if count:
                offset = aligned(offset, 8)
            counts.append(count)
            offsets.append(offset)
            offset += 8 * count
    except struct.error:
        return None
    if offset > len(raw):
        return None
    return Arrays(tuple(counts), tuple(offsets), tuple(count_offsets), offset)


class NameLayouts:
    """
    The name layouts seen so far, the most recent first, at most ``limit`` of them.

    A publisher that changes its names with every message cannot grow the list; a look-up
    tries them all (a robot driver sends one).
    """

    def __init__(self, limit: int = 16):
        self.limit = limit
        self.known: list[NameLayout] = []

    def __len__(self) -> int:
        return len(self.known)

    def match(self, raw) -> NameLayout | None:
        """Return the known layout of ``raw``'s frame id and names, or None."""
        if raw[:2] != CDR_LE[:2]:
            return None
        for layout in self.known:
            names = raw[NAMES_START:NAMES_START + layout.size]
            if len(raw) >= layout.end and \
                    int.from_bytes(names, "little") & layout.mask == layout.masked:
                return layout
        return None

    def learn(self, raw) -> NameLayout | None:
        """Walk ``raw`` and remember its layout (the oldest is forgotten); None if malformed."""
        layout = name_layout(raw)
        if layout is not None:
            self.known.insert(0, layout)
            del self.known[self.limit:]
        return layout

    def find(self, raw) -> NameLayout | None:
        """:meth:`match`, else :meth:`learn`."""
        return self.match(raw) or self.learn(raw)


class Group(NamedTuple):
    """Messages of a chunk with the same frame_id, names and array lengths, as arrays."""

    rows: np.ndarray                # (m,) their indices in the chunk
    stamp: np.ndarray               # (m,) int64 ns of header.stamp
    frame_id: str
    names: tuple
    position: np.ndarray            # (m, len(position)) float64
    velocity: np.ndarray            # (m, len(velocity))
    effort: np.ndarray              # (m, len(effort))


def stamps_ns(block: np.ndarray) -> np.ndarray:
    """header.stamp in int64 ns of each row of an (N, size) uint8 block of messages."""
    sec = np.ascontiguousarray(block[:, 4:8]).view("<i4")[:, 0].astype(np.int64)
    nanosec = np.ascontiguousarray(block[:, 8:12]).view("<u4")[:, 0].astype(np.int64)
    return sec * 1_000_000_000 + nanosec


def _columns(block: np.ndarray, offset: int, count: int) -> np.ndarray:
    """(N, count) float64 from bytes offset.. of each row of an (N, size) uint8 block."""
    values = np.ascontiguousarray(block[:, offset:offset + 8 * count]).view("<f8")
    return values.astype(np.float64, copy=False)


class BatchDecoder:
    """Decodes chunks of serialized JointStates, remembering the layouts it has seen."""

    def __init__(self, max_layouts: int = 16):
        self.layouts = NameLayouts(max_layouts)

    def decode(self, raws) -> tuple[list[Group], list[int]]:
        """
        Decode ``raws`` (bytes or memoryviews) into groups of one layout each.

        Returns ``(groups, others)``: ``others`` are the indices of the messages not read here
        (big endian or malformed), for the caller's library to decode or refuse.
        """
        by_names: dict[tuple, list[int]] = {}
        others = []
        find = self.layouts.find
        for k, raw in enumerate(raws):
            layout = find(raw)
            if layout is None:
                others.append(k)
            else:
                by_names.setdefault((layout, len(raw)), []).append(k)
        groups = []
        for (layout, size), rows in by_names.items():
            block = np.frombuffer(b"".join(bytes(raws[k]) for k in rows), dtype=np.uint8)
            block = block.reshape(len(rows), size)
            # the array lengths: those of the group's first message, checked on every row;
            # the rows that differ are sorted out one by one
            pending = np.arange(len(rows))
            while pending.size:
                first = rows[pending[0]]
                arrays = arrays_after(raws[first], layout.end)
                if arrays is None:
                    others.append(first)
                    pending = pending[1:]
                    continue
                same = np.ones(pending.size, dtype=bool)
                for offset, count in zip(arrays.count_offsets, arrays.counts):
                    same &= np.ascontiguousarray(block[pending, offset:offset + 4]).view(
                        "<u4")[:, 0] == count
                chosen, pending = pending[same], pending[~same]
                part = block[chosen]
                values = [_columns(part, offset, count)
                          for offset, count in zip(arrays.offsets, arrays.counts)]
                groups.append(Group(np.array([rows[j] for j in chosen]), stamps_ns(part),
                                    layout.frame_id, layout.names, *values))
        return groups, sorted(others)


class CdrBuilder:
    """Little-endian CDR bytes built field by field, remembering where the variable parts go."""

    def __init__(self):
        self.data = bytearray(CDR_LE)

    def align(self, size: int):
        self.data += bytes(aligned(len(self.data), size) - len(self.data))

    def uint32(self, value: int):
        self.align(4)
        self.data += UINT32.pack(value)

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


class JointStateTemplate:
    """
    Serialized sensor_msgs/JointState with fixed names and frame id: only stamps and values vary.

    ``fields``: which of position, velocity, effort carry one value per name (the others are
    empty), as the nodes publish them (e.g. ``("effort",)`` for gravity_effort).
    """

    def __init__(self, names, fields=("effort",), frame_id: str = ""):
        self.names, self.fields = tuple(names), tuple(fields)
        unknown = [f for f in self.fields if f not in FIELDS]
        if unknown:
            raise ValueError(f"fields: {unknown} are not among {list(FIELDS)}")
        builder = CdrBuilder()
        builder.data += STAMP.pack(0, 0)
        builder.string(frame_id)
        builder.uint32(len(self.names))
        for name in self.names:
            builder.string(name)
        self.offsets = {field: builder.doubles(len(self.names) if field in self.fields else 0)
                        for field in FIELDS}
        self.data = bytes(builder.data)
        self._buffer = bytearray(self.data)
        self._doubles = struct.Struct(f"<{len(self.names)}d")

    def encode(self, stamp: tuple[int, int], **values) -> bytes:
        """One message: ``stamp`` (sec, nanosec), a sequence of floats per field in ``fields``."""
        buffer = self._buffer
        STAMP.pack_into(buffer, HEADER, *stamp)
        for field, value in values.items():
            self._doubles.pack_into(buffer, self.offsets[field], *value)
        return bytes(buffer)

    def encode_many(self, stamp_ns, **values) -> np.ndarray:
        """Messages for (N,) int64 ns stamps and (N, n) values: an (N, size) uint8 array."""
        stamp_ns = np.asarray(stamp_ns, dtype=np.int64)
        rows = np.tile(np.frombuffer(self.data, dtype=np.uint8), (stamp_ns.size, 1))
        sec, nanosec = np.divmod(stamp_ns, 1_000_000_000)
        rows[:, 4:8] = sec.astype("<i4")[:, None].view(np.uint8)
        rows[:, 8:12] = nanosec.astype("<u4")[:, None].view(np.uint8)
        n = len(self.names)
        for field in self.fields:
            offset = self.offsets[field]
            if offset is not None:
                data = np.ascontiguousarray(values[field], dtype="<f8").reshape(-1, n)
                rows[:, offset:offset + 8 * n] = data.view(np.uint8)
        return rows
