"""Time-optimal time law along a given joint path under torque, velocity and acceleration limits.

Beyond seed 002 (whose Sect. 7.7 only scales time uniformly), the path q(s) of a trajectory, with
s its original time, is replayed with a non-uniform time law s(t).  With sd = ds/dt, sdd = d2s/dt2
(seed 002, eqs. 7.119-7.121 and 7.126 with r = s):

    qd = q'(s) sd,   qdd = q'(s) sdd + q''(s) sd^2,
    tau = a(s) sdd + b(s) sd^2 + c(s) + F_v q'(s) sd + F_s sgn(q'(s)),

    a = B(q) q'                       = rnea(q, 0, q')   without gravity and friction
    b = B(q) q'' + C(q, q') q'        = rnea(q, q', q'') without gravity and friction
    c = g(q)                          = rnea(q, 0, 0)

(B includes the rotor inertias).  In x = sd^2, u = sdd the constraints are linear except the
viscous term.  The solver is reachability analysis (TOPP-RA, Pham & Pham 2018) with the per-step
two-variable linear programs solved in closed form:

* Grid s_0 < ... < s_N, each waypoint segment cut into equal steps; u_k is constant on step k, so
  x(s) = x_k + 2 (s - s_k) u_k exactly inside the step and the time law is piecewise quadratic.
* Constraints of step k are imposed at collocation points s_k + theta Delta_k (theta in {0, 1/2, 1},
  or 9 points on refined steps), each written in (u_k, x_k) through x(theta) = x_k + 2 theta
  Delta_k u_k; so they hold at the grid points from both sides, where the acceleration jumps, and
  in between.  Coulomb friction takes its worst sign on steps where a joint reverses.
* Each step's largest admissible x_k with u free is the largest root of a concave piecewise-linear
  function (the smallest upper bound on u minus the largest lower bound), found by Newton's
  method from above, which ends exactly on a crossing of two rows: the value Fourier-Motzkin
  elimination over all pairs of rows gives (that elimination decides where Newton stalls).  The
  backward pass K_k = [0, hi_k], hi_k = min(static_k, min_i(alpha_ki hi_{k+1} + beta_ki)), and
  the forward pass, which takes the largest admissible u_k (greedy, optimal given the reachable
  sets), loop over steps in Python floats on the few rows that can bind in the range of x each
  step can see.
* Viscous friction F_v q' sqrt(x) is linearised at the previous pass's x (tangent: conservative where
  friction pushes the torque towards the violated limit, exact at convergence), starting from the
  uniform scaling; two passes.
* Grids: the grid is bisected until the duration converges (see ``time_optimal_scaling``); the
  path data of a grid's collocation points (q, q', q'', a, b, c) are reused on its bisection,
  where they are grid points, so each grid computes only its new midpoints.  Only the grid whose
  duration converged is verified (the duration that decides convergence does not depend on the
  verification).
* Verification: the trajectory that is returned, interpolated as joint_trajectory_controller does
  (cubic, see below), is resampled at 10 points per output interval and the FULL model's inverse
  dynamics recomputed.  On steps where a torque exceeds its limit by more than ``tolerance``: first more
  output points (8 per step), then 9 collocation points, then limits tightened by the excess; the
  law is recomputed where needed (a few rounds at most; none on the shipped paths).

Output: two points per grid step (8 near flat ends, where the law is far from quadratic in time)
with the law's position, velocity, acceleration (the value on the step a point starts) and the
feedforward effort.  The law's acceleration jumps at grid points
(bang-bang), which a quintic (joint_trajectory_controller with accelerations) can only smooth
with an overshoot of about 16 % of each jump, so ``ScaledTrajectory.for_controller()`` drops the
accelerations: the cubic interpolation of positions and velocities represents a piecewise-constant
sdd law faithfully (exactly where the motion within a step is quadratic in time).

Ends: the output starts and ends at rest.  Where the path itself is at rest with a non-zero path
acceleration (q' = 0, q'' != 0), sd is free there (the robot stands still whatever sd is) and is
chosen as large as the limits allow; where the path is flat (q' = q'' = 0, as after a quintic
rest-to-rest segment) sd would grow without bound, and sd = 0 is imposed instead.
Positions-only trajectories are refused (ScalingError): linear interpolation jumps in velocity at
every waypoint, which needs infinite acceleration; uniform scaling handles them.

Output times are whole nanoseconds, as a ROS message carries them, and every output point is the
law's state at its rounded time; so the verified trajectory is exactly the one a controller
receives (output points near flat ends are microseconds apart, where shifting a time stamp by half
a nanosecond without moving the point would change the cubic's acceleration by percent).
"""
from __future__ import annotations

import math

import numpy as np

from ...algorithms.rnea import rnea
from ..uniform import (Limits, ScaledTrajectory, ScalingError, _admissible_inverse_scale, check_positions,
                      friction_torques, static_feasibility)
from ..trajectory import JointTrajectory

REGULAR = np.array([0.0, 0.5, 1.0])
REFINED = np.linspace(0.0, 1.0, 9)
X_CAP = 1e12          # stands for "unbounded" sd^2
DENSE_OUTPUT = 8      # output points per step where 2 do not follow the law closely enough
CONVERGED = 0.01      # relative change of the duration from a grid to its bisection: converged
MAX_LEVELS = 6        # grids up to 2^5 times the first
TRUSTED_STEPS = 400   # from this many steps on, one small change of the duration means converged
MIN_SPACING = 2e-9    # s: output points closer than this are merged (distinct after rounding to ns)


