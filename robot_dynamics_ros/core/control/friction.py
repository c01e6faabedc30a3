"""
Joint friction: the one law every part of the package applies.

    tau_f = F_v qd + F_v2 qd |qd| + (F_s + F_l |g(q)|) sgn(qd)

* F_v qd + F_s sgn(qd): viscous friction and the simplified (Coulomb) static friction, F_v and
  F_s diagonal (Siciliano et al., Robotics: Modelling, Planning and Control, eq. 7.42; the same
  terms end the Newton-Euler recursion, eq. 7.114, which applies them itself);
* F_v2 qd |qd| [N m s^2/rad^2, N s^2/m^2]: the second term of a polynomial in velocity for the
  viscous friction (Armstrong-Helouvry, Dupont and Canudas de Wit, "A survey of models, analysis
  tools and compensation methods for the control of machines with friction", Automatica 30(7),
  1994, Sect. 2.2: viscous friction as a general, often non-linear, function of velocity),
  written odd in qd as friction opposes motion.  Either sign: positive, friction growing faster
  than linearly with speed; negative, slower (a lubricated gear's friction levels off: the UR10e
  shoulder's does, doc/identification.md), bounded by :func:`viscous_quadratic_floor` so that the
  friction still grows with speed and dissipates up to the joint's velocity limit;
* F_l |g(q)| sgn(qd) [dimensionless, 0 <= F_l < 1]: dry friction that grows with the load the
  joint holds, as in geared joints (Hamon, Gautier and Garrec, "Dynamic identification of robots
  with a dry friction model depending on load and velocity", IEEE/RSJ IROS 2010, eq. 6, with
  F_l the load coefficient).  They take the whole joint torque as the load; here it is the
  static load g_j(q), the joint's gravity torque under the model's own gravity vector (with its
  payload), so the friction stays a function of (q, qd) only: forward dynamics, the simulator,
  the time-optimal scaling and the observer stay explicit (no friction that depends on the
  acceleration it produces).  A gravity vector given to ``rnea(..., gravity=...)`` changes the
  rigid-body torques only, not this load: the friction is a property of the robot (q, qd).

sgn(0) = 0: a joint at rest gets no friction torque from this law (the simulator's set-valued
stick-slip law is ``core.simulation.friction``).  The Newton-Euler recursion (and the ABA and the
generated code after it) keeps F_v and F_s in its rows; the two further terms are applied outside
it by :func:`extra_friction`, only for a model that has them (``model.has_extra_friction``), and
by the wrappers :func:`adding_extra_friction` / :func:`subtracting_extra_friction` that the
route (``algorithms/route.py``, the one choice of the dynamics) puts around inverse and
forward dynamics.

:func:`friction_torque` is the per-joint formula: floats (a node maps it over the joints of one
message) or numpy arrays broadcast together (a whole bag chunk at once).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError


def viscous_quadratic_floor(viscous, velocity_limit):
    """
    Return the least F_v2 allowed: -F_v / (2 v_max), or 0 where the velocity limit is unknown.

    F_v qd + F_v2 qd|qd| then has the slope F_v + 2 F_v2 |qd| >= 0 up to the velocity limit v_max
    (friction that grows with speed, never less than at a lower speed, and dissipative:
    F_v + F_v2 |qd| >= F_v / 2 >= 0 there, up to twice the limit).  Floats or arrays.
    """
    finite = np.isfinite(velocity_limit) & (np.asarray(velocity_limit, dtype=float) > 0) \
        if velocity_limit is not None else False
    with np.errstate(divide="ignore", invalid="ignore"):
        floor = np.where(finite, -np.asarray(viscous, dtype=float)
                         / (2.0 * np.where(finite, velocity_limit, 1.0)), 0.0)
    return float(floor) if floor.ndim == 0 else floor


def sign(x):
    """sgn(x) with sgn(0) = 0, for a float (plain float out) or an array (np.sign)."""
    if isinstance(x, np.ndarray):
        return np.sign(x)
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


def coulomb_level(coulomb, coulomb_load, load):
    """
    Return F_s + F_l |load|: the dry friction's level at a state, written once.

    ``load``: the joint's gravity torque g_j(q) (see the module docstring).  Per joint (floats),
    element-wise on arrays, or on the code generator's expression nodes (|x| = x sgn(x)), which
    emit the generated model's term from this text.
    """
    return coulomb + coulomb_load * abs(load)


def friction_torque(qd, viscous, coulomb, viscous_quadratic=0.0, coulomb_load=0.0, load=0.0):
    """
    F_v qd + F_v2 qd|qd| + (F_s + F_l |load|) sgn(qd): per joint, or element-wise on arrays.

    ``load``: the joint's gravity torque g_j(q) (see the module docstring).
    """
    return (viscous * qd + viscous_quadratic * qd * abs(qd)
            + coulomb_level(coulomb, coulomb_load, load) * sign(qd))


def coulomb_levels(model, q, gravity) -> np.ndarray:
    """
    Return F_s + F_l |g(q)| per joint ((n,) or (N, n)): the dry-friction level at ``q``.

    ``gravity(model, q)``: g(q), e.g. ``core.gravity_torques``, called only for a model with
    load-dependent friction.  (Passed in: this law sits below the algorithms, which apply it,
    and the model, which validates its coefficients.)
    """
    if not np.any(model.coulomb_load):
        return np.broadcast_to(model.coulomb, np.shape(q)).copy()
    return coulomb_level(model.coulomb, model.coulomb_load, gravity(model, q))


def coulomb_friction(model, load, qd) -> np.ndarray:
    """
    Return (F_s + F_l |g(q)|) sgn(qd), the law's dry friction, from the gravity torques ``load``.

    For callers that hold g(q) already (the scalings); ``load`` and ``qd`` of one shape
    ((n,), (N, n) or more leading dimensions).
    """
    if not np.any(model.coulomb_load):
        return model.coulomb * np.sign(qd)
    return coulomb_level(model.coulomb, model.coulomb_load, load) * np.sign(qd)


def quadratic_viscous(model, qd) -> np.ndarray:
    """Return F_v2 qd|qd| ((n,) or (N, n)): the friction term that scales like the inertia's."""
    qd = np.asarray(qd, dtype=float)
    return model.viscous_quadratic * qd * np.abs(qd)


