"""
Turney-Mudge-Lee's modified Newton-Euler (Turney et al. 1980, Sect. 5, eqs. 5.1-5.2; standard DH).

The link-coordinate N-E of Turney et al. 1980, eqs. 3.15-3.20 (Luh-Walker-Paul) with two changes
(their Sect. 5):

* the matrix A_i = ω ωᵀ - (ωᵀω) E + α̂ (Turney et al. 1980, Sect. 5; = Renaud's b_i) gives every
  acceleration of a point of link i from one product, A_i b = α × b + ω × (ω × b);
* moments are taken with K_i = ∫ρ ρᵀ dm, the second moment of link i about o_{i-1} in frame i,
  K_i = J_i + m(r_i r̄_iᵀ + r̄_i r_iᵀ) + m r_i r_iᵀ, so that::

      f_i = m A_i (r̄_i + r_i) + m a'_i + R f_{i+1}                              (5.1)
      n_i = axial(A_i K_i) + m (r̄_i + r_i) × a'_i + r_i × R f_{i+1} + R n_{i+1}   (5.2)

  with axial(X) = (X_zy - X_yz, X_xz - X_zx, X_yx - X_xy) = ∫ρ × (A ρ) dm.  (The order printed in
  Turney et al. 1980 gives wrong torques; checked numerically, see doc/references.md.)

Here r_i = ^ip_i* (o_{i-1} -> o_i in frame i), r̄_i the centre of mass from o_i, J_i the 3x3
block of the pseudo-inertia about o_i (Turney et al. 1980, eq. 1.26), and a'_i the acceleration of
the point of link i at o_{i-1}: R a_{i-1} for a revolute joint (Turney et al. 1980, eq. 5.1).

TML treat revolute joints only.  Extension to prismatic joints (ours, same derivation): the point
of link i at o_{i-1} slides, a'_i = R(a_{i-1} + z0 qdd_i) + 2 ω_i × (R z0) qd_i, and r_i, hence
K_i and m(r̄_i + r_i), depend on q_i and are formed on line (as Renaud's step (0), Renaud 1987).
"""
from __future__ import annotations

import numpy as np

from ..model.cache import model_constant
from ..model.inertia import parallel_axis
from ._common import (acceleration_tensor, cos_sin, cross, dot, evaluate, joint_angles,
                      rotation_standard, standard_view, translation_in_link)

view_of = standard_view
Z0 = np.array([0.0, 0.0, 1.0])


def axial_of_product(A, K) -> np.ndarray:
    """axial(A K) = ∫ρ × (Aρ) dm, forming only the six entries of A K it needs."""
    e = lambda r, c: A[r, 0] * K[0, c] + A[r, 1] * K[1, c] + A[r, 2] * K[2, c]  # noqa: E731
    return np.array([e(2, 1) - e(1, 2), e(0, 2) - e(2, 0), e(1, 0) - e(0, 1)])


def second_moment_about_origin(view, i) -> np.ndarray:
    """J_i = ∫ d dᵀ dm about o_i, frame i (Turney et al. 1980, eq. 1.26 for a full tensor)."""
    I_o = parallel_axis(view.inertia[i], view.mass[i], view.com[i])
    return 0.5 * np.trace(I_o) * np.eye(3) - I_o


def _constants(view) -> list:
    """J_i of every link, once per model (view)."""
    return model_constant(view, "tml_second_moments",
                          lambda v: [second_moment_about_origin(v, i) for i in range(v.n)])


def torques(view, inp) -> list:
    """Return tau of Turney et al. 1980, eqs. 3.15-3.16 and 5.1-5.2, for one configuration."""
    n = view.n
    J = _constants(view)
    theta, d = joint_angles(view, inp.q)
    R_prev, r_, z_axis = [], [], []
    for i in range(n):
        ct, st = cos_sin(theta[i])
        ca, sa = view.cos_alpha[i], view.sin_alpha[i]
        R_prev.append(rotation_standard(ct, st, ca, sa).T)              # R_{i-1}^i
        r_.append(translation_in_link(view, i, d[i]))                 # r_i (TML, eq. 1.14)
        z_axis.append(np.array([0.0, sa, ca]))

    # Forward pass (Turney et al. 1980, eqs. 3.15, 3.16, 5.1).
    w, dw, a = np.zeros(3), np.zeros(3), -inp.gravity               # a_0: 9.8 upward (eq. 3.15)
    A_, a_link = [], []
    for i in range(n):
        R, qd, qdd = R_prev[i], inp.qd[i], inp.qdd[i]
        if view.prismatic[i]:
            w, dw = R @ w, R @ dw
            a_pt = R @ (a + Z0 * qdd) + 2.0 * cross(w, z_axis[i] * qd)
        else:
            w, dw = R @ (w + Z0 * qd), R @ (dw + Z0 * qdd + cross(w, Z0 * qd))
            a_pt = R @ a
        A = acceleration_tensor(w, dw)                                  # A_i
        a = A @ r_[i] + a_pt                                           # a_i (5.1)
        A_.append(A), a_link.append(a_pt)

    # Backward pass (Turney et al. 1980, eqs. 5.1, 5.2), f_{n+1}, n_{n+1} in frame n, moment about
    # o_n.
    f = np.zeros(3) if inp.force is None else inp.force
    moment = np.zeros(3) if inp.moment is None else inp.moment + cross(view.tool_point, inp.force)
    tau = [0.0] * n
    for i in range(n - 1, -1, -1):
        m, s, r, A = view.mass[i], view.com[i], r_[i], A_[i]
        if view.prismatic[i]:
            K = J[i] + m * (np.outer(r, s) + np.outer(s, r)) + m * np.outer(r, r)
        else:
            K = J[i] + m * (np.outer(r, s) + np.outer(s, r) + np.outer(r, r))   # constant
        first = m * (s + r)                                            # m(r̄_i + r_i)
        if i < n - 1:
            # R_{i+1}^i f_{i+1}, n_{i+1}
            f, moment = R_prev[i + 1].T @ f, R_prev[i + 1].T @ moment
        moment = axial_of_product(A, K) + cross(first, a_link[i]) + cross(r, f) + moment
        f = A @ first + m * a_link[i] + f
        tau[i] = dot(f if view.prismatic[i] else moment, z_axis[i])
    return tau


def inverse_dynamics(model, q, qd, qdd, gravity=None, f_ext=None) -> np.ndarray:
    """Return the rigid-body tau(q, qd, qdd) + J^T f_ext (f_ext as for ``rnea``)."""
    return evaluate(torques, view_of, model, q, qd, qdd, gravity, f_ext)
