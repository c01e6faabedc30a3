"""
Joint friction in the simulator: viscous plus a regularised Coulomb term that does not chatter.

The robot file's friction is on the joint side, tau_f = F_v qd + F_s sgn(qd) (seed 002, eq. 7.114
and 7.116).  sgn(qd) jumps at rest: with a fixed step the sign of the friction torque flips from
step to step around qd = 0 (chatter), and an adaptive integrator stalls on the jump.  The
simulator therefore integrates

    tau_f = F_v qd + F_s tanh(qd / v_s)                                              (regularised)

which equals F_s sgn(qd) to 0.5 % once |qd| > 3 v_s, and near rest is a steep viscous law of
slope F_s / v_s.  What this means for users:

* a joint never sticks exactly: under a net torque |tau| < F_s it creeps at
  v_s atanh(tau / F_s) (e.g. 0.55 v_s at half the Coulomb level) instead of staying still;
* the slope F_s / v_s makes the equations stiff near rest.  A joint that sees the effective
  inertia m (the inertia joint i meets when the other joints move freely, 1 / (B^{-1})_ii) has
  the eigenvalue z = -dt F_s / (v_s m) per step; explicit steps neither overshoot through zero
  (no chatter) nor grow while |z| <= 1 (semi-implicit Euler's factor 1 + z; RK4's stability
  polynomial is positive for every real z and below 1 in magnitude down to z = -2.78).

The default ``coulomb_velocity`` is therefore the sharpest safe value for the step:
v_s,i = 2 dt F_s,i / m_i (|z| <= 0.5, leaving room for the viscous term and for the inertia
changing along the motion), where m_i is the smallest effective inertia of joint i over the
initial configuration and 32 configurations spread over the joint limits.  For the Puma 560 at
1 kHz this gives v_s = 6-23 mrad/s.  Give ``coulomb_velocity`` (a scalar or one value per joint)
to choose it yourself; smaller values are sharper but need a smaller step.
"""
from __future__ import annotations

import numpy as np

from ..algorithms.crba import mass_matrix
from ..errors import InputError

SAFETY = 2.0                # v_s = SAFETY dt F_s / m: |z| <= 1 / SAFETY
SAMPLES = 32                # configurations in the joint limits searched for the smallest inertia
FLOOR = 1e-9                # rad/s (m/s): a positive v_s even for negligible F_s


def effective_inertias(model, q0) -> np.ndarray:
    """Return per joint the smallest 1 / (B^{-1})_ii over ``q0`` and samples in the limits."""
    rng = np.random.default_rng(0)       # fixed: the same model and q0 give the same v_s
    # a continuous joint (infinite limits) is sampled over one turn
    lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
    samples = np.vstack([np.asarray(q0, dtype=float)[None, :],
                         rng.uniform(lower, upper, size=(SAMPLES, model.n))])
    inverse = np.linalg.inv(mass_matrix(model, samples))
    return (1.0 / np.diagonal(inverse, axis1=1, axis2=2)).min(axis=0)


def coulomb_velocity(model, q0, dt: float, value=None) -> np.ndarray:
    """Return the regularisation velocity v_s per joint: ``value`` checked, or the default."""
    n = model.n
    if value is None:
        if not np.any(model.coulomb):
            return np.full(n, 1.0)       # unused: no Coulomb friction
        return np.maximum(SAFETY * dt * model.coulomb / effective_inertias(model, q0), FLOOR)
    v = np.asarray(value, dtype=float)
    if v.ndim == 0:
        v = np.full(n, float(v))
    if v.shape != (n,) or not np.isfinite(v).all() or (v <= 0.0).any():
        raise InputError(f"coulomb_velocity: expected a positive finite value or {n} of them "
                         f"(one per joint of '{model.name}'), got {np.asarray(value).tolist()}")
    return v
