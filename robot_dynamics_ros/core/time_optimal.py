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
* Eliminating u (Fourier-Motzkin on pairs of rows) gives each step's largest admissible x_k in
  closed form; the backward pass K_k = [0, hi_k], hi_k = min(static_k, min_i(alpha_ki hi_{k+1} +
  beta_ki)), is one short vectorised expression per step, and the forward pass takes the largest
  admissible u_k (greedy, which is optimal given the reachable sets).
* Viscous friction F_v q' sqrt(x) is linearised at the previous pass's x (tangent: conservative where
  friction pushes the torque towards the violated limit, exact at convergence), starting from the
  uniform scaling; two passes.
* Verification: the trajectory that is returned, interpolated as joint_trajectory_controller does
  (cubic, see below), is resampled at 10 points per step and the FULL model's inverse dynamics
  recomputed.  On steps where a torque exceeds its limit by more than ``tolerance``: first more
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

from .rnea import rnea
from .scaling import (Limits, ScaledTrajectory, ScalingError, _admissible_inverse_scale, check_positions,
                      friction_torques, static_feasibility)
from .trajectory import JointTrajectory

REGULAR = np.array([0.0, 0.5, 1.0])
REFINED = np.linspace(0.0, 1.0, 9)
X_CAP = 1e12          # stands for "unbounded" sd^2
DENSE_OUTPUT = 8      # output points per step where 2 do not follow the law closely enough
CONVERGED = 0.01      # relative change of the duration from a grid to its bisection: converged
MAX_LEVELS = 6        # grids up to 2^5 times the first
TRUSTED_STEPS = 400   # from this many steps on, one small change of the duration means converged
MIN_SPACING = 2e-9    # s: output points closer than this are merged (distinct after rounding to ns)


class _Collocation:
    """Path data at the collocation points ``thetas`` (m,) of the grid steps ``steps`` (S,)."""

    def __init__(self, path: "_Path", steps: np.ndarray, thetas: np.ndarray):
        model, traj = path.model, path.traj
        self.steps, self.thetas = steps, thetas
        n, m, S = model.n, thetas.size, steps.size
        s0, d = path.s[steps], path.delta[steps]
        self.path_s = s0
        self.theta_delta = thetas[:, None] * d[None, :]                     # (m, S)
        # theta < 1: the segment that starts at or before the point; theta = 1: the left limit.
        inner = thetas < 1.0
        q = np.empty((m, S, n))
        dq, ddq = np.empty_like(q), np.empty_like(q)
        for mask, side in ((inner, "right"), (~inner, "left")):
            if mask.any():
                pts = (s0[None, :] + self.theta_delta[mask]).ravel()
                qs = traj.sample(pts, side=side)
                for dst, src in zip((q, dq, ddq), qs):
                    dst[mask] = src.reshape(-1, S, n)
        Q, dQ, ddQ = q.reshape(-1, n), dq.reshape(-1, n), ddq.reshape(-1, n)
        zeros, g0 = np.zeros_like(Q), np.zeros(3)
        self.q, self.dq, self.ddq = q, dq, ddq
        self.c = rnea(model, Q, zeros, zeros).reshape(q.shape)
        self.a = rnea(model, Q, zeros, dQ, gravity=g0).reshape(q.shape)
        self.b = (rnea(model, Q, dQ, ddQ, gravity=g0) - friction_torques(model, dQ)).reshape(q.shape)
        coulomb = model.coulomb * np.sign(dq)
        self.coulomb = coulomb
        self.coulomb_max, self.coulomb_min = coulomb.max(axis=0), coulomb.min(axis=0)   # (S, n)
        self.viscous = model.viscous * dq                                  # times sd


def _initial_grid(traj: JointTrajectory, steps_per_segment: int, end_steps: int = 8) -> np.ndarray:
    """Grid s_0 < ... < s_N through every waypoint: equal steps within each waypoint segment; the
    first and last segments, where paths that start or end at rest are traversed at high path
    speed, get at least ``end_steps``."""
    counts = np.full(traj.num_points - 1, steps_per_segment)
    counts[[0, -1]] = np.maximum(counts[[0, -1]], end_steps)
    pieces = [traj.times[i] + (traj.times[i + 1] - traj.times[i]) * np.arange(c) / c
              for i, c in enumerate(counts)]
    return np.append(np.concatenate(pieces), traj.times[-1])


