"""
A reference trajectory sampled as joint_trajectory_controller (JTC) samples its active trajectory.

JTC (ros2_controllers, ``joint_trajectory_controller/trajectory.cpp``, ``Trajectory::sample``)
does three things a stand-alone :class:`JointTrajectory` cannot, because they depend on when the
trajectory was received and on the robot's state at that time:

* a start time: the message's header stamp, or "now" (the first sample) when the stamp is zero;
* a lead-in: before the first point is due, the reference moves from the state measured at the
  first sample (JTC's ``time_before_traj_msg_`` / ``state_before_traj_msg_``) to the first point,
  cubic when both that state and the point carry velocities, else linear (JTC's
  ``interpolate_between_points`` on that segment);
* after the last point, the last point as given (:meth:`JointTrajectory.sample` does this).

A reference that ends before the current time is refused (JTC's ``validate_trajectory_msg``:
"Received trajectory with non-zero start time that ends in the past"), and a clock that goes back
before the first sample (a simulation reset) gives no sample, as JTC finds no valid segment then.

Times are integer nanoseconds (a ROS clock's ``nanoseconds``), so nothing is rounded before the
difference to the start is taken.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import InputError, TrajectoryError
from .point_sampling import PointSampler
from .trajectory import JointTrajectory

NS = 1_000_000_000


class ReferenceSample(NamedTuple):
    """The reference at one instant, in the trajectory's joint order."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


class Reference:
    """
    A trajectory with JTC's start time and lead-in; :meth:`sample` it at the control instants.

    ``start``: ns of time_from_start = 0 on the sampling clock, 0 = at the first sample.
    ``now``: the clock when the reference is received; a reference with a non-zero start that
    ends before ``now`` raises TrajectoryError ("ends in the past").  The first :meth:`sample`
    fixes the lead-in; a Reference is used by one control loop (one thread) at a time.
    """

    def __init__(self, trajectory: JointTrajectory, start: int, now: int):
        end = start + round(trajectory.duration * NS)
        if start != 0 and end < now:
            raise TrajectoryError(
                f"reference trajectory: starts at {start / NS:.3f} s and ends "
                f"{trajectory.duration:g} s later, before now ({now / NS:.3f} s): "
                "ends in the past")
        self.trajectory = trajectory
        self.start = start
        self.first_sample: int | None = None      # ns: JTC's time_before_traj_msg_
        self._lead_in: JointTrajectory | None = None
        self._samplers: tuple | None = None        # PointSamplers (trajectory, lead-in)

    def sample(self, now: int, position, velocity=None) -> ReferenceSample:
        """
        (q_ref, qd_ref, qdd_ref) at clock time ``now`` [ns] for the measured state.

        ``position`` / ``velocity`` (or None) are the measured state, used by the first call
        only (the lead-in starts there).  Raises InputError when the clock is before the first
        sample.
        """
        lead_in, t = self._locate(now, position, velocity)
        return ReferenceSample(*(self._lead_in if lead_in else self.trajectory).sample(t))

    def sample_values(self, now: int, position, velocity=None) -> ReferenceSample:
        """
        :meth:`sample` as lists of n floats, computed in plain Python (``PointSampler``).

        The control loop's path: one sample per message without numpy; the same values as
        :meth:`sample` to rounding.  The lists may be shared between calls: do not modify them.
        """
        lead_in, t = self._locate(now, position, velocity)
        if self._samplers is None:
            self._samplers = (PointSampler(self.trajectory),
                              None if self._lead_in is None else PointSampler(self._lead_in))
        return ReferenceSample(*self._samplers[lead_in].sample(t))

    def _locate(self, now: int, position, velocity) -> tuple[bool, float]:
        """(whether ``now`` is in the lead-in, the time [s] to sample that trajectory at)."""
        if self.first_sample is None:
            self._begin(now, position, velocity)
        elif now < self.first_sample:
            raise InputError("clock went back before the reference was first sampled (simulation "
                             "reset?); no reference until a new one is given")
        t = (now - self.start) / NS
        if self._lead_in is not None and t < self.trajectory.times[0]:
            return True, (now - self.first_sample) / NS
        return False, t

    def sample_many(self, now: np.ndarray, position, velocity=None):
        """
        Sample at many clock times ``now`` (N,) [ns, int64] in one go.

        The same as calling :meth:`sample` at each instant in turn (the first one fixes the
        lead-in from ``position[0]`` / ``velocity[0]``), for offline processing.  Returns
        (valid (N,) bool, ReferenceSample of (N, n) arrays): rows whose clock is before the first
        sample are not valid (their values are NaN), where :meth:`sample` would raise.
        """
        now = np.asarray(now, dtype=np.int64)
        n = self.trajectory.n
        if now.size == 0:
            empty = np.zeros((0, n))
            return np.zeros(0, dtype=bool), ReferenceSample(empty, empty, empty)
        if self.first_sample is None:
            self._begin(int(now[0]), position[0], None if velocity is None else velocity[0])
        valid = now >= self.first_sample
        t = (now - self.start) / NS
        out = [np.full((now.size, n), np.nan) for _ in range(3)]
        lead = valid & (t < self.trajectory.times[0]) if self._lead_in is not None \
            else np.zeros(now.size, dtype=bool)
        main = valid & ~lead
        for rows, trajectory, times in ((lead, self._lead_in, (now - self.first_sample) / NS),
                                        (main, self.trajectory, t)):
            if rows.any():
                for values, sampled in zip(out, trajectory.sample(times[rows])):
                    values[rows] = sampled
        return valid, ReferenceSample(*out)

    def _begin(self, now: int, position, velocity):
        traj = self.trajectory
        self.first_sample = now
        if self.start == 0:
            self.start = now
        lead = (self.start - now) / NS + traj.times[0]      # s until the first point is due
        if lead > 0.0:
            both = velocity is not None and traj.velocities is not None
            self._lead_in = JointTrajectory(
                traj.joint_names, [0.0, lead], [position, traj.positions[0]],
                [velocity, traj.velocities[0]] if both else None)
