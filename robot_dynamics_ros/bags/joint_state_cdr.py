"""
sensor_msgs/JointState in CDR, many messages at a time with numpy.

A robot driver sends the same joint names in every JointState, so the byte layout of its messages
is the same every time: only the stamp and the numbers change.  :class:`Layout` is that layout,
found by walking one message's CDR (OMG XCDR1 as ROS 2 uses it: 4-byte encapsulation header,
then each primitive aligned to its size relative to the end of the header; strings and sequences
as a uint32 length or count first).  With it a whole chunk of messages is decoded by viewing the
joined bytes as an (N, size) array and slicing columns, and outputs are encoded by writing stamps
and numbers into copies of a template message; only messages with another layout (other names,
lengths, frame_id, or big-endian data) go through rosbags' deserializer one by one.  Both
directions are checked against rosbags' and rclpy's serialisation in the tests.
"""
from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

from .types import deserialize, typestore

JOINT_STATE = "sensor_msgs/msg/JointState"
LITTLE_ENDIAN = b"\x00\x01"
HEADER = 4                          # encapsulation header bytes before the CDR data
FIELDS = ("position", "velocity", "effort")


class Layout(NamedTuple):
    """Where things are in the CDR of a JointState with given frame_id, names and lengths."""

    size: int                       # bytes of the message (without trailing padding)
    names_end: int                  # end of the names; bytes 12..names_end identify the layout
    key: bytes                      # raw[12:names_end]: frame_id and names as serialised
    frame_id: str
    names: tuple
    counts: tuple                   # lengths of position, velocity, effort
    count_offsets: tuple            # where each length is stored (uint32)
    offsets: tuple                  # where each float64 array starts


class Group(NamedTuple):
    """Messages of a chunk that share frame_id, names and array lengths, as arrays."""

    rows: np.ndarray                # (m,) their indices in the chunk
    stamp: np.ndarray               # (m,) int64 ns of header.stamp
    frame_id: str
    names: tuple
    position: np.ndarray            # (m, len(position)) float64
    velocity: np.ndarray            # (m, len(velocity))
    effort: np.ndarray              # (m, len(effort))


def _align(pos: int, size: int) -> int:
    rel = pos - HEADER
    return HEADER + (rel + size - 1) // size * size


def layout_of(raw) -> Layout | None:
    """Walk one little-endian JointState's CDR; None if it is not one (e.g. big-endian)."""
    raw = bytes(raw)
    if len(raw) < 16 or raw[:2] != LITTLE_ENDIAN:
        return None
    try:
        pos = 12                                              # after stamp sec, nanosec
        (length,) = struct.unpack_from("<I", raw, pos)
        frame_id = raw[pos + 4:pos + 4 + length - 1].decode()
        pos += 4 + length
        pos = _align(pos, 4)
        (count,) = struct.unpack_from("<I", raw, pos)
        pos += 4
        names = []
        for _ in range(count):
            pos = _align(pos, 4)
            (length,) = struct.unpack_from("<I", raw, pos)
            names.append(raw[pos + 4:pos + 4 + length - 1].decode())
            pos += 4 + length
        names_end = pos
        counts, count_offsets, offsets = [], [], []
        for _ in FIELDS:
            pos = _align(pos, 4)
            (count,) = struct.unpack_from("<I", raw, pos)
            count_offsets.append(pos)
            pos += 4
            if count:
                pos = _align(pos, 8)
            counts.append(count)
            offsets.append(pos)
            pos += 8 * count
    except (struct.error, UnicodeDecodeError):
        return None
    if not pos <= len(raw) <= pos + 3:                       # at most alignment padding after
        return None
    return Layout(pos, names_end, raw[12:names_end], frame_id, tuple(names), tuple(counts),
                  tuple(count_offsets), tuple(offsets))


def _columns(block: np.ndarray, offset: int, count: int) -> np.ndarray:
    """(N, count) float64 from bytes offset.. of each row of an (N, size) uint8 block."""
    return np.ascontiguousarray(block[:, offset:offset + 8 * count]).view("<f8")


def _stamps(block: np.ndarray) -> np.ndarray:
    sec = np.ascontiguousarray(block[:, 4:8]).view("<i4")[:, 0].astype(np.int64)
    nanosec = np.ascontiguousarray(block[:, 8:12]).view("<u4")[:, 0].astype(np.int64)
    return sec * 1_000_000_000 + nanosec