def _bisected(s: np.ndarray) -> np.ndarray:
    """The grid with every step cut in two."""
    out = np.empty(2 * s.size - 1)
    out[0::2], out[1::2] = s, 0.5 * (s[:-1] + s[1:])
    return out


class _Path:
    """The grid ``s`` (N+1,) in s (the trajectory's original time) and its end conditions."""

    def __init__(self, model, traj: JointTrajectory, s: np.ndarray):
        self.model, self.traj = model, traj
        self.s = s
        self.delta = np.diff(self.s)
        self.N = self.delta.size
        _, dq_r, ddq_r = traj.sample(self.s)
        _, dq_l, ddq_l = traj.sample(self.s, side="left")
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
    sigma = np.where(A >= 0.0, 1.0, -1.0)
    c_hi, c_lo = upper - const_up, const_lo - lower
    up = (sigma * A, sigma * B, np.where(sigma > 0, c_hi, c_lo))
    lo = (-sigma * A, -sigma * B, np.where(sigma > 0, c_lo, c_hi))
    return up, lo


def _rows(col: _Collocation, path: _Path, limits: Limits, xbar, tight_up, tight_lo):
    """Rows A u + B x <= C of each step of ``col``, split into upper bounds on u (A >= 0) and
    lower bounds (A <= 0): two triples of (S, R) arrays.

    ``xbar`` (m, S): linearisation points of sqrt(x) for viscous friction (None: no viscous term).
    ``tight_up/lo`` (S, n): amounts removed from the torque limits of each step.
    """
    S, m = col.steps.size, col.thetas.size
    td = (2.0 * col.theta_delta)[..., None]                               # (m, S, 1)
    Au = col.a + td * col.b                                               # coefficient of u
    Bx = col.b
    const_up = col.c + col.coulomb_max[None]
    const_lo = col.c + col.coulomb_min[None]
    if xbar is not None:
        root = np.sqrt(np.maximum(xbar, 1e-12))[..., None]                # (m, S, 1)
        k = col.viscous
        Au = Au + k * col.theta_delta[..., None] / root
        Bx = Bx + k / (2.0 * root)
        const_up = const_up + 0.5 * k * root
        const_lo = const_lo + 0.5 * k * root
    upper = limits.effort_upper - tight_up[None]
    lower = limits.effort_lower + tight_lo[None]
    up, lo = _two_sided(Au, Bx, const_up, const_lo, lower, upper)
    ups, los = [up], [lo]
    dq2 = col.dq ** 2
    ups.append((td * dq2, dq2, np.broadcast_to(limits.velocity ** 2, dq2.shape)))
    if np.isfinite(limits.acceleration).any():
        acc = np.where(np.isfinite(limits.acceleration), limits.acceleration, 1e300)
        up, lo = _two_sided(col.dq + td * col.ddq, col.ddq, 0.0, 0.0, -acc, acc)
        ups.append(up)
        los.append(lo)

    def stack(blocks, extra):   # (m, S, n) blocks -> (S, R), plus one extra row per step
        out = []
        for i in range(3):
            parts = [np.moveaxis(np.broadcast_to(b[i], (m, S, col.q.shape[2])), 1, 0).reshape(S, -1)
                     for b in blocks]
            out.append(np.concatenate(parts + [extra[i][:, None]], axis=1))
        return out
    # Lower set: also x_{k+1} = x_k + 2 Delta u_k >= 0.  Upper set: also a slack row u <= 1e30,
    # so that rows without u in the lower set still meet a partner in the elimination.
    d = path.delta[col.steps]
    lower_rows = stack(los, (-2.0 * d, -np.ones(S), np.zeros(S)))
    upper_rows = stack(ups, (np.ones(S), np.zeros(S), np.full(S, 1e30)))
    # The rest state (x = u = 0) is admissible (static feasibility is checked beforehand); rows that
    # the friction linearisation pushes past it are clamped, and the verification catches the rest.
    for rows in (lower_rows, upper_rows):
        np.maximum(rows[2], 0.0, out=rows[2])
    return upper_rows, lower_rows


