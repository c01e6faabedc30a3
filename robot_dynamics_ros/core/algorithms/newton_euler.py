"""
The Newton-Euler recursion, written once: Renaud's projected algorithm, steps (0)-(10).

M. Renaud, "Quasi-minimal computation of the dynamic model of a robot manipulator utilizing the
Newton-Euler formalism and the notion of augmented body" (Renaud 1987, steps (0)-(10), with the
errata of its printed text corrected).  Like Pinocchio's ``rnea.hxx``, a forward pass
(velocities and accelerations, link 1 to n) and a backward pass (forces and moments, link n to 1)
over a constant model and a workspace.

The same text runs on every number type; only arithmetic (``+``, ``-``, ``*``) and indexing are
used, and the caller supplies what needs a function (cos, sin, sgn):

* Python floats: one configuration (``rnea.py``);
* numpy columns: a batch, every quantity a column of N samples;
* nodes of the code generator's expression graph (``codegen.expr.Node``), which fold constants
  and share sub-expressions: the generated straight-line model;
* compiled by numba (``compiled.py``): single calls and batches in machine code;
* counting scalars (``formulations.opcount.Counted``), for the operation counts.

Constants, per joint i (``joint_rows``), come from ``model/bodies.py`` in one of three forms:
plain bodies (the classical iteration of Milićević et al., Table 2: ``m^i, u^i, k^i``), Renaud's
augmented bodies (``m*i, u*i, k*i``) or the grouped ones.  One text covers the classical and the
augmented backward step (7a)::

    e_i = e_{i+1} + m^i alpha_i + b_i u_i + sigma_i m*i t_i

a plain body has m*i = 0 (e is then the force f), an augmented one m^i = 0.

Frames are the model's internal frames (``model.Chain``): modified-DH rotations, general offsets::

    R_{i-1,i} = Rx(alpha_{i-1}) Rz(theta_i)
    p_{i-1,i}(i-1) = (px_i, py_i, pz_i) + q_i (0, -sin alpha_{i-1}, cos alpha_{i-1}) [prismatic]

which is Renaud's (a_{i-1}, -r_i sin alpha_{i-1}, r_i cos alpha_{i-1}) for a DH row (the
constant part folded once per model: ``Chain.p_prev``) and Pinocchio's joint placement
otherwise (a URDF's almost parallel axes, ``model/axes_to_dh.py``).

Gravity enters as the upward acceleration of the base, alpha_0 = -g (Renaud 1987, step (1), sign
corrected).  Added to Renaud's rigid model, from Siciliano et al. 2009: rotor i on link i-1
spinning at k_r qd_i about z_i adds k_r I_m (wd_{i-1} . z_i + k_r qdd_i) to tau_i (eqs. 7.111,
7.114) and k_r I_m (qdd_i z_i + qd_i w_{i-1} x z_i) to the moment on link i-1 (eq. 7.113);
friction adds F_v qd + F_s sgn(qd) (eq. 7.114).
"""
from __future__ import annotations

from ..model.bodies import link_constants
from ..model.cache import model_constant
from .spatial_inertia import angular_velocity, to_child

# Columns of a joint's row of constants (``joint_rows``).
# The joint: p_{i-1,i}(i-1) at q_i = 0 is (PX, PY, PZ), PX = a_{i-1}, and O_i is
# (a_{i-1}, e_i, r_i) in frame Rx(alpha_{i-1}) (model.Chain; spatial_inertia.py).
PRISMATIC, COS_ALPHA, SIN_ALPHA, A, THETA0, D0, E, PY, PZ, MASS, M_STAR = range(11)
PX = A
UX, UY, UZ, KXX, KYY, KZZ, KXY, KXZ, KYZ = range(11, 20)
NEXT_PRISMATIC, UQX, UQY, UQZ = range(20, 24)
KQXX, KQYY, KQZZ, KQXY, KQXZ, KQYZ = range(24, 30)
KQQXX, KQQYY, KQQZZ, KQQXY, KQQXZ, KQQYZ = range(30, 36)
ROTOR, GEAR, VISCOUS, COULOMB = range(36, 40)
CX, CY, CZ, ICXX, ICYY, ICZZ, ICXY, ICXZ, ICYZ = range(40, 49)   # plain bodies: d_ii, phi^i
N_CONSTANTS = 49

