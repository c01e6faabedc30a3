"""
Recursive Newton-Euler in base coordinates (FGL Table 1; Siciliano et al. 2009, eqs. 7.93-7.106).

Milićević et al., Table 1 (rebuilt from the damaged table and checked numerically) without the
viscous b_i qd_i, i.e. Siciliano et al. 2009's base-frame RNEA (7.93)-(7.106) without rotors.  All
vectors are in the base frame (frame 0 of the standard-DH view): z_{i-1}, p_i* = o_i - o_{i-1},
s̄_i, and the inertia I_i = 0R_i ^iI_i 0R_i^T change with q, which is what makes this form dearer
than Table 2 (Milićević et al., Sect. 3).

Backward moment about o_{i-1}: n_i = n_{i+1} + p_i* × f_{i+1} + (p_i* + s̄_i) × F_i + M_i, with
p_i* (not p_{i+1}*) in the second term, because f_{i+1} acts at o_i (checked numerically).
Gravity: v̇_0 = -g (upward).  f_{n+1}, n_{n+1}: the end-effector wrench, moment about o_n.
"""
from __future__ import annotations

import numpy as np

from ._common import (cos_sin, cross, dot, evaluate, joint_angles, rotation_standard,
                      standard_view, translation_standard)

view_of = standard_view


def torques(view, inp) -> list:
    """Return tau of Milićević et al., Table 1, for one configuration (entries may be counting)."""
    n = view.n
    theta, d = joint_angles(view, inp.q)
    # Kinematics in the base frame: 0R_i, z_{i-1}, p_i* = 0R_{i-1} (a cos, a sin, d) (Milićević et
    # al., eq. 2.1).
    R0, z, p_star = [np.eye(3)], [], []
    for i in range(n):
        ct, st = cos_sin(theta[i])
        z.append(R0[i][:, 2])
        p_star.append(R0[i] @ translation_standard(view, i, ct, st, d[i]))
        R0.append(R0[i] @ rotation_standard(ct, st, view.cos_alpha[i], view.sin_alpha[i]))

    # Forward pass, i = 1..n (Milićević et al., Table 1; Siciliano et al. 2009, eqs. 7.93,
    # 7.100-7.102).
    w, dw, dv = np.zeros(3), np.zeros(3), -inp.gravity
    w_, dw_, s_, a_com = [], [], [], []
    for i in range(n):
        zq, p = z[i] * inp.qd[i], p_star[i]
        if view.prismatic[i]:
            dv = z[i] * inp.qdd[i] + cross(dw, p) + 2.0 * cross(w, zq) + cross(w, cross(w, p)) + dv
        else:
            w_new = w + zq
            dw = dw + z[i] * inp.qdd[i] + cross(w, zq)
            w = w_new
            dv = cross(dw, p) + cross(w, cross(w, p)) + dv
        s = R0[i + 1] @ view.com[i]                                   # s̄_i in the base frame
        w_.append(w), dw_.append(dw), s_.append(s)
        a_com.append(cross(dw, s) + cross(w, cross(w, s)) + dv)       # ā_i

    # Backward pass, i = n..1 (Milićević et al., Table 1; Siciliano et al. 2009, eqs. 7.104-7.106).
    Rn = R0[n]
    f = np.zeros(3) if inp.force is None else Rn @ inp.force
    moment = (np.zeros(3) if inp.moment is None
              else Rn @ (inp.moment + cross(view.tool_point, inp.force)))
    tau = [0.0] * n
    for i in range(n - 1, -1, -1):
        I_i = R0[i + 1] @ view.inertia[i] @ R0[i + 1].T              # I_i in the base frame
        w, dw, p = w_[i], dw_[i], p_star[i]
        F = view.mass[i] * a_com[i]
        M = I_i @ dw + cross(w, I_i @ w)
        moment = moment + cross(p, f) + cross(p + s_[i], F) + M
        f = F + f
        tau[i] = dot(f if view.prismatic[i] else moment, z[i])
    return tau


def inverse_dynamics(model, q, qd, qdd, gravity=None, f_ext=None) -> np.ndarray:
    """Return the rigid-body tau(q, qd, qdd) + J^T f_ext (f_ext as for ``rnea``)."""
    return evaluate(torques, view_of, model, q, qd, qdd, gravity, f_ext)
