"""
Joint states from a bag as numpy arrays, streamed in chunks (bounded memory on any bag size).

    from robot_dynamics_ros.bags import read_joint_states, load_joint_states
    for chunk in read_joint_states("run_bag", "/joint_states", joint_names=model.joint_names):
        chunk.time, chunk.stamp, chunk.position, chunk.velocity, chunk.effort   # (N,), (N, n)
    everything = load_joint_states("run_bag", joint_names=model.joint_names)   # one JointStates

Each message is matched *by name* onto ``joint_names`` (default: the joints of the first
message), as the nodes match them: extra joints are ignored, a wanted joint that is missing or
listed twice, position/velocity lengths that differ from the names', or a non-finite position or
velocity make the message invalid.  Invalid messages raise :class:`BagError` naming the message
(index, time) and the problem, or with ``skip_invalid=True`` are dropped and counted per reason in
``rejected``, as a node drops them.  A message without velocity or effort (or with an effort of
another length, which the nodes ignore) has NaN there.
"""
from __future__ import annotations

from typing import Iterator, NamedTuple

import numpy as np

from ..core.errors import BagError
from .joint_state_cdr import JOINT_STATE, Group, JointStateDecoder
from .storage import messages, open_bag

CHUNK = 10_000                      # messages decoded and processed at a time


class JointStates(NamedTuple):
    """Joint states in ``joint_names`` order, one row per message."""

    joint_names: tuple
    time: np.ndarray                # (N,) int64 ns: when the message was recorded (bag time)
    stamp: np.ndarray               # (N,) int64 ns: its header.stamp
    position: np.ndarray            # (N, n)
    velocity: np.ndarray            # (N, n), NaN rows where a message has no velocity
    effort: np.ndarray              # (N, n), NaN rows where a message has no (usable) effort
    rejected: dict                  # reason -> number of messages dropped (skip_invalid)


def topic_name(topic: str) -> str:
    """Return ``topic`` as an absolute name (bags store absolute names)."""
    return topic if topic.startswith("/") else "/" + topic


def topic_connections(reader, topic: str, msgtype: str):
    """Return the bag's connections on ``topic``; BagError if absent or of another type."""
    topic = topic_name(topic)
    found = [c for c in reader.connections if c.topic == topic]
    if not found:
        topics = sorted({c.topic for c in reader.connections})
        raise BagError(f"bag {reader.path}: no topic '{topic}' (its topics: {topics})")
    wrong = sorted({c.msgtype for c in found if c.msgtype != msgtype})
    if wrong:
        raise BagError(f"bag {reader.path}: topic '{topic}' has type {wrong[0]}, expected "
                       f"{msgtype}")
    return found


class MessageProblem(NamedTuple):
    """Why some messages of a group are invalid (``rows``: their indices within the group)."""

    reason: str                     # short kind: missing, duplicate, length, non-finite
    text: str
    rows: np.ndarray


class JointStateArrays:
    """Turns decoded groups into arrays in one joint order, with the nodes' validity rules."""

    def __init__(self, joint_names=None, require_position: bool = True):
        self.joint_names = None if joint_names is None else tuple(joint_names)
        self.require_position = require_position
        self._index: dict[tuple, np.ndarray | MessageProblem] = {}

    def _index_of(self, names: tuple):
        known = self._index.get(names)
        if known is not None:
            return known
        if self.joint_names is None:
            self.joint_names = names
        position = {}
        repeated = [name for i, name in enumerate(names) if position.setdefault(name, i) != i]
        missing = [name for name in self.joint_names if name not in position]
        if repeated or missing:
            text = (f"joint '{repeated[0]}' appears twice in name" if repeated else
                    f"missing joint(s) {missing[:8]} (needs {list(self.joint_names)[:8]})")
            result = MessageProblem("duplicate" if repeated else "missing", text, np.zeros(0))
        else:
            result = np.array([position[name] for name in self.joint_names], dtype=np.intp)
        if len(self._index) < 64:
            self._index[names] = result
        return result

    def convert(self, group: Group):
        """
        Return (position, velocity, effort, ok, problems) of a group in joint_names order.

        ``ok`` (m,) marks the valid rows; ``problems`` lists what is wrong with the others.
        """
        m, count = group.rows.size, len(group.names)
        index = self._index_of(group.names)
        n = len(self.joint_names)
        nan = np.full((m, n), np.nan)
        if isinstance(index, MessageProblem):
            return nan, nan, nan, np.zeros(m, bool), [index._replace(rows=np.arange(m))]
        lengths = [group.position.shape[1], group.velocity.shape[1], group.effort.shape[1]]
        positions_ok = lengths[0] == count or (lengths[0] == 0 and not self.require_position)
        if not positions_ok or lengths[1] not in (0, count):
            field = "velocities" if positions_ok else "positions"
            text = f"{count} names but {lengths[0 if field == 'positions' else 1]} {field}"
            return nan, nan, nan, np.zeros(m, bool), [MessageProblem("length", text,
                                                                     np.arange(m))]
        q = group.position[:, index] if lengths[0] else nan
        qd = group.velocity[:, index] if lengths[1] else nan
        tau = group.effort[:, index] if lengths[2] == count else nan
        finite_q = np.isfinite(q).all(axis=1) if lengths[0] else np.ones(m, bool)
        finite_qd = np.isfinite(qd).all(axis=1) if lengths[1] else np.ones(m, bool)
        ok = finite_q & finite_qd
        problems = []
        if not ok.all():
            bad = np.flatnonzero(~ok)
            r = int(bad[0])
            field, values = ("position", q[r]) if not finite_q[r] else ("velocity", qd[r])
            j = int(np.flatnonzero(~np.isfinite(values))[0])
            problems.append(MessageProblem(
                "non-finite", f"{field} of joint '{self.joint_names[j]}' is {values[j]}", bad))
        return q, qd, tau, ok, problems


