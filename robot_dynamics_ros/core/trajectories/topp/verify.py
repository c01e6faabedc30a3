"""
Re-checking a re-timed trajectory as joint_trajectory_controller will interpolate it.

The output is sampled with :meth:`JointTrajectory.sample_segments` (the controller's cubic
Hermite through positions and velocities, the same polynomials as ``JointTrajectory.sample``) at
``density`` points per output interval plus each interval's end (the cubic's acceleration is
linear in time, so extreme at the ends of its interval, where the next interval's value
differs), and the FULL model's inverse dynamics is recomputed there.  Every limit kind is
compared: torque and acceleration at the samples, velocity exactly (quadratic in time on an
interval of a cubic: its largest |value| on the interval is compared, in the excess of the
interval's first sample).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..limits import Limits
from ..trajectory import JointTrajectory
from .path import rows_any
from .torques import Torques, torque_functions

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
    point: the last interval), ``torques``, ``velocities``, ``accelerations`` (M, n), the
    ``speeds`` compared with the velocity limit (|velocity|, on each interval's first sample its
    exact largest value on the interval), the ``limits`` and ``tolerance`` they are checked
    against, and the torques of the ``extra`` states computed in the same batch.
    """

    times: np.ndarray
    interval: np.ndarray
    torques: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    speeds: np.ndarray
    limits: Limits
    tolerance: float
    extra_torques: np.ndarray

    @property
    def passed(self) -> bool:
        return not self.failing.any()

    @cached_property
    def failing(self) -> np.ndarray:
        """
        (M,) samples where some limit is exceeded by more than allowed (computed once).

        Compared directly, without the :attr:`excess` arrays (wanted only where some sample
        fails): |tau - mid| > half range + allowed for the torque.
        """
        limits, tol = self.limits, self.tolerance
        upper, lower = limits.effort_upper, limits.effort_lower
        allowed = tol * np.maximum(np.abs(upper), np.abs(lower))
        bad = np.abs(self.torques - 0.5 * (upper + lower)) > 0.5 * (upper - lower) + allowed
        bad |= self.speeds > (1.0 + tol) * limits.velocity
        if np.isfinite(limits.acceleration).any():
            bad |= np.abs(self.accelerations) > (1.0 + tol) * limits.acceleration
        return rows_any(bad)

    @cached_property
    def excess(self) -> Excess:
        """How far each sample is beyond each limit (:class:`Excess`, computed once)."""
        limits, tol = self.limits, self.tolerance
        finite = np.isfinite(limits.acceleration)
        with np.errstate(invalid="ignore"):
            acceleration = np.where(finite, np.abs(self.accelerations) - limits.acceleration,
                                    -np.inf)
        return Excess(self.torques - limits.effort_upper, limits.effort_lower - self.torques,
                      self.speeds - limits.velocity, acceleration,
                      tol * np.maximum(np.abs(limits.effort_upper), np.abs(limits.effort_lower)),
                      tol * limits.velocity, np.where(finite, tol * limits.acceleration, np.inf))


def check_fractions(density: int) -> np.ndarray:
    """Local fractions of each output interval that are checked: i / density, and the end."""
    return np.append(np.arange(density) / density, END_FRACTION)


REUSE_TOLERANCE = 1e-7    # relative: an interval this close to a checked one keeps its check


def unchanged_intervals(out: JointTrajectory, s, previous: JointTrajectory,
                        s_previous) -> np.ndarray:
    """
    Return, per interval of ``out``, the index of an identical interval of ``previous``, or -1.

    Intervals are paired by the path parameter ``s`` of their start points (``s_previous``
    for ``previous``).  Identical: duration, positions and velocities at both ends equal within
    ``REUSE_TOLERANCE`` relative to their scale.  (After a re-solve only the times of the
    intervals after a changed step move, by the rounding to whole nanoseconds: a shift of at
    most a nanosecond, whose effect on torques is far below any tolerance.)
    """
    return paired_intervals(out, s, previous, s_previous)[0]


def paired_intervals(out: JointTrajectory, s, previous: JointTrajectory, s_previous):
    """
    Return ``unchanged_intervals`` and the mask of the intervals equal to their match to the bit.

    Equal to the bit (duration, positions and velocities at both ends): the same cubic, whose
    samples (the same elementwise arithmetic) are the earlier check's to the bit.  Tested first:
    after a re-solve most intervals are, and only the others need the tolerance test.
    """
    K, P = out.num_points, previous.num_points
    match, same = np.full(K - 1, -1), np.zeros(max(K - 1, 0), bool)
    if K < 2 or P < 2:
        return match, same
    dt, old_dt = np.diff(out.times), np.diff(previous.times)
    j = np.minimum(np.maximum(np.searchsorted(s_previous, s[:-1]), 1), P - 1)
    j = np.minimum(np.where(s[:-1] - s_previous[j - 1] <= s_previous[j] - s[:-1], j - 1, j), P - 2)
    same = dt == old_dt[j]
    ends = ((out.positions, previous.positions), (out.velocities, previous.velocities))
    for now, before in ends:
        same &= ~rows_any(now[:-1] != before[j]) & ~rows_any(now[1:] != before[j + 1])
    ok = same.copy()
    rest = np.flatnonzero(~same)
    if rest.size:
        q_scale = REUSE_TOLERANCE * max(1.0, float(np.abs(previous.positions).max()))
        v_scale = REUSE_TOLERANCE * max(1e-9, float(np.abs(previous.velocities).max()))
        jr = j[rest]
        near = np.abs(dt[rest] - old_dt[jr]) <= REUSE_TOLERANCE * old_dt[jr]
        for (now, before), tol in zip(ends, (q_scale, v_scale)):
            near &= ~rows_any(np.abs(now[rest] - before[jr]) > tol)
            near &= ~rows_any(np.abs(now[rest + 1] - before[jr + 1]) > tol)
        ok[rest] = near
    match[ok] = j[ok]
    return match, same