# Columns of a joint's row of the workspace (forward pass -> backward pass).
# Forward: w_i, a_i, alpha_i, delta_i, t_i, r_{i-1}(i), w_{i-1}(i) x and y, a_{i-1}(i) . Z,
# cos and sin theta_i, p_{i-1,i}(i-1) y and z, the entries of b_i by rows; backward: e_i(i) and
# n_i(i) (before the rotor's reaction).
(W_WX, W_WY, W_WZ, W_AX, W_AY, W_AZ, W_LX, W_LY, W_LZ, W_DXX, W_DYY, W_DZZ, W_DXY, W_DXZ, W_DYZ,
 W_TX, W_TY, W_TZ, W_RX, W_RY, W_RZ, W_PWX, W_PWY, W_PAZ, W_CT, W_ST, W_PY, W_PZ) = range(28)
W_BXX, W_BXY, W_BXZ, W_BYX, W_BYY, W_BYZ, W_BZX, W_BZY, W_BZZ = range(28, 37)
W_EX, W_EY, W_EZ, W_NX, W_NY, W_NZ = range(37, 43)
N_WORKSPACE = 43


def _row(link) -> tuple:
    """Return one joint's constants (``Link`` of model/bodies.py) as a row of floats."""
    def sym(m):
        return (m[0, 0], m[1, 1], m[2, 2], m[0, 1], m[0, 2], m[1, 2])
    zeros = (0.0,) * 6
    online = link.u_q is not None
    row = ((1.0 if link.prismatic else 0.0, link.ca, link.sa, link.a, link.theta0, link.d0,
            link.e, link.p0[1], link.p0[2], link.mass, link.m_star) + tuple(link.u) + sym(link.k)
           + (1.0 if online else 0.0,) + (tuple(link.u_q) if online else (0.0,) * 3)
           + (sym(link.k_q) if online else zeros) + (sym(link.k_qq) if online else zeros)
           + (link.rotor, link.gear, link.viscous, link.coulomb)
           + (tuple(link.com) + sym(link.inertia_c) if link.com is not None
              else (0.0,) * 9))
    return tuple(float(x) for x in row)


def rows_of(links) -> tuple:
    """Return the rows of constants of ``links`` (a ``link_constants`` list)."""
    return tuple(_row(link) for link in links)


def joint_rows(model, form: str = "plain") -> tuple:
    """Return the model's rows of constants in ``form`` (model/bodies.FORMS); once per model."""
    return model_constant(model, ("newton_euler_rows", form),
                          lambda m: rows_of(link_constants(m, form)))