def _point_data(model, traj: JointTrajectory, parts):
    """For each (s (P,), side) of ``parts``: (q, q', q'', c, a, b) at the path points s, each
    (P, n); see the module docstring.  One batch for all parts (rnea's cost is mostly per call)."""
    sampled = [traj.sample(s, side=side) for s, side in parts]
    q, dq, ddq = (np.concatenate(arrays) for arrays in zip(*sampled))
    # One rnea call (its cost is mostly per call): c = g(q), and with gravity a + c and
    # b + c + friction; the subtraction costs a few ulps of g(q), far below any tolerance.
    zeros, P = np.zeros_like(q), q.shape[0]
    tau = rnea(model, np.concatenate([q, q, q]), np.concatenate([zeros, zeros, dq]),
               np.concatenate([zeros, dq, ddq]))
    c = tau[:P]
    a = tau[P:2 * P] - c
    b = tau[2 * P:] - c - friction_torques(model, dq)
    ends = np.cumsum([s.size for s, _ in parts])[:-1]
    return list(zip(*(np.split(v, ends) for v in (q, dq, ddq, c, a, b))))


class _Collocation:
    """Path data at the collocation points ``thetas`` (m,) of the grid steps ``steps`` (S,).
    ``points``: the six arrays of ``_point_data`` as (m, S, n), when already known."""

    @staticmethod
    def parts(path: "_Path", steps: np.ndarray, thetas: np.ndarray):
        """The points as ``_point_data`` parts: theta < 1 with the segment that starts at or
        before the point, theta = 1 as the left limit."""
        s0, d = path.s[steps], path.delta[steps]
        inner = thetas < 1.0
        return [((s0[None, :] + thetas[mask][:, None] * d[None, :]).ravel(), side)
                for mask, side in ((inner, "right"), (~inner, "left"))]

    @staticmethod
    def assemble(path: "_Path", steps: np.ndarray, thetas: np.ndarray, data):
        """``_point_data`` of ``parts`` as six (m, S, n) arrays."""
        n, m, S = path.model.n, thetas.size, steps.size
        points = tuple(np.empty((m, S, n)) for _ in range(6))
        inner = thetas < 1.0
        for mask, part in zip((inner, ~inner), data):
            for dst, src in zip(points, part):
                dst[mask] = src.reshape(-1, S, n)
        return points

    def __init__(self, path: "_Path", steps: np.ndarray, thetas: np.ndarray, points=None):
        model, traj = path.model, path.traj
        self.steps, self.thetas = steps, thetas
        n, m, S = model.n, thetas.size, steps.size
        s0, d = path.s[steps], path.delta[steps]
        self.path_s = s0
        self.theta_delta = thetas[:, None] * d[None, :]                     # (m, S)
        if points is None:
            points = self.assemble(path, steps, thetas, _point_data(model, traj, self.parts(path, steps, thetas)))
        self.q, self.dq, self.ddq, self.c, self.a, self.b = points
        coulomb = model.coulomb * np.sign(self.dq)
        self.coulomb = coulomb
        self.coulomb_max, self.coulomb_min = coulomb.max(axis=0), coulomb.min(axis=0)   # (S, n)
        self.viscous = model.viscous * self.dq                             # times sd
        # The same, step-major (S, m, n), as _rows uses them.
        self.by_step = tuple(np.ascontiguousarray(v.transpose(1, 0, 2)) for v in
                             (self.a, self.b, self.c, self.dq, self.ddq, self.viscous))


def _interleave(even: np.ndarray, odd: np.ndarray) -> np.ndarray:
    out = np.empty((even.shape[0] + odd.shape[0],) + even.shape[1:])
    out[0::2], out[1::2] = even, odd
    return out