def verify(model, out: JointTrajectory, limits: Limits, density: int, tolerance: float,
           extra=None, s=None, previous=None, torques: Torques | None = None) -> Verification:
    """
    Check ``out`` against ``limits`` as the controller interpolates it.

    Check ``out`` (positions and velocities: cubic) against ``limits`` with ``tolerance``
    relative to each limit.  ``extra``: (q, qd, qdd) whose torques are wanted too (one rnea batch,
    its cost is mostly per call).  ``previous``: (trajectory, Verification, path parameters of
    its points) of an earlier check with the same density, whose intervals that did not change
    are not computed again (``s``: the path parameters of the points of ``out``).  ``torques``:
    the inverse dynamics (default: the core's).
    """
    fractions = check_fractions(density)
    K, n, F = out.num_points, out.n, fractions.size
    match, same = ((np.full(K - 1, -1), np.zeros(K - 1, bool)) if previous is None
                   else paired_intervals(out, s, previous[0], previous[2]))
    fresh = np.flatnonzero(match < 0)
    # States: sampled, except on intervals that are the earlier check's to the bit (its samples
    # are reused there); torques: computed on the intervals without a match.
    if same.any():
        sampled = np.flatnonzero(~same)
        part = out.sample_segments(fractions, sampled)
        states = []
        for values, earlier in zip(part, (None, previous[1].velocities,
                                          previous[1].accelerations)):
            full = np.empty((K - 1, F, n))
            full[sampled] = values
            if earlier is not None:
                full[same] = earlier[:-1].reshape(-1, F, n)[match[same]]
            states.append(full)
    else:
        states = out.sample_segments(fractions)                   # each (K-1, F, n)
    # The end point, held as given after the end (``JointTrajectory.sample`` there).
    last = tuple(np.zeros((1, n)) if a is None else a[-1:]
                 for a in (out.positions, out.velocities, out.accelerations))
    times = np.append((out.times[:-1, None] + np.diff(out.times)
                      [:, None] * fractions).ravel(), out.times[-1])
    interval = np.append(np.repeat(np.arange(K - 1), F), K - 2)
    extra = extra if extra is not None else tuple(np.empty((0, n)) for _ in range(3))
    every = fresh.size == K - 1
    batch = [np.concatenate([(s if every else s[fresh]).reshape(-1, n), e, x])
             for s, e, x in zip(states, last, extra)]
    tau_fresh = (torques or torque_functions(model)).rnea(*batch)
    M = (K - 1) * F + 1                     # the samples and the end point
    if every:                               # (the batch starts with them, in their order)
        tau, qd, qdd = tau_fresh[:M], batch[1][:M], batch[2][:M]
    else:
        tau = np.empty((K - 1, F, n))
        tau[fresh] = tau_fresh[:fresh.size * F].reshape(-1, F, n)
        kept = np.flatnonzero(match >= 0)
        tau[kept] = previous[1].torques[:-1].reshape(-1, F, n)[match[kept]]
        tau = np.concatenate([tau.reshape(-1, n), tau_fresh[fresh.size * F:fresh.size * F + 1]])
        qd = np.concatenate([states[1].reshape(-1, n), last[1]])
        qdd = np.concatenate([states[2].reshape(-1, n), last[2]])
    # The velocity is quadratic in time on an interval: its exact largest |value| stands in for
    # the interval's first sample (the samples only bound it from below).
    speed = np.abs(qd)
    if out.interpolation != "quintic":
        first = speed[:-1].reshape(K - 1, F, n)[:, 0]
        if same.any():          # (the earlier check's to the bit, the others computed)
            first[same] = previous[1].speeds[:-1].reshape(-1, F, n)[match[same], 0]
            first[sampled] = np.maximum(first[sampled], out.segment_speed_max(sampled))
        else:
            np.maximum(first, out.segment_speed_max(), out=first)
    return Verification(times, interval, tau, qd, qdd, speed, limits, tolerance,
                        tau_fresh[fresh.size * F + 1:])


PATH_DENSITY = 8      # samples per output interval (and its end) checked for path constraints


@dataclass(frozen=True, eq=False)
class PathCheck:
    """
    The path constraints' usage on the output: per constraint, its largest (K-1, k) per interval.

    ``failing``: (K-1,) intervals where some usage exceeds 1 + ``tolerance``.
    """

    usage: tuple
    tolerance: float

    @cached_property
    def failing(self) -> np.ndarray:
        bad = np.zeros(self.usage[0].shape[0], bool) if self.usage else np.zeros(0, bool)
        for u in self.usage:
            bad |= rows_any(u > 1.0 + self.tolerance)
        return bad


def check_path_constraints(model, out: JointTrajectory, constraints, tolerance: float,
                           density: int = PATH_DENSITY) -> PathCheck | None:
    """
    Check the path constraints on ``out`` as the controller interpolates it (None: none given).

    Each interval is sampled at ``density`` fractions and its end (the constraint's value is not
    polynomial in time, unlike the joint velocity), and each constraint's :meth:`usage` computed
    from the sampled joint states.
    """
    if not constraints:
        return None
    fractions = check_fractions(density)
    q, qd, qdd = (v.reshape(-1, out.n) for v in out.sample_segments(fractions))
    K, F = out.num_points, fractions.size
    usage = tuple(c.usage(model, q, qd, qdd).reshape(K - 1, F, -1).max(axis=1)
                  for c in constraints)
    return PathCheck(usage, tolerance)
