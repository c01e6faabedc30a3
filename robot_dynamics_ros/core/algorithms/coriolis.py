"""
The Coriolis and centrifugal matrix C(q, qd), Christoffel choice.

Siciliano et al. 2009, eqs. 7.44-7.46.

C is assembled from world-frame spatial quantities (``spatial.py``) with composite sums over the
links outboard of each joint, so each entry is one small product; it is O(n^2) per configuration
and vectorised over a batch.

Motors (Siciliano et al. 2009, eqs. 7.22-7.30): rotor i on link i-1 spinning at k_r qd_i about
joint axis z_i, its locked inertia already in link i-1, adds kinetic energy::

    T_m,i = 1/2 I_m (w_{i-1} . z_i + k_r qd_i)^2 - 1/2 I_m (w_{i-1} . z_i)^2,

i.e. k_r^2 I_m on the diagonal and k_r I_m z_i . z_j off it (Siciliano et al. 2009, Example 7.2's
b12 term).
"""
from __future__ import annotations

import numpy as np

from ..inputs import joint_arrays
from .spatial import chain_state, force_cross_bar, link_velocities, motion_cross


def _body_christoffel(M, V, S, Sdot) -> np.ndarray:
    """
    J^T (M Jdot + B(V) J) for bodies with inertia M, velocity V and Jacobian columns S, Sdot.

    B(V) = 1/2 [(V x*) M - M (V x) + (M V) x-bar*] makes C qd the Coriolis/centrifugal force and
    C + C^T = Bdot (Echeandia and Wensing 2021), i.e. C is the Christoffel choice (Siciliano et al.
    2009, eqs. 7.44-7.46).
    """
    Vx = motion_cross(V)
    Bv = 0.5 * (-np.swapaxes(Vx, -1, -2) @ M - M @ Vx
                + force_cross_bar(np.einsum("...ab,...b->...a", M, V)))
    return M @ Sdot + Bv @ S


def coriolis_matrix(model, q, qd) -> np.ndarray:
    """
    Return C(q, qd) from the Christoffel symbols (Siciliano et al. 2009, eqs. 7.44-7.46).

    Bdot - 2C is skew-symmetric and C(q, qd) qd + g(q) + friction = nonlinear_effects(q, qd).
    Shape (n, n) or (N, n, n).
    """
    (q, qd), _ = joint_arrays(model, q=q, qd=qd)
    st = chain_state(model, q)
    n = model.n
    V = link_velocities(st, qd)
    V_parent = np.concatenate([np.zeros_like(V[..., :1, :]), V[..., :-1, :]], axis=-2)
    # d/dt S_j = V_{j-1} x S_j
    Sdot = np.einsum("...iab,...ib->...ia", motion_cross(V_parent), st.S)
    # C_ij = S_i . [Ic_m Sdot_j + Bc_m S_j], m = max(i, j); Bc_m = sum_{k >= m} B(V_k, M_k).
    Vx = motion_cross(V)
    h = np.einsum("...kab,...kb->...ka", st.inertia, V)
    Bv = 0.5 * (-np.swapaxes(Vx, -1, -2) @ st.inertia - st.inertia @ Vx + force_cross_bar(h))
    Bc = np.flip(np.cumsum(np.flip(Bv, axis=-3), axis=-3), axis=-3)
    A = (np.einsum("...mab,...jb->...mja", st.composite, Sdot)
         + np.einsum("...mab,...jb->...mja", Bc, st.S))
    m_idx = np.maximum.outer(np.arange(n), np.arange(n))
    j_idx = np.broadcast_to(np.arange(n), (n, n))
    C = np.einsum("...ia,...ija->...ij", st.S, A[..., m_idx, j_idx, :])
    if model.has_motors:
        C = C + _rotor_coriolis(model, st, qd, V_parent, Sdot)
    return C


def _rotor_coriolis(model, st, qd, V_parent, Sdot) -> np.ndarray:
    """
    Return the Christoffel terms of the spinning rotors.

    A rotor body (inertia I_m z z^T, Jacobian of link i-1 plus k_r times joint i's screw) minus
    the same inertia locked to link i-1.
    """
    ch = model.chain
    n = model.n
    C = np.zeros(qd.shape + (n,))
    for i in range(1, n):      # rotor 1 sits on the fixed base: constant inertia, no C term
        Im, kr = ch.rotor_inertia[i], ch.gear_ratio[i]
        if Im == 0.0:
            continue
        z, p = st.axes[..., i, :], st.origins[..., i, :]
        M = np.zeros(z.shape[:-1] + (6, 6))
        M[..., :3, :3] = Im * np.einsum("...a,...b->...ab", z, z)
        screw = np.concatenate([z, np.cross(p, z)], axis=-1)
        S = np.zeros(st.S.shape)
        S[..., :i, :] = st.S[..., :i, :]
        Sd = np.zeros(st.S.shape)
        Sd[..., :i, :] = Sdot[..., :i, :]
        V_locked = V_parent[..., i, :]
        locked = _body_christoffel(M, V_locked, np.swapaxes(S, -1, -2), np.swapaxes(Sd, -1, -2))
        S[..., i, :] = kr * screw
        Sd[..., i, :] = kr * np.einsum("...ab,...b->...a", motion_cross(V_locked), screw)
        V_rotor = V_locked + kr * qd[..., i, None] * screw
        spinning = _body_christoffel(M, V_rotor, np.swapaxes(S, -1, -2), np.swapaxes(Sd, -1, -2))
        S_rows = S  # rows of J^T for the spinning rotor; the locked one has column i zero
        S_locked = S.copy()
        S_locked[..., i, :] = 0.0
        C = (C + np.einsum("...ia,...aj->...ij", S_rows, spinning)
             - np.einsum("...ia,...aj->...ij", S_locked, locked))
    return C
