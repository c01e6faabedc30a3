"""Forward dynamics: accelerations from torques (Siciliano et al. 2009, eq. 7.115)."""
from __future__ import annotations

import numpy as np

from ..errors import SingularityError
from ..inputs import joint_arrays
from .crba import mass_matrix
from .rnea import rnea


def forward_dynamics(model, q, qd, tau, f_ext=None) -> np.ndarray:
    """
    Return the joint accelerations qdd = B^{-1} (tau - n(q, qd) - J^T f_ext).

    Siciliano et al. 2009, eqs. 7.115-7.116, by a Cholesky factorisation of B (rotors and friction
    included). Shapes (n,) or (N, n).

    Raises ``SingularityError`` where B is singular (a joint that moves no mass or inertia).
    """
    (q, qd, tau), _ = joint_arrays(model, q=q, qd=qd, tau=tau)
    rhs = tau - rnea(model, q, qd, np.zeros_like(q), f_ext=f_ext)
    B = mass_matrix(model, q)
    try:
        L = np.linalg.cholesky(B)
    except np.linalg.LinAlgError as exc:  # a valid file can describe joints that move no inertia
        raise SingularityError(f"mass matrix of '{model.name}' is singular at this q (a joint "
                               "moves no mass or inertia, e.g. massless outer links): forward "
                               "dynamics is undefined") from exc
    y = np.linalg.solve(L, rhs[..., None])
    return np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., 0]
