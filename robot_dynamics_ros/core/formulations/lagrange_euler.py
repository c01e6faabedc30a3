"""
Lagrange-Euler with 4x4 homogeneous matrices.

Milićević et al., eqs. 2.1-2.15; Turney et al. 1980, Sect. 2.

Standard DH, i-1A_i = Rz(theta) Tz(d) Tx(a) Rx(alpha) (Milićević et al., eq. 2.1), 0A_i = 0A_1 ...
i-1A_i, and (Milićević et al., eqs. 2.1-2.15; corrections in doc/references.md)::

    U_ij  = d 0A_i / dq_j   = 0A_{j-1} Q_j j-1A_i                          (j <= i, else 0)
    U_ijk = d U_ij / dq_k   = 0A_{j-1} Q_j j-1A_{k-1} Q_k k-1A_i           (i >= k >= j;
                                                                            symmetric in j, k)
    J_i = ∫ r̃ r̃ᵀ dm = [[½ tr(I_O) E - I_O, m s], [m sᵀ, m]]                (TML, eq. 1.28)

with Q = d/dq of the joint's generator (rotation about z, or translation along z), J_i the
pseudo-inertia of link i about o_i, and

    tau = D(q) qdd + h(q, qd) + c(q)                                       (2.6)
    D_ik  = sum_{j >= max(i,k)} Tr(U_jk J_j U_jiᵀ)                         (2.11)
    h_ikm = sum_{j >= max(i,k,m)} Tr(U_jkm J_j U_jiᵀ)                      (2.13)
    h_i   = sum_km h_ikm qd_k qd_m                                         (2.14)
    c_i   = -sum_{j >= i} m_j g U_ji j r̄_j                                 (2.15; 2.4 prints "+")

g = (g_x, g_y, g_z, 0) is the actual gravity (pointing down) and j r̄_j = (s_j, 1).  Traces are
taken as Tr(X J Uᵀ) = sum(X * (U J)) with U J formed once per (j, i) (J is symmetric).  The
end-effector wrench adds J^T f_ext with the tool-point Jacobian built from the same U_nj:
linear column (U_nj p̃_tool)[:3], angular column vee(U_nj[:3,:3] 0R_nᵀ).

This is the O(n^4) evaluation (Milićević et al., Table 3; Turney et al. 1980, Sect. 2 on why it is
slow); h_ikm equals the Christoffel symbols of the first kind of D (checked in the tests).
"""
from __future__ import annotations

import numpy as np

from ..model.inertia import parallel_axis
from ._common import cos_sin, joint_angles, prepare, standard_view, translation_standard

view_of = standard_view

Q_REVOLUTE = np.array([[0.0, -1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0],
                       [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
Q_PRISMATIC = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0],
                        [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]])


def link_transform(view, i, ct, st, d) -> np.ndarray:
    """i-1A_i (Milićević et al., eq. 2.1; its translation: ``_common.translation_standard``)."""
    ca, sa = view.cos_alpha[i], view.sin_alpha[i]
    px, py, pz = translation_standard(view, i, ct, st, d)
    return np.array([[ct, -st * ca, st * sa, px],
                     [st, ct * ca, -ct * sa, py],
                     [0.0, sa, ca, pz],
                     [0.0, 0.0, 0.0, 1.0]])


def pseudo_inertia(view, i) -> np.ndarray:
    """Pseudo-inertia J_i (Milićević et al., Sect. 2; Turney et al. 1980, eqs. 1.24-1.28)."""
    m, s = view.mass[i], view.com[i]
    I_o = parallel_axis(view.inertia[i], m, s)
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(I_o) * np.eye(3) - I_o
    J[:3, 3] = J[3, :3] = m * s
    J[3, 3] = m
    return J


def _trace(X, UJ):
    """Tr(X J Uᵀ) given UJ = U J (J symmetric)."""
    return (X * UJ).sum()