def forward_pass(c, q, qd, qdd, ct, st, g, ws, moving=True):
    """
    Run steps (1)-(6), link 1 to n: w_i, a_i (angular), alpha_i (linear, plus g), delta_i, b_i.

    ``c``: rows of constants; ``q, qd, qdd``: joint values; ``ct, st``: cos and sin of each
    theta_i; ``g``: gravity in frame 0; ``ws``: rows of the workspace, filled here.  ``moving``
    False: qd = qdd = 0 (the robot at rest: w, a, b, t vanish and are neither computed nor
    stored, only alpha is).
    """
    # w_0 = a_0 = 0, alpha_0 = -g (Renaud 1987, step (1))
    wx = wy = wz = 0.0
    ax = ay = az = 0.0
    lx, ly, lz = -g[0], -g[1], -g[2]
    bxx = bxy = bxz = byx = byy = byz = bzx = bzy = bzz = 0.0
    for i in range(len(q)):                  # (c may hold more rows than joints: compiled.py)
        row, w = c[i], ws[i]
        ca, sa, cq, sq = row[COS_ALPHA], row[SIN_ALPHA], ct[i], st[i]
        px, py, pz = row[PX], row[PY], row[PZ]          # p_{i-1,i}(i-1) (module docstring),
        if row[PRISMATIC] != 0.0:                       # written out where it is needed: as an
            py, pz = py - sa * q[i], pz + ca * q[i]     # inlined function it costs 15 % (numba)
        w[W_CT], w[W_ST], w[W_PY], w[W_PZ] = cq, sq, py, pz
        if i > 0 and moving:
            # (6a) r_{i-1}(i-1) = alpha_{i-1} + b_{i-1} p_{i-1,i}(i-1)
            lx = lx + (bxx * px + bxy * py + bxz * pz)
            ly = ly + (byx * px + byy * py + byz * pz)
            lz = lz + (bzx * px + bzy * py + bzz * pz)
        # (6b): R_{i,i-1} = Rz(-theta_i) Rx(-alpha_{i-1}) on r_{i-1}
        lx, ly, lz = to_child(ca, sa, cq, sq, lx, ly, lz)
        w[W_RX], w[W_RY], w[W_RZ] = lx, ly, lz
        if not moving:
            w[W_LX], w[W_LY], w[W_LZ] = lx, ly, lz
            continue
        # (1) w_i = w_{i-1}(i) + qd_i Z (revolute; its x, y: those of w_{i-1}(i));  (3a) a_{i-1}(i)
        qdi, prismatic = qd[i], row[PRISMATIC] != 0.0
        wx, wy, wz = angular_velocity(prismatic, qdi, ca, sa, cq, sq, wx, wy, wz)
        ax, ay, az = to_child(ca, sa, cq, sq, ax, ay, az)
        w[W_PWX], w[W_PWY], w[W_PAZ] = wx, wy, az       # w_{i-1}(i), a_{i-1}(i) . Z: rotor i
        if prismatic:
            # (5) t_i = 2 qd_i w^_{i-1}(i) Z + qdd_i Z;  (6c) alpha_i = t_i + r_{i-1}(i)
            tx, ty, tz = 2.0 * (qdi * wy), 2.0 * -(qdi * wx), qdd[i]
            w[W_TX], w[W_TY], w[W_TZ] = tx, ty, tz
            lx, ly, lz = lx + tx, ly + ty, lz + tz
        else:
            # (3b) a_i = a_{i-1}(i) + qd_i w^_{i-1}(i) Z + qdd_i Z
            ax, ay, az = ax + qdi * wy, ay - qdi * wx, az + qdd[i]
        # (2) delta_i = w_i (x) w_i;  (4) b_i = a^_i + w^_i w^_i (15 additions)
        dxx, dyy, dzz, dxy, dxz, dyz = wx * wx, wy * wy, wz * wz, wx * wy, wx * wz, wy * wz
        bxx, bxy, bxz = -(dyy + dzz), dxy - az, dxz + ay
        byx, byy, byz = dxy + az, -(dxx + dzz), dyz - ax
        bzx, bzy, bzz = dxz - ay, dyz + ax, -(dxx + dyy)
        w[W_BXX], w[W_BXY], w[W_BXZ], w[W_BYX], w[W_BYY] = bxx, bxy, bxz, byx, byy
        w[W_BYZ], w[W_BZX], w[W_BZY], w[W_BZZ] = byz, bzx, bzy, bzz
        w[W_WX], w[W_WY], w[W_WZ], w[W_AX], w[W_AY], w[W_AZ] = wx, wy, wz, ax, ay, az
        w[W_LX], w[W_LY], w[W_LZ] = lx, ly, lz
        w[W_DXX], w[W_DYY], w[W_DZZ], w[W_DXY], w[W_DXZ], w[W_DYZ] = dxx, dyy, dzz, dxy, dxz, dyz


def _online(row, q, i):
    """Return u*i and k*i (3 + 6 entries) by step (0) on line: joint i+1 is prismatic."""
    qn = q[i + 1]                       # (0) p_{i,i+1} moves with q_{i+1}
    qq = qn * qn
    return (row[UX] + qn * row[UQX], row[UY] + qn * row[UQY], row[UZ] + qn * row[UQZ],
            row[KXX] + (row[KQXX] * qn + row[KQQXX] * qq),
            row[KYY] + (row[KQYY] * qn + row[KQQYY] * qq),
            row[KZZ] + (row[KQZZ] * qn + row[KQQZZ] * qq),
            row[KXY] + (row[KQXY] * qn + row[KQQXY] * qq),
            row[KXZ] + (row[KQXZ] * qn + row[KQQXZ] * qq),
            row[KYZ] + (row[KQYZ] * qn + row[KQQYZ] * qq))


