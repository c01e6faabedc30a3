"""
Forward dynamics by the articulated-body algorithm: O(n), rotors and friction included.

Featherstone, Rigid Body Dynamics Algorithms (2008), Table 7.1, as spatial_v2's ``FDab.m``: a
forward pass for velocities, the velocity-product accelerations c_i and the bias forces p_i; a
backward pass for the articulated-body inertias I^A_i and bias forces p^A_i, handed to the parent
as I^a = I^A - U U^T / D and p^a = p^A + I^a c + U u / D; a forward pass for the accelerations,
qdd_i = (u_i - U_i^T a^_i) / D_i, a_0 = -gravity (the fictitious upward acceleration of the
base, as in the Newton-Euler recursion).

Vectors are kept as components in each link's internal modified-DH frame i, about its origin O_i
(spatial motion: angular; linear, force: moment; force); spatial inertias are 21 numbers
(``spatial_inertia.py``).  Link i's own inertia at O_i is [[k, u^], [u^T, m E]] from the plain
bodies of ``model/bodies.py`` (u = m c, k the inertia tensor about O_i).

Rotors and friction as the Newton-Euler recursion has them (Siciliano et al., Robotics:
Modelling, Planning and Control, eqs. 7.111-7.114): rotor i on link i-1, spinning at k_r qd_i
about z_i, adds k_r I_m (z_i . wd_{i-1} + k_r qdd_i) to joint i's equation and the reaction
k_r I_m (qdd_i z_i + qd_i w_{i-1} x z_i) to link i-1.  Written into the ABA: U_i = I^A_i S_i +
k_r I_m z_i, D_i = S_i^T I^A_i S_i + k_r^2 I_m, and p^a_i gains k_r I_m qd_i (w_{i-1} x z_i) (z_i
. c_i = 0 for both joint types, so the rotor needs nothing else); friction leaves
u_i = tau_i - F_v qd_i - F_s sgn(qd_i) - S_i^T p^A_i.

The same text runs on Python floats, numpy columns and compiled by numba (``compiled.py``); a
joint whose D_i is not positive (it moves no mass or inertia) makes the mass matrix singular,
which the callers detect from D (``pivots_positive``).
"""
from __future__ import annotations

from .newton_euler import (A, COS_ALPHA, COULOMB, D0, E, GEAR, KXX, KXY, KXZ, KYY, KYZ, KZZ, MASS,
                           PRISMATIC, PX, PY, PZ, ROTOR, SIN_ALPHA, UX, UY, UZ, VISCOUS)
from .spatial_inertia import force_to_parent, joint_velocity, motion_to_child, to_parent

# Columns of a joint's row of the ABA workspace.
(AW_WX, AW_WY, AW_WZ, AW_VX, AW_VY, AW_VZ, AW_PWX, AW_PWY, AW_CT, AW_ST, AW_R) = range(11)
AW_C = 11           # c_i: 6 (angular; linear)
AW_P = 17           # p^A_i: 6 (moment; force)
AW_I = 23           # I^A_i: 21 (spatial_inertia.py)
AW_U = 44           # U_i: 6
AW_D, AW_SU, AW_ACC = 50, 51, 52    # D_i, u_i; the acceleration a_i: 6
AW_PY, AW_PZ = 58, 59               # p_{i-1,i}(i-1) y and z (x: the row's PX)
N_ABA_WORKSPACE = 60


def _link_inertia(row, w):
    """Write link i's spatial inertia at O_i and its bias force w x* (I w) into ``w``."""
    m, ux, uy, uz = row[MASS], row[UX], row[UY], row[UZ]
    kxx, kyy, kzz, kxy, kxz, kyz = row[KXX], row[KYY], row[KZZ], row[KXY], row[KXZ], row[KYZ]
    wx, wy, wz, vx, vy, vz = w[AW_WX], w[AW_WY], w[AW_WZ], w[AW_VX], w[AW_VY], w[AW_VZ]
    inertia = (kxx, kyy, kzz, kxy, kxz, kyz, 0.0, -uz, uy, uz, 0.0, -ux, -uy, ux, 0.0,
               m, m, m, 0.0, 0.0, 0.0)
    for k in range(21):
        w[AW_I + k] = inertia[k]
    # h = I v: (k w + u x v; w x u + m v);  p = (w x h_ang + v x h_lin; w x h_lin)
    hx = kxx * wx + kxy * wy + kxz * wz + (uy * vz - uz * vy)
    hy = kxy * wx + kyy * wy + kyz * wz + (uz * vx - ux * vz)
    hz = kxz * wx + kyz * wy + kzz * wz + (ux * vy - uy * vx)
    gx, gy, gz = wy * uz - wz * uy + m * vx, wz * ux - wx * uz + m * vy, wx * uy - wy * ux + m * vz
    w[AW_P], w[AW_P + 1], w[AW_P + 2] = (wy * hz - wz * hy + (vy * gz - vz * gy),
                                         wz * hx - wx * hz + (vz * gx - vx * gz),
                                         wx * hy - wy * hx + (vx * gy - vy * gx))
    w[AW_P + 3], w[AW_P + 4], w[AW_P + 5] = wy * gz - wz * gy, wz * gx - wx * gz, wx * gy - wy * gx


