"""
Joint friction: tau_f = F_v qd + F_s sgn(qd), the model the robot files give.

Viscous friction F_v qd plus the simplified (Coulomb) static friction F_s sgn(qd), with F_v and
F_s diagonal (Siciliano et al., Robotics: Modelling, Planning and Control, eq. 7.42; the same
terms end the Newton-Euler recursion, eq. 7.114).  sgn(0) = 0: a joint at rest gets no friction
torque from this model (the simulator's set-valued stick-slip law is ``core.simulation.friction``).

:func:`friction_torque` is the per-joint formula: floats (a node maps it over the joints of one
message) or numpy arrays broadcast together (a whole bag chunk at once).
"""
from __future__ import annotations

import numpy as np


def sign(x):
    """sgn(x) with sgn(0) = 0, for a float (plain float out) or an array (np.sign)."""
    if isinstance(x, np.ndarray):
        return np.sign(x)
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


def friction_torque(qd, viscous, coulomb):
    """F_v qd + F_s sgn(qd) (Siciliano et al., eq. 7.42): per joint, or element-wise on arrays."""
    return viscous * qd + coulomb * sign(qd)


def friction_torques(model, qd) -> np.ndarray:
    """Return the robot's friction torques at ``qd`` ((n,) or (N, n)): :func:`friction_torque`."""
    qd = np.asarray(qd, dtype=float)
    if not model.has_friction:      # (the rigid model: no sign of a large batch to take)
        return np.zeros_like(qd)
    return friction_torque(qd, model.viscous, model.coulomb)
