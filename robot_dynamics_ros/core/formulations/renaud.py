"""
Renaud's Newton-Euler with augmented bodies, steps (0)-(10) (Renaud 1987, extrinsic calculation).

Modified DH frames (Khalil-Kleinfinger): frame i on joint axis i, T_{i-1,i} = Rx(alpha_{i-1})
Tx(a_{i-1}) Rz(theta_i) Tz(r_i).  The model's internal chain ``model.chain`` is exactly this form
for both file conventions (a standard-DH file is converted once in ``core/model.py`` by shifting
(a, alpha) down one row and re-expressing the link inertias), so it is used as is.

Body i has, at O_i (Renaud 1987, intrinsic calculation): mass m^i, first moment u^i = m^i d_ii, and
the inertia tensor k^i = φ^i - m^i d̂_ii d̂_ii.  Augmented body i = body i plus a point of mass
m*(i+1) = sum_{j>i} m^j at O_{i+1} (definition of augmented body i)::

    m*i = m^i + m*(i+1),  u*i = u^i + m*(i+1) p_{i,i+1},
    k*i = k^i - m*(i+1) p̂_{i,i+1} p̂_{i,i+1}.

It is rigid iff joint i+1 is revolute; otherwise step (0) recomputes u*, k* on line.

Recursions (steps (1)-(10), with the corrections of doc/references.md), σ_i = 1 for a
prismatic joint, σ̄_i = 1 - σ_i, Z = (0, 0, 1); α_i is the acceleration of O_i plus g upward::

  forward (ω_0 = a_0 = 0, α_0 = -g):
    (1) ω_i = R_{i,i-1} ω_{i-1} + σ̄ qd Z
    (3) a_i = R_{i,i-1} a_{i-1} + σ̄ (qd ω̂_{i-1} Z + qdd Z)
    (2), (4) b_i = â_i + ω̂_i ω̂_i from the six products δ = ω ⊗ ω
    (5) σ t_i = σ (2 qd ω̂_{i-1} Z + qdd Z)
    (6) r_{i-1} = α_{i-1} + b_{i-1} p_{i-1,i};  α_i = σ t_i + R_{i,i-1} r_{i-1}
  backward (e_{n+1} = f_{n+1}, n_{n+1}: the wrench the hand exerts on the environment at O_{n+1}):
    (7) e_i = e_{i+1} + b_i u*i + σ m*i t_i            (8) σ f_i = σ (e_i + m*i r_{i-1})
    (9) n_i = n_{i+1} + k*i a_i + ω̂_i (k*i ω_i) + û*i α_i + p̂_{i,i+1} e_{i+1}
    (10) Γ_i = Zᵀ (σ̄ n_i + σ f_i);  e_i, n_i then go to frame i-1 with R_{i-1,i}.

O_{n+1} is the tool point, so p_{n,n+1} is its position in frame n and m*(n+1) = 0.
"""
from __future__ import annotations

import numpy as np

from ..model.cache import model_constant
from ..model.inertia import parallel_axis
from ._common import (acceleration_tensor, cos_sin, cross, evaluate, joint_angles, modified_view,
                      rotation_modified, skew)

view_of = modified_view


def augmented(mass_after: float, u, k, p):
    """Step (0): first and second moments of augmented body i at O_i (steps 0a-0b)."""
    p_hat = skew(p)
    return u + mass_after * p, k - mass_after * (p_hat @ p_hat)


def _constants(view):
    """
    Return m*i, u^i, k^i, and the augmented u*, k* of the bodies followed by a revolute joint.

    Computed once per model (view).
    """
    return model_constant(view, "renaud_constants", _build_constants)


def _build_constants(view):
    n = view.n
    m_star = np.append(np.cumsum(view.mass[::-1])[::-1], 0.0)        # m*1..m*n, m*(n+1) = 0
    u = [view.mass[i] * view.com[i] for i in range(n)]
    k = [parallel_axis(view.inertia[i], view.mass[i], view.com[i]) for i in range(n)]
    rigid = [None] * n
    for i in range(n):
        if i == n - 1:
            rigid[i] = augmented(0.0, u[i], k[i], view.tool_point)
        elif not view.prismatic[i + 1]:
            rigid[i] = augmented(m_star[i + 1], u[i], k[i], _p_next(view, i, view.d0[i + 1]))
    return m_star, u, k, rigid


def _p_next(view, i, r_next):
    """
    Return p_{i,i+1}(i) = (a_i, -r_{i+1} sin alpha_i, r_{i+1} cos alpha_i).

    From Renaud 1987's T_{i-1,i}.

    i is the 0-based row.
    """
    return np.array([view.a[i + 1], -r_next * view.sin_alpha[i + 1],
                     r_next * view.cos_alpha[i + 1]])


