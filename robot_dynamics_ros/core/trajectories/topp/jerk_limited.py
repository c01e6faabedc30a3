"""
A jerk-limited, torque-feasible time law: the time-optimal law smoothed, then slowed uniformly.

The time-optimal law's acceleration sdd(t) is piecewise constant (bang-bang), so every joint's
jerk is unbounded at its switches.  Its position s(t) is averaged over a moving window of width w,

    s_w(t) = (1/w) int_{t-w/2}^{t+w/2} s(tau) dtau    (s held at its ends outside [0, T]),

so sd_w(t) = (s(t+w/2) - s(t-w/2)) / w, sdd_w(t) = (sd(t+w/2) - sd(t-w/2)) / w (continuous) and
the path jerk sddd_w = (sdd(t+w/2) - sdd(t-w/2)) / w is bounded: the window is a first-order
hold on the acceleration, as the moving-average filters of jerk-limited motion controllers (the
FIR "jerk filter" of Biagiotti & Melchiorri 2008, Sect. 4.6).  The averaged law takes T + w, starts
and stops at rest with zero acceleration, and stays close to the optimal one, but averaging moves
it off the limit surface (which varies along the path); the smallest uniform slowing q(s_w(t/c))
that restores every limit, jerk included (jerk scales by 1/c^3), comes in closed form from
``uniform_scaling`` (Siciliano et al. 2009, Sect. 7.7), evaluated on the trajectory as
joint_trajectory_controller interpolates it (quintic through positions, velocities and
accelerations).  The window is chosen among a few widths to minimise c (T + w).

The joint jerk q''' = q' sddd + 3 q'' sd sdd + q''' sd^3 is bounded only where the path has a
third derivative: on a geometric path (``JointPath``, a C2 cubic spline) everywhere; on a timed
trajectory interpolated cubically (C1: q'' jumps at its waypoints) the jerk limit makes the law
pass the waypoints slowly (give the waypoints as a path instead).
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import InputError
from ..limits import Limits, ScalingError
from ..result import ScaledTrajectory
from ..trajectory import JointTrajectory
from ..uniform import uniform_scaling
from .constraint_set import path_uniform_factor, resolve
from .path import JointPath, TimedPath
from .reachability import TimeLaw
from .time_optimal import time_optimal_scaling

WINDOWS = (0.25, 0.5, 1.0)         # window widths tried, times the jerk's estimate (``_window``)
POINTS = 300                       # output points (uniform in time), at least 3 per path knot:
#   denser points make the quintic's jerk follow the arithmetic's rounding (position errors of
#   1e-9 over (1 ms)^3 are 1e0 rad/s^3): on the Puma path, the quintics' jerk was 1.4 x the
#   averaged law's at 300 points, 25-40 x at 1,300
MARGIN = 2e-4                      # kept in hand for the controller's re-sampling
MAX_ROUNDS = 4                     # re-checks of the output, each slowing it further if needed
LOCAL_ROUNDS = 3                   # averages of the law, each slowing it where the last broke a
#                                    limit (the last one is the output's)


def law_antiderivative(law, t0: float):
    """
    Return functions s(t) and S(t) = int s of a piecewise-constant-sdd law (held at its ends).

    On step k (from t_k): s = s_k + sd_k tau + u_k tau^2 / 2; S adds s_k tau + sd_k tau^2 / 2 +
    u_k tau^3 / 6 to its value at t_k; before t0 s = s_0, after the end s = s_N.
    """
    dt = law.step_durations()
    t_grid = t0 + np.concatenate([[0.0], np.cumsum(dt)])
    sd = np.sqrt(np.maximum(law.x, 0.0))
    s0, u = law.s[:-1], law.u
    area = s0 * dt + 0.5 * sd[:-1] * dt ** 2 + u * dt ** 3 / 6.0
    S_grid = np.concatenate([[0.0], np.cumsum(area)])
    T = t_grid[-1]

    def both(t):
        t = np.asarray(t, dtype=float)
        k = np.clip(np.searchsorted(t_grid, t, side="right") - 1, 0, dt.size - 1)
        tau = np.clip(t - t_grid[k], 0.0, dt[k])
        s = s0[k] + sd[k] * tau + 0.5 * u[k] * tau ** 2
        S = S_grid[k] + s0[k] * tau + 0.5 * sd[k] * tau ** 2 + u[k] * tau ** 3 / 6.0
        before, after = t < t0, t > T
        s = np.where(before, law.s[0], np.where(after, law.s[-1], s))
        S = np.where(before, law.s[0] * (t - t0),
                     np.where(after, S_grid[-1] + law.s[-1] * (t - T), S))
        sdot = np.where(before | after, 0.0, sd[k] + u[k] * tau)
        return s, S, sdot
    return both, t_grid


FINE = 8            # arc-length points per law step
TIME_SAMPLES = 20   # samples of the law per output point, for the window's integral


def arc_length(path, law, weights):
    """
    Return (s, sigma) on a fine grid: sigma(s) = int norm(W q'(s)) ds, W = diag(``weights``).

    The parameter the law is averaged in: along it the path moves at unit (weighted) joint
    speed, so a law in sigma has the joints' speed and acceleration scale even where the path
    is nearly at rest (q' -> 0 at the ends of a rest-to-rest path, where the law in s has
    huge sd and sdd that an average in s would spread into the joints' jerk).
    """
    frac = np.arange(FINE) / FINE
    s = np.append((law.s[:-1, None] + np.diff(law.s)[:, None] * frac[None, :]).ravel(),
                  law.s[-1])
    g = np.sqrt(((path.sample(s)[1] * weights) ** 2).sum(axis=1))
    return s, np.concatenate([[0.0], np.cumsum(0.5 * (g[1:] + g[:-1]) * np.diff(s))])


def smoothed_points(path, law, t0: float, w: float, count: int, weights):
    """
    Return the window-averaged law's output: times (from t0), q, qd, qdd at ``count`` points.

    The law is averaged in the arc length sigma (:func:`arc_length`): sigma_w(t) from the
    integral of sigma(t) over the window, sigma_w' and sigma_w'' from sigma and its rate at
    t +- w/2 (module docstring); then q(s(sigma_w)), qd = q_sigma sigma_w', qdd = q_sigma
    sigma_w'' + q_sigmasigma sigma_w'^2, with q_sigma = q'/g, q_sigmasigma = (q'' - q' g'/g)/g^2
    (g = norm(W q')).
    """
    law_at, t_grid = law_antiderivative(law, t0)
    s_f, sigma_f = arc_length(path, law, weights)
    T = t_grid[-1] - t0
    tt = np.linspace(t0 - w, t0 + T + w, TIME_SAMPLES * count)      # the law, finely in time
    sigma_t = np.interp(law_at(tt)[0], s_f, sigma_f)
    area = np.concatenate([[0.0], np.cumsum(0.5 * (sigma_t[1:] + sigma_t[:-1]) * np.diff(tt))])

    def sigma_and_rate(t):
        s, _, sdot = law_at(t)
        dq = path.sample(s)[1]
        return np.interp(s, s_f, sigma_f), np.sqrt(((dq * weights) ** 2).sum(axis=1)) * sdot

    t = t0 - 0.5 * w + np.linspace(0.0, T + w, count)
    (hi, v_hi), (lo, v_lo) = sigma_and_rate(t + 0.5 * w), sigma_and_rate(t - 0.5 * w)
    sigma = (np.interp(t + 0.5 * w, tt, area) - np.interp(t - 0.5 * w, tt, area)) / w
    sigma = np.clip(sigma, 0.0, sigma_f[-1])
    rate, accel = (hi - lo) / w, (v_hi - v_lo) / w
    sigma[0], sigma[-1] = 0.0, sigma_f[-1]
    rate[[0, -1]], accel[[0, -1]] = 0.0, 0.0
    s = np.interp(sigma, sigma_f, s_f)
    q, dq, ddq = path.sample(s)
    wq, wqq = dq * weights, ddq * weights
    g = np.maximum(np.sqrt((wq ** 2).sum(axis=1)), 1e-12)[:, None]
    g_dot = (wq * wqq).sum(axis=1)[:, None] / g
    q_sigma = dq / g
    q_sigma2 = (ddq - dq * g_dot / g) / g ** 2
    return (t - t[0] + t0, q, q_sigma * rate[:, None],
            q_sigma * accel[:, None] + q_sigma2 * (rate ** 2)[:, None], s)


def _scaled(model, names, points, limits, constraints, samples):
    """Return the uniform scaling of the averaged law (its trajectory given as points)."""
    t, q, qd, qdd = points[:4]
    traj = JointTrajectory(names, t, q, qd, qdd)
    return uniform_scaling(model, traj, limits, samples=samples,
                           min_scale=path_uniform_factor(model, traj, constraints))


def recheck(model, traj: JointTrajectory, limits: Limits, constraints=(), density: int = 10):
    """
    Return the largest usage of each limit kind on ``traj`` as the controller interpolates it.

    {kind: largest abs(value) / limit} for torque (the model's rnea), velocity and acceleration at
    ``density`` samples per interval, jerk exactly per interval (``segment_jerk_max``), and each
    path constraint.
    """
    from ...algorithms.rnea import rnea
    t = np.concatenate([traj.times[:-1, None] + np.diff(traj.times)[:, None]
                        * np.linspace(0.0, 1.0, density, endpoint=False)[None, :]]).ravel()
    t = np.append(t, traj.times[-1])
    q, qd, qdd = traj.sample(t)
    tau = rnea(model, q, qd, qdd)
    effort = np.where(tau >= 0, tau / limits.effort_upper, tau / limits.effort_lower)
    out = {"torque": float(effort.max()),
           "velocity": float((np.abs(qd) / limits.velocity).max()),
           "acceleration": float((np.abs(qdd) / limits.acceleration).max()),
           "jerk": float((traj.segment_jerk_max().max(axis=0) / limits.jerk).max())}
    for c in constraints:
        out[c.name] = float(c.usage(model, q, qd, qdd).max())
    return out


def jerk_limited_scaling(model, path, constraints=None, dynamics=None,
                         optimal: ScaledTrajectory | None = None, **options) -> ScaledTrajectory:
    """
    Return a law with continuous acceleration that keeps torque, velocity, acceleration and jerk.

    ``constraints`` as for :func:`time_optimal_scaling`, with a ``JointJerkConstraint`` (or a
    Limits with finite ``jerk``); ``optimal``: the time-optimal result of the same call, when
    already computed (else computed here, with ``options``).  The output (``method``
    ``"jerk_limited"``) carries accelerations: the controller interpolates it with quintics, and
    its torque, velocity and acceleration are within ``MARGIN`` of their limits, its jerk within
    them, at the re-check of :func:`recheck`; ``scale_factor`` is its duration over the
    time-optimal one (the jerk-free optimum), ``law`` the time-optimal law it smooths.
    """
    resolved = resolve(model, constraints)
    limits, carried = resolved.limits, resolved.torque_model
    if not np.isfinite(limits.jerk).all():
        raise InputError("jerk_limited: give a jerk limit for every joint (JointJerkConstraint)")
    if optimal is None:
        optimal = time_optimal_scaling(model, path, constraints, dynamics=dynamics, **options)
    names = optimal.trajectory.joint_names
    if optimal.method != "time_optimal":          # uniform already: it applies the jerk limits
        return _result(uniform_scaling(carried, optimal.trajectory, limits), optimal)
    law, t0 = optimal.law, float(optimal.trajectory.times[0])
    grid_path = path.reordered(model.joint_names) if isinstance(path, JointPath) else \
        TimedPath(path.reordered(model.joint_names))
    T = optimal.duration - t0
    count = max(POINTS, 3 * grid_path.knots.size)
    best, estimate = None, _window(optimal.trajectory, limits.jerk, T)
    for fraction in WINDOWS:
        w, weights, local = fraction * estimate, 1.0 / limits.velocity, law
        points = smoothed_points(grid_path, local, t0, w, count, weights)
        for _ in range(LOCAL_ROUNDS - 1):
            local = _slowed_locally(carried, local, points, limits, w / T)
            points = smoothed_points(grid_path, local, t0, w, count, weights)
        scaled = _scaled(carried, names, points, limits, resolved.path, 1000)
        if best is None or scaled.duration < best[1].duration:
            best = (fraction, scaled, points)
    fraction, scaled, points = best
    for _ in range(MAX_ROUNDS):
        usage = recheck(carried, scaled.trajectory, limits, resolved.path)
        worst = max(usage.values())
        if worst <= 1.0 + MARGIN:
            return _result(scaled, optimal)
        factor = max(usage["jerk"] ** (1 / 3), math.sqrt(worst)) * (1.0 + MARGIN)
        scaled = _slower(carried, scaled, factor, limits)    # (effort: the slower one's)
    raise ScalingError("jerk_limited: the smoothed law still exceeds a limit after "
                       f"{MAX_ROUNDS} re-checks ({usage})")


def _slowed_locally(model, law, points, limits, fraction: float):
    """
    Return ``law`` slowed where its average ``points`` break the torque or jerk limits.

    At each point, the uniform slowing c it needs alone (torque, velocity, acceleration:
    ``admissible_inverse_scale``; jerk, which scales as 1/c^3, by differences of the
    acceleration) lowers x = sd^2 by 1/c^2 there, spread over the steps the window averages
    (a minimum filter): the brief's "reduction of sdot where the smoothed law breaks a limit".
    """
    from scipy.ndimage import minimum_filter1d
    from ..uniform import _torque_parts, admissible_inverse_scale
    t, q, qd, qdd, s = points
    tau_s, friction, g, coulomb = _torque_parts(model, q, qd, qdd)
    x = admissible_inverse_scale(tau_s, friction - coulomb, g + coulomb, limits, qd,
                                 qdd).min(axis=1)
    jerk = (np.abs(np.diff(qdd, axis=0)) / np.diff(t)[:, None] / limits.jerk).max(axis=1)
    jerk = np.maximum(np.append(jerk, 0.0), np.append(0.0, jerk))
    with np.errstate(divide="ignore"):
        f = np.clip(np.minimum(x ** 2, np.where(jerk > 1.0, jerk ** (-2.0 / 3.0), 1.0)),
                    0.05, 1.0)
    on_grid = np.interp(law.s, s, f)
    on_grid = minimum_filter1d(on_grid, max(1, int(2 * fraction * law.u.size)) | 1)
    x_new = law.x * on_grid
    return TimeLaw(law.s, x_new, np.diff(x_new) / (2.0 * np.diff(law.s)))


def _window(optimal: JointTrajectory, jerk, T: float) -> float:
    """
    Estimate the window: the time each joint needs to swing between its extreme accelerations.

    A window w turns an acceleration step of height h into a ramp of slope h / w, so w >= h / J
    keeps the jerk J on the step; the largest swing of the optimal law's acceleration stands in for
    h (within 1 % and 50 % of the duration).
    """
    qdd = optimal.accelerations
    swing = (qdd.max(axis=0) - qdd.min(axis=0)) / jerk
    return float(np.clip(swing.max(), 0.01 * T, 0.5 * T))


def _slower(model, scaled: ScaledTrajectory, factor: float, limits) -> ScaledTrajectory:
    """Return ``scaled`` replayed ``factor`` times slower (uniformly)."""
    return uniform_scaling(model, scaled.trajectory, limits, min_scale=factor)


def _result(scaled: ScaledTrajectory, optimal: ScaledTrajectory) -> ScaledTrajectory:
    t = scaled.trajectory
    return ScaledTrajectory(trajectory=t, method="jerk_limited",
                            scale_factor=float(scaled.duration / optimal.duration),
                            duration=scaled.duration, original_duration=optimal.original_duration,
                            sample_times=scaled.sample_times, torques=scaled.torques,
                            original_times=optimal.sample_times, original_torques=optimal.torques,
                            path_times=scaled.sample_times, limits=scaled.limits, law=optimal.law)
