"""
Inverse dynamics tau = B qdd + C qd + tau_f(q, qd) + g + J^T f_ext, single or batched.

The recursion is ``newton_euler.py`` (Renaud 1987, steps (0)-(10), with the rotor and
friction terms of Siciliano et al. 2009, eqs. 7.111-7.114), on the model's grouped constants, or
on its plain bodies where its DH origins lie far away (``model/bodies.numeric_form``). It runs
compiled by numba when numba is available (``compiled.py``: about a microsecond per call, most of
it numba's dispatch), else as plain Python, on floats for one configuration and on numpy columns
for a batch.  The recursion's rows hold F_v qd + F_s sgn(qd); the friction law's further terms
(F_v2 qd|qd| + F_l |g(q)| sgn(qd), ``control/friction.py``) are added after it, by the route
(``route.bound``), only for a model with them.

The checks of the arguments cost nothing on the common call (float arrays of the right shape,
the model's gravity, no wrench): the compiled driver checks shapes and finiteness itself, and
only a refused call goes through ``inputs.joint_arrays`` for its error message.
"""
from __future__ import annotations

import numpy as np

from ..control.friction import adding_extra_friction
from ..inputs import joint_arrays
from .checked import gravity_in_base, rnea_checked
from .coupled import adding_coupling
from .route import bound

__all__ = ["rnea", "gravity_torques", "nonlinear_effects", "gravity_in_base"]


def rnea(model, q, qd, qdd, gravity=None, f_ext=None):
    """
    Inverse dynamics tau = B(q) qdd + C(q, qd) qd + F_v qd + F_s sgn(qd) + g(q) + J^T f_ext.

    ``q, qd, qdd``: shape (n,) or (N, n).  ``gravity``: world-frame gravity vector (default: the
    model's).  ``f_ext``: the wrench [force; moment] that the end effector exerts on the
    environment, world frame, moment about the tool point, shape (6,) or (N, 6).
    Returns tau with the shape of q.
    """
    if gravity is None and f_ext is None:
        return bound(model).rnea(q, qd, qdd)       # (with the further friction terms)
    return adding_coupling(model, adding_extra_friction(
        model, lambda q, qd, qdd: rnea_checked(model, q, qd, qdd, gravity, f_ext),
        gravity_torques))(q, qd, qdd)


def gravity_torques(model, q, gravity=None):
    """g(q): the joint torques that hold the robot against gravity (Siciliano et al., 7.39)."""
    if gravity is None:
        return bound(model).gravity_torques(q)
    return rnea_checked(model, q, None, None, gravity, None)


def nonlinear_effects(model, q, qd, gravity=None):
    """n(q, qd) = C qd + F_v qd + F_s sgn(qd) + g(q) (Siciliano et al. 2009, eq. 7.116, h_e 0)."""
    (q, qd), _ = joint_arrays(model, q=q, qd=qd)
    return rnea(model, q, qd, np.zeros_like(q), gravity=gravity)
