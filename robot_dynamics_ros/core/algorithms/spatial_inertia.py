"""
A spatial inertia (rigid or articulated) carried from a link's frame to its parent's, in scalars.

Featherstone, Rigid Body Dynamics Algorithms (2008), Sect. 2.13 and 7.2: a spatial inertia is the
symmetric 6x6 matrix I = [[A, B], [B^T, C]] that maps a spatial acceleration (angular; linear)
at a point to the force (moment about the point; force) needed; a rigid body at its frame origin
has A = k (its inertia tensor about the origin), B = u^ (u = m c, the first moment) and C = m E.
The 21 numbers kept are A and C by their 6 upper entries (xx, yy, zz, xy, xz, yz) and B by rows:

    A_XX ... A_YZ (0-5), B_XX, B_XY, B_XZ, B_YX, ... B_ZZ (6-14), C_XX ... C_YZ (15-20).

In the parent frame i-1, I_{i-1} = X^T I_i X with X the motion transform of the internal frames
(``model.Chain``), T_{i-1,i} = Rx(alpha_{i-1}) Trans(a_{i-1}, e_i, r_i) Rz(theta_i).  As in the
recursions, in three steps: Rz(theta_i) into the intermediate frame X (axes of frame i-1 turned by
alpha_{i-1}, origin O_i), a shift of the reference point from O_i to O_{i-1} (p = (a, e, r) in X;
e = 0 for a DH row, and the y terms are then skipped), Rx(alpha_{i-1}) into frame i-1.  The
shift is I' = T^T I T with T = [[E, 0], [-p^, E]]:

    A' = A + p^ B^T - (B + p^ C) p^,   B' = B + p^ C,   C' = C.

Motion goes the other way, from frame i-1 to frame i: :func:`to_child` turns a vector by
R_{i,i-1} = Rz(-theta_i) Rx(-alpha_{i-1}), :func:`motion_to_child` is the motion transform X_i of
a spatial motion vector (Featherstone 2008, eq. 2.24: the linear part moved to O_i by w x p, p =
O_i in frame i-1, then both turned), and :func:`joint_velocity` is the velocity recursion
v_i = X_i v_{i-1} + S_i qd_i (Featherstone 2008, Table 5.1 / 7.1), written here once for the
Newton-Euler recursion (its angular part, :func:`angular_velocity`: Renaud 1987, step (1b)), the
ABA, the momentum pass and the regressor.

Components are Python floats, numpy columns or values numba compiles (``compiled.py``).
"""
from __future__ import annotations


def to_child(ca, sa, ct, st, x, y, z):
    """Return a vector of frame i-1 in frame i: Rz(-theta_i) Rx(-alpha_{i-1}) (cos, sin)."""
    y1, z1 = ca * y + sa * z, ca * z - sa * y
    return ct * x + st * y1, ct * y1 - st * x, z1


def motion_to_child(ca, sa, ct, st, px, py, pz, wx, wy, wz, vx, vy, vz):
    """Return X_i (w; v): v moved from O_{i-1} to O_i (+ w x p, p in frame i-1), both turned."""
    vx, vy, vz = vx + (wy * pz - wz * py), vy + (wz * px - wx * pz), vz + (wx * py - wy * px)
    wx, wy, wz = to_child(ca, sa, ct, st, wx, wy, wz)
    vx, vy, vz = to_child(ca, sa, ct, st, vx, vy, vz)
    return wx, wy, wz, vx, vy, vz


def angular_velocity(prismatic, qd, ca, sa, ct, st, wx, wy, wz):
    """Return w_i = R_{i,i-1} w_{i-1} + qd_i z (revolute), the angular part of joint_velocity."""
    wx, wy, wz = to_child(ca, sa, ct, st, wx, wy, wz)
    if prismatic:
        return wx, wy, wz
    return wx, wy, wz + qd


def joint_velocity(prismatic, qd, ca, sa, ct, st, px, py, pz, wx, wy, wz, vx, vy, vz):
    """
    Return v_i = X_i v_{i-1} + S_i qd_i: link i's (w; v) at O_i in frame i.

    S_i = (z; 0) for a revolute joint, (0; z) for a prismatic one; ``p`` = O_i in frame i-1
    (``newton_euler``'s p_{i-1,i}(i-1)); the x and y components of w_i are those of the
    parent's w in frame i (the rotor's w_{i-1}(i)).
    """
    wx, wy, wz, vx, vy, vz = motion_to_child(ca, sa, ct, st, px, py, pz, wx, wy, wz, vx, vy, vz)
    if prismatic:
        return wx, wy, wz, vx, vy, vz + qd
    return wx, wy, wz + qd, vx, vy, vz


