"""
Numeric inverse kinematics for any model: damped least squares with limits and restarts.

Asada & Slotine 1986 (Sect. 2.3) notes that a closed form is not always available and cites
iterative methods (Whitney's resolved motion rate, eq. 3-33; Sect. 2.4); this is that iteration
made robust:

* error e = [p_d - p; log(R_d R^T)] in world axes (position in m, orientation as a rotation
  vector in rad), or e = p_d - p for a position-only target;
* step dq = J^T (J J^T + lambda I)^-1 e with the geometric Jacobian J of the frame (Siciliano et
  al. 2009, eqs. 7.18-7.19) and a Levenberg-Marquardt damping after Sugihara (IEEE T-RO 27(5),
  2011), lambda = 0.3 e^T e / 2 + 1e-6: large far from the target (short, gradient-like steps,
  finite at singular configurations), vanishing near it (Gauss-Newton's fast final convergence,
  also for targets close to a singular configuration);
* joint limits: each step is clipped to the limits (a projected iteration); joints held at a
  limit by the step are left out and the step recomputed with the others (an active set);
* restarts: an attempt that has not converged after ``max_iterations``, or whose error has not
  dropped by 20 % over 5 iterations, starts again from a random configuration within the limits
  (a seeded generator: results are reproducible).

A batch of targets (N, 4, 4) is solved together: each iteration is one vectorised pass over the
targets still running.  The result says whether each target was reached within the tolerances
(``success``); an unreachable target returns the closest configuration found, never NaN.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.linalg.lapack import dposv

from ..algorithms.kinematics import _columns, frame_state, resolve_frame
from ..errors import InputError
from ..inputs import joint_arrays
from .scalar_kinematics import frame_constants, pose_and_jacobian

# Levenberg-Marquardt damping lambda = LAMBDA_SCALE e^T e / 2 + DAMPING_BIAS (Sugihara's E_k and
# w_N; tuned on the shipped robots: 0.3 takes longer steps than Sugihara's 1 far from the target,
# the bias keeps J J^T + lambda I regular without slowing convergence near singular targets).
DAMPING_BIAS = 1e-6
LAMBDA_SCALE = 0.3
# An attempt stalls when its error has not dropped by this factor over STALL_WINDOW iterations.
STALL_FACTOR, STALL_WINDOW = 0.8, 5
ZERO_COLUMN = (0.0,) * 6
# Joints without position limits (continuous) restart within [-pi, pi].
UNBOUNDED_SPAN = np.pi


class IKResult(NamedTuple):
    """Inverse-kinematics result (arrays with a leading N for a batch of targets)."""

    q: np.ndarray                  # (n,) the joint positions found (within the limits)
    success: bool | np.ndarray     # the target is reached within the tolerances
    residual: float | np.ndarray   # |e|: position error (m) and orientation error (rad) combined
    iterations: int | np.ndarray   # iterations over all attempts
    position_error: float | np.ndarray     # |p_d - p| (m)
    orientation_error: float | np.ndarray  # rotation angle of R_d R^T (rad); 0 for position-only
    attempts: int | np.ndarray     # 1 + the number of restarts used


def rotation_error(R_target, R) -> np.ndarray:
    """
    Return log(R_target R^T) as a rotation vector in world axes (angle in [0, pi]), batched.

    With cos(angle) = (tr - 1) / 2 and v = vee(E - E^T) / 2 = sin(angle) axis: axis = v / sin for
    angles away from pi; near pi the axis comes from the symmetric part, (E + E^T) / 2 = cos I +
    (1 - cos) a a^T, its sign from v.
    """
    E = R_target @ np.swapaxes(R, -1, -2)
    v = 0.5 * np.stack([E[..., 2, 1] - E[..., 1, 2], E[..., 0, 2] - E[..., 2, 0],
                        E[..., 1, 0] - E[..., 0, 1]], axis=-1)
    cos = np.clip(0.5 * (E[..., 0, 0] + E[..., 1, 1] + E[..., 2, 2] - 1.0), -1.0, 1.0)
    sin = np.linalg.norm(v, axis=-1)
    angle = np.arctan2(sin, cos)
    regular = sin > 1e-12
    scale = np.where(regular, angle / np.where(regular, sin, 1.0), 1.0 + angle * angle / 6.0)
    result = v * scale[..., None]
    near_pi = cos < -0.9
    if np.any(near_pi):
        S = 0.5 * (E[near_pi] + np.swapaxes(E[near_pi], -1, -2))
        c = cos[near_pi]
        aa = (S - c[:, None, None] * np.eye(3)) / (1.0 - c)[:, None, None]
        col = np.argmax(np.diagonal(aa, axis1=-2, axis2=-1), axis=-1)
        a = np.take_along_axis(aa, col[:, None, None], axis=-1)[..., 0]
        a = a / np.linalg.norm(a, axis=-1, keepdims=True)
        sign = np.where(np.einsum("ki,ki->k", a, v[near_pi]) < 0.0, -1.0, 1.0)
        result[near_pi] = a * (sign * angle[near_pi])[:, None]
    return result


def _rotation_error_scalar(Rt, R):
    """Compute :func:`rotation_error` of two rotations given as 9 floats (row-major)."""
    (a0, a1, a2, a3, a4, a5, a6, a7, a8), (b0, b1, b2, b3, b4, b5, b6, b7, b8) = Rt, R
    # E = Rt R^T: e_ij = (row i of Rt) . (row j of R)
    e00, e11 = a0 * b0 + a1 * b1 + a2 * b2, a3 * b3 + a4 * b4 + a5 * b5
    e22 = a6 * b6 + a7 * b7 + a8 * b8
    e01, e02 = a0 * b3 + a1 * b4 + a2 * b5, a0 * b6 + a1 * b7 + a2 * b8
    e10, e12 = a3 * b0 + a4 * b1 + a5 * b2, a3 * b6 + a4 * b7 + a5 * b8
    e20, e21 = a6 * b0 + a7 * b1 + a8 * b2, a6 * b3 + a7 * b4 + a8 * b5
    vx, vy, vz = 0.5 * (e21 - e12), 0.5 * (e02 - e20), 0.5 * (e10 - e01)
    cos = min(1.0, max(-1.0, 0.5 * (e00 + e11 + e22 - 1.0)))
    sin = math.sqrt(vx * vx + vy * vy + vz * vz)
    angle = math.atan2(sin, cos)
    if cos >= -0.9:
        scale = angle / sin if sin > 1e-12 else 1.0 + angle * angle / 6.0
        return vx * scale, vy * scale, vz * scale
    return tuple(rotation_error(np.array(Rt).reshape(3, 3), np.array(R).reshape(3, 3)))


def _damping(error_squared):
    """Return the Levenberg-Marquardt lambda for a squared error norm (module docstring)."""
    return LAMBDA_SCALE * 0.5 * error_squared + DAMPING_BIAS


def _damped_steps(J, e):
    """Return dq = J^T (J J^T + lambda I)^-1 e for Jacobians (k, m, n) and errors (k, m)."""
    lam = _damping(np.einsum("ki,ki->k", e, e))
    A = J @ np.swapaxes(J, -1, -2) + lam[:, None, None] * np.eye(e.shape[-1])
    return np.einsum("kji,kj->ki", J, np.linalg.solve(A, e[..., None])[..., 0])


def _damped_step(columns, e, n):
    """
    Return dq = J^T (J J^T + lambda I)^-1 e on floats.

    ``columns``: J^T as a flat list of n rows of 6 floats, of which the first len(e) are used.
    """
    Jt = np.array(columns).reshape(n, 6)[:, :len(e)]
    ev = np.array(e)
    A = np.dot(Jt.T, Jt)
    A.flat[::len(e) + 1] += _damping(np.dot(ev, ev))
    _, x, info = dposv(A, ev)             # Cholesky solve: A is symmetric positive definite
    if info:
        x = np.linalg.lstsq(A, ev, rcond=None)[0]
    return np.dot(Jt, x).tolist()


def _targets(target, position_only):
    T = np.asarray(target, dtype=float)
    if T.ndim not in (2, 3) or T.shape[-2:] != (4, 4) or not np.isfinite(T).all():
        raise InputError(f"target: expected a finite 4x4 pose or an (N, 4, 4) batch, "
                         f"got shape {T.shape}")
    if not position_only:
        R = T[..., :3, :3]
        err = np.abs(R @ np.swapaxes(R, -1, -2) - np.eye(3)).max(axis=(-1, -2))
        bad = np.flatnonzero(np.atleast_1d((err > 1e-6) | (np.linalg.det(R) <= 0.0)))
        if bad.size:
            at = "" if T.ndim == 2 else f" (target {bad[0]})"
            raise InputError(f"target{at}: the rotation block is not a rotation matrix "
                             "(R R^T = I, det R = 1)")
    return T


def _positive(value, name):
    number = isinstance(value, (int, float, np.floating, np.integer))
    if not (number and np.isfinite(value) and value > 0):
        raise InputError(f"{name}: expected a finite number > 0, got {value!r}")
    return float(value)


def _count(value, name, minimum):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < minimum:
        raise InputError(f"{name}: expected an integer >= {minimum}, got {value!r}")
    return int(value)


class _Settings(NamedTuple):
    link: int
    offset: np.ndarray
    position_only: bool
    tol_p: float
    tol_o: float
    max_iterations: int
    restarts: int
    low: np.ndarray             # where restarts are drawn (finite even for continuous joints)
    high: np.ndarray


def inverse_kinematics(model, target, q0=None, frame=None, position_only: bool = False,
                       position_tolerance: float = 1e-6, orientation_tolerance: float = 1e-6,
                       max_iterations: int = 100, restarts: int = 20, seed: int = 0) -> IKResult:
    """
    Find joint positions within the limits that put ``frame`` (default the tool) at ``target``.

    ``target``: world 4x4 pose, or (N, 4, 4) for a batch; with ``position_only`` only its
    translation is used (for arms with fewer than six joints, or when the orientation is free).
    ``q0``: the first attempt's start (n,) or (N, n); default the middle of the joint ranges.
    Tolerances in m and rad; ``max_iterations`` per attempt; ``restarts``: attempts after the
    first, each from a random configuration (``seed``).  See the module docstring for the method.
    """
    model.require_limits(("position",), "inverse kinematics (its joint bounds)")
    T = _targets(target, position_only)
    N, n = (1 if T.ndim == 2 else T.shape[0]), model.n
    link, offset, _ = resolve_frame(model, frame)
    lower, upper = model.lower, model.upper
    finite = np.isfinite(lower) & np.isfinite(upper)
    low = np.where(np.isfinite(lower), lower,
                   np.where(np.isfinite(upper), upper - 2 * UNBOUNDED_SPAN, -UNBOUNDED_SPAN))
    high = np.where(np.isfinite(upper), upper, low + 2 * UNBOUNDED_SPAN)
    settings = _Settings(link, offset, bool(position_only),
                         _positive(position_tolerance, "position_tolerance"),
                         _positive(orientation_tolerance, "orientation_tolerance"),
                         _count(max_iterations, "max_iterations", 1),
                         _count(restarts, "restarts", 0), low, high)
    if q0 is None:
        sum_of_limits = np.where(finite, lower, 0.0) + np.where(finite, upper, 0.0)
        middle = np.clip(0.5 * sum_of_limits, lower, upper)     # 0 (clipped) if unbounded
        q = np.broadcast_to(middle, (N, n)).copy()
    else:
        (q0,), batched = joint_arrays(model, q0=q0)
        if batched and (T.ndim == 2 or q0.shape[0] != N):
            raise InputError(f"q0: {q0.shape[0]} start configurations for {N} target(s)")
        q = np.clip(np.broadcast_to(q0, (N, n)), lower, upper).copy()
    rng = np.random.default_rng(seed)
    if T.ndim == 2:
        return _solve_single(model, T, q[0], settings, rng)
    return _solve_batch(model, T, q, settings, rng)


def _solve_single(model, T, q, s: _Settings, rng) -> IKResult:
    """Solve for one target on floats (``scalar_kinematics``), as :func:`_solve_batch` does."""
    lower, upper = model.lower.tolist(), model.upper.tolist()
    Rt, pt = tuple(T[:3, :3].ravel().tolist()), T[:3, 3].tolist()
    q = q.tolist()
    constants = frame_constants(model, s.link, s.offset)
    iterations, best = 0, (math.inf, q, math.inf, math.inf)
    for attempt in range(1, s.restarts + 2):
        window = math.inf
        for count in range(s.max_iterations + 1):
            R, p, columns, _ = pose_and_jacobian(constants, q, not s.position_only)
            e = [pt[0] - p[0], pt[1] - p[1], pt[2] - p[2]]
            ep = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
            eo = 0.0
            if not s.position_only:
                e.extend(_rotation_error_scalar(Rt, R))
                eo = math.sqrt(e[3] * e[3] + e[4] * e[4] + e[5] * e[5])
            norm = math.hypot(ep, eo)
            if norm < best[0]:
                best = (norm, q, ep, eo)
            if ep <= s.tol_p and eo <= s.tol_o:
                return IKResult(np.array(q), True, norm, iterations, ep, eo, attempt)
            if count == s.max_iterations:
                break
            if count and count % STALL_WINDOW == 0:
                if norm > STALL_FACTOR * window:
                    break
                window = norm
            dq = _damped_step(columns, e, len(q))
            blocked = [i for i, (qi, d) in enumerate(zip(q, dq)) if (d < 0.0 and qi <= lower[i])
                       or (d > 0.0 and qi >= upper[i])]
            if blocked:        # joints held at a limit: the others take over the step
                for i in blocked:
                    columns[6 * i:6 * i + 6] = ZERO_COLUMN
                dq = _damped_step(columns, e, len(q))
            q = [min(hi, max(lo, qi + d)) for qi, d, lo, hi in zip(q, dq, lower, upper)]
            iterations += 1
        if attempt <= s.restarts:
            q = rng.uniform(s.low, s.high).tolist()
    norm, q, ep, eo = best
    return IKResult(np.array(q), False, norm, iterations, ep, eo, s.restarts + 1)


def _solve_batch(model, T, q, s: _Settings, rng) -> IKResult:
    """Solve targets (N, 4, 4) together: each iteration is one pass over those still running."""
    N, n = q.shape
    lower, upper = model.lower, model.upper
    iterations = np.zeros(N, dtype=int)
    attempts = np.ones(N, dtype=int)
    since_start = np.zeros(N, dtype=int)
    best_q, best_err = q.copy(), np.full(N, np.inf)
    window_err = np.full(N, np.inf)
    done = np.zeros(N, dtype=bool)
    err_p, err_o = np.full(N, np.inf), np.zeros(N)
    for _ in range((s.max_iterations + 1) * (s.restarts + 1)):
        active = np.flatnonzero(~done)
        if active.size == 0:
            break
        qa = q[active]
        z, p, pose, origin = frame_state(model, qa, s.link, s.offset)
        e_p = T[active, :3, 3] - origin
        if s.position_only:
            e = e_p
        else:
            e_o = rotation_error(T[active, :3, :3], pose[..., :3, :3])
            e = np.concatenate([e_p, e_o], axis=-1)
        ep = np.linalg.norm(e_p, axis=-1)
        eo = np.zeros_like(ep) if s.position_only else np.linalg.norm(e[:, 3:], axis=-1)
        err_p[active], err_o[active] = ep, eo
        norm = np.hypot(ep, eo)
        better = norm < best_err[active]
        best_err[active[better]], best_q[active[better]] = norm[better], qa[better]
        converged = (ep <= s.tol_p) & (eo <= s.tol_o)
        done[active[converged]] = True
        # Attempts that ran out of iterations, or stalled, restart (or end when none are left).
        count = since_start[active]
        check = (count > 0) & (count % STALL_WINDOW == 0)
        stalled = check & (norm > STALL_FACTOR * window_err[active])
        window_err[active[check]] = norm[check]
        finished = ~converged & ((count >= s.max_iterations) | stalled)
        out_of_attempts = finished & (attempts[active] > s.restarts)
        done[active[out_of_attempts]] = True
        restart = active[finished & ~out_of_attempts]
        if restart.size:
            q[restart] = rng.uniform(s.low, s.high, size=(restart.size, n))
            attempts[restart] += 1
            since_start[restart] = 0
            window_err[restart] = np.inf
        step = ~converged & ~finished
        if not np.any(step):
            continue
        idx = active[step]
        linear, angular = _columns(model, z[step], p[step], origin[step], s.link)
        columns = linear if s.position_only else np.concatenate([linear, angular], axis=-1)
        J = np.swapaxes(columns, -1, -2)
        es, qs = e[step], q[idx]
        dq = _damped_steps(J, es)
        blocked = ((dq < 0.0) & (qs <= lower)) | ((dq > 0.0) & (qs >= upper))
        again = np.flatnonzero(blocked.any(axis=-1))
        if again.size:         # joints held at a limit: the others take over the step
            dq[again] = _damped_steps(J[again] * ~blocked[again, None, :], es[again])
        q[idx] = np.clip(qs + dq, lower, upper)
        iterations[idx] += 1
        since_start[idx] += 1
    # Unconverged targets return the best configuration seen (with its errors recomputed).
    failed = np.flatnonzero(~((err_p <= s.tol_p) & (err_o <= s.tol_o)))
    if failed.size:
        q[failed] = best_q[failed]
        _, _, pose, origin = frame_state(model, q[failed], s.link, s.offset)
        err_p[failed] = np.linalg.norm(T[failed, :3, 3] - origin, axis=-1)
        if not s.position_only:
            e_o = rotation_error(T[failed, :3, :3], pose[..., :3, :3])
            err_o[failed] = np.linalg.norm(e_o, axis=-1)
    success = (err_p <= s.tol_p) & (err_o <= s.tol_o)
    return IKResult(q, success, np.hypot(err_p, err_o), iterations, err_p, err_o, attempts)
