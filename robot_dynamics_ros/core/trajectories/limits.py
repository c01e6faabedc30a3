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
    """
    Admissible joint torques, velocities, accelerations, jerks (arrays of length n; inf = none).

    Built from a model with :meth:`from_model`, whose margins are the fraction of each limit that
    may be used (the trajectory scaler node's ``effort_margin``, ``velocity_margin`` and
    ``acceleration_margin`` parameters, the command line's ``--effort-margin`` ...).  Every array
    is checked on construction: InputError names the joint (by index) and the limit.  ``jerk``
    (default none) comes from a MoveIt joint_limits.yaml (``joint_limits_file``): uniform scaling
    applies it, the time-optimal law cannot (its acceleration is piecewise constant).
    """

    effort_lower: np.ndarray
    effort_upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    jerk: np.ndarray | None = None

    def __post_init__(self):
        if self.jerk is None:
            object.__setattr__(self, "jerk", np.full(np.size(self.effort_upper), np.inf))
        arrays = {}
        for name in ("effort_lower", "effort_upper", "velocity", "acceleration", "jerk"):
            try:
                a = np.array(getattr(self, name), dtype=float).reshape(-1)
            except (TypeError, ValueError):
                raise InputError(f"limits.{name}: expected numbers, got "
                                 f"{getattr(self, name)!r}") from None
            a.setflags(write=False)
            arrays[name] = a
        n = arrays["effort_upper"].size
        for name, a in arrays.items():
            if a.size != n:
                raise InputError(f"limits.{name}: expected {n} values (one per joint), "
                                 f"got {a.size}")
            bad = np.flatnonzero(np.isnan(a))
            if bad.size:
                raise InputError(f"limits.{name}: joint {bad[0]} is NaN")
            object.__setattr__(self, name, a)
        for name in ("velocity", "acceleration", "jerk"):
            bad = np.flatnonzero(~(arrays[name] > 0.0))
            if bad.size:
                raise InputError(f"limits.{name}: joint {bad[0]} is {arrays[name][bad[0]]}; "
                                 "limits must be > 0")
        bad = np.flatnonzero(~(arrays["effort_lower"] < arrays["effort_upper"])
                             | ~np.isfinite(arrays["effort_lower"] + arrays["effort_upper"]))
        if bad.size:
            k = bad[0]
            raise InputError(f"limits.effort: joint {k}: lower {arrays['effort_lower'][k]} "
                             "must be "
                             f"finite and below upper {arrays['effort_upper'][k]}")

    @classmethod
    def from_model(cls, model, effort_margin: float = 1.0, velocity_margin: float = 1.0,
                   acceleration_margin: float = 1.0, acceleration=None, velocity=None,
                   effort=None) -> "Limits":
        """
        Return the model's limits times margins.

        ``effort_margin`` = 0.9 uses 90 % of each effort limit, and so on; each margin in (0, 1].
        ``acceleration``: override of the model's acceleration limits (``limits.acceleration`` of
        the robot file, inf where absent): a scalar or one value per joint, > 0 (inf = none).
        ``velocity``, ``effort``: overrides of the model's velocity and effort limits (a scalar
        or one per joint); without them a limit the description leaves unknown is an error
        naming the joint (``RobotModel.unknown_limits``).
        """
        model = _with_limits(model, velocity, effort)
        for name, value in (("effort_margin", effort_margin), ("velocity_margin", velocity_margin),
                            ("acceleration_margin", acceleration_margin)):
            number = isinstance(value, (int, float, np.integer, np.floating))
            if isinstance(value, bool) or not number or not 0.0 < value <= 1.0:
                raise InputError(f"{name}: expected a fraction in (0, 1], got {value!r}")
        effort = np.asarray(model.effort_limit, dtype=float) * effort_margin
        if acceleration is None:
            acc = np.asarray(getattr(model, "acceleration_limit", np.full(model.n, np.inf)),
                             dtype=float)
        else:
            try:
                acc = np.broadcast_to(np.asarray(acceleration, dtype=float), (model.n,))
            except (TypeError, ValueError):
                raise InputError(f"acceleration: expected one value or {model.n} (one per joint), "
                                 f"got {acceleration!r}") from None
        bad = np.flatnonzero(~(acc > 0.0))
        if bad.size:
            raise InputError(f"acceleration: joint '{model.joint_names[bad[0]]}' has limit "
                             f"{acc[bad[0]]}; limits must be > 0")
        return cls(-effort, effort, np.asarray(model.velocity_limit, dtype=float)
                   * velocity_margin, acc * acceleration_margin)


