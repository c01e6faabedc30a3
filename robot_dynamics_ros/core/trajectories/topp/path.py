"""
The geometric path q(s) that the time law follows, and the grid s_0 < ... < s_N on it.

A path is anything with ``joint_names``, ``knots`` (the parameters of its waypoints, where its
derivatives may jump, so every grid holds them) and ``sample(s, side)`` giving (q, q', q'') at
path parameters s (``side="left"``: the left limits, which differ where q'' jumps).  A timed
:class:`~robot_dynamics_ros.core.trajectories.trajectory.JointTrajectory` is a path in its own
time (:class:`TimedPath`: s is the original time_from_start).
"""
from __future__ import annotations

import numpy as np

from ..trajectory import JointTrajectory


class TimedPath:
    """A JointTrajectory as a path: s is its time, interpolated as the controller does."""

    def __init__(self, trajectory: JointTrajectory):
        self.trajectory = trajectory
        self.joint_names = trajectory.joint_names
        self.knots = trajectory.times

    def sample(self, s, side: str = "right"):
        """(q, q', q'') at the path parameters ``s`` (the trajectory's times)."""
        return self.trajectory.sample(s, side=side)


def initial_grid(path, steps_per_segment: int, end_steps: int = 8) -> np.ndarray:
    """
    Grid through every knot, equal steps within each knot segment.

    Grid s_0 < ... < s_N through every knot: equal steps within each knot segment; the first
    and last segments, where paths that start or end at rest are traversed at high path speed,
    get at least ``end_steps``.
    """
    knots = path.knots
    counts = np.full(knots.size - 1, steps_per_segment)
    counts[[0, -1]] = np.maximum(counts[[0, -1]], end_steps)
    # per segment i: knots[i] + (knots[i + 1] - knots[i]) * arange(c_i) / c_i
    seg = np.repeat(np.arange(counts.size), counts)
    within = np.arange(seg.size) - np.repeat(np.cumsum(counts) - counts, counts)
    pieces = knots[seg] + np.diff(knots)[seg] * within.astype(float) / counts[seg]
    return np.append(pieces, knots[-1])


def bisected(s: np.ndarray) -> np.ndarray:
    """Return the grid with every step cut in two."""
    out = np.empty(2 * s.size - 1)
    out[0::2], out[1::2] = s, 0.5 * (s[:-1] + s[1:])
    return out


class Grid:
    """
    The grid ``s`` (N+1,) on ``path`` and the path's conditions at its points.

    ``corner`` (N+1,): points where the path stops (a velocity jump, or a flat point);
    ``flat``: points where q' = q'' = 0 (sd would be unbounded: the law stops there);
    ``free_start``/``free_end``: the path is at rest at that end with q'' != 0, so sd is free
    there (chosen as large as the limits allow); ``flat_start``/``flat_end``: at rest and flat.
    ``sides``: (q' right, q'' right, q' left, q'' left) at s, when already known.
    """

    def __init__(self, path, s: np.ndarray, sides=None):
        self.path = path
        self.s = s
        self.delta = np.diff(self.s)
        self.N = self.delta.size
        if sides is None:
            _, dq_r, ddq_r = path.sample(self.s)
            _, dq_l, ddq_l = path.sample(self.s, side="left")
        else:
            dq_r, ddq_r, dq_l, ddq_l = sides
        scale = max(np.abs(dq_r).max(), 1e-300)
        # Corners (velocity jumps of the path, e.g. linear interpolation) force a stop.
        self.corner = np.abs(dq_r - dq_l).max(axis=1) > 1e-9 * scale
        self.corner[[0, -1]] = False
        acc_scale = max(np.abs(ddq_r).max(), 1e-300)

        def at_rest(v):
            return bool(np.abs(v).max() <= 1e-9 * scale)

        def regular(a):
            return bool(np.abs(a).max() > 1e-6 * acc_scale)
        self.free_start = at_rest(dq_r[0]) and regular(ddq_r[0])
        self.free_end = at_rest(dq_l[-1]) and regular(ddq_l[-1])
        self.flat_start = at_rest(dq_r[0]) and not self.free_start
        self.flat_end = at_rest(dq_l[-1]) and not self.free_end
        # Interior flat points (q' = q'' = 0 on both sides, e.g. a waypoint with zero velocity and
        # acceleration): sd is unbounded there, the law is singular; stop there as at flat ends.
        rest = np.maximum(np.abs(dq_r), np.abs(dq_l)).max(axis=1) <= 1e-9 * scale
        still = np.maximum(np.abs(ddq_r), np.abs(ddq_l)).max(axis=1) <= 1e-6 * acc_scale
        self.flat = rest & still
        self.flat[[0, -1]] = [self.flat_start, self.flat_end]
        self.corner |= self.flat
        self.corner[[0, -1]] = False

    def near_flat(self, segments: int = 3) -> np.ndarray:
        """
        Return the steps near a flat point of the path (a mask).

        Steps within ``segments`` knot segments of a flat point (where the law starts from or
        comes to sd = 0): the law is far from quadratic in time there.
        """
        knots = self.path.knots
        K = knots.size
        near = np.zeros(self.N, bool)
        for s_flat in self.s[self.flat]:
            i = int(np.searchsorted(knots, s_flat))
            near |= (self.s[1:] > knots[max(i - segments, 0)]
                     ) & (self.s[:-1] < knots[min(i + segments, K - 1)])
        return near
