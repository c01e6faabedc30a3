"""
Forward dynamics: the joint accelerations that given torques produce.

Siciliano et al. 2009, eqs. 7.115-7.116.

Two routes, each the other's oracle: the articulated-body algorithm (``aba.py``, O(n), the
default) and qdd = B^{-1} (tau - n(q, qd)) by the composite-rigid-body algorithm and a Cholesky
factorisation (``forward_dynamics_crba``, O(n^3)).  Both include rotors and friction (the terms
beyond F_v, F_s, ``control/friction.py``, subtracted from tau before the ABA solves).
"""
from __future__ import annotations

import numpy as np

from ..control.friction import subtracting_extra_friction
from ..inputs import joint_arrays
from . import compiled, plain
from .crba import mass_matrix
from .rnea import general_arguments, rnea


def forward_dynamics(model, q, qd, tau, f_ext=None) -> np.ndarray:
    """
    Return the joint accelerations qdd = B^{-1} (tau - n(q, qd) - J^T f_ext).

    Siciliano et al. 2009, eqs. 7.115-7.116, by the articulated-body algorithm (Featherstone),
    rotors and friction included.  Shapes (n,) or (N, n).  ``f_ext``: the wrench the end
    effector exerts on the environment, as for ``rnea``.

    Raises ``SingularityError`` where B is singular (a joint that moves no mass or inertia).
    """
    if f_ext is None:
        return compiled.bound(model).forward_dynamics(q, qd, tau)   # (friction's further terms)
    return subtracting_extra_friction(
        model, lambda q, qd, tau: checked(model, q, qd, tau, f_ext))(q, qd, tau)


def checked(model, q, qd, tau, f_ext) -> np.ndarray:
    """Validate the arguments (InputError naming one), then run the ABA."""
    (q, qd, tau), batched = joint_arrays(model, q=q, qd=qd, tau=tau)
    g, wrench = general_arguments(model, q, None, f_ext, batched)
    kernels = compiled.kernels()
    if kernels is None:
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


def forward_dynamics_crba(model, q, qd, tau, f_ext=None) -> np.ndarray:
    """
    Return qdd as :func:`forward_dynamics` does, by B(q) (CRBA) and a Cholesky factorisation.

    O(n^3): the oracle of the articulated-body algorithm.  Raises ``SingularityError`` where
    B is singular.
    """
    (q, qd, tau), _ = joint_arrays(model, q=q, qd=qd, tau=tau)
    rhs = tau - rnea(model, q, qd, np.zeros_like(q), f_ext=f_ext)
    B = mass_matrix(model, q)
    try:
        L = np.linalg.cholesky(B)
    except np.linalg.LinAlgError as exc:  # a valid file can describe joints that move no inertia
        raise compiled.singular(model) from exc
    y = np.linalg.solve(L, rhs[..., None])
    return np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., 0]
