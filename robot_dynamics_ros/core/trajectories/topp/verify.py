"""
Re-checking a re-timed trajectory as joint_trajectory_controller will interpolate it.

The output is sampled with :meth:`JointTrajectory.sample_segments` (the controller's cubic
Hermite through positions and velocities, the same polynomials as ``JointTrajectory.sample``) at
``density`` points per output interval plus each interval's end (the cubic's acceleration is
linear in time, so extreme at the ends of its interval, where the next interval's value
differs), and the FULL model's inverse dynamics is recomputed there.  Every limit kind is
compared: torque, velocity and acceleration.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...algorithms.rnea import rnea
from ..limits import Limits
from ..trajectory import JointTrajectory

END_FRACTION = 1.0 - 1e-9     # just before an interval's end (not its left limit: where the law
#                               stops, Coulomb friction acts until the stop)


@dataclass(frozen=True, eq=False)
class Excess:
    """
    How far each sample is beyond each limit.

    How far each sample (M, n) is beyond each limit (> 0: beyond), in the limit's units, and
    how much is allowed (n,) (``tolerance`` times the limit).
    """

    effort_upper: np.ndarray
    effort_lower: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    allowed_effort: np.ndarray
    allowed_velocity: np.ndarray
    allowed_acceleration: np.ndarray

    def failing(self) -> np.ndarray:
        """(M,) samples where some limit is exceeded by more than allowed."""
        return ((self.effort_upper > self.allowed_effort)
                | (self.effort_lower > self.allowed_effort)
                | (self.velocity > self.allowed_velocity)
                | (self.acceleration > self.allowed_acceleration)).any(axis=1)


@dataclass(frozen=True, eq=False)
class Verification:
    """
    The samples of a verification.

    The samples of a check: ``times`` (M,), the output ``interval`` each lies in (the end
    point: the last interval), ``torques``, ``velocities``, ``accelerations`` (M, n), their
    ``excess`` and the torques of the ``extra`` states computed in the same batch.
    """

    times: np.ndarray
    interval: np.ndarray
    torques: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    excess: Excess
    extra_torques: np.ndarray

    @property
    def passed(self) -> bool:
        return not self.excess.failing().any()


def check_fractions(density: int) -> np.ndarray:
    """Local fractions of each output interval that are checked: i / density, and the end."""
    return np.append(np.arange(density) / density, END_FRACTION)


def verify(model, out: JointTrajectory, limits: Limits, density: int, tolerance: float,
           extra=None) -> Verification:
    """
    Check ``out`` against ``limits`` as the controller interpolates it.

    Check ``out`` (positions and velocities: cubic) against ``limits`` with ``tolerance``
    relative to each limit.  ``extra``: (q, qd, qdd) whose torques are wanted too (one rnea batch,
    its cost is mostly per call).
    """
    fractions = check_fractions(density)
    K, n, F = out.num_points, out.n, fractions.size
    states = out.sample_segments(fractions)                       # each (K-1, F, n)
    last = out.sample(out.times[-1:])                              # held as given after the end
    times = np.append((out.times[:-1, None] + np.diff(out.times)
                      [:, None] * fractions).ravel(), out.times[-1])
    interval = np.append(np.repeat(np.arange(K - 1), F), K - 2)
    M = times.size
    extra = extra if extra is not None else tuple(np.empty((0, n)) for _ in range(3))
    batch = [np.concatenate([s.reshape(-1, n), e, x]) for s, e, x in zip(states, last, extra)]
    tau_all = rnea(model, *batch)
    tau, qd, qdd = tau_all[:M], batch[1][:M], batch[2][:M]
    with np.errstate(invalid="ignore"):
        acc_excess = np.where(np.isfinite(limits.acceleration),
                              np.abs(qdd) - limits.acceleration, -np.inf)
    excess = Excess(tau - limits.effort_upper, limits.effort_lower - tau, np.abs(qd)
                    - limits.velocity, acc_excess, tolerance
                    * np.maximum(np.abs(limits.effort_upper), np.abs(limits.effort_lower)),
                    tolerance * limits.velocity, np.where(np.isfinite(limits.acceleration),
                                                          tolerance * limits.acceleration, np.inf))
    return Verification(times, interval, tau, qd, qdd, excess, tau_all[M:])