def _rotational(w, kxx, kyy, kzz, kxy, kxz, kyz, diagonal, mx, my, mz):
    """Return n + k a_i + w_i x (k w_i), the latter from the products delta_i (step (9a))."""
    ax, ay, az = w[W_AX], w[W_AY], w[W_AZ]
    dxx, dyy, dzz, dxy, dxz, dyz = (w[W_DXX], w[W_DYY], w[W_DZZ], w[W_DXY], w[W_DXZ],
                                    w[W_DYZ])
    if diagonal:                        # a diagonal k: the terms that remain
        mx, my, mz = mx + kxx * ax, my + kyy * ay, mz + kzz * az
        return (mx + (kzz - kyy) * dyz, my + (kxx - kzz) * dxz, mz + (kyy - kxx) * dxy)
    mx = mx + (kxx * ax + kxy * ay + kxz * az)
    my = my + (kxy * ax + kyy * ay + kyz * az)
    mz = mz + (kxz * ax + kyz * ay + kzz * az)
    mx = mx + (kxz * dxy + kyz * (dyy - dzz) + (kzz - kyy) * dyz - kxy * dxz)
    my = my + (kxy * dyz + kxz * (dzz - dxx) + (kxx - kzz) * dxz - kyz * dxy)
    mz = mz + (kyz * dxz + kxy * (dxx - dyy) + (kyy - kxx) * dxy - kxz * dyz)
    return mx, my, mz


def _plain_terms(row, w, moving, fx, fy, fz, mx, my, mz):
    """
    Return e_i and n_i with a plain body's own terms, by the classical iteration (Sect. 3.3).

    F = m^i (alpha_i + b_i d_ii) and the moment phi^i a_i + w x (phi^i w) + d_ii x F about O_i:
    of first order in the distance of the centre of mass from O_i, where the augmented form
    (k* = k - m* p^ p^) is of second order (model/bodies.numeric_form).
    """
    lx, ly, lz = w[W_LX], w[W_LY], w[W_LZ]
    m, dx, dy, dz = row[MASS], row[CX], row[CY], row[CZ]
    if moving:
        lx = lx + (w[W_BXX] * dx + w[W_BXY] * dy + w[W_BXZ] * dz)
        ly = ly + (w[W_BYX] * dx + w[W_BYY] * dy + w[W_BYZ] * dz)
        lz = lz + (w[W_BZX] * dx + w[W_BZY] * dy + w[W_BZZ] * dz)
        mx, my, mz = _rotational(w, row[ICXX], row[ICYY], row[ICZZ], row[ICXY], row[ICXZ],
                                 row[ICYZ], row[ICXY] == 0.0 and row[ICXZ] == 0.0
                                 and row[ICYZ] == 0.0, mx, my, mz)
    gx, gy, gz = m * lx, m * ly, m * lz
    return (fx + gx, fy + gy, fz + gz, mx + (dy * gz - dz * gy), my + (dz * gx - dx * gz),
            mz + (dx * gy - dy * gx))


