"""
The joint-space inertia matrix B(q) by the composite-rigid-body algorithm, rotors included.

Featherstone, Rigid Body Dynamics Algorithms (2008), Table 6.2; in the spirit of Siciliano et
al. 2009, Sect. 7.6: B(q) without n calls of inverse dynamics.  The composite body i (links
i..n) is a spatial inertia in frame i about O_i (``spatial_inertia.py``): link i's own, plus the
composite body i+1 carried into frame i.  Column i of B is the force F_i = I^c_i S_i that gives
joint i a unit acceleration, carried down the chain by the force transform; B_ji = S_j^T F.  Rotor
spin (Siciliano et al. 2009, eqs. 7.111-7.114) adds k_r^2 I_m on the diagonal and the reaction
k_r I_m z_i on link i-1, exactly the Newton-Euler recursion's rotor terms with qdd = e_i.

The same text runs on Python floats, numpy columns and compiled by numba (``compiled.py``); the
constants are the plain bodies' rows (``newton_euler.joint_rows(model, "plain")``).
"""
from __future__ import annotations

from .newton_euler import (A, COS_ALPHA, D0, E, GEAR, KXX, KXY, KXZ, KYY, KYZ, KZZ, MASS,
                           PRISMATIC, ROTOR, SIN_ALPHA, UX, UY, UZ)
from .spatial_inertia import force_to_parent, rigid_to_parent

# A joint's row of the workspace: cos and sin theta_i, r_i, the composite body (m, h, I at O_i).
CW_CT, CW_ST, CW_R, CW_M, CW_H, CW_I = 0, 1, 2, 3, 4, 7
N_CRBA_WORKSPACE = 13


def composite_inertias(c, q, ct, st, ws):
    """Write cos, sin theta_i, r_i and the composite body i (links i..n) into ``ws``."""
    n = len(q)                               # (c may hold more rows than joints: compiled.py)
    for i in range(n - 1, -1, -1):
        row, w = c[i], ws[i]
        w[CW_CT], w[CW_ST] = ct[i], st[i]
        w[CW_R] = row[D0] + q[i] if row[PRISMATIC] != 0.0 else row[D0]
        own = (row[MASS], row[UX], row[UY], row[UZ], row[KXX], row[KYY], row[KZZ], row[KXY],
               row[KXZ], row[KYZ])
        if i == n - 1:
            for k in range(10):
                w[CW_M + k] = own[k]
        else:
            b, nxt = ws[i + 1], c[i + 1]
            moved = rigid_to_parent(b[CW_M], b[CW_H], b[CW_H + 1], b[CW_H + 2], b[CW_I],
                                    b[CW_I + 1], b[CW_I + 2], b[CW_I + 3], b[CW_I + 4],
                                    b[CW_I + 5], b[CW_CT], b[CW_ST], nxt[A], nxt[E],
                                    b[CW_R], nxt[COS_ALPHA], nxt[SIN_ALPHA])
            for k in range(10):
                w[CW_M + k] = own[k] + moved[k]


def mass_matrix_entries(c, ws, out):
    """Fill ``out`` (n rows of n) with B from the composite bodies in ``ws``."""
    n = len(out)
    for i in range(n - 1, -1, -1):
        row, w = c[i], ws[i]
        m, hx, hy = w[CW_M], w[CW_H], w[CW_H + 1]
        if row[PRISMATIC] != 0.0:       # F = I^c S, S = linear z: (h x z; m z)
            f = (hy, -hx, 0.0, 0.0, 0.0, m)
            out[i][i] = m + row[ROTOR] * row[GEAR]
        else:                           # S = angular z: (I z; z x h)
            f = (w[CW_I + 4], w[CW_I + 5], w[CW_I + 2], -hy, hx, 0.0)
            out[i][i] = w[CW_I + 2] + row[ROTOR] * row[GEAR]
        for j in range(i, 0, -1):       # F from frame j to frame j-1
            link, lw = c[j], ws[j]
            f = force_to_parent(f[0], f[1], f[2] + (row[ROTOR] if j == i else 0.0), f[3], f[4],
                                f[5], lw[CW_CT], lw[CW_ST], link[A], link[E], lw[CW_R],
                                link[COS_ALPHA], link[SIN_ALPHA])
            entry = f[5] if c[j - 1][PRISMATIC] != 0.0 else f[2]
            out[i][j - 1] = entry
            out[j - 1][i] = entry
