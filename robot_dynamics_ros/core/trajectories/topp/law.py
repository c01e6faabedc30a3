"""
From a time law to trajectory points: times rounded to whole nanoseconds, states on the law.

The output has ``per_step[k]`` points in grid step k (evenly spaced in s) plus the end point, with
the law's position, velocity and acceleration (the value on the step a point starts, so the grid
points' right limits).  Times are whole nanoseconds, as a ROS message carries them, and every
point is the law's state AT its rounded time, not the state of the unrounded time with a shifted
time stamp: output points near flat ends are microseconds apart, where shifting a time stamp by
half a nanosecond without moving the point would change the cubic's acceleration by percent.  So
the verified trajectory is exactly the one a controller receives.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..limits import ScalingError
from .path import Grid
from .reachability import TimeLaw

# s: output points closer than this are merged (distinct after rounding to ns)
MIN_SPACING = 2e-9


class LawPoints(NamedTuple):
    """
    Output points of a law.

    Output points of a law: times t (K,), path parameters s (K,), q, qd, qdd (K, n) and the
    grid step each point lies in (K,).
    """

    t: np.ndarray
    s: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    step: np.ndarray


def spread(counts: np.ndarray):
    """For ``counts[k]`` points in interval k: interval index and fraction in [0, 1) per point."""
    index = np.repeat(np.arange(counts.size), counts)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return index, (np.arange(index.size) - first[index]) / counts[index]


def spaced(t: np.ndarray, spacing: float) -> np.ndarray:
    """
    Mask thinning out points closer than ``spacing``.

    Mask keeping the first and last point and every point at least ``spacing`` after the last
    kept one and before the end.
    """
    keep = np.ones(t.size, bool)
    if t.size > 2 and np.diff(t).min() < spacing:
        last = t[0]
        for i in range(1, t.size - 1):
            if t[i] - last < spacing or t[-1] - t[i] < spacing:
                keep[i] = False
            else:
                last = t[i]
    return keep


def law_points(grid: Grid, law: TimeLaw, t0: float, per_step: np.ndarray) -> LawPoints:
    """Return the output points of ``law`` on ``grid`` from time ``t0`` (module docstring)."""
    x, u = law.x, law.u
    dt = law.step_durations()
    step, th = spread(per_step)
    step, th = np.append(step, grid.N - 1), np.append(th, 1.0)
    d, xk, uk = grid.delta[step], x[step], u[step]
    ds = th * d
    xs = np.maximum(xk + 2.0 * uk * ds, 0.0)
    sd0, sd = np.sqrt(np.maximum(xk, 0.0)), np.sqrt(xs)
    with np.errstate(invalid="ignore", divide="ignore"):     # time into the step: exact, stable
        into = np.where(sd0 + sd > 0, 2.0 * ds / (sd0 + sd), 0.0)
    t_grid = t0 + np.concatenate([[0.0], np.cumsum(dt)])
    t = t_grid[step] + into
    t[-1] = t_grid[-1]
    keep = spaced(t, MIN_SPACING)
    t = np.round(t[keep] * 1e9) * 1e-9
    if t.size < 2 or np.any(np.diff(t) <= 0.0):
        raise ScalingError("time_optimal: the scaled trajectory is shorter than a nanosecond")
    # The law's state at the rounded times: s(t) = s_k + sd_k tau + u_k tau^2 / 2 on step k.
    step = np.clip(np.searchsorted(t_grid, t, side="right") - 1, 0, grid.N - 1)
    tau = np.clip(t - t_grid[step], 0.0, dt[step])
    xk, uk = np.maximum(x[step], 0.0), u[step]
    ds = np.clip(np.sqrt(xk) * tau + 0.5 * uk * tau * tau, 0.0, grid.delta[step])
    ds[-1] = grid.delta[-1]
    xs = np.maximum(xk + 2.0 * uk * ds, 0.0)
    xs[-1] = max(x[-1], 0.0)
    s = grid.s[step] + ds
    q, dq, ddq = grid.path.sample(s)
    if not getattr(grid.path, "smooth", False):      # (on a C2 path both sides are the same)
        q[-1], dq[-1], ddq[-1] = grid.path.sample(s[-1], side="left")
    return LawPoints(t, s, q, dq * np.sqrt(xs)[:, None],
                     dq * uk[:, None] + ddq * xs[:, None], step)