def extra_friction(model, q, qd, gravity) -> np.ndarray:
    """
    Return F_v2 qd|qd| + F_l |g(q)| sgn(qd): what the law adds to the recursion's F_v, F_s terms.

    ``q, qd``: (n,) or (N, n) float arrays; zeros for a model without these terms.
    """
    qd = np.asarray(qd, dtype=float)
    if not model.has_extra_friction:
        return np.zeros_like(qd)
    out = quadratic_viscous(model, qd)
    if np.any(model.coulomb_load):      # (F_s: the recursion's)
        out = out + coulomb_level(0.0, model.coulomb_load, gravity(model, q)) * np.sign(qd)
    return out


def recursion_friction(model, qd) -> np.ndarray:
    """Return F_v qd + F_s sgn(qd): the part of the law the Newton-Euler recursion applies."""
    qd = np.asarray(qd, dtype=float)
    if not (np.any(model.viscous) or np.any(model.coulomb)):   # (no sign of a large batch)
        return np.zeros_like(qd)
    return model.viscous * qd + model.coulomb * np.sign(qd)


def coupled_friction(model, qd, viscous: bool = True) -> np.ndarray:
    """
    Return what a drive coupling changes in the recursion's F_v qd + F_s sgn(qd) ((n,), (N, n)).

    Drive i's friction acts on its velocity v_i = K_i qd and on the joints through K^T
    (``core/model/coupling.py``): K^T (F_v v + F_v2 v|v| + F_s sgn(v)) - (F_v qd + F_v2 qd|qd|
    + F_s sgn(qd)), plus the joint-side F_vj qd + F_sj sgn(qd), over the coupled drives only
    (exactly zero elsewhere); zeros for a model without a coupling.  ``viscous`` False: the
    Coulomb terms alone.
    """
    if not model.coupled_drives:
        return np.zeros(np.shape(qd))
    # (the model's method: the model package imports this law, so the law imports not it)
    return model.coupled_friction_change(qd, viscous)


def friction_torques(model, qd, q=None, gravity=None) -> np.ndarray:
    """
    Return the robot's friction torques at (q, qd) ((n,) or (N, n)): :func:`friction_torque`.

    ``q`` and ``gravity(model, q)`` (g(q), e.g. ``core.gravity_torques``) are needed only by a
    model with load-dependent friction (F_l); without them such a model is refused (InputError
    naming the model and the term), never computed without the term.
    """
    out = recursion_friction(model, qd)
    if model.coupled_drives:
        out = out + coupled_friction(model, qd)
    if not model.has_extra_friction:
        return out
    if (q is None or gravity is None) and np.any(model.coulomb_load):
        raise InputError(f"{model.name}: its load-dependent friction (friction.coulomb_load) "
                         "needs the joint positions and gravity torques, and none were given")
    return out + extra_friction(model, qd if q is None else np.asarray(q, dtype=float), qd,
                                gravity)


def adding_extra_friction(model, function, gravity):
    """
    Return ``function(q, qd, ...)`` + :func:`extra_friction` (``function`` for a model without).

    ``function``: inverse dynamics ``rnea(q, qd, qdd)`` or ``nonlinear_effects(q, qd)`` whose
    friction is the recursion's F_v qd + F_s sgn(qd); ``gravity(model, q)``: g(q).
    """
    if not model.has_extra_friction:
        return function

    def call(q, qd, *rest):
        tau = function(q, qd, *rest)
        return tau + extra_friction(model, np.asarray(q, dtype=float), qd, gravity)
    return call


def subtracting_extra_friction(model, forward_dynamics, gravity):
    """Return ``forward_dynamics(q, qd, tau - extra_friction)`` (itself without the terms)."""
    if not model.has_extra_friction:
        return forward_dynamics

    def call(q, qd, tau):
        try:
            arrays = [np.asarray(v, dtype=float) for v in (q, qd, tau)]
        except (TypeError, ValueError):
            arrays = None
        if arrays is None or not all(a.shape == arrays[0].shape for a in arrays) \
                or not all(np.isfinite(a).all() for a in arrays):
            return forward_dynamics(q, qd, tau)         # (refused there, the argument named)
        q, qd, tau = arrays
        return forward_dynamics(q, qd, tau - extra_friction(model, q, qd, gravity))
    return call
