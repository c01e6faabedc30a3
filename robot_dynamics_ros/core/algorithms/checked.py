"""
The checked paths of the dynamics: arguments validated (InputError naming one), then the kernels.

Below the route (``route.py``), which calls these where its fast path refuses a call (for the
error message) or where numba is unavailable, and below the public functions, which call them
with a gravity or a wrench given.  Compiled kernels where numba works (``compiled.py``) and
``compiled.due`` says they pay (route.py's docstring), else the plain-Python texts
(``plain.py``); the friction law's further terms are added above, by the route.
"""
from __future__ import annotations

import numpy as np

from ..inputs import joint_arrays, vector_argument
from ..model.bodies import numeric_form
from . import compiled, plain
from .frames import internal_frames


def wrench_in_last_frame(model, q, f_ext, batched):
    """
    Convert f_ext to the force and moment on the last link, internal frame n, about its origin.

    f_ext: wrench [f; mu] exerted BY the end effector ON the environment, world frame, moment
    about the tool point (Siciliano et al. 2009, h_e in eq. 7.42) -> force and moment on the last
    link in internal frame n about its origin (the terminal condition e_{n+1}, n_{n+1} of the
    backward pass), as an array (6,) or (N, 6).
    """
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


def rnea_checked(model, q, qd, qdd, gravity, f_ext) -> np.ndarray:
    """
    Validate the arguments (InputError naming one), then run the recursion.

    ``rnea.rnea``'s terms without the friction law's further terms; ``qd`` or ``qdd`` None:
    zeros.
    """
    (q, qd, qdd), batched = joint_arrays(model, q=q, qd=qd, qdd=qdd)
    g, wrench = general_arguments(model, q, gravity, f_ext, batched)
    kernels = compiled.due()
    if kernels is None:
        with compiled.charged():
            return plain.rnea(model, q, qd, qdd, g, wrench)
    q, qd, qdd = (compiled.kernel_array(v) for v in (q, qd, qdd))
    out = np.empty(q.shape)
    c = compiled.constants(model, numeric_form(model))
    if not kernels.rnea_general(c, g, q, qd, qdd, wrench, out):
        raise AssertionError("the compiled RNEA refused checked arguments")
    return out if batched else out[0]


def mass_checked(model, q) -> np.ndarray:
    """Validate q (InputError naming it), then compute B(q) (compiled, or plain Python)."""
    (q,), batched = joint_arrays(model, q=q)
    kernels = compiled.due()
    if kernels is None:
        with compiled.charged():
            return plain.mass_matrix(model, q)
    q = compiled.kernel_array(q)
    out = np.empty((q.shape[0], model.n, model.n))
    if not kernels.mass_many(compiled.constants(model, "plain"), q, out):
        raise AssertionError("the compiled CRBA refused checked arguments")
    return out if batched else out[0]


def aba_checked(model, q, qd, tau, f_ext) -> np.ndarray:
    """Validate the arguments (InputError naming one), then run the ABA (no further terms)."""
    (q, qd, tau), batched = joint_arrays(model, q=q, qd=qd, tau=tau)
    g, wrench = general_arguments(model, q, None, f_ext, batched)
    kernels = compiled.due()
    if kernels is None:
        with compiled.charged():
            qdd, ok = plain.forward_dynamics(model, q, qd, tau, g, wrench)
        if not ok:
            raise compiled.singular(model)
        return qdd
    q, qd, tau = (compiled.kernel_array(v) for v in (q, qd, tau))
    out = np.empty(q.shape)
    status = kernels.aba_general(compiled.constants(model, "plain"), g, q, qd, tau, wrench, out)
    if status == 2:
        raise compiled.singular(model)
    if status != 0:
        raise AssertionError("the compiled ABA refused checked arguments")
    return out if batched else out[0]