def with_jerk(limits: Limits, jerk) -> Limits:
    """Return ``limits`` with the jerk limits ``jerk`` (one per joint, > 0; None: unchanged)."""
    if jerk is None:
        return limits
    return Limits(limits.effort_lower, limits.effort_upper, limits.velocity, limits.acceleration,
                  jerk)


class _GivenLimits:
    """A model's limits with the user's velocity or effort limits in place of its own."""

    def __init__(self, model, velocity, effort):
        self.n = model.n
        self.velocity_limit = _per_joint(model, velocity, "velocity", model.velocity_limit)
        self.effort_limit = _per_joint(model, effort, "effort", model.effort_limit)
        self.acceleration_limit = model.acceleration_limit
        self.joint_names = model.joint_names


def _per_joint(model, value, name: str, own: np.ndarray) -> np.ndarray:
    if value is None:
        return own
    try:
        given = np.broadcast_to(np.asarray(value, dtype=float), (model.n,)).copy()
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected one value or {model.n} (one per joint), "
                         f"got {value!r}") from None
    bad = np.flatnonzero(~(given > 0.0) | ~np.isfinite(given))
    if bad.size:
        raise InputError(f"{name}: joint '{model.joint_names[bad[0]]}' has limit "
                         f"{given[bad[0]]}; limits must be finite and > 0")
    return given


def _with_limits(model, velocity, effort):
    """Return ``model`` (or its limits with the user's), refusing limits still unknown."""
    needed = tuple(kind for kind, given in (("velocity", velocity), ("effort", effort))
                   if given is None)
    model.require_limits(needed, "time scaling", "--velocity / --effort")
    return model if velocity is None and effort is None else _GivenLimits(model, velocity, effort)


def check_count(name: str, value, low: int, high: int) -> int:
    """``value`` as an int in [low, high]; InputError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or int(value) != value or not low <= value <= high:
        raise InputError(f"{name}: expected an integer in [{low}, {high}], got {value!r}")
    return int(value)


def at_time(t: float) -> str:
    """Describe a point of a timed trajectory in error messages."""
    return f"t = {t:.6g} s"


def check_positions(model, times: np.ndarray, q: np.ndarray, where=at_time) -> None:
    """
    Raise ScalingError naming joint and time if the path leaves the position limits.

    ``where(t)`` describes a point in the message (a geometric path: its parameter s).
    """
    tol = 1e-9
    for bad, bound, word in ((q < model.lower - tol, model.lower, "below its lower"),
                             (q > model.upper + tol, model.upper, "above its upper")):
        if bad.any():
            k, j = np.argwhere(bad)[0]
            raise ScalingError(f"joint '{model.joint_names[j]}' at {where(times[k])}: position "
                               f"{q[k, j]:.6g} is {word} limit {bound[j]:.6g}",
                               model.joint_names[j], float(times[k]))


def static_feasibility(model, times, g, static, limits: Limits, where=at_time) -> None:
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
                f"joint '{model.joint_names[j]}' at {where(times[k])}: {what} "
                f"{torque[k, j]:.6g} N m (or N), beyond its effort limit {lim:.6g}; no time "
                "scaling can satisfy it", model.joint_names[j], float(times[k]))
