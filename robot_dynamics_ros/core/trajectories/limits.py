"""
Joint limits for re-timing (effort, velocity, acceleration) and the checks no timing can repair.

``ScalingError`` (an :class:`~robot_dynamics_ros.core.errors.InfeasibleError`) names the joint and
the time where a path leaves its position limits or where gravity (plus Coulomb friction, which
no slowing removes) alone needs more than an effort limit.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InfeasibleError, InputError


class ScalingError(InfeasibleError):
    """No re-timing within the limits exists; the message, ``joint`` and ``time`` say why."""


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
        """
        Return the model's limits times margins.

        ``acceleration``: None (no limit), a scalar or one value per joint.
        """
        for name, value in (("effort_scale", effort_scale), ("velocity_scale", velocity_scale)):
            if not (np.isfinite(value) and 0.0 < value <= 1.0):
                raise InputError(f"{name}: expected a fraction in (0, 1], got {value}")
        effort = np.asarray(model.effort_limit, dtype=float) * effort_scale
        acc = np.full(model.n, np.inf) if acceleration is None else np.broadcast_to(
            np.asarray(acceleration, dtype=float), (model.n,)).copy()
        if np.any(~(acc > 0.0)):
            raise InputError(f"acceleration: limits must be positive, got {acc.tolist()}")
        return cls(-effort, effort, np.asarray(model.velocity_limit,
                   dtype=float) * velocity_scale, acc)


def check_count(name: str, value, low: int, high: int) -> int:
    """``value`` as an int in [low, high]; InputError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or int(value) != value or not low <= value <= high:
        raise InputError(f"{name}: expected an integer in [{low}, {high}], got {value!r}")
    return int(value)


def check_positions(model, times: np.ndarray, q: np.ndarray) -> None:
    """Raise ScalingError naming joint and time if the path leaves the position limits."""
    tol = 1e-9
    for bad, bound, word in ((q < model.lower - tol, model.lower, "below its lower"),
                             (q > model.upper + tol, model.upper, "above its upper")):
        if bad.any():
            k, j = np.argwhere(bad)[0]
            raise ScalingError(f"joint '{model.joint_names[j]}' at t = {times[k]:.6g} s: position "
                               f"{q[k, j]:.6g} is {word} limit {bound[j]:.6g}",
                               model.joint_names[j], float(times[k]))


def static_feasibility(model, times, g, static, limits: Limits) -> None:
    """Raise ScalingError if gravity (+ Coulomb friction, which slowing keeps) breaks a limit."""
    for torque, what in ((g, "gravity alone needs"), (static,
                         "gravity plus Coulomb friction need")):
        over = torque - limits.effort_upper
        under = limits.effort_lower - torque
        worst = np.maximum(over, under)
        if (worst > 0).any():
            k, j = np.unravel_index(np.argmax(worst), worst.shape)
            lim = limits.effort_upper[j] if over[k, j] > 0 else limits.effort_lower[j]
            raise ScalingError(
                f"joint '{model.joint_names[j]}' at t = {times[k]:.6g} s: {what} "
                f"{torque[k, j]:.6g} N m (or N), beyond its effort limit {lim:.6g}; no time "
                "scaling can satisfy it", model.joint_names[j], float(times[k]))
