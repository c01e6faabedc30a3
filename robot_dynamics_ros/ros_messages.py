"""Conversions between ROS messages and the numpy arrays of ``robot_dynamics_ros.core``.

Joint vectors are matched *by name*: a message may list the joints in any order and may carry
more joints than the robot (e.g. a gripper), but every joint the robot needs must be there.
Problems raise :class:`MessageRejected` with a short ``kind`` (used to throttle warnings per
kind of problem) and a message that says why; nothing is computed from a rejected message.

This module needs rclpy's message
packages (sensor_msgs, std_msgs, trajectory_msgs) but no running ROS.
"""
from __future__ import annotations

import math

import numpy as np
from builtin_interfaces.msg import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
from trajectory_msgs.msg import JointTrajectoryPoint

from .core import JointTrajectory


class MessageRejected(ValueError):
    """A message (or service request) that cannot be used; ``kind`` names the class of problem."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class JointOrder:
    """The configured joint order and the mapping of incoming name lists onto it.

    ``indices(names)`` returns, for each configured joint, its index in ``names``.  Results are
    cached per distinct name list (a robot driver sends the same list every time), so matching
    costs one dict look-up per message.
    """

    def __init__(self, joint_names):
        self.names = tuple(joint_names)
        self._cache: dict[tuple, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.names)

    def indices(self, names, what: str = "message") -> np.ndarray:
        key = tuple(names)
        index = self._cache.get(key)
        if index is not None:
            return index
        position = {}
        for i, name in enumerate(key):
            if name in position:
                raise MessageRejected("duplicate", f"{what}: joint '{name}' appears twice in name")
            position[name] = i
        missing = [name for name in self.names if name not in position]
        if missing:
            raise MessageRejected("missing", f"{what}: missing joint(s) {missing} "
                                             f"(needs {list(self.names)}, got {list(key)})")
        index = np.array([position[name] for name in self.names], dtype=int)
        if len(self._cache) < 64:      # bounded: a misbehaving publisher cannot grow it forever
            self._cache[key] = index
        return index


def _pick(values, index: np.ndarray, field: str, order: JointOrder, what: str) -> np.ndarray:
    """values[index] as floats, rejecting non-finite entries for the needed joints."""
    a = np.asarray(values, dtype=float)[index]
    if not np.isfinite(a).all():
        j = int(np.flatnonzero(~np.isfinite(a))[0])
        raise MessageRejected("non-finite", f"{what}: {field} of joint '{order.names[j]}' is {a[j]}")
    return a


def joint_state_arrays(msg: JointState, order: JointOrder, need_velocity: bool = False):
    """(q, qd) in the configured order from a JointState; qd is None when the message has none.

    Rejects (MessageRejected): position/velocity lengths different from name's, a needed joint
    missing, a joint listed twice, NaN/Inf in a needed entry, or no velocity when ``need_velocity``.
    Effort is ignored.
    """
    names = msg.name
    count = len(names)
    if len(msg.position) != count:
        raise MessageRejected("length", f"joint_states: {count} names but {len(msg.position)} positions")
    if len(msg.velocity) not in (0, count):
        raise MessageRejected("length", f"joint_states: {count} names but {len(msg.velocity)} velocities")
    index = order.indices(names, "joint_states")
    q = _pick(msg.position, index, "position", order, "joint_states")
    if len(msg.velocity) == 0:
        if need_velocity:
            raise MessageRejected("velocity", "joint_states: no velocity, which this node needs "
                                              "(computed-torque mode or friction compensation)")
        return q, None
    return q, _pick(msg.velocity, index, "velocity", order, "joint_states")


def request_vector(values, index: np.ndarray | None, n: int, field: str, names, allow_empty: bool):
    """A joint vector from a service request, reordered to the model order with ``index``.

    Empty means zeros when ``allow_empty``.  Raises MessageRejected naming the field.
    """
    if len(values) == 0 and allow_empty:
        return np.zeros(n)
    if len(values) != n:
        raise MessageRejected("length", f"{field}: expected {n} values (one per joint in {list(names)}), "
                                        f"got {len(values)}")
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
    return stamp.sec + 1e-9 * stamp.nanosec


def seconds_to_stamp(t: float) -> Time:
    sec = math.floor(t)
    nanosec = min(int(round((t - sec) * 1e9)), 999_999_999)
    return Time(sec=int(sec), nanosec=nanosec)


def effort_state_msg(names, effort, stamp: Time, position=None, velocity=None) -> JointState:
    """sensor_msgs/JointState with names and effort (and, optionally, positions/velocities)."""
    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(names)
    msg.effort = effort.tolist()
    if position is not None:
        msg.position = position.tolist()
    if velocity is not None:
        msg.velocity = velocity.tolist()
    return msg


def effort_command_msg(effort) -> Float64MultiArray:
    """std_msgs/Float64MultiArray as effort_controllers/JointGroupEffortController expects:
    one value per joint, in the controller's joint order, no layout."""
    msg = Float64MultiArray()
    msg.data = effort.tolist()
    return msg


def trajectory_from_msg(msg: JointTrajectoryMsg, order: JointOrder) -> JointTrajectory:
    """trajectory_msgs/JointTrajectory -> core JointTrajectory in the configured joint order.

    The message may list more joints than needed and in any order.  Per-point fields follow
    joint_trajectory_controller: an empty array means "not given"; every point must give the same
    fields (checked by the core).  Raises MessageRejected.
    """
    if len(msg.points) == 0:
        raise MessageRejected("empty", "reference_trajectory: no points")
    index = order.indices(msg.joint_names, "reference_trajectory")
    names = list(msg.joint_names)
    points = []
    for k, p in enumerate(msg.points):
        point = {"time_from_start": p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec}
        for field in ("positions", "velocities", "accelerations"):
            values = getattr(p, field)
            if len(values) not in (0, len(names)):
                raise MessageRejected("length", f"reference_trajectory: point {k} has {len(values)} "
                                                f"{field} for {len(names)} joints")
            if len(values):
                point[field] = np.asarray(values, dtype=float)[index].tolist()
        points.append(point)
    try:
        return JointTrajectory.from_dict({"joint_names": list(order.names), "points": points},
                                         source="reference_trajectory")
    except ValueError as exc:
        raise MessageRejected("trajectory", str(exc)) from None


def trajectory_to_msg(traj: JointTrajectory, stamp: Time | None = None) -> JointTrajectoryMsg:
    """core JointTrajectory -> trajectory_msgs/JointTrajectory (fields that are None stay empty)."""
    msg = JointTrajectoryMsg()
    if stamp is not None:
        msg.header.stamp = stamp
    msg.joint_names = list(traj.joint_names)
    for k in range(traj.num_points):
        p = JointTrajectoryPoint()
        t = float(traj.times[k])
        p.time_from_start.sec = int(math.floor(t))
        p.time_from_start.nanosec = min(int(round((t - math.floor(t)) * 1e9)), 999_999_999)
        p.positions = traj.positions[k].tolist()
        if traj.velocities is not None:
            p.velocities = traj.velocities[k].tolist()
        if traj.accelerations is not None:
            p.accelerations = traj.accelerations[k].tolist()
        if traj.effort is not None:
            p.effort = traj.effort[k].tolist()
        msg.points.append(p)
    return msg
