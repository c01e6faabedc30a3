"""
The torque laws of the nodes: holding torque, feedforward torque, computed torque.

Written once for every user: the torque nodes (per message, on lists of a handful of floats),
``bag process`` (on (N, n) arrays of whole chunks) and the external-torque observer.  The
dynamics come in as functions (``rnea(q, qd, qdd)``, ``gravity_torques(q)``): which
implementation computes them is chosen outside the core.

* Holding torque (gravity compensation): tau = g(q) (Siciliano et al., Robotics: Modelling,
  Planning and Control, eq. 7.39), plus the friction of the current motion when friction is
  compensated (F_v qd + F_s sgn(qd), eq. 7.42, and the further terms of ``friction.py``).
* Feedforward (``mode: feedforward``): the nominal torques of the planned motion,
  tau = RNEA(q_ref, qd_ref, qdd_ref) (the Newton-Euler inverse dynamics, eqs. 7.107-7.114, with
  gravity, rotors and friction of the model).
* Computed torque (``mode: computed_torque``): inverse dynamics control,
  tau = B(q) y + n(q, qd) with y = qdd_ref + K_D (qd_ref - qd) + K_P (q_ref - q) and
  n = C qd + F_v qd + F_s sgn(qd) + g (Siciliano et al., Sect. 8.5.2; n as in eq. 7.116).
  B(q) y + n(q, qd) is exactly RNEA(q, qd, y), so it costs one O(n) recursion, not a mass matrix.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from .friction import coupled_friction, friction_torque

FEEDFORWARD, COMPUTED_TORQUE = "feedforward", "computed_torque"
MODES = (FEEDFORWARD, COMPUTED_TORQUE)


def holding_torque(g, qd, viscous, coulomb, viscous_quadratic=0.0, coulomb_load=0.0):
    """
    Return g + tau_f: the holding torque with friction (per joint, arrays).

    tau_f: ``friction.friction_torque``, whose load-dependent term takes g (the joint's gravity
    torque) as its load.
    """
    return g + friction_torque(qd, viscous, coulomb, viscous_quadratic, coulomb_load, g)


def holding_torques(gravity_torques, model, q, qd=None) -> np.ndarray:
    """
    Return what gravity compensation commands at (q, qd): g(q), plus friction at ``qd``.

    ``gravity_torques(q)``: the dynamics' g(q) for (n,) or (N, n); ``model``: its friction.
    """
    g = gravity_torques(q)
    if qd is None:
        return g
    qd = np.asarray(qd, dtype=float)
    held = holding_torque(g, qd, model.viscous, model.coulomb, model.viscous_quadratic,
                          model.coulomb_load)
    # coupled drives: their friction on the drives' velocities, through K^T (model/coupling.py)
    return held + coupled_friction(model, qd) if model.coupled_drives else held


def servo_acceleration(qdd_ref, qd_ref, q_ref, qd, q, kd, kp):
    """
    Return y = qdd_ref + K_D (qd_ref - qd) + K_P (q_ref - q): computed torque's outer loop.

    Per joint (floats) or element-wise on arrays (Siciliano et al., Sect. 8.5.2).
    """
    return qdd_ref + kd * (qd_ref - qd) + kp * (q_ref - q)


# Computed torque's default gains (a critically damped error, K_D^2 = 4 K_P): inverse_dynamics'
# parameter table says the same (a test holds them equal) and ``bag process`` takes them.
DEFAULT_KP, DEFAULT_KD = 100.0, 20.0


@dataclass(frozen=True, eq=False)
class Gains:
    """Computed torque's per-joint gains K_P [1/s^2] and K_D [1/s], in the model's order."""

    kp: np.ndarray
    kd: np.ndarray
    kp_list: list = field(init=False, repr=False)   # the same as lists: the per-message path
    kd_list: list = field(init=False, repr=False)

    def __post_init__(self):
        for name in ("kp", "kd"):
            gains = np.array(getattr(self, name), dtype=float).reshape(-1)
            bad = np.flatnonzero(~(np.isfinite(gains) & (gains >= 0.0)))
            if bad.size:
                raise InputError(f"{name}: gain {bad[0]} is {gains[bad[0]]}; gains must be "
                                 "finite and >= 0")
            gains.setflags(write=False)
            object.__setattr__(self, name, gains)
            object.__setattr__(self, f"{name}_list", gains.tolist())
        if self.kp.shape != self.kd.shape:
            raise InputError(f"kp, kd: {self.kp.size} and {self.kd.size} gains; give one per "
                             "joint of each")


@dataclass(frozen=True)
class TorqueLaw:
    """
    What inverse dynamics commands: ``mode`` (one of :data:`MODES`), gains for computed torque.

    Both modes are one RNEA call; :meth:`rnea_arguments` says at which (q, qd, qdd).
    """

    mode: str
    gains: Gains | None = None

    def __post_init__(self):
        if self.mode not in MODES:
            raise InputError(f"mode: '{self.mode}' is not one of {list(MODES)}")
        if self.mode == COMPUTED_TORQUE and self.gains is None:
            raise InputError("computed_torque needs gains (kp, kd)")

    @property
    def needs_velocity(self) -> bool:
        """Tell whether the law uses the measured velocity (computed torque does)."""
        return self.mode == COMPUTED_TORQUE

    def rnea_arguments(self, q, qd, q_ref, qd_ref, qdd_ref):
        """Return the (q, qd, qdd) whose RNEA is the command: arrays (n,) or (N, n)."""
        if self.mode == FEEDFORWARD:
            return q_ref, qd_ref, qdd_ref
        g = self.gains
        return q, qd, servo_acceleration(qdd_ref, qd_ref, q_ref, qd, q, g.kd, g.kp)

    def rnea_values(self, q: list, qd: list, q_ref: list, qd_ref: list, qdd_ref: list):
        """:meth:`rnea_arguments` for lists of n floats (one message): lists, no numpy."""
        if self.mode == FEEDFORWARD:
            return q_ref, qd_ref, qdd_ref
        g = self.gains
        return q, qd, list(map(servo_acceleration, qdd_ref, qd_ref, q_ref, qd, q, g.kd_list,
                               g.kp_list))

    def torques(self, rnea, q, qd, q_ref, qd_ref, qdd_ref) -> np.ndarray:
        """Return the command: ``rnea`` (the dynamics' RNEA) at :meth:`rnea_arguments`."""
        return rnea(*self.rnea_arguments(q, qd, q_ref, qd_ref, qdd_ref))
