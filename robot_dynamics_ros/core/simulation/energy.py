"""Mechanical energy of a robot state: the quantity an unforced frictionless run conserves."""
from __future__ import annotations

import numpy as np

from ..algorithms.mass import mass_matrix
from ..algorithms.kinematics import forward_kinematics
from ..inputs import joint_arrays


def potential_energy(model, q) -> np.ndarray:
    """
    U(q) = -sum_i m_i g . p_Ci, world centres of mass from forward kinematics.

    Siciliano et al. 2009, eq. 7.36.

    The rotors' masses are part of the link masses (Siciliano et al. 2009's convention), so this is
    all of U. Shape () for q (n,), (N,) for a batch.
    """
    (q,), _ = joint_arrays(model, q=q)
    frames = forward_kinematics(model, q)[..., 1:, :, :]
    com = np.einsum("...nij,nj->...ni", frames[..., :3, :3], model.com) + frames[..., :3, 3]
    return -np.einsum("n,...ni,i->...", model.mass, com, model.gravity)


def kinetic_energy(model, q, qd) -> np.ndarray:
    """T = 1/2 qd^T B(q) qd, links and spinning rotors (Siciliano et al. 2009, eqs. 7.32-7.33)."""
    (q, qd), _ = joint_arrays(model, q=q, qd=qd)
    return 0.5 * np.einsum("...i,...ij,...j->...", qd, mass_matrix(model, q), qd)


def mechanical_energy(model, q, qd) -> np.ndarray:
    """T + U (Siciliano et al. 2009, eqs. 7.34-7.37): constant in unforced frictionless motion."""
    return kinetic_energy(model, q, qd) + potential_energy(model, q)