def rotate_symmetric_z(c, s, xx, yy, zz, xy, xz, yz):
    """Return the entries of Rz S Rz^T for a symmetric S (Rz: cos c, sin s)."""
    c2, s2 = c * c - s * s, 2.0 * c * s
    mean, half = 0.5 * (xx + yy), 0.5 * (xx - yy)
    return (mean + half * c2 - xy * s2, mean - half * c2 + xy * s2, zz, half * s2 + xy * c2,
            c * xz - s * yz, s * xz + c * yz)


def rotate_general_z(c, s, xx, xy, xz, yx, yy, yz, zx, zy, zz):
    """Return the entries (by rows) of Rz M Rz^T for a general M."""
    # rows: R M; then columns: (R M) R^T
    xx, xy, xz, yx, yy, yz = (c * xx - s * yx, c * xy - s * yy, c * xz - s * yz,
                              s * xx + c * yx, s * xy + c * yy, s * xz + c * yz)
    return (c * xx - s * xy, s * xx + c * xy, xz, c * yx - s * yy, s * yx + c * yy, yz,
            c * zx - s * zy, s * zx + c * zy, zz)


def rotate_symmetric_x(c, s, xx, yy, zz, xy, xz, yz):
    """Return the entries of Rx S Rx^T for a symmetric S (Rx: cos c, sin s)."""
    if s == 0.0:                    # (alpha a multiple of pi/2: c, s exact, a permutation)
        return (xx, yy, zz, xy, xz, yz) if c > 0.0 else (xx, yy, zz, -xy, -xz, yz)
    if c == 0.0:
        return xx, zz, yy, -(s * xz), s * xy, -yz
    cc, ss, cs = c * c, s * s, c * s
    return (xx, cc * yy - 2.0 * cs * yz + ss * zz, ss * yy + 2.0 * cs * yz + cc * zz,
            c * xy - s * xz, s * xy + c * xz, cs * (yy - zz) + (cc - ss) * yz)


def rotate_general_x(c, s, xx, xy, xz, yx, yy, yz, zx, zy, zz):
    """Return the entries (by rows) of Rx M Rx^T for a general M."""
    if s == 0.0 and c > 0.0:
        return xx, xy, xz, yx, yy, yz, zx, zy, zz
    yx, yy, yz, zx, zy, zz = (c * yx - s * zx, c * yy - s * zy, c * yz - s * zz,
                              s * yx + c * zx, s * yy + c * zy, s * yz + c * zz)
    return (xx, c * xy - s * xz, s * xy + c * xz, yx, c * yy - s * yz, s * yy + c * yz,
            zx, c * zy - s * zz, s * zy + c * zz)


def shift(px, py, pz, a, b, cm):
    """
    Return (A', B') of the reference point moved by -p, p = (px, py, pz): see the module doc.

    ``a``, ``cm``: 6 entries of A and C; ``b``: 9 entries of B by rows.  The terms in py are
    added only where py != 0 (a DH row has p = (a, 0, r) in the intermediate frame).
    """
    axx, ayy, azz, axy, axz, ayz = a
    bxx, bxy, bxz, byx, byy, byz, bzx, bzy, bzz = b
    cxx, cyy, czz, cxy, cxz, cyz = cm
    # B' = B + p^ C, p^ = [[0, -pz, py], [pz, 0, -px], [-py, px, 0]]
    qxx, qxy, qxz = bxx - pz * cxy, bxy - pz * cyy, bxz - pz * cyz
    qyx, qyy, qyz = (byx + pz * cxx - px * cxz, byy + pz * cxy - px * cyz,
                     byz + pz * cxz - px * czz)
    qzx, qzy, qzz = bzx + px * cxy, bzy + px * cyy, bzz + px * cyz
    if py != 0.0:
        qxx, qxy, qxz = qxx + py * cxz, qxy + py * cyz, qxz + py * czz
        qzx, qzy, qzz = qzx - py * cxx, qzy - py * cxy, qzz - py * cxz
    # A' = A + p^ B^T - B' p^ (symmetric: the upper entries, each from its row)
    axx, ayy, azz, axy, axz, ayz = (axx - pz * bxy - pz * qxy,
                                    ayy + pz * byx - px * byz + pz * qyx - px * qyz,
                                    azz + px * bzy + px * qzy,
                                    axy + pz * bxx - px * bxz - pz * qyy,
                                    axz - pz * bzy + px * qxy,
                                    ayz + pz * bzx - px * bzz + px * qyy)
    if py != 0.0:
        axx, azz = axx + py * (bxz + qxz), azz - py * (bzx + qzx)
        axy, axz, ayz = axy + py * qyz, axz + py * (bzz - qxx), ayz - py * qyx
    return ((axx, ayy, azz, axy, axz, ayz), (qxx, qxy, qxz, qyx, qyy, qyz, qzx, qzy, qzz))