class _Kinematics:
    """0A_i, j-1A_i, U_ij and U_ijk for one configuration (indices 1-based as in the paper)."""

    def __init__(self, view, q):
        n = self.n = view.n
        theta, d = joint_angles(view, q)
        A = [None] + [link_transform(view, i, *cos_sin(theta[i]), d[i]) for i in range(n)]
        self.Q = [None] + [Q_PRISMATIC if p else Q_REVOLUTE for p in view.prismatic]
        # chain[j][i] = jA_i for 0 <= j <= i <= n (jA_j = E).
        self.chain = [[None] * (n + 1) for _ in range(n + 1)]
        for j in range(n + 1):
            self.chain[j][j] = np.eye(4)
            for i in range(j + 1, n + 1):
                self.chain[j][i] = self.chain[j][i - 1] @ A[i]
        self.U = {(i, j): self.chain[0][j - 1] @ self.Q[j] @ self.chain[j - 1][i]
                  for i in range(1, n + 1) for j in range(1, i + 1)}
        self._U2 = {}

    def U2(self, i, j, k):
        """U_ijk (Milićević et al., Sect. 2), 0 unless i >= j, k; computed once (U_ijk = U_ikj)."""
        j, k = min(j, k), max(j, k)
        key = (i, j, k)
        if key not in self._U2:
            c, Q = self.chain, self.Q
            self._U2[key] = c[0][j - 1] @ Q[j] @ c[j - 1][k - 1] @ Q[k] @ c[k - 1][i]
        return self._U2[key]


def terms(view, inp):
    """D (n x n), h_ikm (n x n x n), c (n,) and J^T f_ext (n,) for one configuration."""
    n = view.n
    kin = _Kinematics(view, inp.q)
    J = [None] + [pseudo_inertia(view, i) for i in range(n)]
    UJ = {(j, i): kin.U[j, i] @ J[j] for (j, i) in kin.U}               # U_ji J_j

    D = np.empty((n, n), dtype=object)
    for i in range(1, n + 1):
        for k in range(i, n + 1):                                         # D symmetric (eq. 2.13)
            D[i - 1, k - 1] = D[k - 1, i - 1] = sum(_trace(kin.U[j, k], UJ[j, i])
                                                    for j in range(k, n + 1))

    H = np.empty((n, n, n), dtype=object)
    for i in range(1, n + 1):
        for k in range(1, n + 1):
            for m in range(1, n + 1):
                H[i - 1, k - 1, m - 1] = sum(_trace(kin.U2(j, k, m), UJ[j, i])
                                             for j in range(max(i, k, m), n + 1))

    g = np.append(inp.gravity, 0.0)
    r_bar = [None] + [np.append(view.com[j], 1.0) for j in range(n)]
    c = np.array([-sum(view.mass[j - 1] * (g @ (kin.U[j, i] @ r_bar[j])) for j in range(i, n + 1))
                  for i in range(1, n + 1)], dtype=object)

    wrench = np.zeros(n)
    if inp.force is not None:
        R_n = kin.chain[0][n][:3, :3]
        f, mu = R_n @ inp.force, R_n @ inp.moment
        tool = np.append(view.tool_point, 1.0)
        for j in range(1, n + 1):
            Unj = kin.U[n, j]
            W = Unj[:3, :3] @ R_n.T                                       # skew(angular column)
            wrench[j - 1] = (Unj @ tool)[:3] @ f + np.array([W[2, 1], W[0, 2], W[1, 0]]) @ mu
    return D, H, c, wrench


def torques(view, inp) -> list:
    """Return tau of eq. 2.5 for one configuration (entries may be counting scalars)."""
    D, H, c, wrench = terms(view, inp)
    h = np.array([inp.qd @ H[i] @ inp.qd for i in range(view.n)])
    return list(D @ inp.qdd + h + c + wrench)


def _terms(model, q, qd=None, gravity=None):
    view = view_of(model)
    zeros = np.zeros(model.n)
    return terms(view, prepare(model, view, q, zeros if qd is None else qd, zeros, gravity))


def inverse_dynamics(model, q, qd, qdd, gravity=None, f_ext=None) -> np.ndarray:
    """
    Return the rigid-body tau(q, qd, qdd) + J^T f_ext.

    f_ext as for ``rnea`` (world, about the tool point).
    """
    view = view_of(model)
    return np.array(torques(view, prepare(model, view, q, qd, qdd, gravity, f_ext)), dtype=float)


def mass_matrix(model, q) -> np.ndarray:
    """D(q), eq. 2.11."""
    return _terms(model, q)[0].astype(float)


def christoffel(model, q) -> np.ndarray:
    """h_ikm(q), eq. 2.14, shape (n, n, n): h_i = qdᵀ h_i.. qd."""
    return _terms(model, q)[1].astype(float)


def coriolis_terms(model, q, qd) -> np.ndarray:
    """h(q, qd), eq. 2.13: the Coriolis and centrifugal torques."""
    H = christoffel(model, q)
    qd = np.asarray(qd, dtype=float)
    return np.einsum("ikm,k,m->i", H, qd, qd)


def gravity_terms(model, q, gravity=None) -> np.ndarray:
    """c(q), eq. 2.15 (gravity: world vector, default the model's)."""
    return _terms(model, q, gravity=gravity)[2].astype(float)