def velocities(c, q, qd, ct, st, ws):
    """
    Run the first pass, link 1 to n: v_i, c_i, the links' inertias and bias forces.

    ``c``: rows of constants (``newton_euler``, plain bodies); ``ct, st``: cos, sin theta_i.
    """
    wx = wy = wz = vx = vy = vz = 0.0
    for i in range(len(q)):                  # (c may hold more rows than joints: compiled.py)
        row, w = c[i], ws[i]
        ca, sa, cq, sq, qdi = row[COS_ALPHA], row[SIN_ALPHA], ct[i], st[i], qd[i]
        r, px, py, pz = row[D0], row[PX], row[PY], row[PZ]  # O_i in frame i-1
        prismatic = row[PRISMATIC] != 0.0
        if prismatic:               # p = p0 + q (0, -sin alpha, cos alpha) (newton_euler doc)
            r, py, pz = r + q[i], py - sa * q[i], pz + ca * q[i]
        w[AW_PY], w[AW_PZ] = py, pz
        wx, wy, wz, vx, vy, vz = joint_velocity(prismatic, qdi, ca, sa, cq, sq, px, py, pz,
                                                wx, wy, wz, vx, vy, vz)
        # (x and y of w_i and v_i: those of X_i v_{i-1}, S qd being along z)
        w[AW_PWX], w[AW_PWY], w[AW_CT], w[AW_ST], w[AW_R] = wx, wy, cq, sq, r
        if prismatic:               # c = v x S qd: S = (0; z), w x z = (wy, -wx, 0)
            cw = (0.0, 0.0, 0.0, qdi * wy, -(qdi * wx), 0.0)
        else:                       # S = (z; 0)
            cw = (qdi * wy, -(qdi * wx), 0.0, qdi * vy, -(qdi * vx), 0.0)
        for k in range(6):
            w[AW_C + k] = cw[k]
        w[AW_WX], w[AW_WY], w[AW_WZ], w[AW_VX], w[AW_VY], w[AW_VZ] = wx, wy, wz, vx, vy, vz
        _link_inertia(row, w)


def _joint(row, w, qd_i, tau_i, sg_i):
    """Write U_i, D_i and u_i of joint i (rotor and friction included) into ``w``."""
    i0, p0 = AW_I, AW_P
    if row[PRISMATIC] != 0.0:       # column S = linear z of I^A: (B[:, 2]; C[:, 2])
        u6 = (w[i0 + 8], w[i0 + 11], w[i0 + 14], w[i0 + 19], w[i0 + 20], w[i0 + 17])
        su = tau_i - w[p0 + 5]
    else:                           # column S = angular z: (A[:, 2]; B[2, :])
        u6 = (w[i0 + 4], w[i0 + 5], w[i0 + 2], w[i0 + 12], w[i0 + 13], w[i0 + 14])
        su = tau_i - w[p0 + 2]
    d = (u6[5] if row[PRISMATIC] != 0.0 else u6[2]) + row[ROTOR] * row[GEAR]
    for k in range(6):
        w[AW_U + k] = u6[k]
    w[AW_U + 2] = u6[2] + row[ROTOR]
    w[AW_D] = d
    w[AW_SU] = su - row[VISCOUS] * qd_i - row[COULOMB] * sg_i


