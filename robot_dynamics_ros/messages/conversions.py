"""
Conversions between message objects and the numpy arrays of ``robot_dynamics_ros.core``.

Joint vectors are matched *by name* (``core.joint_index``): a message may list the joints in any
order and may carry more joints than the robot (e.g. a gripper), but every joint the robot needs
must be there.  Problems raise :class:`MessageRejected` with a short ``kind`` (the reason counted
in diagnostics and used to throttle warnings) and a message that says why; nothing is computed
from a rejected message.

ROS-free: a message is read by its fields (``name``, ``position``, ``points``...), so the same
functions take rclpy's messages in the nodes and rosbags' in ``bag process``.  Building rclpy
messages from the core's types is ``messages.ros``.
"""
from __future__ import annotations

import numpy as np

from ..core import JointTrajectory
# The checks of a joint_states message live in messages.checks (ROS-free, shared with the bag
# tools); their names stay importable from here.
from .checks import (INPUT_BOUNDS, MAX_JOINT_VALUE,  # noqa: F401
                     MAX_MESSAGE_JOINTS, JointOrder, MessageRejected, check_bounded,
                     joint_state_lists, pick, plausible_joint_values)

# A reference trajectory with more points than this is refused before conversion.
MAX_TRAJECTORY_POINTS = 100_000


def check_joint_values(values: np.ndarray, field: str, names, what: str) -> np.ndarray:
    """
    Return ``values`` ((n,) or (points, n) floats) if every one is within ``MAX_JOINT_VALUE``.

    Otherwise MessageRejected naming the field, the joint (and the point): the same bound,
    kinds and words as a joint state's (``checks.check_bounded``).
    """
    return check_bounded(values, field, names, what)


def joint_state_values(msg, order: JointOrder, need_velocity: bool = False):
    """
    (q, qd) in the configured order from a sensor_msgs/JointState, as lists; qd None if absent.

    The checks are ``checks``' (the same the bag tools apply): position/velocity
    lengths different from name's, a needed joint missing, a joint listed twice, NaN/Inf or a
    value beyond ``MAX_JOINT_VALUE`` in a needed entry, or no velocity when ``need_velocity``
    raise MessageRejected.  Effort is ignored.
    """
    return joint_state_lists(msg.name, msg.position, msg.velocity, order, need_velocity)


def joint_state_effort(msg, order: JointOrder) -> list:
    """
    Return the effort of a JointState in the configured order, checked as positions are.

    Rejects (MessageRejected): an effort length different from name's (none: "no effort"), a
    needed joint missing or listed twice, NaN/Inf or a value beyond ``MAX_JOINT_VALUE``.
    """
    count = len(msg.name)
    if len(msg.effort) == 0:
        raise MessageRejected("no effort", "joint_states: no effort, which this node needs (the "
                                           "joint torque)")
    if len(msg.effort) != count:
        raise MessageRejected("length", f"joint_states: {count} names but {len(msg.effort)} "
                                        "efforts")
    index = order.index_list(msg.name, "joint_states")
    return pick(msg.effort, index, "effort", order.names, "joint_states")


def joint_state_arrays(msg, order: JointOrder, need_velocity: bool = False):
    """:func:`joint_state_values` as float arrays (qd None when the message has no velocity)."""
    q, qd = joint_state_values(msg, order, need_velocity)
    return np.array(q, dtype=float), None if qd is None else np.array(qd, dtype=float)


def request_vector(values, index: np.ndarray | None, n: int, field: str, names, allow_empty: bool):
    """
    Read a joint vector from a service request, reordered to the model order with ``index``.

    Empty means zeros when ``allow_empty``.  Raises MessageRejected naming the field (a wrong
    length, or a value that is not finite or beyond ``MAX_JOINT_VALUE``, as in joint_states).
    """
    if len(values) == 0 and allow_empty:
        return np.zeros(n)
    if len(values) != n:
        raise MessageRejected("length", f"{field}: expected {n} values (one per joint in "
                                        f"{list(names)}), got {len(values)}")
    a = check_joint_values(np.asarray(values, dtype=float), field, names, "request")
    if index is None:
        return a
    out = np.empty(n)
    out[index] = a
    return out


def stamp_seconds(stamp) -> float:
    """Convert a builtin_interfaces Time (or Duration) to seconds."""
    return stamp.sec + 1e-9 * stamp.nanosec


_POINT_FIELDS = ("positions", "velocities", "accelerations")


def trajectory_from_msg(msg, order: JointOrder, allow_extra: bool = True,
                        what: str = "reference_trajectory") -> JointTrajectory:
    """
    trajectory_msgs/JointTrajectory -> core JointTrajectory in the configured joint order.

    The message may list the joints in any order (and, with ``allow_extra``, more joints than
    needed).  Per-point fields follow joint_trajectory_controller: an empty array means "not
    given"; every point must give the same fields (checked by the core).  Every value gets the
    checks of a joint state's (:func:`check_joint_values`), before anything uses the trajectory.
    Raises MessageRejected.
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
            columns[field] = check_joint_values(
                np.array([getattr(p, field) for p in points], dtype=float)[:, index], field,
                order.names, what)
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
