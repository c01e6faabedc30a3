"""
Recursive Newton-Euler in link coordinates: FGL Table 2 = Luh-Walker-Paul (standard DH).

Milićević et al., Table 2 (rebuilt from the damaged table and checked numerically), the same
recursion as Luh, Walker & Paul 1980 (Asada & Slotine 1986, Sect. 5.3, "LWP in link coordinates")
and Siciliano et al. 2009, eqs. 7.107-7.114 without rotors.  Every vector of link i is kept in
frame i, so the inertia ^iI_i, the centre of mass ^is_i and ^ip_i* = (a_i, d_i sin alpha_i, d_i cos
alpha_i) are constants (for a prismatic joint d_i = q_i) and the cost is linear in n (Milićević et
al., Sect. 3).

Gravity is an upward base acceleration, v̇_0 = -g (Milićević et al., Table 2; Siciliano et al.
2009, Sect. 7.5.2).  The end-effector wrench enters as f_{n+1}, n_{n+1} in frame n (moment about
o_n), as the wrench the hand exerts on the environment (h_e of Siciliano et al. 2009, eq. 7.42).
The moment arrangement of Milićević et al., Table 2, p × f_{i+1} + (p + s) × F_i, equals LWP's -s ×
f_{i+1} + (p + s) × f_i.
"""
from __future__ import annotations

import numpy as np

from ._common import (cos_sin, cross, dot, evaluate, joint_angles, rotation_standard,
                      standard_view, translation_in_link)

view_of = standard_view
Z0 = np.array([0.0, 0.0, 1.0])


def torques(view, inp) -> list:
    """Return tau of Milićević et al., Table 2, for one configuration (entries may be counting)."""
    n = view.n
    theta, d = joint_angles(view, inp.q)
    R_prev, p_star, z_axis = [], [], []      # iR_{i-1}, ^ip_i*, iR_{i-1} z0 (constants but d)
    for i in range(n):
        ct, st = cos_sin(theta[i])
        ca, sa = view.cos_alpha[i], view.sin_alpha[i]
        R_prev.append(rotation_standard(ct, st, ca, sa).T)
        p_star.append(translation_in_link(view, i, d[i]))
        z_axis.append(np.array([0.0, sa, ca]))

    # Forward pass, i = 1..n (Milićević et al., Table 2; Siciliano et al. 2009, eqs. 7.107-7.110).
    w, dw, dv = np.zeros(3), np.zeros(3), -inp.gravity
    w_, dw_, a_com = [], [], []
    for i in range(n):
        R, p, qd, qdd = R_prev[i], p_star[i], inp.qd[i], inp.qdd[i]
        if view.prismatic[i]:
            w_new, dw_new = R @ w, R @ dw
            dv = (R @ (Z0 * qdd + dv) + cross(dw_new, p) + 2.0 * cross(w_new, z_axis[i] * qd)
                  + cross(w_new, cross(w_new, p)))
        else:
            w_new = R @ (w + Z0 * qd)
            dw_new = R @ (dw + Z0 * qdd + cross(w, Z0 * qd))
            dv = cross(dw_new, p) + cross(w_new, cross(w_new, p)) + R @ dv
        w, dw = w_new, dw_new
        s = view.com[i]
        w_.append(w), dw_.append(dw)
        a_com.append(cross(dw, s) + cross(w, cross(w, s)) + dv)          # ^i ā_i

    # Backward pass, i = n..1: f_{n+1}, n_{n+1} in frame n, moment about o_n.
    f = np.zeros(3) if inp.force is None else inp.force
    moment = np.zeros(3) if inp.moment is None else inp.moment + cross(view.tool_point, inp.force)
    tau = [0.0] * n
    for i in range(n - 1, -1, -1):
        I, p, s, w, dw = view.inertia[i], p_star[i], view.com[i], w_[i], dw_[i]
        F = view.mass[i] * a_com[i]
        if i < n - 1:                                  # iR_{i+1} = (i+1 R_i)^T, nR_{n+1} = E
            f, moment = R_prev[i + 1].T @ f, R_prev[i + 1].T @ moment
        moment = moment + cross(p, f) + cross(p + s, F) + I @ dw + cross(w, I @ w)   # ^in_i
        f = f + F                                                             # ^if_i
        tau[i] = dot(f if view.prismatic[i] else moment, z_axis[i])
    return tau


def inverse_dynamics(model, q, qd, qdd, gravity=None, f_ext=None) -> np.ndarray:
    """Return the rigid-body tau(q, qd, qdd) + J^T f_ext (f_ext as for ``rnea``)."""
    return evaluate(torques, view_of, model, q, qd, qdd, gravity, f_ext)
