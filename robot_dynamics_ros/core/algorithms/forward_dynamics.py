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
from .checked import aba_checked
from .compiled import singular
from .coupled import coupled_forward
from .mass import mass_matrix
from .rnea import gravity_torques, rnea
from .route import bound


def forward_dynamics(model, q, qd, tau, f_ext=None) -> np.ndarray:
    """
    Return the joint accelerations qdd = B^{-1} (tau - n(q, qd) - J^T f_ext).

    Siciliano et al. 2009, eqs. 7.115-7.116, by the articulated-body algorithm (Featherstone),
    rotors and friction included.  Shapes (n,) or (N, n).  ``f_ext``: the wrench the end
    effector exerts on the environment, as for ``rnea``.

    Raises ``SingularityError`` where B is singular (a joint that moves no mass or inertia).
    """
    if f_ext is None:
        return bound(model).forward_dynamics(q, qd, tau)   # (friction's further terms)
    return coupled_forward(model, subtracting_extra_friction(
        model, lambda q, qd, tau: aba_checked(model, q, qd, tau, f_ext),
        gravity_torques), lambda q: mass_matrix(model, q))(q, qd, tau)


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
        raise singular(model) from exc
    y = np.linalg.solve(L, rhs[..., None])
    return np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., 0]
