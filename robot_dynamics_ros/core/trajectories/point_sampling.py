"""
One sample of a JointTrajectory at a time in plain Python floats: the control loop's path.

:meth:`JointTrajectory.sample` is vectorised over times; for the one sample a 1 kHz control loop
takes per message, its numpy calls on (1, n) arrays cost ~100 us.  :class:`PointSampler` gives
the same values (the same per-segment polynomial coefficients, ``segment_coefficients``, the
same Horner order, the same handling before the first and after the last point) with a bisection
on the times and list arithmetic, keeping the current segment's coefficients as lists (a
reference advances through its segments in order).  Agreement with ``JointTrajectory.sample`` to
rounding is tested (test/core/trajectories/test_reference.py).
"""
from __future__ import annotations

from bisect import bisect_right

from .trajectory import JointTrajectory


class PointSampler:
    """Samples one trajectory at one time per call; lists of n floats (q, qd, qdd)."""

    def __init__(self, trajectory: JointTrajectory):
        self.trajectory = trajectory
        self._times = trajectory.times.tolist()
        self._degree = trajectory.polynomial_degree
        n = trajectory.n
        self._zeros = [0.0] * n
        self._first = trajectory.positions[0].tolist()
        # at and after the last point: the point as given (missing fields zero), as JTC does
        self._last = tuple(self._zeros if a is None else a[-1].tolist()
                           for a in (trajectory.positions, trajectory.velocities,
                                     trajectory.accelerations))
        self._segment = -1
        self._span = (0.0, 0.0)             # [times[seg], times[seg + 1]) of ``_segment``
        self._polynomials = None

    def sample(self, t: float):
        """
        (q, qd, qdd) at time ``t`` [s] (finite), as :meth:`JointTrajectory.sample` (side right).

        Before times[0]: the first point at rest; at and after times[-1]: the last point as given.
        """
        times = self._times
        if len(times) == 1:                 # one point: held at rest (as JointTrajectory.sample)
            return self._first, self._zeros, self._zeros
        if t >= times[-1]:
            return self._last
        start, end = self._span
        if start <= t < end:                # the segment of the previous sample (the usual case)
            tau = t - start
        else:
            seg = min(max(bisect_right(times, t) - 1, 0), len(times) - 2)
            if seg != self._segment:
                self._polynomials = self._coefficients(seg)
                self._segment = seg
                self._span = (times[seg], times[seg + 1])
            tau = min(max(t - times[seg], 0.0), times[seg + 1] - times[seg])
        q_c, qd_c, qdd_c = self._polynomials
        q = _horner(q_c, tau)
        if t < times[0]:                    # hold the first point at rest
            return q, self._zeros, self._zeros
        qd = _horner(qd_c, tau)
        qdd = _horner(qdd_c, tau) if qdd_c else self._zeros
        return q, qd, qdd

    def _coefficients(self, seg: int):
        """Segment ``seg``'s per-joint coefficient rows of q, qd, qdd, highest order first."""
        c = self.trajectory.segment_coefficients[seg].tolist()     # 6 lists of n, order 0..5
        d = self._degree
        q_c = [c[p] for p in range(d, -1, -1)]
        qd_c = [[p * x for x in c[p]] for p in range(d, 0, -1)]
        qdd_c = [[p * (p - 1) * x for x in c[p]] for p in range(d, 1, -1)]
        return tuple(list(zip(*columns)) if columns else None for columns in (q_c, qd_c, qdd_c))


def _horner(rows: list, tau: float) -> list:
    """sum_p c_p tau^p per joint, each row the joint's coefficients, highest order first."""
    return _HORNER[len(rows[0])](rows, tau)


# Horner's rule unrolled per number of coefficients (the order of ``_polynomial``'s operations)
_HORNER = {
    1: lambda rows, t: [a for a, in rows],
    2: lambda rows, t: [a * t + b for a, b in rows],
    3: lambda rows, t: [(a * t + b) * t + c for a, b, c in rows],
    4: lambda rows, t: [((a * t + b) * t + c) * t + d for a, b, c, d in rows],
    5: lambda rows, t: [(((a * t + b) * t + c) * t + d) * t + e for a, b, c, d, e in rows],
    6: lambda rows, t: [((((a * t + b) * t + c) * t + d) * t + e) * t + f
                        for a, b, c, d, e, f in rows],
}
