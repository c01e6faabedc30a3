"""
Generalized d'Alembert equations (Milićević et al., Sect. 4, eqs. 4.1-4.5), revolute joints only.

Closed-form equations of motion in the base frame (frame 0 of the standard-DH view), keeping the
rotational and translational effects apart (Milićević et al., Sect. 4)::

    sum_j D_ij qdd_j + h_i^tran + h_i^rot + c_i = tau_i                                   (4.1)
    D_ij = sum_{s>=j} (sR0 z_{i-1})ᵀ I_s (sR0 z_{j-1})                          [rotational]
         + sum_{s>=j} m_s [z_{j-1} × (r̄_s - p_{j-1})] · [z_{i-1} × (r̄_s - p_{i-1})] (4.2), i <= j
    h_i^tran = sum_{s>=i} m_s {sum_{k<s} [W_k × (W_k × p_k*) + K_k × p_k*]
                               + W_s × (W_s × c̄_s) + K_s × c̄_s}
               · [z_{i-1} × (r̄_s - p_{i-1})]                                              (4.3)
    h_i^rot  = sum_{s>=i} (sR0 z_{i-1})ᵀ [I_s sR0 K_s + (sR0 W_s) × I_s (sR0 W_s)]        (4.4)
    c_i = -g · [z_{i-1} × sum_{j>=i} m_j (r̄_j - p_{i-1})]                                   (4.5)

with sR0 = sR_0 = 0R_s^T, W_k = sum_{p<=k} qd_p z_{p-1} (angular velocity of link k) and
K_k = sum_{p=2..k} W_{p-1} × qd_p z_{p-1} (its velocity-product angular acceleration);
c̄_s = r̄_s - p_{s-1}; g is the actual gravity vector (pointing down).  Eqs. 4.3-4.4 are garbled
or missing in our copy of Milićević et al. (eqs. 4.3-4.4); these are Fu, Gonzalez & Lee 1987's
forms, checked numerically.  The end-effector
wrench adds J^T f_ext with the Jacobian columns [z_{i-1} × (p_tool - p_{i-1}); z_{i-1}].

Milićević et al. states the method for rotary joints (Sect. 4); a prismatic joint raises
InputError.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ._common import (cos_sin, cross, dot, joint_angles, prepare, rotation_standard, standard_view,
                      translation_standard)

view_of = standard_view


def check_revolute(model) -> None:
    prismatic = [name for name, t in zip(model.joint_names, model.joint_types) if t == "prismatic"]
    if prismatic:
        raise InputError(f"robot '{model.name}': the generalized d'Alembert equations "
                         f"(Milićević et al., Sect. 4) are for revolute joints only; "
                         f"prismatic joint(s) {prismatic}")


def _kinematics(view, q):
    """0R_s, z_{s-1}, p_s (origins, p_0 = 0) and r̄_s (centres of mass) in the base frame."""
    theta, d = joint_angles(view, q)
    R0, z, p, com = [np.eye(3)], [], [np.zeros(3)], []
    for i in range(view.n):
        ct, st = cos_sin(theta[i])
        z.append(R0[i][:, 2])
        p.append(p[i] + R0[i] @ translation_standard(view, i, ct, st, d[i]))
        R0.append(R0[i] @ rotation_standard(ct, st, view.cos_alpha[i], view.sin_alpha[i]))
        com.append(p[i + 1] + R0[i + 1] @ view.com[i])
    return R0, z, p, com


def terms(view, inp):
    """D (n x n), h^tran + h^rot (n,), c (n,) and J^T f_ext (n,) of eqs. 4.1-4.5."""
    n, qd = view.n, inp.qd
    R0, z, p, rbar = _kinematics(view, inp.q)
    inertia = view.inertia
    # Joint axis i-1 as seen in body s (sR0 z_{i-1}) and the lever arms z_{i-1} × (r̄_s - p_{i-1}).
    z_in = [[R0[s + 1].T @ z[i] for s in range(n)] for i in range(n)]
    lever = [[cross(z[i], rbar[s] - p[i]) for s in range(n)] for i in range(n)]

    D = np.empty((n, n), dtype=object)
    for i in range(n):
        for j in range(i, n):
            D[i, j] = D[j, i] = sum(dot(z_in[i][s], inertia[s] @ z_in[j][s])
                                    + view.mass[s] * dot(lever[j][s], lever[i][s])
                                    for s in range(j, n))

    # W_k and K_k (angular velocity and its velocity-product acceleration of link k).
    W, K = [], []
    for k in range(n):
        W.append(z[k] * qd[k] if k == 0 else W[k - 1] + z[k] * qd[k])
        K.append(np.zeros(3) if k == 0 else K[k - 1] + cross(W[k - 1], z[k] * qd[k]))
    p_star = [p[k + 1] - p[k] for k in range(n)]
    # Velocity-product acceleration of the centre of mass of link s (the braces of eq. 4.3).
    acc = []
    for s in range(n):
        c_bar = rbar[s] - p[s]
        chain = sum((cross(W[k], cross(W[k], p_star[k])) + cross(K[k], p_star[k])
                     for k in range(s)), np.zeros(3))
        acc.append(chain + cross(W[s], cross(W[s], c_bar)) + cross(K[s], c_bar))
    h = np.empty(n, dtype=object)
    for i in range(n):
        h_tran = sum(view.mass[s] * dot(acc[s], lever[i][s]) for s in range(i, n))
        h_rot = 0.0
        for s in range(i, n):
            Ws, Ks = R0[s + 1].T @ W[s], R0[s + 1].T @ K[s]
            h_rot = h_rot + dot(z_in[i][s], inertia[s] @ Ks + cross(Ws, inertia[s] @ Ws))
        h[i] = h_tran + h_rot

    g = inp.gravity
    c = np.array([-dot(g, cross(z[i], sum((view.mass[j] * (rbar[j] - p[i]) for j in range(i, n)),
                                          np.zeros(3)))) for i in range(n)], dtype=object)

    wrench = np.zeros(n)
    if inp.force is not None:
        f, mu = R0[n] @ inp.force, R0[n] @ inp.moment
        p_tool = p[n] + R0[n] @ view.tool_point
        wrench = np.array([dot(cross(z[i], p_tool - p[i]), f) + dot(z[i], mu) for i in range(n)])
    return D, h, c, wrench


def torques(view, inp) -> list:
    D, h, c, wrench = terms(view, inp)
    return list(D @ inp.qdd + h + c + wrench)


def inverse_dynamics(model, q, qd, qdd, gravity=None, f_ext=None) -> np.ndarray:
    """Rigid-body tau(q, qd, qdd) + J^T f_ext (revolute joints only; f_ext as for ``rnea``)."""
    check_revolute(model)
    view = view_of(model)
    return np.array(torques(view, prepare(model, view, q, qd, qdd, gravity, f_ext)), dtype=float)


def mass_matrix(model, q) -> np.ndarray:
    """D(q) of eq. 4.2 (revolute joints only)."""
    check_revolute(model)
    view = view_of(model)
    zeros = np.zeros(model.n)
    return terms(view, prepare(model, view, q, zeros, zeros))[0].astype(float)
