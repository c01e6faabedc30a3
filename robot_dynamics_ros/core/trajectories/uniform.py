"""
Uniform dynamic scaling of a trajectory under torque limits (Siciliano et al. 2009, Sect. 7.7).

Equations 7.117-7.126 of the book.

The joint torque of the trajectory q(t) splits into a part that depends on the motion and the
gravity part, which depends on position only (Siciliano et al. 2009, end of Sect. 7.7):

    tau(t) = tau_s(t) + g(q(t)),   tau_s = B(q) qdd + C(q, qd) qd   (7.123; B includes the rotors).

Replaying the same path slower, q_new(t) = q(t / c) with c >= 1 (r = t / c in 7.119), gives
qd_new = qd / c, qdd_new = qdd / c^2 and (7.126 with r'' = 0)

    tau_new(t) = tau_s(t / c) / c^2 + g(q(t / c)),

so the scaled torques follow from the original ones without recomputing inverse dynamics, and the
smallest admissible c comes in closed form from the worst sample and joint.

Friction, which the chapter leaves out (F_v = F_s = 0, Sect. 7.7), is kept exactly here: viscous
friction F_v qd scales by 1/c and Coulomb friction F_s sgn(qd) does not scale, so with x = 1/c each
(sample, joint) gives a quadratic  tau_s x^2 + F_v qd x + F_s sgn(qd) + g  that must stay within
[tau_min, tau_max].  We take the largest x in (0, 1] such that every constraint holds on the whole
interval (0, x], i.e. the smallest c from which on every slower replay is admissible too; without
friction this is exactly the chapter's c^2 = max tau_s / (tau_lim - g).  The friction law's
further terms (``control/friction.py``) fit the same form: the quadratic viscous F_v2 qd|qd|
scales by 1/c^2 and joins tau_s, the load-dependent F_l |g(q)| sgn(qd) does not scale and joins
F_s.  Velocity limits give
c >= |qd| / qd_max, acceleration limits c^2 >= |qdd| / qdd_max.

When gravity (plus Coulomb friction, which no slowing removes) alone exceeds a limit no c helps:
``ScalingError`` names the joint and the time.

Samples are dense but finite; the maximum of each binding ratio is then refined around the worst
samples on a 16x finer local grid, so the limits hold between samples too (checked in the tests
by recomputing inverse dynamics at 10x the sample density).

Positions-only trajectories are scaled as joint_trajectory_controller interpolates them: linearly,
zero acceleration within each segment.  Their velocity jumps at the waypoints are the
controller's own (no finite torque produces them, whatever the timing); the limits here hold
within the segments.  ``time_optimal_scaling`` refuses such trajectories.
"""
from __future__ import annotations

import numpy as np

from ..algorithms.rnea import gravity_torques, rnea
from ..control import friction as law
from ..control.friction import coulomb_friction, coupled_friction, quadratic_viscous
from ..errors import InputError
from .limits import Limits, ScalingError, check_count, check_positions, static_feasibility
from .result import ScaledTrajectory
from .trajectory import JointTrajectory


MAX_SAMPLES = 100_000     # samples of the original trajectory: bounds the memory one request takes


def dense_samples(traj: JointTrajectory, samples: int):
    """
    Dense samples of the trajectory, waypoints seen from both sides.

    Times (sorted) and (q, qd, qdd): ``samples`` evenly spaced times plus every waypoint, where
    interior waypoints appear twice, first as the left limit (end of the segment before), then as
    the right limit, so jumps of the acceleration at waypoints are seen from both sides.
    """
    even = np.linspace(traj.times[0], traj.times[-1], samples)
    even = even[~np.isin(even, traj.times)]
    t_right = np.concatenate([even, traj.times])
    t_left = traj.times[1:-1]
    right, left = traj.sample(t_right), traj.sample(t_left, side="left")
    t = np.concatenate([t_left, t_right])
    order = np.argsort(t, kind="stable")          # left limits (first) before right limits
    return (t[order],) + tuple(np.concatenate([a, b])[order] for a, b in zip(left, right))


def friction_torques(model, qd, q=None) -> np.ndarray:
    """Return the robot's friction at (q, qd): ``control.friction``'s law, g(q) the core's."""
    return law.friction_torques(model, qd, q, gravity_torques)


def torque_parts(model, q, qd, qdd, torques=None):
    """
    (tau_s, friction, g, coulomb): the motion part (7.123), friction, gravity, per sample.

    tau_s holds the quadratic viscous friction F_v2 qd|qd| (it scales by 1/c^2, as the
    inertial torques); ``friction`` the rest, F_v qd + (F_s + F_l |g(q)|) sgn(qd), of which
    ``coulomb`` is the part that does not scale.  ``torques``: the model's batch ``rnea`` and
    ``gravity`` (``topp.torques.Torques``, the caller's compiled route: one full rnea and the
    generated gravity instead of two rnea; tau_s then differs by a few ulps of g), or None.
    """
    quadratic = quadratic_viscous(model, qd)
    if model.coupled_drives:    # coupled drives' F_v2 on (K qd)|K qd|, through K^T: as 1/c^2
        quadratic = quadratic + model.coupled_quadratic_change(qd)
    friction = friction_torques(model, qd, q) - quadratic
    if torques is not None:
        g = torques.gravity(q)
        tau_s = torques.rnea(q, qd, qdd) - g - friction
    else:
        zeros = np.zeros_like(q)
        g = rnea(model, q, zeros, zeros)
        tau_s = rnea(model, q, qd, qdd, gravity=np.zeros(3)) - friction
    coulomb = coulomb_friction(model, g, qd)
    if model.coupled_drives:    # coupled drives' F_s on sgn(K qd), which no scaling changes
        coulomb = coulomb + coupled_friction(model, qd, viscous=False)
    return tau_s, friction, g, coulomb


