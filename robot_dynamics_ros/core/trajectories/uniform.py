"""Uniform dynamic scaling of a trajectory under torque limits (seed 002, Sect. 7.7, eqs. 7.117-7.126).

The joint torque of the trajectory q(t) splits into a part that depends on the motion and the
gravity part, which depends on position only (seed 002, L1266):

    tau(t) = tau_s(t) + g(q(t)),   tau_s = B(q) qdd + C(q, qd) qd   (7.123; B includes the rotors).

Replaying the same path slower, q_new(t) = q(t / c) with c >= 1 (r = t / c in 7.119), gives
qd_new = qd / c, qdd_new = qdd / c^2 and (7.126 with r'' = 0)

    tau_new(t) = tau_s(t / c) / c^2 + g(q(t / c)),

so the scaled torques follow from the original ones without recomputing inverse dynamics, and the
smallest admissible c comes in closed form from the worst sample and joint.

Friction, which the chapter leaves out (F_v = F_s = 0, L1217), is kept exactly here: viscous
friction F_v qd scales by 1/c and Coulomb friction F_s sgn(qd) does not scale, so with x = 1/c each
(sample, joint) gives a quadratic  tau_s x^2 + F_v qd x + F_s sgn(qd) + g  that must stay within
[tau_min, tau_max].  We take the largest x in (0, 1] such that every constraint holds on the whole
interval (0, x], i.e. the smallest c from which on every slower replay is admissible too; without
friction this is exactly the chapter's c^2 = max tau_s / (tau_lim - g).  Velocity limits give
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

from dataclasses import dataclass

import numpy as np

from ..algorithms.rnea import rnea
from ..errors import InfeasibleError
from .trajectory import JointTrajectory


class ScalingError(InfeasibleError):
    """The trajectory cannot be scaled within the limits; the message, ``joint`` and ``time`` say why."""


@dataclass(frozen=True, eq=False)
class Limits:
    """Admissible joint torques, velocities and accelerations (arrays of length n; inf = none)."""
    effort_lower: np.ndarray
    effort_upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    @classmethod
    def from_model(cls, model, effort_scale: float = 1.0, velocity_scale: float = 1.0,
                   acceleration=None) -> "Limits":
        """The model's limits times a margin: ``effort_scale`` = 0.9 uses 90 % of each effort limit.

        ``acceleration``: None (no limit), a scalar or one value per joint.
        """
        for name, value in (("effort_scale", effort_scale), ("velocity_scale", velocity_scale)):
            if not (np.isfinite(value) and 0.0 < value <= 1.0):
                raise ValueError(f"{name}: expected a fraction in (0, 1], got {value}")
        effort = np.asarray(model.effort_limit, dtype=float) * effort_scale
        acc = np.full(model.n, np.inf) if acceleration is None else np.broadcast_to(
            np.asarray(acceleration, dtype=float), (model.n,)).copy()
        if np.any(~(acc > 0.0)):
            raise ValueError(f"acceleration: limits must be positive, got {acc.tolist()}")
        return cls(-effort, effort, np.asarray(model.velocity_limit, dtype=float) * velocity_scale, acc)


@dataclass(frozen=True, eq=False)
class ScaledTrajectory:
    """Result of a scaling: the new trajectory (positions, velocities, accelerations, effort).

    ``sample_times`` (M,) are times of the NEW trajectory where ``torques`` (M, n) were evaluated,
    ``original_times`` and ``original_torques`` the same path points on the original trajectory;
    ``path_times`` (M,) is the time law: the original time s(t) reached at each new time.
    """
    trajectory: JointTrajectory
    method: str
    scale_factor: float
    duration: float
    original_duration: float
    sample_times: np.ndarray
    torques: np.ndarray
    original_times: np.ndarray
    original_torques: np.ndarray
    path_times: np.ndarray
    limits: Limits

    def for_controller(self) -> JointTrajectory:
        """The trajectory to send to joint_trajectory_controller (with effort).

        Uniform scaling keeps the original's fields, so the controller interpolates exactly
        q(t / c).  The time-optimal law's acceleration jumps at its grid points, which the
        controller's quintic (used when accelerations are given) would smooth with overshoot, so
        its accelerations are left out: the cubic through positions and velocities follows the law.
        """
        t = self.trajectory
        if self.method == "uniform":
            return t
        return JointTrajectory(t.joint_names, t.times, t.positions, t.velocities, None, t.effort)


def friction_torques(model, qd) -> np.ndarray:
    """F_v qd + F_s sgn(qd): the friction rnea adds (seed 002, 7.114)."""
    return model.viscous * qd + model.coulomb * np.sign(qd)


def check_positions(model, traj: JointTrajectory, times: np.ndarray, q: np.ndarray) -> None:
    """ScalingError naming joint and time if the path leaves the model's position limits."""
    tol = 1e-9
    for bad, bound, word in ((q < model.lower - tol, model.lower, "below its lower"),
                             (q > model.upper + tol, model.upper, "above its upper")):
        if bad.any():
            k, j = np.argwhere(bad)[0]
            raise ScalingError(f"joint '{model.joint_names[j]}' at t = {times[k]:.6g} s: position "
                               f"{q[k, j]:.6g} is {word} limit {bound[j]:.6g}",
                               model.joint_names[j], float(times[k]))