def augmented_parameters(model, q) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """
    m*i, u*i (n x 3) and k*i (n x 3 x 3) of the augmented bodies at q, in frames F_i (step 0).

    Only bodies followed by a prismatic joint depend on q (definition of augmented body i).
    """
    view = view_of(model)
    m_star, u, k, rigid = _constants(view)
    _, r = joint_angles(view, np.asarray(q, dtype=float))
    star = [rigid[i] if rigid[i] is not None else
            augmented(m_star[i + 1], u[i], k[i], _p_next(view, i, r[i + 1]))
            for i in range(view.n)]
    return m_star[:-1].copy(), np.array([s[0] for s in star]), np.array([s[1] for s in star])


def torques(view, inp) -> list:
    """Γ of steps (0)-(10) for one configuration (entries may be counting scalars)."""
    n = view.n
    m_star, u, k, rigid = _constants(view)
    theta, r = joint_angles(view, inp.q)
    R = [rotation_modified(*cos_sin(theta[i]), view.cos_alpha[i], view.sin_alpha[i])
         for i in range(n)]
    # p_{i-1,i}(i-1) = P_{i-1,i} for i = 1..n, and p_{n,n+1} = the tool point.
    P = [np.array([view.a[i], -r[i] * view.sin_alpha[i], r[i] * view.cos_alpha[i]])
         for i in range(n)]
    P.append(view.tool_point)
    # Step (0): augmented moments, on line only where the next joint is prismatic.
    star = [rigid[i] if rigid[i] is not None else augmented(m_star[i + 1], u[i], k[i], P[i + 1])
            for i in range(n)]

    # Forward recursion, steps (1)-(6).
    w, a, alpha, b = np.zeros(3), np.zeros(3), -inp.gravity, np.zeros((3, 3))
    w_, a_, alpha_, b_, t_, r_ = [], [], [], [], [], []
    for i in range(n):
        Rt, qd, qdd = R[i].T, inp.qd[i], inp.qdd[i]
        r_prev = alpha + b @ P[i]                                  # (6a) r_{i-1}(i-1)
        w_prev = Rt @ w                                            # (1a)
        w_hat_z = np.array([w_prev[1], -w_prev[0], 0.0])           # ω̂_{i-1}(i) Z
        a = Rt @ a                                                 # (3a)
        t = None
        if view.prismatic[i]:
            w = w_prev
            t = 2.0 * qd * w_hat_z + np.array([0.0, 0.0, qdd])     # (5)
        else:
            w = w_prev + np.array([0.0, 0.0, qd])                  # (1b)
            a = a + qd * w_hat_z + np.array([0.0, 0.0, qdd])       # (3b)
        b = acceleration_tensor(w, a)                                         # (2), (4)
        r_in_i = Rt @ r_prev                                       # (6b)
        alpha = r_in_i if t is None else t + r_in_i                # (6c)
        w_.append(w), a_.append(a), alpha_.append(alpha)
        b_.append(b), t_.append(t), r_.append(r_in_i)

    # Backward recursion, steps (7)-(10).
    e_next = np.zeros(3) if inp.force is None else inp.force      # e_{n+1}(n) = f_{n+1}
    n_next = np.zeros(3) if inp.moment is None else inp.moment    # n_{n+1}(n), about O_{n+1}
    tau = [0.0] * n
    for i in range(n - 1, -1, -1):
        u_s, k_s = star[i]
        e = e_next + b_[i] @ u_s                                   # (7a)
        if view.prismatic[i]:
            e = e + m_star[i] * t_[i]
        n_i = (n_next + k_s @ a_[i] + cross(w_[i], k_s @ w_[i]) + cross(u_s, alpha_[i])
               + cross(P[i + 1], e_next))                          # (9a)
        if view.prismatic[i]:
            tau[i] = e[2] + m_star[i] * r_[i][2]                   # (8), (10): Zᵀ f_i
        else:
            tau[i] = n_i[2]                                        # (10): Zᵀ n_i
        e_next, n_next = R[i] @ e, R[i] @ n_i                      # (7b), (9b)
    return tau


def inverse_dynamics(model, q, qd, qdd, gravity=None, f_ext=None) -> np.ndarray:
    """Return the rigid-body Γ(q, qd, qdd) + J^T f_ext (f_ext as for ``rnea``)."""
    return evaluate(torques, view_of, model, q, qd, qdd, gravity, f_ext)