def admissible_inverse_scale(tau_s, viscous, static, limits: Limits, qd, qdd) -> np.ndarray:
    """
    Per sample and joint, the largest admissible inverse scale x = 1/c.

    Per sample and joint, the largest x = 1/c in (0, 1] such that the torque
    tau_s x^2 + viscous x + static stays within limits on all of (0, x], and velocity and
    acceleration limits hold.  Returns (M, n).
    """
    x = np.ones_like(tau_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        for sign, bound in ((1.0, limits.effort_upper), (-1.0, limits.effort_lower)):
            a, b, e = sign * tau_s, sign * viscous, sign * \
                (static - bound)   # a x^2 + b x + e <= 0
            # e < 0 (checked before); the smallest positive root is 2 (-e) / (b +
            # sqrt(b^2 - 4 a e))
            disc = b * b - 4.0 * a * e
            den = b + np.sqrt(np.maximum(disc, 0.0))
            root = np.where((disc >= 0.0) & (den > 0.0), -2.0 * e / den, np.inf)
            x = np.minimum(x, root)
        x = np.minimum(x, limits.velocity / np.abs(qd))
        x = np.minimum(x, np.sqrt(limits.acceleration / np.abs(qdd)))
    return x


def _jerk_inverse_scale(traj: JointTrajectory, limits: Limits) -> float:
    """Return the largest x = 1/c <= 1 for which x^3 |jerk| stays within the jerk limits."""
    if not np.isfinite(limits.jerk).any():
        return 1.0
    with np.errstate(divide="ignore"):
        ratio = traj.segment_jerk_max().max(axis=0) / limits.jerk      # x^3 ratio <= 1
    worst = float(ratio.max())
    return 1.0 if worst <= 1.0 else worst ** (-1.0 / 3.0)


def uniform_scaling(model, traj: JointTrajectory, limits: Limits | None = None,
                    samples: int = 1000, min_scale: float = 1.0) -> ScaledTrajectory:
    """
    Smallest uniform time scaling q(t / c), c >= 1, within ``limits`` (default: the model's).

    See the module docstring (Siciliano et al. 2009, eqs. 7.117-7.126).  Raises ``ScalingError``
    naming joint and time when gravity alone breaks a limit or the path leaves the position limits,
    ``TrajectoryError`` for joints the model does not know and ``InputError`` for fewer than 2
    points or ``samples`` outside [2, ``MAX_SAMPLES``].  ``min_scale``: c is at least this (what
    the time-optimal scaling's path constraints, e.g. a tool speed, need of a uniform slowing).
    """
    traj = traj.reordered(model.joint_names)
    limits = limits or Limits.from_model(model)
    if traj.num_points < 2:
        raise InputError(
            f"trajectory: needs at least 2 points to be scaled, got {traj.num_points}")
    check_count("samples", samples, 2, MAX_SAMPLES)
    t, q, qd, qdd = dense_samples(traj, samples)
    check_positions(model, t, q)
    tau_s, friction, g, coulomb = torque_parts(model, q, qd, qdd)
    static_feasibility(model, t, g, g + coulomb, limits)
    x = admissible_inverse_scale(tau_s, friction - coulomb, g + coulomb, limits, qd, qdd)

    # Refine around the worst samples: the binding maximum may lie between two samples.
    worst = np.unique(np.argsort(x.min(axis=1))[:8])
    h = np.diff(t).max()
    local = (t[worst, None] + np.linspace(-h, h, 33)[None, :]).ravel()
    local = local[(local >= t[0]) & (local <= t[-1])]
    ql, qdl, qddl = traj.sample(local)
    check_positions(model, local, ql)
    tl_s, fl, gl, cl = torque_parts(model, ql, qdl, qddl)
    static_feasibility(model, local, gl, gl + cl, limits)
    x_local = admissible_inverse_scale(tl_s, fl - cl, gl + cl, limits, qdl, qddl)

    x_min = min(float(x.min()), float(x_local.min()) if x_local.size else 1.0,
                _jerk_inverse_scale(traj, limits), 1.0 / max(1.0, float(min_scale)))
    if not x_min > 0.0:
        k, j = np.unravel_index(np.argmin(x), x.shape)
        raise ScalingError(f"joint '{model.joint_names[j]}' at t = {t[k]:.6g} s: no finite time "
                           "scaling "
                           "keeps it within its limits",
                           model.joint_names[j], float(t[k]))
    c = 1.0 / x_min

    # The scaled trajectory and its torques, from the formula (no new inverse dynamics).
    def scaled_torques(tau_s_, friction_, coulomb_, g_):
        return tau_s_ / c**2 + (friction_ - coulomb_) / c + coulomb_ + g_

    torques_after = scaled_torques(tau_s, friction, coulomb, g)
    at_points = np.searchsorted(t, traj.times, side="right") - 1   # right limits, as JTC samples
    new = JointTrajectory(
        traj.joint_names, traj.times * c, traj.positions,
        None if traj.velocities is None else traj.velocities / c,
        None if traj.accelerations is None else traj.accelerations / c**2,
        torques_after[at_points])
    return ScaledTrajectory(
        trajectory=new, method="uniform", scale_factor=c, duration=float(new.times[-1]),
        original_duration=traj.duration, sample_times=t * c, torques=torques_after,
        original_times=t, original_torques=tau_s + friction + g, path_times=t, limits=limits)