class _GridPoints:
    """``_point_data`` of the regular collocation of the grid ``s``: right limits at s_0..s_{N-1}
    (theta = 0), midpoints (theta = 1/2), left limits at s_1..s_N (theta = 1).  Bisection makes the
    midpoints grid points, so the next grid's data are these plus its new midpoints only
    (``bisected``, then ``add_midpoints``)."""

    def __init__(self, model, traj: JointTrajectory, s: np.ndarray, right=None, left=None, ends=None):
        self.model, self.traj, self.s = model, traj, s
        # Midpoints lie inside waypoint segments (the grid holds every waypoint): no side to choose.
        self.mid_s = 0.5 * (s[:-1] + s[1:])           # as _bisected computes them
        self.mid, self.extra = None, []
        if right is None:
            self.mid, right, left = _point_data(model, traj, [(self.mid_s, "right"), (s[:-1], "right"),
                                                              (s[1:], "left")])
            ends = (traj.sample(s[-1:]), traj.sample(s[:1], side="left"))
        self.right, self.left, self.ends = right, left, ends

    def bisected(self) -> "_GridPoints":
        right = tuple(_interleave(r, m) for r, m in zip(self.right, self.mid))
        left = tuple(_interleave(m, l) for m, l in zip(self.mid, self.left))
        return _GridPoints(self.model, self.traj, _bisected(self.s), right, left, self.ends)

    def add_midpoints(self, extra=()):
        """Compute the midpoints' data, and in the same batch that of the parts ``extra``
        (``self.extra``)."""
        data = _point_data(self.model, self.traj, [(self.mid_s, "right")] + list(extra))
        self.mid, self.extra = data[0], data[1:]

    def sides(self):
        """(q', q'') of the path at every grid point, right and left limits (for ``_Path``)."""
        (_, dq_end, ddq_end), (_, dq_start, ddq_start) = self.ends
        return (np.concatenate([self.right[1], dq_end]), np.concatenate([self.right[2], ddq_end]),
                np.concatenate([dq_start, self.left[1]]), np.concatenate([ddq_start, self.left[2]]))

    def collocation(self, path: "_Path") -> _Collocation:
        points = tuple(np.stack([r, m, l]) for r, m, l in zip(self.right, self.mid, self.left))
        return _Collocation(path, np.arange(path.N), REGULAR, points)

    # REFINED holds theta = 0, 1/2, 1, whose data are the grid's; the others are inside the step.
    _INNER = (REFINED > 0.0) & (REFINED < 1.0) & (REFINED != 0.5)

    def refined_parts(self, path: "_Path", steps: np.ndarray):
        """The ``_point_data`` parts that ``refined`` needs beyond the grid's data."""
        if not steps.size:
            return []
        s0, d = path.s[steps], path.delta[steps]
        return [((s0[None, :] + REFINED[self._INNER][:, None] * d[None, :]).ravel(), "right")]

    def refined(self, path: "_Path", steps: np.ndarray) -> _Collocation:
        """The collocation REFINED on ``steps``, from the grid's data and ``self.extra``
        (computed for ``refined_parts``)."""
        n, S = self.model.n, steps.size
        points = tuple(np.empty((REFINED.size, S, n)) for _ in range(6))
        for dst, right, mid, left, inner in zip(points, self.right, self.mid, self.left, self.extra[0]):
            dst[0], dst[REFINED.size // 2], dst[-1] = right[steps], mid[steps], left[steps]
            dst[self._INNER] = inner.reshape(-1, S, n)
        return _Collocation(path, steps, REFINED, points)


def _initial_grid(traj: JointTrajectory, steps_per_segment: int, end_steps: int = 8) -> np.ndarray:
    """Grid s_0 < ... < s_N through every waypoint: equal steps within each waypoint segment; the
    first and last segments, where paths that start or end at rest are traversed at high path
    speed, get at least ``end_steps``."""
    counts = np.full(traj.num_points - 1, steps_per_segment)
    counts[[0, -1]] = np.maximum(counts[[0, -1]], end_steps)
    # per segment i: times[i] + (times[i + 1] - times[i]) * arange(c_i) / c_i
    seg = np.repeat(np.arange(counts.size), counts)
    within = np.arange(seg.size) - np.repeat(np.cumsum(counts) - counts, counts)
    times = traj.times
    pieces = times[seg] + np.diff(times)[seg] * within.astype(float) / counts[seg]
    return np.append(pieces, times[-1])


def _bisected(s: np.ndarray) -> np.ndarray:
    """The grid with every step cut in two."""
    out = np.empty(2 * s.size - 1)
    out[0::2], out[1::2] = s, 0.5 * (s[:-1] + s[1:])
    return out


class _Path:
    """The grid ``s`` (N+1,) in s (the trajectory's original time) and its end conditions."""

    def __init__(self, model, traj: JointTrajectory, s: np.ndarray, sides=None):
        self.model, self.traj = model, traj
        self.s = s
        self.delta = np.diff(self.s)
        self.N = self.delta.size
        if sides is None:   # (q', q'') at s, right and left limits
            _, dq_r, ddq_r = traj.sample(self.s)
            _, dq_l, ddq_l = traj.sample(self.s, side="left")
        else:
            dq_r, ddq_r, dq_l, ddq_l = sides
        scale = max(np.abs(dq_r).max(), 1e-300)
        # Corners (velocity jumps of the path, e.g. linear interpolation) force a stop.
        self.corner = np.abs(dq_r - dq_l).max(axis=1) > 1e-9 * scale
        self.corner[[0, -1]] = False
        at_rest = lambda v: bool(np.abs(v).max() <= 1e-9 * scale)      # noqa: E731
        acc_scale = max(np.abs(ddq_r).max(), 1e-300)
        regular = lambda a: bool(np.abs(a).max() > 1e-6 * acc_scale)   # noqa: E731
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


def _two_sided(A, B, const_up, const_lo, lower, upper):
    """A u + B x + const_up <= upper and A u + B x + const_lo >= lower as one row with A >= 0 (an
    upper bound on u) and one with A <= 0 (a lower bound on u), both as A u + B x <= C."""
    pos = A >= 0.0
    c_hi, c_lo = upper - const_up, const_lo - lower
    abs_a, signed_b = np.abs(A), np.where(pos, B, -B)
    up = (abs_a, signed_b, np.where(pos, c_hi, c_lo))
    lo = (-abs_a, -signed_b, np.where(pos, c_lo, c_hi))
    return up, lo


def _rows(col: _Collocation, path: _Path, limits: Limits, xbar, tight_up, tight_lo):
    """Rows A u + B x <= C of each step of ``col``, split into upper bounds on u (A >= 0) and
    lower bounds (A <= 0): two triples of (S, R) arrays.

    ``xbar`` (m, S): linearisation points of sqrt(x) for viscous friction (None: no viscous term).
    ``tight_up/lo`` (S, n): amounts removed from the torque limits of each step.
    """
    S = col.steps.size
    a, b, c, dq, ddq, viscous = col.by_step          # (S, m, n): rows in the order (theta, joint)
    theta_delta = col.theta_delta.T[..., None]        # (S, m, 1)
    td = 2.0 * theta_delta
    Au = a + td * b                                   # coefficient of u
    Bx = b
    const_up = c + col.coulomb_max[:, None]
    const_lo = c + col.coulomb_min[:, None]
    if xbar is not None:
        root = np.sqrt(np.maximum(xbar.T, 1e-12))[..., None]               # (S, m, 1)
        Au = Au + viscous * (theta_delta / root)
        Bx = Bx + viscous * (0.5 / root)
        half = 0.5 * viscous * root
        const_up = const_up + half
        const_lo = const_lo + half
    upper = (limits.effort_upper - tight_up)[:, None]
    lower = (limits.effort_lower + tight_lo)[:, None]
    up, lo = _two_sided(Au, Bx, const_up, const_lo, lower, upper)
    ups, los = [up], [lo]
    dq2 = dq ** 2
    ups.append((td * dq2, dq2, np.broadcast_to(limits.velocity ** 2, dq2.shape)))
    if np.isfinite(limits.acceleration).any():
        acc = np.where(np.isfinite(limits.acceleration), limits.acceleration, 1e300)
        up, lo = _two_sided(dq + td * ddq, ddq, 0.0, 0.0, -acc, acc)
        ups.append(up)
        los.append(lo)

    def full(v):                # (S, m, n)
        return v if getattr(v, "shape", None) == dq.shape else np.broadcast_to(v, dq.shape)

    def stack(blocks, extra):   # (S, m, n) blocks -> (S, R), plus one extra row per step
        return [np.concatenate([full(blk[i]).reshape(S, -1) for blk in blocks]
                               + [extra[i][:, None]], axis=1) for i in range(3)]
    # Lower set: also x_{k+1} = x_k + 2 Delta u_k >= 0 (last: _step_data relies on it).  Upper
    # set: also a slack row u <= 1e30, so that rows without u in the lower set still meet a
    # partner in the elimination.
    d = path.delta[col.steps]
    lower_rows = stack(los, (-2.0 * d, -np.ones(S), np.zeros(S)))
    upper_rows = stack(ups, (np.ones(S), np.zeros(S), np.full(S, 1e30)))
    # The rest state (x = u = 0) is admissible (static feasibility is checked beforehand); rows that
    # the friction linearisation pushes past it are clamped, and the verification catches the rest.
    for rows in (lower_rows, upper_rows):
        np.maximum(rows[2], 0.0, out=rows[2])
    return upper_rows, lower_rows


def _static_pairs(AU, BU, CU, AL, BL, CL):
    """Largest x with some u meeting every row, by Fourier-Motzkin over all pairs (lower row i,
    upper row j): (A_j B_i - A_i B_j) x <= A_j C_i - A_i C_j.  (S, R) rows -> (S,)."""
    D = AU[:, None, :] * BL[:, :, None] - AL[:, :, None] * BU[:, None, :]
    rhs = AU[:, None, :] * CL[:, :, None] - AL[:, :, None] * CU[:, None, :]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return np.minimum(np.where(D > 0, rhs / D, np.inf).min(axis=(1, 2)), X_CAP)


def _static_bound(AU, BU, CU, AL, BL, CL, iterations: int = 5, quotients=None):
    """The same largest x as ``_static_pairs``, by Newton's method from above on
    f(x) = min_j (C_j - B_j x) / A_j - max_i (C_i - B_i x) / A_i (rows with A != 0): f is concave
    and piecewise linear, f(0) >= 0 (every C >= 0), so from any x where f < 0 the tangent's root
    lies between the largest root and x, and each step lands on another piece, the last one
    exactly on the root.  Rows with A = 0 bound x directly.  Steps that do not settle (or meet a
    degenerate slope) fall back to the pairs.  ``quotients``: (CU / AU, BU / AU, CL / AL, BL / AL)
    when already computed."""
    S = AU.shape[0]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        x_only = np.where((AU == 0.0) & (BU > 0.0), CU / BU, np.inf).min(axis=1)
        x_only = np.minimum(x_only, np.where((AL == 0.0) & (BL > 0.0), CL / BL, np.inf).min(axis=1))
        x = np.minimum(x_only, X_CAP)
        # A closer start: the pairs of every upper row with the last lower row (any pair bounds
        # the root from above; in _rows' order that row is x_{k+1} >= 0).
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
        out[k] = np.minimum(_static_pairs(AU[k], BU[k], CU[k], AL[k], BL[k], CL[k]), x_only[k])
    return out


def _step_data(upper_rows, lower_rows, delta):
    """Per step: static bound on x, recursion coefficients (alpha, beta) and forward-pass rows
    (u <= p - r x for the upper rows, u >= p - r x for the lower ones)."""
    AU, BU, CU = upper_rows
    AL, BL, CL = lower_rows
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        quotients = (CU / AU, BU / AU, CL / AL, BL / AL)
    static = _static_bound(AU, BU, CU, AL, BL, CL, quotients=quotients)
    # The recursion row 2 Delta u + x <= hi_{k+1} paired with each lower row i:
    #   (2 Delta B_i - A_i) x <= 2 Delta C_i - A_i hi_{k+1}
    two_d = 2.0 * delta[:, None]
    Dr = two_d * BL - AL
    valid = (AL < 0) & (Dr > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = np.where(valid, -AL / Dr, 0.0)
        beta = np.where(valid, two_d * CL / Dr, np.inf)
    # Forward pass rows; rows without u never bind u.  The last lower row (x_{k+1} >= 0, see
    # _rows) is left to _forward, which imposes it directly.
    tiny = 1e-12 * max(np.abs(AU).max(), 1e-300)
    has_u = AU > tiny
    up = (np.where(has_u, quotients[0], np.inf), np.where(has_u, quotients[1], 0.0))
    has_u = AL[:, :-1] < -tiny
    lo = (np.where(has_u, quotients[2][:, :-1], -np.inf), np.where(has_u, quotients[3][:, :-1], 0.0))
    return static, alpha, beta, up, lo


def _envelope_rows(a, b, H):
    """Rows (a, b) (S, R) of lines a h + b, of which only the minimum over h in [0, H_k] matters:
    per step, the rows (a, b) that can be that minimum, as flat lists ``A``, ``B`` (step after
    step, rows in their order) and the range [start_k, end_k) of each step in them.  A row at or
    above another at both h = 0 and h = H_k is at or above it in between; so where one row is
    lowest at both ends (most steps) it is the only one, else the rows not above one of the two
    lowest are kept."""
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
    return a[keep].tolist(), b[keep].tolist(), end - counts, end


def _per_step(N: int, groups):
    """[(steps, _envelope_rows(...))] -> (A, B, start, end) over all N steps (start and end as
    lists), later groups overriding."""
    A, B = [], []
    start, end = np.zeros(N, int), np.zeros(N, int)
    for steps, (a, b, s, e) in groups:
        offset = len(A)
        A += a
        B += b
        start[steps], end[steps] = s + offset, e + offset
    return A, B, start.tolist(), end.tolist()


def _solve(path: _Path, data):
    """Backward reachability and greedy forward pass.  ``data``: list of (steps, _step_data(...));
    later entries override earlier ones.  Returns x (N+1,), u (N,).

    The loops over steps are in plain Python floats on the few rows that can bind in the range of
    x each step can see (``_envelope_rows``), with the full rows as a fallback outside it."""
    N, delta = path.N, path.delta
    static = np.empty(N)
    for steps, (st, *_) in data:
        static[steps] = st
    static[path.corner[:-1]] = 0.0
    hi = np.empty(N + 1)
    h = hi[N] = X_CAP if path.free_end else 0.0
    # Backward pass: h = hi_{k+1} <= static_{k+1} (or hi_N).
    h_range = np.append(static[1:], h)
    rec = _per_step(N, [(steps, _envelope_rows(alpha, beta, h_range[steps]))
                        for steps, (_, alpha, beta, _, _) in data])
    stat = static.tolist()
    A, B, start, end = rec
    his = stat + [h]
    for k in range(N - 1, -1, -1):
        v = stat[k]
        for j in range(start[k], end[k]):
            t = A[j] * h + B[j]
            if t < v:
                v = t
        h = his[k] = v
    hi[:] = his
    hi[path.corner] = 0.0
    # Forward pass: x_k in [0, hi_k] up to rounding; u <= min_j (p_j - r_j x), u >= max_i (p_i - r_i x).
    x_range = hi[:-1] * (1.0 + 1e-9) + 1e-300
    ups = _per_step(N, [(steps, _envelope_rows(-up[1], up[0], x_range[steps]))   # u <= a x + b
                        for steps, (_, _, _, up, _) in data])
    d2 = (2.0 * delta).tolist()
    his, xr = hi.tolist(), x_range.tolist()
    los = _per_step(N, [(steps, _envelope_rows(lo[1], -lo[0], x_range[steps]))   # -u <= a x + b
                        for steps, (_, _, _, _, lo) in data])
    return _forward(path, data, his, xr, d2, ups, los, his[0] if path.free_start else 0.0)


def _forward(path, data, his, xr, d2, ups, los, x_start):
    """The greedy forward pass from x_0 = ``x_start`` (see ``_solve``): the largest u_k within
    the rows ``ups``/``los`` of the step (or all its rows, if x_k is outside the pruned range)
    that keeps x_{k+1} <= hi_{k+1}, but not below a lower bound (which only rounding can make
    bind: x_k <= hi_k leaves room) or x_{k+1} < 0."""
    N = path.N
    x = [0.0] * (N + 1)
    u = [0.0] * N
    xk = x[0] = x_start
    UA, UB, up_start, up_end = ups
    LA, LB, lo_start, lo_end = los
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
            u_max = min(float(_rows_at(data, k, 3, xk).min()), (his[k + 1] - xk) / two_d)
            u_min = max(float(_rows_at(data, k, 4, xk).max()), -xk / two_d)
        uk = u_min if u_min > u_max else u_max          # max(u_max, u_min), without the call
        u[k] = uk
        xk = xk + two_d * uk
        if 0.0 > xk:
            xk = 0.0
        x[k + 1] = xk
    return np.array(x), np.array(u)


def _rows_at(data, k: int, which: int, xk: float) -> np.ndarray:
    """p - r x_k of step k's forward-pass rows ``which`` (3: upper, 4: lower), from the last group
    of ``data`` that holds step k."""
    for steps, rows in reversed(data):
        i = np.flatnonzero(steps == k)
        if i.size:
            p, r = rows[which]
            return p[i[0]] - r[i[0]] * xk
    raise AssertionError(f"step {k} in no group")


def _step_times(path: _Path, x):
    sd = np.sqrt(np.maximum(x, 0.0))
    denom = sd[:-1] + sd[1:]
    if np.any(denom <= 0.0):
        k = int(np.argmax(denom <= 0.0))
        raise ScalingError(f"the path cannot be followed near t = {path.s[k]:.6g} s (original time): "
                           "the limits leave no admissible speed there", None, float(path.s[k]))
    return 2.0 * path.delta / denom


def law_samples(path: _Path, x, u, density: int):
    """The exact time law at ``density`` points per step: s, step index and (q, qd, qdd)."""
    theta = np.arange(density) / density
    step = np.append(np.repeat(np.arange(path.N), density), path.N - 1)
    th = np.append(np.tile(theta, path.N), 1.0)
    s = path.s[step] + th * path.delta[step]
    q, dq, ddq = path.traj.sample(s)
    q[-1], dq[-1], ddq[-1] = path.traj.sample(s[-1], side="left")
    xs = np.maximum(x[step] + 2.0 * th * path.delta[step] * u[step], 0.0)
    return s, step, (q, dq * np.sqrt(xs)[:, None], dq * u[step, None] + ddq * xs[:, None])


def _spread(counts: np.ndarray):
    """For ``counts[k]`` points in interval k: interval index and fraction in [0, 1) per point."""
    index = np.repeat(np.arange(counts.size), counts)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return index, (np.arange(index.size) - first[index]) / counts[index]


def _output(path: _Path, x, u, t0: float, per_step: np.ndarray):
    """Points of the law, ``per_step[k]`` in grid step k (evenly spaced in s) plus the end point;
    accelerations are those of the step a point starts (so the grid points' right limits)."""
    traj = path.traj
    dt = _step_times(path, x)
    step, th = _spread(per_step)
    step, th = np.append(step, path.N - 1), np.append(th, 1.0)
    d, xk, uk = path.delta[step], x[step], u[step]
    ds = th * d
    xs = np.maximum(xk + 2.0 * uk * ds, 0.0)
    sd0, sd = np.sqrt(np.maximum(xk, 0.0)), np.sqrt(xs)
    with np.errstate(invalid="ignore", divide="ignore"):     # time into the step: exact, stable
        into = np.where(sd0 + sd > 0, 2.0 * ds / (sd0 + sd), 0.0)
    t_grid = t0 + np.concatenate([[0.0], np.cumsum(dt)])
    t = t_grid[step] + into
    t[-1] = t_grid[-1]
    # Times are rounded to whole nanoseconds, as a ROS message carries them, and each point is
    # then the law's state AT its rounded time (not the state of the unrounded time with a shifted
    # time stamp, which on microsecond intervals would change the cubic's acceleration by percent).
    keep = _spaced(t, MIN_SPACING)
    t = np.round(t[keep] * 1e9) * 1e-9
    if t.size < 2 or np.any(np.diff(t) <= 0.0):
        raise ScalingError("time_optimal: the scaled trajectory is shorter than a nanosecond")
    step = np.clip(np.searchsorted(t_grid, t, side="right") - 1, 0, path.N - 1)
    tau = np.clip(t - t_grid[step], 0.0, dt[step])
    xk, uk = np.maximum(x[step], 0.0), u[step]
    ds = np.clip(np.sqrt(xk) * tau + 0.5 * uk * tau * tau, 0.0, path.delta[step])
    ds[-1] = path.delta[-1]
    xs = np.maximum(xk + 2.0 * uk * ds, 0.0)
    xs[-1] = max(x[-1], 0.0)
    s = path.s[step] + ds
    q, dq, ddq = traj.sample(s)
    q[-1], dq[-1], ddq[-1] = traj.sample(s[-1], side="left")
    return t, s, q, dq * np.sqrt(xs)[:, None], dq * uk[:, None] + ddq * xs[:, None], step


def _controller_samples(t, q, qd, density: int, extra: int = 0):
    """(q, qd, qdd) of the trajectory through (t, q, qd) as joint_trajectory_controller (and
    ``JointTrajectory.sample``) interpolates it, cubic Hermite, in the order the verification
    uses: ``density`` points per interval at local times T i / density, the last point, then each
    interval at T (1 - 1e-9).  Evaluated per fraction on local times (no search, no gather); the
    arrays have ``extra`` more rows (uninitialised) for the caller."""
    K, n = q.shape
    T = np.diff(t)[:, None]
    p0, p1, v0, v1 = q[:-1], q[1:], qd[:-1], qd[1:]
    c2 = (-3.0 * p0 + 3.0 * p1 - 2.0 * v0 * T - v1 * T) / T**2    # as trajectory._segment_coefficients
    c3 = (2.0 * p0 - 2.0 * p1 + v0 * T + v1 * T) / T**3
    M = (K - 1) * density
    out = tuple(np.empty((M + K + extra, n)) for _ in range(3))
    inner = tuple(a[:M].reshape(K - 1, density, n) for a in out)
    c2x2, c3x3, c3x6 = 2.0 * c2, 3.0 * c3, 6.0 * c3
    for i in range(density + 1):
        tau = T * (i / density if i < density else 1.0 - 1e-9)
        values = (p0 + tau * (v0 + tau * (c2 + tau * c3)),    # Horner, as JointTrajectory.sample
                  (c3x3 * tau + c2x2) * tau + v0,
                  c3x6 * tau + c2x2)
        for dst, dst_inner, value in zip(out, inner, values):
            if i < density:
                dst_inner[:, i] = value
            else:
                dst[M + 1:M + K] = value
    # At and after the last point the controller holds it: its velocity as given, no acceleration.
    out[0][M], out[1][M], out[2][M] = q[-1], qd[-1], 0.0
    return out


def _spaced(t: np.ndarray, spacing: float) -> np.ndarray:
    """Mask keeping the first and last point and every point at least ``spacing`` after the last
    kept one and before the end."""
    keep = np.ones(t.size, bool)
    if t.size > 2 and np.diff(t).min() < spacing:
        last = t[0]
        for i in range(1, t.size - 1):
            if t[i] - last < spacing or t[-1] - t[i] < spacing:
                keep[i] = False
            else:
                last = t[i]
    return keep


def _validate(model, traj, regular: _Collocation, limits: Limits) -> None:
    """Positions and static feasibility at every collocation point (ScalingError naming joint, time)."""
    n = model.n
    s_pts = (regular.path_s[None, :] + regular.theta_delta).reshape(-1)
    check_positions(model, traj, s_pts, regular.q.reshape(-1, n))
    static_feasibility(model, s_pts, regular.c.reshape(-1, n),
                       (regular.c + regular.coulomb).reshape(-1, n), limits)


def _validate_points(model, s_pts, data, limits: Limits) -> None:
    """``_validate`` at path points ``s_pts`` (P,) with their ``_point_data``."""
    q, dq, _, c, _, _ = data
    check_positions(model, None, s_pts, q)
    static_feasibility(model, s_pts, c, c + model.coulomb * np.sign(dq), limits)


def _first_linearisation(model, regular: _Collocation, limits: Limits) -> float:
    """x = sd^2 of the uniform scaling, where viscous friction is linearised first."""
    n = model.n
    xu = _admissible_inverse_scale(regular.b.reshape(-1, n), regular.viscous.reshape(-1, n),
                                   (regular.c + regular.coulomb).reshape(-1, n), limits,
                                   regular.dq.reshape(-1, n), regular.ddq.reshape(-1, n))
    return max(float(xu.min()), 1e-6) ** 2


def _solve_groups(path, groups, limits, viscous, x_first, x, u, tight_up, tight_lo):
    """Solve (two passes with viscous friction, re-linearised at the previous law)."""
    for _ in range(2 if viscous else 1):
        data = []
        for col in groups:
            if not viscous:
                xbar = None
            elif x is None:
                xbar = np.full((col.thetas.size, col.steps.size), x_first)
            else:
                xbar = x[col.steps][None, :] + 2.0 * col.theta_delta * u[col.steps][None, :]
            rows = _rows(col, path, limits, xbar, tight_up[col.steps], tight_lo[col.steps])
            data.append((col.steps, _step_data(*rows, path.delta[col.steps])))
        x, u = _solve(path, data)
    return x, u


def _law_duration(path, x) -> float:
    return float(_step_times(path, x).sum())


def _near_flat(traj: JointTrajectory, path: _Path) -> np.ndarray:
    """Steps within 3 waypoint segments of a flat point (q' = q'' = 0, where the law starts from or
    comes to sd = 0): the law is far from quadratic in time there."""
    K = traj.num_points
    near = np.zeros(path.N, bool)
    for s_flat in path.s[path.flat]:
        i = int(np.searchsorted(traj.times, s_flat))
        near |= (path.s[1:] > traj.times[max(i - 3, 0)]) & (path.s[:-1] < traj.times[min(i + 3, K - 1)])
    return near


def _first_law(model, traj, path, regular, limits, viscous, x_first, points_per_step, refined=None):
    """The law on ``path`` before verification and the output density; returns (raw duration,
    state for ``_verified_law``).  Near flat points: more output points and 9 collocation points
    per step (``refined``: that collocation, when already computed)."""
    n, N = model.n, path.N
    per_step = np.full(N, points_per_step)
    near_end = _near_flat(traj, path)
    per_step[near_end] = np.maximum(per_step[near_end], DENSE_OUTPUT)
    refined_steps = np.flatnonzero(near_end)
    groups = [regular]
    if refined_steps.size:
        groups.append(refined if refined is not None else _Collocation(path, refined_steps, REFINED))
    zeros = np.zeros((N, n))
    x, u = _solve_groups(path, groups, limits, viscous, x_first, None, None, zeros, zeros)
    return _law_duration(path, x), (x, u, groups, refined_steps, per_step)


def _verified_law(model, traj, path, regular, limits, viscous, x_first, verify_density, tolerance,
                  max_rounds, points_per_step, first=None):
    """Solve on ``path`` (or start from ``first``, the result of ``_first_law``) and verify the
    output as the controller interpolates it; remedies on the steps that fail (see the module
    docstring).  Returns (raw duration, output or None)."""
    n, N = model.n, path.N
    if first is None:
        first = _first_law(model, traj, path, regular, limits, viscous, x_first, points_per_step)
    raw, (x, u, groups, refined_steps, per_step) = first
    per_step = per_step.copy()
    tight_up, tight_lo = np.zeros((N, n)), np.zeros((N, n))
    allowed = tolerance * np.maximum(np.abs(limits.effort_upper), np.abs(limits.effort_lower))
    v_allowed = limits.velocity * (1.0 + tolerance)
    span = limits.effort_upper - limits.effort_lower
    for _ in range(max_rounds):
        # Verify the trajectory as the controller will interpolate it (cubic, see the docstring).
        t, s_out, q, qd, qdd, out_step = _output(path, x, u, traj.times[0], per_step)
        K = t.size
        seg, frac = _spread(np.full(K - 1, verify_density))   # per output interval
        dt = np.diff(t)
        t_check = np.append(t[seg] + dt[seg] * frac, t[-1])
        step = np.append(out_step[seg], N - 1)
        # ... plus the end of every interval: the cubic's acceleration, linear in time, is extreme
        # at the ends of its interval, where the next interval's value differs.  (Just before the
        # end, not the left limit: where the law stops, Coulomb friction acts until the stop.)
        t_check = np.append(t_check, t[1:] - 1e-9 * dt)
        step = np.append(step, out_step[:-1])
        # One batch: the check samples, the output points' effort and the original trajectory's
        # torque at its end (elsewhere on the grid it is b + c + friction, sd = 1, sdd = 0).
        M = t_check.size
        batch = _controller_samples(t, q, qd, verify_density, extra=K + 1)
        for dst, out_value, end_value in zip(batch, (q, qd, qdd), traj.sample(path.s[-1:])):
            dst[M:M + K], dst[M + K:] = out_value, end_value
        q_c, qd_c = batch[0][:M], batch[1][:M]
        tau_all = rnea(model, *batch)
        tau, effort = tau_all[:M], tau_all[M:M + K]
        original = np.concatenate([regular.b[0] + regular.c[0] + friction_torques(model, regular.dq[0]),
                                   tau_all[M + K:]])
        bad = ((tau > limits.effort_upper + allowed) | (tau < limits.effort_lower - allowed)
               | (np.abs(qd_c) > v_allowed)).any(axis=1)
        if not bad.any():
            return raw, (x, u, t, s_out, q, qd, qdd, t_check, tau, effort, original)
        over, under = tau - limits.effort_upper, limits.effort_lower - tau
        bad_steps = np.unique(step[bad])
        sparse = bad_steps[per_step[bad_steps] < DENSE_OUTPUT]
        if sparse.size:  # first remedy: more output points there (the cubic follows the law closer)
            per_step[sparse] = DENSE_OUTPUT
            continue
        new = np.setdiff1d(bad_steps, refined_steps)
        if new.size:     # then: more collocation points on those steps
            refined_steps = np.union1d(refined_steps, new)
            groups = [regular, _Collocation(path, refined_steps, REFINED)]
        else:            # then: tighten the torque limits by the excess
            for excess, tight in ((over, tight_up), (under, tight_lo)):
                rows, joints = np.nonzero(excess > allowed)
                increase = np.zeros_like(tight)
                np.maximum.at(increase, (step[rows], joints), excess[rows, joints] + allowed[joints])
                tight += increase
                np.minimum(tight, 0.5 * span, out=tight)
        x, u = _solve_groups(path, groups, limits, viscous, x, x, u, tight_up, tight_lo)
    return raw, None


def time_optimal_scaling(model, traj: JointTrajectory, limits: Limits | None = None,
                         grid_steps: int = 150, verify_density: int = 10, tolerance: float = 1e-3,
                         max_rounds: int = 4, points_per_step: int = 2, convergence: float = CONVERGED,
                         max_levels: int = MAX_LEVELS) -> ScaledTrajectory:
    """Minimum-time replay of the path of ``traj`` within ``limits`` (default: the model's).

    ``grid_steps``: about this many steps on the first verified grid (equal within a waypoint
    segment, at least one per segment, at least 8 in the first and last).  The grid is then cut in
    two until the law's duration changes by less than ``convergence`` (relative) from one grid to
    the next (on grids under ``TRUSTED_STEPS`` steps: twice in a row, against plateaus of coarse
    grids): the discretisation loses time in proportion to the step, so the last change
    estimates the remaining distance to the optimum.  The returned trajectory, interpolated
    cubically as joint_trajectory_controller does with positions and velocities, keeps every
    torque within ``tolerance`` (relative to the limit) of its limit, and every velocity within
    its limit times (1 + ``tolerance``), at ``verify_density`` samples per step.
    ``scale_factor`` is new duration / original duration.  Raises ``ScalingError`` like
    ``uniform_scaling``, and when no grid up to 2^(max_levels - 1) times the first one gives a
    verified, converged law (never a trajectory that breaks a limit).
    """
    traj = traj.reordered(model.joint_names)
    limits = limits or Limits.from_model(model)
    if traj.num_points < 2:
        raise ScalingError("trajectory: needs at least 2 points to be scaled")
    if traj.velocities is None:
        raise ScalingError("time_optimal needs velocities (a C1 path): a positions-only trajectory is "
                           "interpolated linearly, and its velocity jumps at the waypoints would need "
                           "infinite acceleration, beyond any torque limit; give velocities or use "
                           "uniform scaling")
    for name, value in (("grid_steps", grid_steps), ("verify_density", verify_density),
                        ("max_levels", max_levels)):
        if int(value) != value or value < 2:
            raise ValueError(f"{name}: expected an integer >= 2, got {value}")
    viscous = bool(np.any(model.viscous != 0.0))
    # Level 0: half the steps, duration only (the reference for the first convergence test).
    per_segment = max(1, math.ceil(grid_steps / (2 * (traj.num_points - 1))))
    points = _GridPoints(model, traj, _initial_grid(traj, per_segment, end_steps=4))
    path = _Path(model, traj, points.s, points.sides())
    regular = points.collocation(path)
    _validate(model, traj, regular, limits)
    x_first = _first_linearisation(model, regular, limits) if viscous else None
    zeros = np.zeros((path.N, model.n))
    x, _ = _solve_groups(path, [regular], limits, viscous, x_first, None, None, zeros, zeros)
    previous = _law_duration(path, x)
    # Only a grid whose duration has converged is verified (the raw duration, which decides
    # convergence, does not depend on the verification); when none converges, the finest grid
    # whose law verifies is the answer, as if every grid had been verified.
    found, last_change, unverified = None, math.inf, []
    verify = dict(verify_density=verify_density, tolerance=tolerance, max_rounds=max_rounds,
                  points_per_step=points_per_step)
    for _ in range(1, max_levels):
        points = points.bisected()             # path data: only the new points are computed
        path = _Path(model, traj, points.s, points.sides())
        refined_steps = np.flatnonzero(_near_flat(traj, path))
        points.add_midpoints(points.refined_parts(path, refined_steps))
        refined = points.refined(path, refined_steps) if refined_steps.size else None
        regular = points.collocation(path)
        _validate_points(model, points.mid_s, points.mid, limits)   # the other points: before
        first = _first_law(model, traj, path, regular, limits, viscous, x_first, points_per_step,
                           refined)
        raw = first[0]
        change = abs(previous - raw) / raw
        # One small change on a coarse grid can be a plateau (seen on a 4-waypoint cubic path
        # at 150 steps, 2.8 % from the optimum): below TRUSTED_STEPS, two in a row are needed.
        if change <= convergence and (last_change <= convergence or path.N >= TRUSTED_STEPS):
            _, law = _verified_law(model, traj, path, regular, limits, viscous, x_first, first=first,
                                   **verify)
            if law is not None:
                found = law
                break
        else:
            unverified.append(points.s)
        previous, last_change = raw, change
    else:
        # verified but not converged: still within the limits, only possibly slower than optimal
        for s_grid in reversed(unverified):
            path = _Path(model, traj, s_grid)
            regular = _Collocation(path, np.arange(path.N), REGULAR)
            _, found = _verified_law(model, traj, path, regular, limits, viscous, x_first, **verify)
            if found is not None:
                break
        if found is None:
            raise ScalingError(f"time_optimal: no time law within the limits (tolerance {tolerance:g}) "
                               f"found on grids up to {points.s.size - 1} steps; use uniform scaling")

    x, u, t, s_out, q, qd, qdd, t_check, tau, effort, original_torques = found
    new_traj = JointTrajectory(traj.joint_names, t, q, qd, qdd, effort)
    order = np.argsort(t_check, kind="stable")
    t_check, tau = t_check[order], tau[order]
    path_s = np.interp(t_check, t, s_out)
    return ScaledTrajectory(
        trajectory=new_traj, method="time_optimal",
        scale_factor=float((t[-1] - t[0]) / (traj.times[-1] - traj.times[0])), duration=float(t[-1]),
        original_duration=traj.duration, sample_times=t_check, torques=tau, original_times=path.s,
        original_torques=original_torques, path_times=path_s,
        limits=limits)
