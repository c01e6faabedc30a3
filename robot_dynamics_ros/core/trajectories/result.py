"""The result of a re-timing: the new trajectory and what was computed on the way."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .limits import Limits
from .trajectory import JointTrajectory


@dataclass(frozen=True, eq=False)
class ScaledTrajectory:
    """
    Result of a scaling: the new trajectory (positions, velocities, accelerations, effort).

    ``sample_times`` (M,) are times of the NEW trajectory where ``torques`` (M, n) were evaluated,
    ``original_times`` and ``original_torques`` the same path points on the original trajectory;
    ``path_times`` (M,) is the time law: the original time s(t) reached at each new time;
    ``law``: the time-optimal method's :class:`~robot_dynamics_ros.core.trajectories.topp.TimeLaw`
    (x = sd^2 at its grid points s, u = sdd on each step; None for uniform scaling).
    """

    trajectory: JointTrajectory
    method: str
    scale_factor: float
    duration: float
    original_duration: float
    sample_times: np.ndarray
    torques: np.ndarray
    original_times: np.ndarray
    original_torques: np.ndarray
    path_times: np.ndarray
    limits: Limits
    law: object = None

    def for_controller(self) -> JointTrajectory:
        """
        Return the trajectory to send to joint_trajectory_controller (with effort).

        Uniform scaling keeps the original's fields, so the controller interpolates exactly
        q(t / c).  The time-optimal law's acceleration jumps at its grid points, which the
        controller's quintic (used when accelerations are given) would smooth with overshoot, so
        its accelerations are left out: the cubic through positions and velocities follows the law.
        """
        t = self.trajectory
        if self.method in ("uniform", "jerk_limited"):     # (continuous accelerations: kept)
            return t
        return JointTrajectory(t.joint_names, t.times, t.positions, t.velocities, None, t.effort)
