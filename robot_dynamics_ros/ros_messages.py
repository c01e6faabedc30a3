"""
Conversions between ROS messages and the numpy arrays of ``robot_dynamics_ros.core``.

Joint vectors are matched *by name* (``core.joint_index``): a message may list the joints in any
order and may carry more joints than the robot (e.g. a gripper), but every joint the robot needs
must be there.  Problems raise :class:`MessageRejected` with a short ``kind`` (the reason counted
in diagnostics and used to throttle warnings) and a message that says why; nothing is computed
from a rejected message.

This module needs the message packages (sensor_msgs, std_msgs, trajectory_msgs) but no running ROS.
"""
from __future__ import annotations

import math

import numpy as np
from builtin_interfaces.msg import Duration, Time
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
from trajectory_msgs.msg import JointTrajectoryPoint

from .core import InputError, JointTrajectory, joint_index

# A message naming more joints than this is refused before any per-joint work (whole-body
# joint_states of a humanoid carry ~100): one absurd message must not stall a node (issue 10, N5).
MAX_MESSAGE_JOINTS = 1024
# A reference trajectory with more points than this is refused before conversion.
MAX_TRAJECTORY_POINTS = 100_000
# A measured position [rad, m] or velocity [rad/s, m/s] beyond this is no measurement of a robot.
MAX_JOINT_VALUE = 1e6


