"""
Core -> rclpy messages: trajectories and stamps as the nodes and the commands publish them.

This module needs the message packages (builtin_interfaces, trajectory_msgs) but no running ROS;
reading messages (rclpy's or rosbags') is ``messages.conversions``, which needs neither.
"""
from __future__ import annotations

import math

from builtin_interfaces.msg import Duration, Time
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
from trajectory_msgs.msg import JointTrajectoryPoint

from ..core import JointTrajectory


def _sec_nanosec(t: float) -> tuple[int, int]:
    sec = math.floor(t)
    return int(sec), min(int(round((t - sec) * 1e9)), 999_999_999)


def seconds_to_stamp(t: float) -> Time:
    """Seconds as a builtin_interfaces Time."""
    sec, nanosec = _sec_nanosec(t)
    return Time(sec=sec, nanosec=nanosec)


def trajectory_to_msg(traj: JointTrajectory, stamp: Time | None = None,
                      effort: bool = True) -> JointTrajectoryMsg:
    """
    Convert a core JointTrajectory to a message (fields that are None stay empty).

    ``effort`` false leaves the points' effort empty (for the joint_trajectory_controllers that
    refuse effort: doc/nodes.md).
    """
    msg = JointTrajectoryMsg()
    if stamp is not None:
        msg.header.stamp = stamp
    msg.joint_names = list(traj.joint_names)
    fields = {"positions": traj.positions, "velocities": traj.velocities,
              "accelerations": traj.accelerations, "effort": traj.effort if effort else None}
    rows = {name: values.tolist() for name, values in fields.items() if values is not None}
    for k, t in enumerate(traj.times.tolist()):
        sec, nanosec = _sec_nanosec(t)
        p = JointTrajectoryPoint(time_from_start=Duration(sec=sec, nanosec=nanosec))
        for name, values in rows.items():
            setattr(p, name, values[k])
        msg.points.append(p)
    return msg
