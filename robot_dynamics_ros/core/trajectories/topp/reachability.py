"""
Reachability analysis (TOPP-RA) with closed-form step programs.

Reachability analysis (TOPP-RA, Pham and Pham 2018) with each step's two-variable linear
programs solved in closed form; the result is a :class:`TimeLaw`.

* Each step's largest admissible x_k with u free (:func:`static_bound`) is the largest root of a
  concave piecewise-linear function (the smallest upper bound on u minus the largest lower
  bound), found by Newton's method from above, which ends exactly on a crossing of two rows: the
  value Fourier-Motzkin elimination over all pairs of rows gives (:func:`static_bound_pairs`,
  which decides where Newton stalls).
* The backward pass K_k = [0, hi_k], hi_k = min(static_k, min_i(alpha_ki hi_{k+1} + beta_ki)),
  and the forward pass, which takes the largest admissible u_k (greedy, optimal given the
  reachable sets), loop over steps in Python floats on the few rows that can bind in the range of
  x each step can see (:func:`envelope_rows`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ..limits import ScalingError
from . import passes
from .constraints import HalfPlanes, StepRows
from .path import Grid

X_CAP = 1e12          # stands for "unbounded" sd^2


@dataclass(frozen=True, eq=False)
class TimeLaw:
    """
    A piecewise-constant-sdd time law on a grid.

    A piecewise-constant-sdd time law on a grid: x = sd^2 at the grid points s (N+1,) and
    u = sdd (N,) on each step, x_{k+1} = x_k + 2 Delta_k u_k (so x is linear in s on a step and
    s(t) quadratic in t).
    """

    s: np.ndarray
    x: np.ndarray
    u: np.ndarray

    @cached_property
    def _durations(self) -> np.ndarray:
        return self._step_durations()

    def step_durations(self) -> np.ndarray:
        """
        Time spent on each step.

        Time spent on each step, 2 Delta_k / (sd_k + sd_{k+1}); ScalingError if the law stops
        on a whole step.  Computed once per law (read-only).
        """
        return self._durations

    def _step_durations(self) -> np.ndarray:
        sd = np.sqrt(np.maximum(self.x, 0.0))
        denom = sd[:-1] + sd[1:]
        if np.any(denom <= 0.0):
            k = int(np.argmax(denom <= 0.0))
            raise ScalingError(f"the path cannot be followed near t = {self.s[k]:.6g} s "
                               "(original time): "
                               "the limits leave no admissible speed there",
                               None, float(self.s[k]))
        out = 2.0 * np.diff(self.s) / denom
        out.setflags(write=False)
        return out

    @property
    def duration(self) -> float:
        return float(self.step_durations().sum())


@dataclass(frozen=True, eq=False)
class StepSets:
    """
    What the reachability passes need of each step.

    What the passes need of each step: ``static`` bound on x, the backward recursion's
    coefficients (hi_k <= alpha hi_{k+1} + beta per lower row), and the forward pass's rows
    u <= p - r x (``upper_p``, ``upper_r``) and u >= p - r x (``lower_p``, ``lower_r``).
    """

    static: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    upper_p: np.ndarray
    upper_r: np.ndarray
    lower_p: np.ndarray
    lower_r: np.ndarray


class Envelope(NamedTuple):
    """Rows a h + b kept per step as flat lists, step k's in [start[k], end[k])."""

    A: list
    B: list
    start: np.ndarray
    end: np.ndarray


def static_bound_pairs(upper, lower) -> np.ndarray:
    """
    Largest admissible x per step by Fourier-Motzkin elimination over row pairs.

    Largest x with some u meeting every row, by Fourier-Motzkin over all pairs (lower row i,
    upper row j): (A_j B_i - A_i B_j) x <= A_j C_i - A_i C_j.  HalfPlanes (S, R) -> (S,).
    """
    AU, BU, CU, AL, BL, CL = upper.A, upper.B, upper.C, lower.A, lower.B, lower.C
    D = AU[:, None, :] * BL[:, :, None] - AL[:, :, None] * BU[:, None, :]
    rhs = AU[:, None, :] * CL[:, :, None] - AL[:, :, None] * CU[:, None, :]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return np.minimum(np.where(D > 0, rhs / D, np.inf).min(axis=(1, 2)), X_CAP)


