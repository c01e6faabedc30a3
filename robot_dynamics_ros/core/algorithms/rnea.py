"""
Inverse dynamics tau = B qdd + C qd + tau_f(q, qd) + g + J^T f_ext, single or batched.

The recursion is ``newton_euler.py`` (Renaud 1987, steps (0)-(10), with the rotor and
friction terms of Siciliano et al. 2009, eqs. 7.111-7.114), on the model's grouped constants, or
on its plain bodies where its DH origins lie far away (``model/bodies.numeric_form``). It runs
compiled by numba when numba is available (``compiled.py``: about a microsecond per call, most of
it numba's dispatch), else as plain Python, on floats for one configuration and on numpy columns
for a batch.  The recursion's rows hold F_v qd + F_s sgn(qd); the friction law's further terms
(F_v2 qd|qd| + F_l |g(q)| sgn(qd), ``control/friction.py``) are added after it, by the bound
functions (``compiled.bound``) and here for a gravity or wrench given, only for a model with them.

The checks of the arguments cost nothing on the common call (float arrays of the right shape,
the model's gravity, no wrench): the compiled driver checks shapes and finiteness itself, and
only a refused call goes through ``inputs.joint_arrays`` for its error message.
"""
from __future__ import annotations

import numpy as np

from ..control.friction import adding_extra_friction
from ..inputs import joint_arrays, vector_argument
from ..model.bodies import numeric_form
from . import compiled, plain


def wrench_in_last_frame(model, q, f_ext, batched):
    """
    Convert f_ext to the force and moment on the last link, internal frame n, about its origin.

    f_ext: wrench [f; mu] exerted BY the end effector ON the environment, world frame, moment
    about the tool point (Siciliano et al. 2009, h_e in eq. 7.42) -> force and moment on the last
    link in internal frame n about its origin (the terminal condition e_{n+1}, n_{n+1} of the
    backward pass), as an array (6,) or (N, 6).
    """
    from .kinematics import internal_frames
    T = model.chain.base @ internal_frames(model, q)[..., -1, :, :]
    R = T[..., :3, :3]
    f_ext = vector_argument(f_ext, 6, "f_ext", q.shape[0] if batched else None)
    f = np.einsum("...ji,...j->...i", R, f_ext[..., :3])
    mu = np.einsum("...ji,...j->...i", R, f_ext[..., 3:])
    mu = mu + np.cross(model.chain.flange[:3, 3], f)
    return np.concatenate([f, mu], axis=-1)


def gravity_in_base(model, gravity):
    """Return the base-frame gravity vector: the model's, or the world-frame ``gravity`` given."""
    if gravity is None:
        return compiled.constants(model)[-1, :3].copy()
    return model.base[:3, :3].T @ vector_argument(gravity, 3, "gravity", None)


def general_arguments(model, q, gravity, f_ext, batched: bool) -> tuple:
    """
    Return the base-frame gravity (3,) and the last link's wrench for the general drivers.

    ``q`` checked; ``gravity``: world frame, None for the model's; ``f_ext``: as for :func:`rnea`.
    """
    g = compiled.kernel_array(gravity_in_base(model, gravity))[0]
    wrench = np.zeros(6) if f_ext is None else wrench_in_last_frame(model, q, f_ext, batched)
    return g, compiled.kernel_array(wrench)


def checked(model, q, qd, qdd, gravity, f_ext) -> np.ndarray:
    """
    Validate the arguments (InputError naming one), then run the recursion.

    ``qd`` or ``qdd`` None: zeros.
    """
    (q, qd, qdd), batched = joint_arrays(model, q=q, qd=qd, qdd=qdd)
    g, wrench = general_arguments(model, q, gravity, f_ext, batched)
    kernels = compiled.kernels()
    if kernels is None:
        return plain.rnea(model, q, qd, qdd, g, wrench)
    q, qd, qdd = (compiled.kernel_array(v) for v in (q, qd, qdd))
    out = np.empty(q.shape)
    c = compiled.constants(model, numeric_form(model))
    if not kernels.rnea_general(c, g, q, qd, qdd, wrench, out):
        raise AssertionError("the compiled RNEA refused checked arguments")
    return out if batched else out[0]


def rnea(model, q, qd, qdd, gravity=None, f_ext=None):
    """
    Inverse dynamics tau = B(q) qdd + C(q, qd) qd + F_v qd + F_s sgn(qd) + g(q) + J^T f_ext.

    ``q, qd, qdd``: shape (n,) or (N, n).  ``gravity``: world-frame gravity vector (default: the
    model's).  ``f_ext``: the wrench [force; moment] that the end effector exerts on the
    environment, world frame, moment about the tool point, shape (6,) or (N, 6).
    Returns tau with the shape of q.
    """
    if gravity is None and f_ext is None:
        return compiled.bound(model).rnea(q, qd, qdd)       # (with the further friction terms)
    return adding_extra_friction(
        model, lambda q, qd, qdd: checked(model, q, qd, qdd, gravity, f_ext))(q, qd, qdd)


def gravity_torques(model, q, gravity=None):
    """g(q): the joint torques that hold the robot against gravity (Siciliano et al., 7.39)."""
    if gravity is None:
        return compiled.bound(model).gravity_torques(q)
    return checked(model, q, None, None, gravity, None)


def nonlinear_effects(model, q, qd, gravity=None):
    """n(q, qd) = C qd + F_v qd + F_s sgn(qd) + g(q) (Siciliano et al. 2009, eq. 7.116, h_e 0)."""
    (q, qd), _ = joint_arrays(model, q=q, qd=qd)
    return rnea(model, q, qd, np.zeros_like(q), gravity=gravity)