def _step_data(upper_rows, lower_rows, delta):
    """Per step: static bound on x, recursion coefficients (alpha, beta) and forward-pass rows."""
    AU, BU, CU = upper_rows
    AL, BL, CL = lower_rows
    # Fourier-Motzkin over pairs (lower row i, upper row j): (A_j B_i - A_i B_j) x <= A_j C_i - A_i C_j
    D = AU[:, None, :] * BL[:, :, None] - AL[:, :, None] * BU[:, None, :]
    rhs = AU[:, None, :] * CL[:, :, None] - AL[:, :, None] * CU[:, None, :]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        static = np.minimum(np.where(D > 0, rhs / D, np.inf).min(axis=(1, 2)), X_CAP)
    # The recursion row 2 Delta u + x <= hi_{k+1} paired with each lower row i:
    #   (2 Delta B_i - A_i) x <= 2 Delta C_i - A_i hi_{k+1}
    two_d = 2.0 * delta[:, None]
    Dr = two_d * BL - AL
    valid = (AL < 0) & (Dr > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = np.where(valid, -AL / Dr, 0.0)
        beta = np.where(valid, two_d * CL / Dr, np.inf)
    # Forward pass rows; rows without u never bind u.
    tiny = 1e-12 * max(np.abs(AU).max(), 1e-300)
    has_u = AU > tiny
    up = (np.where(has_u, CU, np.inf), BU, 1.0 / np.where(has_u, AU, 1.0))
    has_u = AL < -tiny
    lo = (np.where(has_u, CL, np.inf), BL, 1.0 / np.where(has_u, AL, -1.0))
    return static, alpha, beta, up, lo


def _solve(path: _Path, data):
    """Backward reachability and greedy forward pass.  ``data``: list of (steps, _step_data(...));
    later entries override earlier ones.  Returns x (N+1,), u (N,)."""
    N, delta = path.N, path.delta
    static = np.empty(N)
    alpha, beta, up, lo = [None] * N, [None] * N, [None] * N, [None] * N
    for steps, (st, al, be, u_rows, l_rows) in data:
        static[steps] = st
        for i, k in enumerate(steps):
            alpha[k], beta[k] = al[i], be[i]
            up[k] = (u_rows[0][i], u_rows[1][i], u_rows[2][i])
            lo[k] = (l_rows[0][i], l_rows[1][i], l_rows[2][i])
    static[path.corner[:-1]] = 0.0
    hi = np.empty(N + 1)
    h = hi[N] = X_CAP if path.free_end else 0.0
    for k in range(N - 1, -1, -1):
        h = hi[k] = min(static[k], float((alpha[k] * h + beta[k]).min()))
    hi[path.corner] = 0.0
    x = np.empty(N + 1)
    u = np.empty(N)
    xk = x[0] = hi[0] if path.free_start else 0.0
    for k in range(N):
        two_d = 2.0 * delta[k]
        C, B, inv = up[k]
        u_max = float(((C - B * xk) * inv).min())
        C, B, inv = lo[k]
        u_min = float(((C - B * xk) * inv).max())
        uk = max(min(u_max, (hi[k + 1] - xk) / two_d), u_min, -xk / two_d)
        u[k] = uk
        xk = x[k + 1] = max(xk + two_d * uk, 0.0)
    return x, u


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


def _verified_law(model, traj, path, regular, limits, viscous, x_first, verify_density, tolerance,
                  max_rounds, points_per_step):
    """Solve on ``path`` and verify the output as the controller interpolates it; remedies on the
    steps that fail (see the module docstring).  Returns (raw duration, output or None)."""
    n, N = model.n, path.N
    refined_steps = np.array([], dtype=int)
    groups = [regular]
    tight_up, tight_lo = np.zeros((N, n)), np.zeros((N, n))
    per_step = np.full(N, points_per_step)
    # Near ends where the path is at rest the law is far from quadratic in time: more points there.
    # (Flat points, q' = q'' = 0, where the law starts from or comes to sd = 0.)
    K = traj.num_points
    near_end = np.zeros(N, bool)
    for s_flat in path.s[path.flat]:   # within 3 waypoint segments of a flat point
        i = int(np.searchsorted(traj.times, s_flat))
        near_end |= (path.s[1:] > traj.times[max(i - 3, 0)]) & (path.s[:-1] < traj.times[min(i + 3, K - 1)])
    per_step[near_end] = np.maximum(per_step[near_end], DENSE_OUTPUT)
    if near_end.any():  # ... and more collocation points on the end segments
        refined_steps = np.flatnonzero(near_end)
        groups = [regular, _Collocation(path, refined_steps, REFINED)]
    x, u = _solve_groups(path, groups, limits, viscous, x_first, None, None, tight_up, tight_lo)
    raw = _law_duration(path, x)
    allowed = tolerance * np.maximum(np.abs(limits.effort_upper), np.abs(limits.effort_lower))
    v_allowed = limits.velocity * (1.0 + tolerance)
    span = limits.effort_upper - limits.effort_lower
    for _ in range(max_rounds):
        # Verify the trajectory as the controller will interpolate it (cubic, see the docstring).
        t, s_out, q, qd, qdd, out_step = _output(path, x, u, traj.times[0], per_step)
        check = JointTrajectory(traj.joint_names, t, q, qd)
        seg, frac = _spread(np.full(t.size - 1, verify_density))   # per output interval
        t_check = np.append(t[seg] + np.diff(t)[seg] * frac, t[-1])
        step = np.append(out_step[seg], N - 1)
        # ... plus the end of every interval: the cubic's acceleration, linear in time, is extreme
        # at the ends of its interval, where the next interval's value differs.  (Just before the
        # end, not the left limit: where the law stops, Coulomb friction acts until the stop.)
        t_check = np.append(t_check, t[1:] - 1e-9 * np.diff(t))
        step = np.append(step, out_step[:-1])
        q_c, qd_c, qdd_c = check.sample(t_check)
        tau = rnea(model, q_c, qd_c, qdd_c)
        over, under = tau - limits.effort_upper, limits.effort_lower - tau
        too_fast = (np.abs(qd_c) > v_allowed).any(axis=1)
        bad = ((over > allowed) | (under > allowed)).any(axis=1) | too_fast
        if not bad.any():
            return raw, (x, u, t, s_out, q, qd, qdd, t_check, tau)
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
    s_grid = _initial_grid(traj, per_segment, end_steps=4)
    path = _Path(model, traj, s_grid)
    regular = _Collocation(path, np.arange(path.N), REGULAR)
    _validate(model, traj, regular, limits)
    x_first = _first_linearisation(model, regular, limits) if viscous else None
    zeros = np.zeros((path.N, model.n))
    x, _ = _solve_groups(path, [regular], limits, viscous, x_first, None, None, zeros, zeros)
    previous = _law_duration(path, x)
    found, last_change = None, math.inf
    for _ in range(1, max_levels):
        s_grid = _bisected(s_grid)
        path = _Path(model, traj, s_grid)
        regular = _Collocation(path, np.arange(path.N), REGULAR)
        _validate(model, traj, regular, limits)
        raw, law = _verified_law(model, traj, path, regular, limits, viscous, x_first, verify_density,
                                 tolerance, max_rounds, points_per_step)
        change = abs(previous - raw) / raw
        if law is not None:
            found = law
            # One small change on a coarse grid can be a plateau (seen on a 4-waypoint cubic path
            # at 150 steps, 2.8 % from the optimum): below TRUSTED_STEPS, two in a row are needed.
            if change <= convergence and (last_change <= convergence or path.N >= TRUSTED_STEPS):
                break
        previous, last_change = raw, change
    else:
        if found is None:
            raise ScalingError(f"time_optimal: no time law within the limits (tolerance {tolerance:g}) "
                               f"found on grids up to {path.N} steps; use uniform scaling")
        # verified but not converged: still within the limits, only possibly slower than optimal

    x, u, t, s_out, q, qd, qdd, t_check, tau = found
    effort = rnea(model, q, qd, qdd)
    new_traj = JointTrajectory(traj.joint_names, t, q, qd, qdd, effort)
    q0, qd0, qdd0 = traj.sample(path.s)
    order = np.argsort(t_check, kind="stable")
    t_check, tau = t_check[order], tau[order]
    path_s = np.interp(t_check, t, s_out)
    return ScaledTrajectory(
        trajectory=new_traj, method="time_optimal",
        scale_factor=float((t[-1] - t[0]) / (traj.times[-1] - traj.times[0])), duration=float(t[-1]),
        original_duration=traj.duration, sample_times=t_check, torques=tau, original_times=path.s,
        original_torques=rnea(model, q0, qd0, qdd0), path_times=path_s,
        limits=limits)