def static_bound(upper, lower, iterations: int = 5, quotients=None) -> np.ndarray:
    """
    Largest admissible x per step by Newton's method.

    The same largest x as :func:`static_bound_pairs`, by Newton's method from above on
    f(x) = min_j (C_j - B_j x) / A_j - max_i (C_i - B_i x) / A_i (rows with A != 0).

    f is concave and piecewise linear, f(0) >= 0 (every C >= 0), so from any x where f < 0 the
    tangent's root lies between the largest root and x, and each step lands on another piece, the
    last one exactly on the root.  Rows with A = 0 bound x directly.  Steps that do not settle (or
    meet a degenerate slope) fall back to the pairs.  ``quotients``: (CU / AU, BU / AU, CL / AL,
    BL / AL) when already computed.
    """
    AU, BU, CU, AL, BL, CL = upper.A, upper.B, upper.C, lower.A, lower.B, lower.C
    S = AU.shape[0]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        x_only = np.where((AU == 0.0) & (BU > 0.0), CU / BU, np.inf).min(axis=1)
        x_only = np.minimum(x_only, np.where((AL == 0.0) & (BL > 0.0), CL / BL,
                                             np.inf).min(axis=1))
        x = np.minimum(x_only, X_CAP)
        # A closer start: the pairs of every upper row with the last lower row (any pair bounds
        # the root from above; in step_rows' order that row is x_{k+1} >= 0).
        al, bl, cl = AL[:, -1:], BL[:, -1:], CL[:, -1:]
        D = AU * bl - al * BU
        x = np.minimum(x, np.where(D > 0.0, (AU * cl - al * CU) / D, np.inf).min(axis=1))
        has_u, has_l = AU > 0.0, AL < 0.0
        if quotients is None:
            quotients = (CU / AU, BU / AU, CL / AL, BL / AL)
        cu, bu, cl_, bl_ = quotients
        pu, ru = np.where(has_u, cu, np.inf), np.where(has_u, bu, 0.0)     # u <= pu - ru x
        pl, rl = np.where(has_l, cl_, -np.inf), np.where(has_l, bl_, 0.0)  # u >= pl - rl x
    active = np.arange(S)
    out, rest = x.copy(), []
    for _ in range(iterations):
        xa = x[:, None]
        up = pu - ru * xa
        lo = pl - rl * xa
        j, i = up.argmin(axis=1), lo.argmax(axis=1)
        r = np.arange(active.size)
        up_j, lo_i = up[r, j], lo[r, i]
        f = up_j - lo_i
        scale = np.abs(up_j) + np.abs(lo_i)
        done = f >= -1e-15 * scale               # feasible up to rounding
        out[active[done]] = x[done]
        ru_j, rl_i = ru[r, j], rl[r, i]
        slope = rl_i - ru_j                      # f' on the pieces active at x, < 0 if f < 0
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            # The tangent's root x - f / slope, as the crossing of the two lines (no cancellation
            # against a distant x).
            x_new = (pu[r, j] - pl[r, i]) / (ru_j - rl_i)
        ok = ~done & (slope < 0.0) & (x_new < x)
        # Degenerate, or stalled (a step below rounding): the pairs decide.
        rest.append(active[~done & ~ok])
        active, x = active[ok], np.maximum(x_new[ok], 0.0)
        if not active.size:
            break
        if active.size < r.size:   # pu, ru, pl, rl: the rows of the active steps
            pu, ru, pl, rl = pu[ok], ru[ok], pl[ok], rl[ok]
    k = np.concatenate(rest + [active])
    if k.size:
        out[k] = np.minimum(static_bound_pairs(HalfPlanes(upper.A[k], upper.B[k], upper.C[k]),
                                               HalfPlanes(lower.A[k], lower.B[k], lower.C[k])),
                            x_only[k])
    return out