def backward_pass(c, q, qd, qdd, sg, wrench, ws, tau, moving=True):
    """
    Run steps (7)-(10), link n to 1: e_i, n_i and the joint torques ``tau`` (filled here).

    ``sg``: sgn(qd) of each joint (Coulomb friction); ``wrench``: (f, n) on the last link in
    frame n, moment about its origin (e_{n+1}, n_{n+1}; zeros for free motion); ``moving`` as
    for :func:`forward_pass` (at rest, the rotors and friction exert nothing either).
    """
    n = len(q)
    ex, ey, ez, nx, ny, nz = wrench[0], wrench[1], wrench[2], wrench[3], wrench[4], wrench[5]
    for i in range(n - 1, -1, -1):
        row, w = c[i], ws[i]
        fx, fy, fz, mx, my, mz = ex, ey, ez, nx, ny, nz
        if row[MASS] != 0.0:                # a plain body (model/bodies.py)
            fx, fy, fz, mx, my, mz = _plain_terms(row, w, moving, fx, fy, fz, mx, my, mz)
        else:
            # (7a) e_i = e_{i+1} + b_i u*i + sigma_i m*i t_i;  (9a) n_i = n_{i+1} + k*i a_i
            # + w^_i (k*i w_i) + u^*i alpha_i + p^_{i,i+1} e_{i+1}
            if row[NEXT_PRISMATIC] != 0.0:
                ux, uy, uz, kxx, kyy, kzz, kxy, kxz, kyz = _online(row, q, i)
            else:
                ux, uy, uz, kxx, kyy, kzz = row[UX], row[UY], row[UZ], row[KXX], row[KYY], row[KZZ]
                kxy, kxz, kyz = row[KXY], row[KXZ], row[KYZ]
            lx, ly, lz = w[W_LX], w[W_LY], w[W_LZ]
            if moving:
                fx = fx + (w[W_BXX] * ux + w[W_BXY] * uy + w[W_BXZ] * uz)
                fy = fy + (w[W_BYX] * ux + w[W_BYY] * uy + w[W_BYZ] * uz)
                fz = fz + (w[W_BZX] * ux + w[W_BZY] * uy + w[W_BZZ] * uz)
                mx, my, mz = _rotational(w, kxx, kyy, kzz, kxy, kxz, kyz,
                                         row[NEXT_PRISMATIC] == 0.0 and row[KXY] == 0.0
                                         and row[KXZ] == 0.0 and row[KYZ] == 0.0, mx, my, mz)
            mx, my, mz = (mx + (uy * lz - uz * ly), my + (uz * lx - ux * lz),
                          mz + (ux * ly - uy * lx))
        if i + 1 < n:
            nxt, child = c[i + 1], ws[i + 1]
            px, py, pz = nxt[PX], child[W_PY], child[W_PZ]
            mx, my, mz = (mx + (py * ez - pz * ey), my + (pz * ex - px * ez),
                          mz + (px * ey - py * ex))
        if row[PRISMATIC] != 0.0:
            ms = row[M_STAR]
            if moving:
                fx, fy, fz = fx + ms * w[W_TX], fy + ms * w[W_TY], fz + ms * w[W_TZ]
            t = fz + ms * w[W_RZ]                        # (8), (10): Z . f_i, f_i = e_i + m*i r
        else:
            t = mz                                       # (10): Z . n_i
        w[W_EX], w[W_EY], w[W_EZ], w[W_NX], w[W_NY], w[W_NZ] = fx, fy, fz, mx, my, mz
        if moving and row[ROTOR] != 0.0:
            # rotor i (Siciliano et al. 2009, eqs. 7.111, 7.114), its reaction on link i-1 (7.113)
            kr, qdi, qddi = row[ROTOR], qd[i], qdd[i]
            t = t + kr * (w[W_PAZ] + row[GEAR] * qddi)
            mx, my, mz = mx + kr * (qdi * w[W_PWY]), my + kr * -(qdi * w[W_PWX]), mz + kr * qddi
        if moving and row[VISCOUS] != 0.0:
            t = t + row[VISCOUS] * qd[i]                 # F_v qd + F_s sgn(qd) (7.114)
        if moving and row[COULOMB] != 0.0:
            t = t + row[COULOMB] * sg[i]
        tau[i] = t
        if i == 0:
            break
        # (7b), (9b): e_i, n_i into frame i-1 by R_{i-1,i} = Rx(alpha_{i-1}) Rz(theta_i)
        cq, sq, ca, sa = w[W_CT], w[W_ST], row[COS_ALPHA], row[SIN_ALPHA]
        ex, y1 = cq * fx - sq * fy, sq * fx + cq * fy
        ey, ez = ca * y1 - sa * fz, sa * y1 + ca * fz
        nx, y1 = cq * mx - sq * my, sq * mx + cq * my
        ny, nz = ca * y1 - sa * mz, sa * y1 + ca * mz
