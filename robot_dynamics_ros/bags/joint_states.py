"""
Joint states from a bag as numpy arrays, streamed in chunks (bounded memory on any bag size).

Usage::

    from robot_dynamics_ros.bags import read_joint_states, load_joint_states
    for chunk in read_joint_states("run_bag", "/joint_states", joint_names=model.joint_names):
        chunk.time, chunk.stamp, chunk.position, chunk.velocity, chunk.effort   # (N,), (N, n)
    everything = load_joint_states("run_bag", joint_names=model.joint_names)   # one JointStates

Each message is decoded by the package's JointState codec (``messages.cdr``; what it does not
read, big-endian data, goes through rosbags) and checked with exactly the torque nodes' checks
(``messages.checks``): matched *by name* onto ``joint_names`` (default: the joints of the
first message), extra joints ignored; a wanted joint missing or a name listed twice, position /
velocity lengths that differ from the names', a needed value that is not finite or beyond
``MAX_JOINT_VALUE``, and bytes that are no JointState (kind ``malformed``) make a message
invalid.  Invalid messages raise :class:`BagError` naming the bag, topic, message index and time
and the problem, or with ``skip_invalid=True`` are dropped and counted per kind in
``rejected``, as a node drops them.  A message without velocity or effort (or with an effort of
another length, which the nodes ignore) has NaN there.  Times are int64 nanoseconds.
"""
from __future__ import annotations

from typing import Iterator, NamedTuple

import numpy as np

from ..core.errors import BagError
from ..messages.cdr import JOINT_STATE, BatchDecoder, Group
from ..messages.checks import JointOrder, joint_state_batch
from .info import seconds_text
from .reader import open_bag
from .types import deserialize

CHUNK = 10_000                      # messages decoded and processed at a time
WHAT = "joint_states"               # how the nodes' checks name the message in their texts


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
    """Return ``topic`` as an absolute name (how the package names the topics it writes)."""
    return topic if topic.startswith("/") else "/" + topic


class Problem(NamedTuple):
    """Messages of a chunk refused for one reason (``rows``: their indices in the chunk)."""

    kind: str
    text: str
    rows: np.ndarray


class Checked(NamedTuple):
    """A chunk of joint states decoded and checked, in the checker's joint order."""

    stamp: np.ndarray               # (m,) int64 ns of header.stamp (0 where malformed)
    position: np.ndarray            # (m, n), NaN where invalid
    velocity: np.ndarray            # (m, n), NaN where invalid or absent
    effort: np.ndarray              # (m, n), NaN where absent or of another length
    ok: np.ndarray                  # (m,) what a node accepts
    problems: list                  # of Problem


def _slow_group(k: int, raw) -> Group:
    """Decode one message the codec does not read (big endian) with rosbags (or rclpy)."""
    msg = deserialize(raw, JOINT_STATE)
    stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
    return Group(np.array([k]), np.array([stamp], dtype=np.int64), msg.header.frame_id,
                 tuple(msg.name), *(np.asarray(getattr(msg, f), dtype=np.float64)[None, :]
                                    for f in ("position", "velocity", "effort")))


class JointStateChecker:
    """Decodes chunks of raw JointState messages and checks them as the torque nodes do."""

    def __init__(self, joint_names=None, require_position: bool = True):
        self.order = None if joint_names is None else JointOrder(joint_names)
        self.require_position = require_position
        self.decoder = BatchDecoder()

    @property
    def joint_names(self) -> tuple:
        return () if self.order is None else self.order.names

    def decode(self, raws) -> tuple[list[Group], list[Problem]]:
        """Decode ``raws`` into groups, and the malformed ones into a Problem."""
        groups, others = self.decoder.decode(raws)
        malformed, text = [], ""
        for k in others:
            try:
                groups.append(_slow_group(k, raws[k]))
            except Exception as exc:  # noqa: BLE001 -- rosbags' and rclpy's decoding errors
                malformed.append(k)
                text = text or (f"{WHAT}: {len(raws[k])} bytes that are not a serialized "
                                f"sensor_msgs/JointState ({type(exc).__name__}: {exc})")
        problems = [Problem("malformed", text, np.array(malformed))] if malformed else []
        return groups, problems

    def check(self, raws) -> Checked:
        """Decode and check ``raws``; see :class:`Checked`."""
        groups, problems = self.decode(raws)
        if self.order is None and groups:           # the first message's joints
            self.order = JointOrder(min(groups, key=lambda g: g.rows[0]).names)
        size, n = len(raws), len(self.joint_names)
        stamp = np.zeros(size, dtype=np.int64)
        q, qd, effort = (np.full((size, n), np.nan) for _ in range(3))
        ok = np.zeros(size, dtype=bool)
        for group in groups:
            rows = group.rows
            stamp[rows] = group.stamp
            position = group.position
            absent = not self.require_position and position.shape[1] == 0
            if absent:                              # e.g. the nodes' effort-only outputs
                position = np.zeros((rows.size, len(group.names)))
            gq, gqd, gok, found = joint_state_batch(group.names, position, group.velocity,
                                                    self.order, what=WHAT)
            q[rows], qd[rows], ok[rows] = (np.nan if absent else gq), gqd, gok
            problems.extend(Problem(p.kind, p.text, rows[p.rows]) for p in found)
            if gok.any() and group.effort.shape[1] == len(group.names):
                effort[rows] = group.effort[:, self.order.indices(group.names, WHAT)]
        return Checked(stamp, q, qd, effort, ok, problems)


def message_error(path, topic: str, index: int, time_ns: int, text: str) -> BagError:
    """Return the error naming one message of a bag."""
    return BagError(f"bag {path}: {topic} message {index} (t = {seconds_text(time_ns)} s): "
                    f"{text}")


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
    with open_bag(bag) as reader:
        connections = reader.topic(topic, JOINT_STATE)
        name = connections[0].topic
        checker = JointStateChecker(joint_names, require_position)
        bar = progress_bar(sum(c.msgcount for c in connections), f"reading {name}", progress)
        try:
            times, raws, seen = [], [], 0
            for _, timestamp, raw in reader.messages(connections):
                times.append(timestamp)
                raws.append(raw)
                if len(raws) == chunk_size:
                    yield _chunk(reader.path, name, checker, times, raws, seen, skip_invalid)
                    seen += len(raws)
                    bar.update(len(raws))
                    times, raws = [], []
            if raws or seen == 0:
                yield _chunk(reader.path, name, checker, times, raws, seen, skip_invalid)
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


def _chunk(path, topic, checker, times, raws, first: int, skip_invalid: bool) -> JointStates:
    """Decode and check one chunk (``first``: index of its first message in the topic)."""
    times = np.array(times, dtype=np.int64)
    checked = checker.check(raws)
    rejected: dict = {}
    for problem in checked.problems:
        rejected[problem.kind] = rejected.get(problem.kind, 0) + problem.rows.size
    if checked.problems and not skip_invalid:
        problem = min(checked.problems, key=lambda p: p.rows.min())
        k = int(problem.rows.min())
        raise message_error(path, topic, first + k, int(times[k]), problem.text)
    keep = checked.ok
    return JointStates(checker.joint_names, times[keep], checked.stamp[keep],
                       checked.position[keep], checked.velocity[keep], checked.effort[keep],
                       rejected)


def progress_bar(total: int, description: str, enabled: bool):
    """Return a tqdm progress bar on stderr (disabled unless ``enabled``)."""
    from tqdm import tqdm
    return tqdm(total=total, desc=description, unit="msg", disable=not enabled, leave=False)