def read_joint_states(bag, topic: str = "/joint_states", joint_names=None, chunk_size: int = CHUNK,
                      skip_invalid: bool = False, progress: bool = False,
                      require_position: bool = True) -> Iterator[JointStates]:
    """
    Yield the joint states on ``topic`` of ``bag`` as :class:`JointStates` chunks, in time order.

    ``joint_names``: the column order (e.g. ``model.joint_names``; default: the first message's
    names).  ``skip_invalid``: drop invalid messages (counted in ``rejected``) instead of raising
    BagError.  ``progress``: a tqdm progress bar on stderr.  Memory is bounded by ``chunk_size``.
    ``require_position=False`` accepts messages without positions (NaN there), such as the
    effort-only outputs of the nodes.
    """
    if chunk_size < 1:
        raise BagError(f"chunk_size: must be >= 1, got {chunk_size}")
    topic = topic_name(topic)
    with open_bag(bag) as reader:
        connections = topic_connections(reader, topic, JOINT_STATE)
        total = sum(c.msgcount for c in connections)
        arrays = JointStateArrays(joint_names, require_position)
        decoder = JointStateDecoder()
        bar = _progress(total, f"reading {topic}", progress)
        try:
            times, raws, seen = [], [], 0
            for _, timestamp, raw in messages(reader, connections):
                times.append(timestamp)
                raws.append(raw)
                if len(raws) == chunk_size:
                    yield _chunk(reader, topic, decoder, arrays, times, raws, seen, skip_invalid)
                    seen += len(raws)
                    bar.update(len(raws))
                    times, raws = [], []
            if raws or seen == 0:
                yield _chunk(reader, topic, decoder, arrays, times, raws, seen, skip_invalid)
                bar.update(len(raws))
        finally:
            bar.close()


def load_joint_states(bag, topic: str = "/joint_states", joint_names=None,
                      skip_invalid: bool = False, progress: bool = False,
                      require_position: bool = True) -> JointStates:
    """Read all joint states on ``topic`` into one :class:`JointStates` (see read_joint_states)."""
    chunks = list(read_joint_states(bag, topic, joint_names, skip_invalid=skip_invalid,
                                    progress=progress, require_position=require_position))
    rejected: dict = {}
    for c in chunks:
        for reason, count in c.rejected.items():
            rejected[reason] = rejected.get(reason, 0) + count
    names = next((c.joint_names for c in chunks if c.joint_names), ())
    return JointStates(names, *(np.concatenate([getattr(c, f) for c in chunks])
                                for f in ("time", "stamp", "position", "velocity", "effort")),
                       rejected)


def _chunk(reader, topic, decoder, arrays, times, raws, first: int,
           skip_invalid: bool) -> JointStates:
    """Decode one chunk (``first``: index of its first message in the topic)."""
    times = np.array(times, dtype=np.int64)
    groups = decoder.decode(raws) if raws else []
    if arrays.joint_names is None and groups:       # the first message's joints
        arrays.joint_names = min(groups, key=lambda g: g.rows[0]).names
    n, size = len(arrays.joint_names or ()), len(raws)
    stamp = np.zeros(size, dtype=np.int64)
    out = {f: np.full((size, n), np.nan) for f in ("position", "velocity", "effort")}
    keep = np.zeros(size, dtype=bool)
    rejected: dict = {}
    earliest = None                                 # (index in chunk, problem text)
    for group in groups:
        q, qd, tau, ok, problems = arrays.convert(group)
        rows = group.rows
        for problem in problems:
            k = int(rows[problem.rows[0]])
            if earliest is None or k < earliest[0]:
                earliest = (k, problem.text)
            rejected[problem.reason] = rejected.get(problem.reason, 0) + problem.rows.size
        stamp[rows] = group.stamp
        keep[rows] = ok
        out["position"][rows], out["velocity"][rows], out["effort"][rows] = q, qd, tau
    if earliest is not None and not skip_invalid:
        k, text = earliest
        raise BagError(f"bag {reader.path}: {topic} message {first + k} (t = "
                       f"{times[k] * 1e-9:.9f} s): {text}")
    return JointStates(arrays.joint_names or (), times[keep], stamp[keep],
                       *(out[f][keep] for f in ("position", "velocity", "effort")), rejected)


def _progress(total: int, description: str, enabled: bool):
    from tqdm import tqdm
    return tqdm(total=total, desc=description, unit="msg", disable=not enabled, leave=False)