def to_parent(m, k, ct, st, a, e, r, ca, sa) -> tuple:
    """
    Return the 21 entries of the spatial inertia ``m[k:k + 21]`` of frame i, in frame i-1.

    ``ct, st``: cos and sin theta_i; ``a, e, r``: O_i in the intermediate frame (a_{i-1}, e_i,
    r_i); ``ca, sa``: cos and sin alpha_{i-1} (module docstring).
    """
    A = rotate_symmetric_z(ct, st, m[k], m[k + 1], m[k + 2], m[k + 3], m[k + 4], m[k + 5])
    B = rotate_general_z(ct, st, m[k + 6], m[k + 7], m[k + 8], m[k + 9], m[k + 10], m[k + 11],
                         m[k + 12], m[k + 13], m[k + 14])
    C = rotate_symmetric_z(ct, st, m[k + 15], m[k + 16], m[k + 17], m[k + 18], m[k + 19],
                           m[k + 20])
    A, B = shift(a, e, r, A, B, C)
    A = rotate_symmetric_x(ca, sa, A[0], A[1], A[2], A[3], A[4], A[5])
    B = rotate_general_x(ca, sa, B[0], B[1], B[2], B[3], B[4], B[5], B[6], B[7], B[8])
    C = rotate_symmetric_x(ca, sa, C[0], C[1], C[2], C[3], C[4], C[5])
    return A + B + C


def force_to_parent(nx, ny, nz, fx, fy, fz, ct, st, a, e, r, ca, sa) -> tuple:
    """
    Return a spatial force (moment about O_i; force) of frame i in frame i-1, about O_{i-1}.

    Rz(theta_i), the moment moved by p x f with p = (a, e, r) in the intermediate frame, then
    Rx(alpha_{i-1}) (arguments as :func:`to_parent`).
    """
    nx, ny = ct * nx - st * ny, st * nx + ct * ny
    fx, fy = ct * fx - st * fy, st * fx + ct * fy
    nx, ny, nz = nx - r * fy, ny + r * fx - a * fz, nz + a * fy
    if e != 0.0:
        nx, nz = nx + e * fz, nz - e * fx
    if sa == 0.0 and ca > 0.0:      # (alpha = 0: no rotation)
        return nx, ny, nz, fx, fy, fz
    if ca == 0.0:                   # (alpha = +-pi/2: a permutation)
        return nx, -(sa * nz), sa * ny, fx, -(sa * fz), sa * fy
    return (nx, ca * ny - sa * nz, sa * ny + ca * nz, fx, ca * fy - sa * fz, sa * fy + ca * fz)


def rigid_to_parent(m, hx, hy, hz, xx, yy, zz, xy, xz, yz, ct, st, a, e, r, ca, sa) -> tuple:
    """
    Return a rigid body's (m, h, I) of frame i in frame i-1 (arguments as :func:`to_parent`).

    The special case C = m E, B = h^ of :func:`to_parent`: mass m, first moment h = m c and
    inertia tensor I about the origin (6 upper entries), 10 numbers instead of 21.  The shift is
    the parallel-axis rule I' = I + m (|p|^2 E - p p^T) + 2 (p.h) E - (h p^T + p h^T).
    """
    xx, yy, zz, xy, xz, yz = rotate_symmetric_z(ct, st, xx, yy, zz, xy, xz, yz)
    hx, hy = ct * hx - st * hy, st * hx + ct * hy
    ph = a * hx + r * hz
    xx, yy, zz = (xx + m * r * r + 2.0 * r * hz, yy + m * (a * a + r * r) + 2.0 * ph,
                  zz + m * a * a + 2.0 * a * hx)
    xy, xz, yz = xy - a * hy, xz - m * a * r - (hx * r + a * hz), yz - r * hy
    if e != 0.0:                    # p's y component (model.Chain): its terms, h before the shift
        ee = m * e * e + 2.0 * e * hy
        xx, zz, xy, yz = xx + ee, zz + ee, xy - e * (m * a + hx), yz - e * (m * r + hz)
        hy = hy + m * e
    hx, hz = hx + m * a, hz + m * r
    if ca == 0.0:                   # (alpha = +-pi/2: a permutation)
        hy, hz = -(sa * hz), sa * hy
    elif sa != 0.0 or ca < 0.0:
        hy, hz = ca * hy - sa * hz, sa * hy + ca * hz
    return (m, hx, hy, hz) + rotate_symmetric_x(ca, sa, xx, yy, zz, xy, xz, yz)