class MessageRejected(InputError):
    """A message (or service request) that cannot be used; ``kind`` names the class of problem."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class JointOrder:
    """
    The configured joint order and the mapping of incoming name lists onto it.

    ``indices(names)`` returns, for each configured joint, its index in ``names``.  Results are
    cached per distinct name list (a robot driver sends the same list every time), so matching
    costs one dict look-up per message.
    """

    CACHED_ORDERS = 64       # bounded: a misbehaving publisher cannot grow the cache forever

    def __init__(self, joint_names):
        self.names = tuple(joint_names)
        self._cache: dict[tuple, np.ndarray] = {}
        self._lists: dict[tuple, list] = {}

    def __len__(self) -> int:
        return len(self.names)

    def indices(self, names, what: str = "message", allow_extra: bool = True) -> np.ndarray:
        if len(names) > MAX_MESSAGE_JOINTS:
            raise MessageRejected("too large", f"{what}: {len(names)} joint names, more than the "
                                               f"{MAX_MESSAGE_JOINTS} accepted in one message")
        key = tuple(names)
        index = self._cache.get((key, allow_extra))
        if index is not None:
            return index
        try:
            index = joint_index(self.names, key, f"{what}: joint names", allow_extra)
        except InputError as exc:
            raise MessageRejected("joint names", str(exc)) from None
        if len(self._cache) < self.CACHED_ORDERS:
            self._cache[(key, allow_extra)] = index
        return index

    def index_list(self, names, what: str = "message") -> list:
        """:meth:`indices` (extra joints allowed) as a list of ints, for plain-Python indexing."""
        index = self._lists.get(tuple(names)) if len(names) <= MAX_MESSAGE_JOINTS else None
        if index is None:
            index = self.indices(names, what).tolist()
            if len(self._lists) < self.CACHED_ORDERS:
                self._lists[tuple(names)] = index
        return index


def plausible_joint_values(values) -> bool:
    """
    Tell whether every value is finite and within ``MAX_JOINT_VALUE`` (the common case, cheaply).

    One sum: every |value| <= the limit if the sum is, and NaN fails it.  False does not say
    which value is wrong: :func:`_pick` finds it for the message.
    """
    return sum(map(abs, values)) <= MAX_JOINT_VALUE


def _pick(values, index: list, field: str, names, what: str) -> list:
    """values[index] as a list, rejecting non-finite and absurd entries for the needed joints."""
    picked = [values[i] for i in index]
    if plausible_joint_values(picked):
        return picked
    for j, value in enumerate(picked):
        value = float(value)
        if not abs(value) <= MAX_JOINT_VALUE:
            if math.isfinite(value):
                raise MessageRejected("out of range", f"{what}: {field} of joint '{names[j]}' "
                                                      f"is {value:g}, beyond {MAX_JOINT_VALUE:g}")
            raise MessageRejected("non-finite", f"{what}: {field} of joint '{names[j]}' is "
                                                f"{value}")
    return picked


def joint_state_values(msg: JointState, order: JointOrder, need_velocity: bool = False):
    """
    (q, qd) in the configured order from a JointState, as lists; qd is None when there is none.

    Rejects (MessageRejected): position/velocity lengths different from name's, a needed joint
    missing, a joint listed twice, NaN/Inf or a value beyond ``MAX_JOINT_VALUE`` in a needed
    entry, or no velocity when ``need_velocity``.  Effort is ignored.  Plain Python on the
    per-message path (no numpy for a handful of joints).
    """
    names = msg.name
    count = len(names)
    if len(msg.position) != count:
        raise MessageRejected("length", f"joint_states: {count} names but {len(msg.position)} "
                                        "positions")
    if len(msg.velocity) not in (0, count):
        raise MessageRejected("length", f"joint_states: {count} names but {len(msg.velocity)} "
                                        "velocities")
    index = order.index_list(names, "joint_states")
    q = _pick(msg.position, index, "position", order.names, "joint_states")
    if len(msg.velocity) == 0:
        if need_velocity:
            raise MessageRejected("no velocity", "joint_states: no velocity, which this node "
                                                 "needs (computed-torque mode or friction "
                                                 "compensation)")
        return q, None
    return q, _pick(msg.velocity, index, "velocity", order.names, "joint_states")


def joint_state_arrays(msg: JointState, order: JointOrder, need_velocity: bool = False):
    """:func:`joint_state_values` as float arrays (qd None when the message has no velocity)."""
    q, qd = joint_state_values(msg, order, need_velocity)
    return np.array(q, dtype=float), None if qd is None else np.array(qd, dtype=float)


def request_vector(values, index: np.ndarray | None, n: int, field: str, names, allow_empty: bool):
    """
    Read a joint vector from a service request, reordered to the model order with ``index``.

    Empty means zeros when ``allow_empty``.  Raises MessageRejected naming the field.
    """
    if len(values) == 0 and allow_empty:
        return np.zeros(n)
    if len(values) != n:
        raise MessageRejected("length", f"{field}: expected {n} values (one per joint in "
                                        f"{list(names)}), got {len(values)}")
    a = np.asarray(values, dtype=float)
    if not np.isfinite(a).all():
        j = int(np.flatnonzero(~np.isfinite(a))[0])
        raise MessageRejected("non-finite", f"{field}: value for joint '{names[j]}' is {a[j]}")
    if index is None:
        return a
    out = np.empty(n)
    out[index] = a
    return out


def stamp_seconds(stamp: Time) -> float:
    """Convert a builtin_interfaces Time (or Duration) to seconds."""
    return stamp.sec + 1e-9 * stamp.nanosec


def _sec_nanosec(t: float) -> tuple[int, int]:
    sec = math.floor(t)
    return int(sec), min(int(round((t - sec) * 1e9)), 999_999_999)


def seconds_to_stamp(t: float) -> Time:
    """Seconds as a builtin_interfaces Time."""
    sec, nanosec = _sec_nanosec(t)
    return Time(sec=sec, nanosec=nanosec)


_POINT_FIELDS = ("positions", "velocities", "accelerations")


def trajectory_from_msg(msg: JointTrajectoryMsg, order: JointOrder, allow_extra: bool = True,
                        what: str = "reference_trajectory") -> JointTrajectory:
    """
    trajectory_msgs/JointTrajectory -> core JointTrajectory in the configured joint order.

    The message may list the joints in any order (and, with ``allow_extra``, more joints than
    needed).  Per-point fields follow joint_trajectory_controller: an empty array means "not
    given"; every point must give the same fields (checked by the core).  Raises MessageRejected.
    """
    points = msg.points
    if len(points) == 0:
        raise MessageRejected("empty", f"{what}: no points")
    if len(points) > MAX_TRAJECTORY_POINTS:
        raise MessageRejected("too large", f"{what}: {len(points)} points, more than the "
                                           f"{MAX_TRAJECTORY_POINTS} accepted")
    index = order.indices(msg.joint_names, what, allow_extra)
    count = len(msg.joint_names)
    columns = {}
    for field in _POINT_FIELDS:
        lengths = {len(getattr(p, field)) for p in points}
        bad = lengths - {0, count}
        if bad:
            k = next(k for k, p in enumerate(points) if len(getattr(p, field)) in bad)
            got = len(getattr(points[k], field))
            raise MessageRejected("length", f"{what}: point {k} has {got} {field} for {count} "
                                            "joints")
        if lengths == {count}:
            columns[field] = np.array([getattr(p, field) for p in points], dtype=float)[:, index]
        elif lengths == {0, count}:
            first = len(getattr(points[0], field))
            k = next(k for k, p in enumerate(points) if len(getattr(p, field)) != first)
            raise MessageRejected("trajectory", f"{what}: points[{k}].{field}: given in some "
                                                "points but not in others; give it in every point "
                                                "or in none")
    if "positions" not in columns:
        raise MessageRejected("trajectory", f"{what}: positions: missing")
    times = [stamp_seconds(p.time_from_start) for p in points]
    try:
        return JointTrajectory(order.names, times, columns["positions"], columns.get("velocities"),
                               columns.get("accelerations"))
    except ValueError as exc:
        raise MessageRejected("trajectory", f"{what}: {exc}") from None


def trajectory_to_msg(traj: JointTrajectory, stamp: Time | None = None) -> JointTrajectoryMsg:
    """Convert a core JointTrajectory to a message (fields that are None stay empty)."""
    msg = JointTrajectoryMsg()
    if stamp is not None:
        msg.header.stamp = stamp
    msg.joint_names = list(traj.joint_names)
    fields = {"positions": traj.positions, "velocities": traj.velocities,
              "accelerations": traj.accelerations, "effort": traj.effort}
    rows = {name: values.tolist() for name, values in fields.items() if values is not None}
    for k, t in enumerate(traj.times.tolist()):
        sec, nanosec = _sec_nanosec(t)
        p = JointTrajectoryPoint(time_from_start=Duration(sec=sec, nanosec=nanosec))
        for name, values in rows.items():
            setattr(p, name, values[k])
        msg.points.append(p)
    return msg