class JointStateDecoder:
    """Decodes chunks of raw JointState messages, remembering the layouts it has seen."""

    MAX_LAYOUTS = 16                # a publisher that changes names every message goes slow

    def __init__(self):
        self.layouts: list[Layout] = []

    def _layout(self, raw) -> Layout | None:
        size = len(raw)
        for layout in self.layouts:
            if layout.size <= size <= layout.size + 3 and raw[12:layout.names_end] == layout.key:
                return layout
        layout = layout_of(raw)
        if layout is not None and len(self.layouts) < self.MAX_LAYOUTS:
            self.layouts.append(layout)
        return layout

    def decode(self, raws) -> list[Group]:
        """Decode raw CDR messages (bytes or memoryviews) into groups of one layout each."""
        groups: dict[tuple, list[int]] = {}
        out = []
        for k, raw in enumerate(raws):
            layout = self._layout(raw)
            if layout is None:
                out.append(self._slow(k, raw))
            else:
                groups.setdefault((layout, len(raw)), []).append(k)
        for (layout, size), rows in groups.items():
            block = np.frombuffer(b"".join(bytes(raws[k]) for k in rows), dtype=np.uint8)
            block = block.reshape(len(rows), size)
            # the lengths must be the layout's too (the key covers frame_id and names only)
            ok = np.ones(len(rows), dtype=bool)
            for offset, count in zip(layout.count_offsets, layout.counts):
                ok &= np.ascontiguousarray(block[:, offset:offset + 4]).view("<u4")[:, 0] == count
            if not ok.all():
                out.extend(self._slow(k, raws[k]) for j, k in enumerate(rows) if not ok[j])
                block, rows = block[ok], [k for j, k in enumerate(rows) if ok[j]]
            values = [_columns(block, off, c) for off, c in zip(layout.offsets, layout.counts)]
            out.append(Group(np.array(rows), _stamps(block), layout.frame_id, layout.names,
                             *values))
        return out

    @staticmethod
    def _slow(k, raw) -> Group:
        msg = deserialize(raw, JOINT_STATE)
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        return Group(np.array([k]), np.array([stamp], dtype=np.int64), msg.header.frame_id,
                     tuple(msg.name), *(np.asarray(getattr(msg, f), dtype=float)[None, :]
                                        for f in FIELDS))


class JointStateEncoder:
    """
    Encodes many JointState messages of one layout: fixed names, frame_id and fields.

    ``fields`` are the number arrays the messages carry (each of len(names) values); the others
    are empty, as the nodes publish them (e.g. ``("effort",)`` for gravity_effort).
    """

    def __init__(self, names, fields=("effort",), frame_id: str = ""):
        store = typestore()
        types = store.types
        n = len(names)
        prototype = types[JOINT_STATE](
            header=types["std_msgs/msg/Header"](
                stamp=types["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id=frame_id),
            name=list(names),
            **{f: np.zeros(n if f in fields else 0) for f in FIELDS})
        template = bytes(store.serialize_cdr(prototype, JOINT_STATE, little_endian=True))
        self.layout = layout_of(template)
        self.template = np.frombuffer(template, dtype=np.uint8)
        self.fields = tuple(fields)

    def encode(self, stamp_ns: np.ndarray, **values) -> np.ndarray:
        """Return an (N, size) uint8 array, row k the CDR of message k (stamps in ns)."""
        stamp_ns = np.asarray(stamp_ns, dtype=np.int64)
        rows = np.tile(self.template, (stamp_ns.size, 1))
        sec, nanosec = np.divmod(stamp_ns, 1_000_000_000)
        rows[:, 4:8] = sec.astype("<i4")[:, None].view(np.uint8)
        rows[:, 8:12] = nanosec.astype("<u4")[:, None].view(np.uint8)
        layout = self.layout
        for field, offset, count in zip(FIELDS, layout.offsets, layout.counts):
            if field in self.fields:
                data = np.ascontiguousarray(values[field], dtype="<f8").reshape(-1, count)
                rows[:, offset:offset + 8 * count] = data.view(np.uint8)
        return rows