def static_feasibility(model, times, g, static, limits: Limits) -> None:
    """ScalingError if gravity (+ Coulomb friction, which slowing cannot remove) breaks a limit."""
    for torque, what in ((g, "gravity alone needs"), (static, "gravity plus Coulomb friction need")):
        over = torque - limits.effort_upper
        under = limits.effort_lower - torque
        worst = np.maximum(over, under)
        if (worst > 0).any():
            k, j = np.unravel_index(np.argmax(worst), worst.shape)
            lim = limits.effort_upper[j] if over[k, j] > 0 else limits.effort_lower[j]
            raise ScalingError(
                f"joint '{model.joint_names[j]}' at t = {times[k]:.6g} s: {what} {torque[k, j]:.6g} N m "
                f"(or N), beyond its effort limit {lim:.6g}; no time scaling can satisfy it",
                model.joint_names[j], float(times[k]))


def dense_samples(traj: JointTrajectory, samples: int):
    """Times (sorted) and (q, qd, qdd): ``samples`` evenly spaced times plus every waypoint, where
    interior waypoints appear twice, first as the left limit (end of the segment before), then as
    the right limit, so jumps of the acceleration at waypoints are seen from both sides."""
    even = np.linspace(traj.times[0], traj.times[-1], samples)
    even = even[~np.isin(even, traj.times)]
    t_right = np.concatenate([even, traj.times])
    t_left = traj.times[1:-1]
    right, left = traj.sample(t_right), traj.sample(t_left, side="left")
    t = np.concatenate([t_left, t_right])
    order = np.argsort(t, kind="stable")          # left limits (first) before right limits
    return (t[order],) + tuple(np.concatenate([a, b])[order] for a, b in zip(left, right))


def _torque_parts(model, q, qd, qdd):
    """(tau_s, friction, g): the motion part (7.123), friction and gravity, per sample."""
    zeros = np.zeros_like(q)
    g = rnea(model, q, zeros, zeros)
    friction = friction_torques(model, qd)
    tau_s = rnea(model, q, qd, qdd, gravity=np.zeros(3)) - friction
    return tau_s, friction, g


def _admissible_inverse_scale(tau_s, viscous, static, limits: Limits, qd, qdd) -> np.ndarray:
    """Per sample and joint, the largest x = 1/c in (0, 1] such that the torque
    tau_s x^2 + viscous x + static stays within limits on all of (0, x], and velocity and
    acceleration limits hold.  Returns (M, n)."""
    x = np.ones_like(tau_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        for sign, bound in ((1.0, limits.effort_upper), (-1.0, limits.effort_lower)):
            a, b, e = sign * tau_s, sign * viscous, sign * (static - bound)   # a x^2 + b x + e <= 0
            # e < 0 (checked before); the smallest positive root is 2 (-e) / (b + sqrt(b^2 - 4 a e))
            disc = b * b - 4.0 * a * e
            den = b + np.sqrt(np.maximum(disc, 0.0))
            root = np.where((disc >= 0.0) & (den > 0.0), -2.0 * e / den, np.inf)
            x = np.minimum(x, root)
        x = np.minimum(x, limits.velocity / np.abs(qd))
        x = np.minimum(x, np.sqrt(limits.acceleration / np.abs(qdd)))
    return x


def uniform_scaling(model, traj: JointTrajectory, limits: Limits | None = None,
                    samples: int = 1000) -> ScaledTrajectory:
    """Smallest uniform time scaling q(t / c), c >= 1, within ``limits`` (default: the model's).

    See the module docstring (seed 002, eqs. 7.117-7.126).  Raises ``ScalingError`` naming joint
    and time when gravity alone breaks a limit or the path leaves the position limits, and
    ``ValueError`` for joints the model does not know.
    """
    traj = traj.reordered(model.joint_names)
    limits = limits or Limits.from_model(model)
    if traj.num_points < 2:
        raise ScalingError("trajectory: needs at least 2 points to be scaled")
    if samples < 2:
        raise ValueError(f"samples: expected at least 2, got {samples}")
    t, q, qd, qdd = dense_samples(traj, samples)
    check_positions(model, traj, t, q)
    tau_s, friction, g = _torque_parts(model, q, qd, qdd)
    coulomb = model.coulomb * np.sign(qd)
    static_feasibility(model, t, g, g + coulomb, limits)
    x = _admissible_inverse_scale(tau_s, friction - coulomb, g + coulomb, limits, qd, qdd)

    # Refine around the worst samples: the binding maximum may lie between two samples.
    worst = np.unique(np.argsort(x.min(axis=1))[:8])
    h = np.diff(t).max()
    local = (t[worst, None] + np.linspace(-h, h, 33)[None, :]).ravel()
    local = local[(local >= t[0]) & (local <= t[-1])]
    ql, qdl, qddl = traj.sample(local)
    check_positions(model, traj, local, ql)
    tl_s, fl, gl = _torque_parts(model, ql, qdl, qddl)
    cl = model.coulomb * np.sign(qdl)
    static_feasibility(model, local, gl, gl + cl, limits)
    x_local = _admissible_inverse_scale(tl_s, fl - cl, gl + cl, limits, qdl, qddl)

    x_min = min(float(x.min()), float(x_local.min()) if x_local.size else 1.0)
    if not x_min > 0.0:
        k, j = np.unravel_index(np.argmin(x), x.shape)
        raise ScalingError(f"joint '{model.joint_names[j]}' at t = {t[k]:.6g} s: no finite time scaling "
                           "keeps it within its limits", model.joint_names[j], float(t[k]))
    c = 1.0 / x_min

    # The scaled trajectory and its torques, from the formula (no new inverse dynamics).
    def scaled_torques(tau_s_, qd_, g_):
        qd_new = qd_ / c
        return tau_s_ / c**2 + friction_torques(model, qd_new) + g_

    torques_after = scaled_torques(tau_s, qd, g)
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