def _articulated(w):
    """Turn I^A_i, p^A_i of ``w`` into I^a = I^A - U U^T / D and p^a + I^a c + U u / D."""
    i0, ud = AW_I, 1.0 / w[AW_D]
    ux, uy, uz, fx, fy, fz = (w[AW_U], w[AW_U + 1], w[AW_U + 2], w[AW_U + 3], w[AW_U + 4],
                              w[AW_U + 5])
    top = (ux * ux, uy * uy, uz * uz, ux * uy, ux * uz, uy * uz)
    mid = (ux * fx, ux * fy, ux * fz, uy * fx, uy * fy, uy * fz, uz * fx, uz * fy, uz * fz)
    bot = (fx * fx, fy * fy, fz * fz, fx * fy, fx * fz, fy * fz)
    for k in range(6):
        w[i0 + k] = w[i0 + k] - top[k] * ud
        w[i0 + 15 + k] = w[i0 + 15 + k] - bot[k] * ud
    for k in range(9):
        w[i0 + 6 + k] = w[i0 + 6 + k] - mid[k] * ud
    # I^a c: (A c_top + B c_bot; B^T c_top + C c_bot), A and C symmetric, B by rows
    a0, a1, a2, a3, a4, a5 = w[i0], w[i0 + 1], w[i0 + 2], w[i0 + 3], w[i0 + 4], w[i0 + 5]
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = (w[i0 + 6], w[i0 + 7], w[i0 + 8], w[i0 + 9],
                                          w[i0 + 10], w[i0 + 11], w[i0 + 12], w[i0 + 13],
                                          w[i0 + 14])
    c0, c1, c2, c3, c4, c5 = (w[i0 + 15], w[i0 + 16], w[i0 + 17], w[i0 + 18], w[i0 + 19],
                              w[i0 + 20])
    t0, t1, t2, l0, l1, l2 = (w[AW_C], w[AW_C + 1], w[AW_C + 2], w[AW_C + 3], w[AW_C + 4],
                              w[AW_C + 5])
    s = w[AW_SU] * ud
    w[AW_P] += a0 * t0 + a3 * t1 + a4 * t2 + (b0 * l0 + b1 * l1 + b2 * l2) + ux * s
    w[AW_P + 1] += a3 * t0 + a1 * t1 + a5 * t2 + (b3 * l0 + b4 * l1 + b5 * l2) + uy * s
    w[AW_P + 2] += a4 * t0 + a5 * t1 + a2 * t2 + (b6 * l0 + b7 * l1 + b8 * l2) + uz * s
    w[AW_P + 3] += b0 * t0 + b3 * t1 + b6 * t2 + (c0 * l0 + c3 * l1 + c4 * l2) + fx * s
    w[AW_P + 4] += b1 * t0 + b4 * t1 + b7 * t2 + (c3 * l0 + c1 * l1 + c5 * l2) + fy * s
    w[AW_P + 5] += b2 * t0 + b5 * t1 + b8 * t2 + (c4 * l0 + c5 * l1 + c2 * l2) + fz * s


def inertias(c, qd, tau, sg, wrench, ws):
    """
    Run the second pass, link n to 1: U_i, D_i, u_i and the parents' I^A, p^A.

    ``wrench``: (f; n) that the last link exerts on the environment, frame n, about O_n.
    """
    n = len(qd)
    last = ws[n - 1]
    for k in range(3):
        last[AW_P + k] += wrench[3 + k]
        last[AW_P + 3 + k] += wrench[k]
    for i in range(n - 1, -1, -1):
        row, w = c[i], ws[i]
        _joint(row, w, qd[i], tau[i], sg[i])
        if i == 0:
            break
        _articulated(w)
        kr_qd = row[ROTOR] * qd[i]                     # rotor i's reaction on link i-1
        w[AW_P] += kr_qd * w[AW_PWY]
        w[AW_P + 1] -= kr_qd * w[AW_PWX]
        parent = ws[i - 1]
        moved = to_parent(w, AW_I, w[AW_CT], w[AW_ST], row[A], row[E], w[AW_R],
                          row[COS_ALPHA], row[SIN_ALPHA])
        for k in range(21):
            parent[AW_I + k] += moved[k]
        f = force_to_parent(w[AW_P], w[AW_P + 1], w[AW_P + 2], w[AW_P + 3], w[AW_P + 4],
                            w[AW_P + 5], w[AW_CT], w[AW_ST], row[A], row[E], w[AW_R],
                            row[COS_ALPHA], row[SIN_ALPHA])
        for k in range(6):
            parent[AW_P + k] += f[k]


def accelerations(c, g, ws, qdd):
    """Run the third pass, link 1 to n: a_i and ``qdd`` (filled here); a_0 = (0; -g)."""
    tx = ty = tz = 0.0
    lx, ly, lz = -g[0], -g[1], -g[2]
    for i in range(len(qdd)):
        row, w = c[i], ws[i]
        ca, sa, cq, sq = row[COS_ALPHA], row[SIN_ALPHA], w[AW_CT], w[AW_ST]
        tx, ty, tz, lx, ly, lz = motion_to_child(ca, sa, cq, sq, row[PX], w[AW_PY], w[AW_PZ],
                                                 tx, ty, tz, lx, ly, lz)
        tx, ty, tz = tx + w[AW_C], ty + w[AW_C + 1], tz + w[AW_C + 2]
        lx, ly, lz = lx + w[AW_C + 3], ly + w[AW_C + 4], lz + w[AW_C + 5]
        x = (w[AW_SU] - (w[AW_U] * tx + w[AW_U + 1] * ty + w[AW_U + 2] * tz + w[AW_U + 3] * lx
                         + w[AW_U + 4] * ly + w[AW_U + 5] * lz)) / w[AW_D]
        if row[PRISMATIC] != 0.0:
            lz = lz + x
        else:
            tz = tz + x
        qdd[i] = x