def step_sets(rows: StepRows, delta: np.ndarray) -> StepSets:
    """Return the :class:`StepSets` of steps with ``rows`` and lengths ``delta``."""
    AU, BU, CU = rows.upper.A, rows.upper.B, rows.upper.C
    AL, BL, CL = rows.lower.A, rows.lower.B, rows.lower.C
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        quotients = (CU / AU, BU / AU, CL / AL, BL / AL)
    static = static_bound(rows.upper, rows.lower, quotients=quotients)
    # The recursion row 2 Delta u + x <= hi_{k+1} paired with each lower row i:
    #   (2 Delta B_i - A_i) x <= 2 Delta C_i - A_i hi_{k+1}
    two_d = 2.0 * delta[:, None]
    Dr = two_d * BL - AL
    valid = (AL < 0) & (Dr > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = np.where(valid, -AL / Dr, 0.0)
        beta = np.where(valid, two_d * CL / Dr, np.inf)
    # Forward pass rows; rows without u never bind u.  The last lower row (x_{k+1} >= 0, see
    # step_rows) is left to the forward pass, which imposes it directly.
    tiny = 1e-12 * max(np.abs(AU).max(), 1e-300)
    has_u = AU > tiny
    upper_p, upper_r = np.where(has_u, quotients[0], np.inf), np.where(has_u, quotients[1], 0.0)
    has_u = AL[:, :-1] < -tiny
    lower_p = np.where(has_u, quotients[2][:, :-1], -np.inf)
    lower_r = np.where(has_u, quotients[3][:, :-1], 0.0)
    return StepSets(static, alpha, beta, upper_p, upper_r, lower_p, lower_r)


def envelope_rows(a, b, H) -> Envelope:
    """
    Keep the rows that can be the lowest of lines a h + b on [0, H_k], per step.

    Rows (a, b) (S, R) of lines a h + b, of which only the minimum over h in [0, H_k] matters:
    per step, the rows (a, b) that can be that minimum.

    A row at or above another at both h = 0 and h = H_k is at or above it in between; so where
    one row is lowest at both ends (most steps) it is the only one, else the rows not above one of
    the two lowest are kept.  Rows in their order, step after step.
    """
    S = a.shape[0]
    with np.errstate(invalid="ignore", over="ignore"):
        vH = a * H[:, None] + b
    r = np.arange(S)
    j0, jH = b.argmin(axis=1), vH.argmin(axis=1)
    # (rows infinite at both ends are dropped too: inf >= anything)
    drop = (b >= b[r, j0][:, None]) & (vH >= vH[r, j0][:, None])
    drop |= (b >= b[r, jH][:, None]) & (vH >= vH[r, jH][:, None])
    drop |= (j0 == jH)[:, None]
    drop[r, j0] = drop[r, jH] = False
    keep = ~drop
    counts = keep.sum(axis=1)
    end = np.cumsum(counts)
    return Envelope(a[keep].tolist(), b[keep].tolist(), end - counts, end)


def _per_step(N: int, groups) -> Envelope:
    """
    Merge groups' envelopes into one over all steps.

    [(steps, Envelope)] -> one Envelope over all N steps (start and end as lists), later
    groups overriding.
    """
    A, B = [], []
    start, end = np.zeros(N, int), np.zeros(N, int)
    for steps, env in groups:
        offset = len(A)
        A += env.A
        B += env.B
        start[steps], end[steps] = env.start + offset, env.end + offset
    return Envelope(A, B, start.tolist(), end.tolist())


def reachable_law(grid: Grid, data) -> TimeLaw:
    """
    Backward reachability and greedy forward pass: the time law.

    Backward reachability and greedy forward pass on ``grid``.  ``data``: list of (steps,
    StepSets); later entries override earlier ones for the steps they hold.
    """
    N, delta = grid.N, grid.delta
    static = np.empty(N)
    for steps, sets in data:
        static[steps] = sets.static
    static[grid.corner[:-1]] = 0.0
    hi = np.empty(N + 1)
    h = hi[N] = X_CAP if grid.free_end else 0.0
    # Backward pass: h = hi_{k+1} <= static_{k+1} (or hi_N).
    h_range = np.append(static[1:], h)
    A, B, start, end = _per_step(N, [(steps, envelope_rows(sets.alpha, sets.beta, h_range[steps]))
                                     for steps, sets in data])
    stat = static.tolist()
    his = stat + [h]
    for k in range(N - 1, -1, -1):
        v = stat[k]
        for j in range(start[k], end[k]):
            t = A[j] * h + B[j]
            if t < v:
                v = t
        h = his[k] = v
    hi[:] = his
    hi[grid.corner] = 0.0
    # Forward pass: x_k in [0, hi_k] up to rounding; u <= min_j (p_j - r_j x),
    # u >= max_i (p_i - r_i x).
    x_range = hi[:-1] * (1.0 + 1e-9) + 1e-300
    ups = _per_step(N, [(steps, envelope_rows(-sets.upper_r, sets.upper_p, x_range[steps]))
                        for steps, sets in data])  # u <= a x + b
    los = _per_step(N, [(steps, envelope_rows(sets.lower_r, -sets.lower_p, x_range[steps]))
                        for steps, sets in data])  # -u <= a x + b
    x, u = _forward(grid, data, hi.tolist(), x_range.tolist(), (2.0 * delta).tolist(), ups, los,
                    float(hi[0]) if grid.free_start else 0.0)
    return TimeLaw(grid.s, x, u)


def _forward(grid: Grid, data, his, xr, d2, ups: Envelope, los: Envelope, x_start: float):
    """
    Greedy forward pass.

    The greedy forward pass from x_0 = ``x_start``: the largest u_k within the rows
    ``ups``/``los`` of the step (or all its rows, if x_k is outside the pruned range) that keeps
    x_{k+1} <= hi_{k+1}, but not below a lower bound (which only rounding can make bind: x_k <=
    hi_k leaves room) or x_{k+1} < 0.
    """
    N = grid.N
    x = [0.0] * (N + 1)
    u = [0.0] * N
    xk = x[0] = x_start
    UA, UB, up_start, up_end = ups
    LA, LB, lo_start, lo_end = los
    owner = None
    for k in range(N):
        two_d = d2[k]
        if 0.0 <= xk <= xr[k]:
            u_max = (his[k + 1] - xk) / two_d
            for j in range(up_start[k], up_end[k]):
                t = UA[j] * xk + UB[j]
                if t < u_max:
                    u_max = t
            u_min = -xk / two_d
            for i in range(lo_start[k], lo_end[k]):
                t = -(LA[i] * xk + LB[i])
                if t > u_min:
                    u_min = t
        else:                              # outside the pruned range: every row
            if owner is None:
                owner = _step_owner(N, data)
            sets, i = owner[k]
            u_max = min(float((sets.upper_p[i] - sets.upper_r[i]
                        * xk).min()), (his[k + 1] - xk) / two_d)
            u_min = max(float((sets.lower_p[i] - sets.lower_r[i] * xk).max()), -xk / two_d)
        uk = u_min if u_min > u_max else u_max          # max(u_max, u_min), without the call
        u[k] = uk
        xk = xk + two_d * uk
        if 0.0 > xk:
            xk = 0.0
        x[k + 1] = xk
    return np.array(x), np.array(u)


def _step_owner(N: int, data) -> list:
    """For each step: (StepSets, row index) of the last group of ``data`` holding it."""
    owner = [None] * N
    for steps, sets in data:
        for i, k in enumerate(steps.tolist()):
            owner[k] = (sets, i)
    return owner


def solve_law(grid: Grid, groups) -> TimeLaw:
    """
    Return the law of ``groups``: [(steps, StepRows)], later groups overriding earlier ones.

    The passes compiled by numba (``passes.py``: one call), or without numba the numpy passes
    above (:func:`step_sets`, :func:`reachable_law`): the same law.
    """
    kernel = passes.compiled()
    if kernel is None:
        return reachable_law(grid, [(steps, step_sets(rows, grid.delta[steps]))
                                    for steps, rows in groups])
    N = grid.N
    starts = {"upper": np.zeros(N, np.int64), "lower": np.zeros(N, np.int64)}
    ends = {"upper": np.zeros(N, np.int64), "lower": np.zeros(N, np.int64)}
    flat = {"upper": ([], [], []), "lower": ([], [], [])}
    tiny = np.zeros(N)
    for steps, rows in groups:
        for side in ("upper", "lower"):
            planes = getattr(rows, side)
            R = planes.A.shape[1]
            offset = sum(a.size for a in flat[side][0])
            starts[side][steps] = offset + R * np.arange(steps.size)
            ends[side][steps] = starts[side][steps] + R
            for out, values in zip(flat[side], (planes.A, planes.B, planes.C)):
                out.append(values.ravel())
        tiny[steps] = 1e-12 * max(float(np.abs(rows.upper.A).max(initial=0.0)), 1e-300)
    UA, UB, UC, LA, LB, LC = (np.concatenate(parts) if len(parts) > 1 else parts[0]
                              for side in ("upper", "lower") for parts in flat[side])
    x, u = kernel(grid.delta, grid.corner, bool(grid.free_start), bool(grid.free_end), UA, UB,
                  UC, starts["upper"], ends["upper"], LA, LB, LC, starts["lower"],
                  ends["lower"], tiny)
    return TimeLaw(grid.s, x, u)
