"""Recursive Newton-Euler inverse dynamics in link frames (seed 002, eqs. 7.107-7.114).

One recursion serves single calls and batches: it is written on scalar components, so the same
code runs on Python floats (a single configuration: no numpy call overhead per operation) and on
numpy columns of shape (N,) (a batch: each operation is vectorised over the N samples).

Frames are the model's internal modified-DH frames (see ``model.py``): joint i turns about, or
slides along, the local z of frame i; T_{i-1,i} = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i).
Each parent-to-child rotation is done in two steps, first Rx(-alpha) into the intermediate frame
X, where the offset between origins is simply (a, 0, d), then Rz(-theta).

Gravity enters as an upward acceleration of the base, pdd_0 = -g (seed 002, L1108 corrected;
seed 000 Table 2).  Motors follow seed 002: rotor i sits on link i-1 and spins about joint axis i at
k_r,i qd_i; the link data include the locked rotor, and the spin adds
  k_r,i I_m,i (qdd_i z + qd_i w_{i-1} x z)   to the moment balance of link i-1   (7.113)
  k_r,i I_m,i (wd_{i-1} . z + k_r,i qdd_i)    to tau_i                             (7.111), (7.114)
Friction adds F_v qd + F_s sgn(qd) on the joint side (7.114).
"""
from __future__ import annotations

import math

import numpy as np

from .components import joint_constants, rot_x as _rot_x, rot_x_inv as _rot_x_inv
from .inputs import joint_arrays, vector_argument


def _zeros(x, y) -> bool:
    """Both components are the float 0.0 (not arrays)."""
    return x.__class__ is float and y.__class__ is float and x == 0.0 and y == 0.0


def _rz_inv(ct, st, x, y):
    """(ct x + st y, ct y - st x), skipping the products with a float 0.0 (batches: where the
    component is zero for every sample); the same values up to the sign of zeros."""
    y_zero = y.__class__ is float and y == 0.0
    if x.__class__ is float and x == 0.0:
        return (0.0, 0.0) if y_zero else (st * y, ct * y)
    if y_zero:
        return ct * x, -(st * x)
    return ct * x + st * y, ct * y - st * x


def _m(a, b):
    """a b, or the float 0.0 if a factor is (the batches' structural zeros; the sums below skip
    them: the same values up to the sign of zeros)."""
    if (a.__class__ is float and a == 0.0) or (b.__class__ is float and b == 0.0):
        return 0.0
    return a * b


def _a(a, b):
    if b.__class__ is float and b == 0.0:
        return a
    return b if a.__class__ is float and a == 0.0 else a + b


def _s(a, b):
    if b.__class__ is float and b == 0.0:
        return a
    return -b if a.__class__ is float and a == 0.0 else a - b


def _inertial_force(m, cx, cy, cz, wx, wy, wz, wdx, wdy, wdz, ax, ay, az, fx, fy, fz, nx, ny, nz):
    """The off-centre branch of ``_recursion``'s backward pass on batch columns, in the same
    order of operations, without the terms that are zero for the whole batch (e.g. components of
    the centre of mass)."""
    ux, uy, uz = _s(_m(wy, cz), _m(wz, cy)), _s(_m(wz, cx), _m(wx, cz)), _s(_m(wx, cy), _m(wy, cx))
    Fx = m * _s(_a(_s(_a(ax, _m(wdy, cz)), _m(wdz, cy)), _m(wy, uz)), _m(wz, uy))
    Fy = m * _s(_a(_s(_a(ay, _m(wdz, cx)), _m(wdx, cz)), _m(wz, ux)), _m(wx, uz))
    Fz = m * _s(_a(_s(_a(az, _m(wdx, cy)), _m(wdy, cx)), _m(wx, uy)), _m(wy, ux))
    return (_a(fx, Fx), _a(fy, Fy), _a(fz, Fz), _s(_a(nx, _m(cy, Fz)), _m(cz, Fy)),
            _s(_a(ny, _m(cz, Fx)), _m(cx, Fz)), _s(_a(nz, _m(cx, Fy)), _m(cy, Fx)))


def _recursion(constants, q, qd, qdd, g, wrench, xp, sign):
    """tau as a list of per-joint scalars (floats or (N,) arrays); see the module docstring.

    ``wrench`` is (fx, fy, fz, nx, ny, nz) on the last link, in internal frame n, moment about its
    origin, or None.
    """
    n = len(constants)
    batched = xp is not math
    # Forward pass (7.107)-(7.111): velocities and accelerations of each link frame.
    wx = wy = wz = 0.0
    wdx = wdy = wdz = 0.0
    ax, ay, az = -g[0], -g[1], -g[2]          # linear acceleration of the frame origin, minus g
    kin = []
    for i in range(n):
        (prism, ca, sa, a, th0, d0, m, cx, cy, cz, ixx, iyy, izz, ixy, ixz, iyz,
         rotor, kr, fv, fc, offset, off_centre, diagonal) = constants[i]
        qi, qdi, qddi = q[i], qd[i], qdd[i]
        th, d = (th0, d0 + qi) if prism else ((th0 + qi) if th0 != 0.0 else qi, d0)
        ct, st = xp.cos(th), xp.sin(th)
        # Parent quantities in the intermediate frame X.
        pwx, pwy, pwz = _rot_x_inv(ca, sa, wx, wy, wz)
        pdx, pdy, pdz = _rot_x_inv(ca, sa, wdx, wdy, wdz)
        vx, vy, vz = _rot_x_inv(ca, sa, ax, ay, az)
        if offset:
            # Acceleration of origin i: a_{i-1} + wd x p + w x (w x p), p = (a, 0, d) in X  (7.109)
            tx, ty, tz = pwy * d, pwz * a - pwx * d, -pwy * a                    # w x p
            vx = vx + pdy * d + pwy * tz - pwz * ty
            vy = vy + pdz * a - pdx * d + pwz * tx - pwx * tz
            vz = vz - pdy * a + pwx * ty - pwy * tx
        # Rotate by Rz(-theta) into frame i.  (In a batch, components that are exactly zero
        # for every sample, as at the fixed base, stay the float 0.0: no array work on them.)
        if batched:
            wx, wy = _rz_inv(ct, st, pwx, pwy)
            wdx, wdy = _rz_inv(ct, st, pdx, pdy)
            ax, ay = _rz_inv(ct, st, vx, vy)
        else:
            wx, wy = ct * pwx + st * pwy, ct * pwy - st * pwx
            wdx, wdy = ct * pdx + st * pdy, ct * pdy - st * pdx
            ax, ay = ct * vx + st * vy, ct * vy - st * vx
        wz, wdz, az = pwz, pdz, vz
        if prism:
            # Coriolis and relative acceleration of a sliding joint (7.109, prismatic case).
            ax = ax + 2.0 * qdi * wy
            ay = ay - 2.0 * qdi * wx
            az = az + qddi
        elif batched and _zeros(wx, wy):
            wz = wz + qdi
            wdz = wdz + qddi
        else:
            # (7.107), (7.108): w_i = w_{i-1} + qd z, wd_i = wd_{i-1} + qdd z + qd w_{i-1} x z.
            wdx = wdx + qdi * wy
            wdy = wdy - qdi * wx
            wz = wz + qdi
            wdz = wdz + qddi
        kin.append((wx, wy, wz, wdx, wdy, wdz, ax, ay, az, ct, st, d, pwx, pwy, pdz))

    # Backward pass (7.112)-(7.114): forces and moments, link n to 1.
    if wrench is None:
        fx = fy = fz = nx = ny = nz = 0.0
    else:
        fx, fy, fz, nx, ny, nz = wrench
    tau = [0.0] * n
    for i in range(n - 1, -1, -1):
        (prism, ca, sa, a, th0, d0, m, cx, cy, cz, ixx, iyy, izz, ixy, ixz, iyz,
         rotor, kr, fv, fc, offset, off_centre, diagonal) = constants[i]
        wx, wy, wz, wdx, wdy, wdz, ax, ay, az, ct, st, d, pwx, pwy, pdz = kin[i]
        if m != 0.0 and not off_centre:
            fx, fy, fz = fx + m * ax, fy + m * ay, fz + m * az
        elif batched and m != 0.0:
            fx, fy, fz, nx, ny, nz = _inertial_force(m, cx, cy, cz, wx, wy, wz, wdx, wdy, wdz,
                                                     ax, ay, az, fx, fy, fz, nx, ny, nz)
        elif m != 0.0:
            # Acceleration of the centre of mass (7.110) and the inertial force.
            ux, uy, uz = wy * cz - wz * cy, wz * cx - wx * cz, wx * cy - wy * cx      # w x c
            Fx = m * (ax + wdy * cz - wdz * cy + wy * uz - wz * uy)
            Fy = m * (ay + wdz * cx - wdx * cz + wz * ux - wx * uz)
            Fz = m * (az + wdx * cy - wdy * cx + wx * uy - wy * ux)
            fx, fy, fz = fx + Fx, fy + Fy, fz + Fz
            nx = nx + cy * Fz - cz * Fy
            ny = ny + cz * Fx - cx * Fz
            nz = nz + cx * Fy - cy * Fx
        # Euler's equation about the centre of mass: I wd + w x (I w)   (7.113)
        # (diagonal I: w x (I w) = ((izz - iyy) wy wz, (ixx - izz) wz wx, (iyy - ixx) wx wy))
        if batched and diagonal:
            # (joint 1 only needs nz; a term with equal moments of inertia vanishes)
            if i:
                nx = _a(_a(nx, _m(ixx, wdx)), 0.0 if izz == iyy else _m(izz - iyy, _m(wy, wz)))
                ny = _a(_a(ny, _m(iyy, wdy)), 0.0 if ixx == izz else _m(ixx - izz, _m(wz, wx)))
            nz = _a(_a(nz, _m(izz, wdz)), 0.0 if iyy == ixx else _m(iyy - ixx, _m(wx, wy)))
        elif diagonal:
            nx = nx + ixx * wdx + (izz - iyy) * (wy * wz)
            ny = ny + iyy * wdy + (ixx - izz) * (wz * wx)
            nz = nz + izz * wdz + (iyy - ixx) * (wx * wy)
        else:
            hx = ixx * wx + ixy * wy + ixz * wz
            hy = ixy * wx + iyy * wy + iyz * wz
            hz = ixz * wx + iyz * wy + izz * wz
            nx = nx + ixx * wdx + ixy * wdy + ixz * wdz + wy * hz - wz * hy
            ny = ny + ixy * wdx + iyy * wdy + iyz * wdz + wz * hx - wx * hz
            nz = nz + ixz * wdx + iyz * wdy + izz * wdz + wx * hy - wy * hx
        # Joint torque or force (7.114): projection on z, rotor and friction terms.
        t = fz if prism else nz
        qdi = qd[i]
        if rotor != 0.0:
            t = t + rotor * (pdz + kr * qdd[i])
        if fv != 0.0:
            t = t + fv * qdi
        if fc != 0.0:
            t = t + fc * sign(qdi)
        tau[i] = t
        if i == 0:
            break
        # Hand the wrench to the parent: rotate by Rz(theta) into X, shift the moment to the
        # parent's origin (p = (a, 0, d) in X), add the rotor's reaction, rotate by Rx(alpha).
        fx, fy = ct * fx - st * fy, st * fx + ct * fy
        nx, ny = ct * nx - st * ny, st * nx + ct * ny
        if offset:
            nx, ny, nz = nx - d * fy, ny + d * fx - a * fz, nz + a * fy
        if rotor != 0.0:
            rq = rotor * qd[i]
            nx = nx + rq * pwy
            ny = ny - rq * pwx
            nz = nz + rotor * qdd[i]
        fx, fy, fz = _rot_x(ca, sa, fx, fy, fz)
        nx, ny, nz = _rot_x(ca, sa, nx, ny, nz)
    return tau


_CHUNK = 2048     # rows per batch of the recursion (see rnea)


def _float_sign(x: float) -> float:
    return float((x > 0.0) - (x < 0.0))


def _wrench_in_last_frame(model, q, f_ext, batched):
    """f_ext: wrench [f; mu] exerted BY the end effector ON the environment, world frame, moment
    about the tool point (seed 002, h_e in 7.42) -> force and moment on the last link in internal
    frame n about its origin (the terminal condition of 7.112-7.113)."""
    from .kinematics import internal_frames
    T = internal_frames(model, q)[..., -1, :, :]
    T = model.chain.base @ T
    R = T[..., :3, :3]
    f_ext = vector_argument(f_ext, 6, "f_ext", q.shape[0] if batched else None)
    f = np.einsum("...ji,...j->...i", R, f_ext[..., :3])
    mu = np.einsum("...ji,...j->...i", R, f_ext[..., 3:])
    p_tool = model.chain.flange[:3, 3]
    mu = mu + np.cross(p_tool, f)
    w = np.concatenate([f, mu], axis=-1)
    return list(w.T) if batched else w.tolist()


def rnea(model, q, qd, qdd, gravity=None, f_ext=None):
    """Inverse dynamics tau = B(q) qdd + C(q, qd) qd + F_v qd + F_s sgn(qd) + g(q) + J^T f_ext.

    ``q, qd, qdd``: shape (n,) or (N, n).  ``gravity``: world-frame gravity vector (default: the
    model's).  ``f_ext``: the wrench [force; moment] that the end effector exerts on the
    environment, world frame, moment about the tool point, shape (6,) or (N, 6).
    Returns tau with the shape of q.
    """
    (q, qd, qdd), batched = joint_arrays(model, q=q, qd=qd, qdd=qdd)
    g = model.chain.gravity_base if gravity is None else (
        model.base[:3, :3].T @ vector_argument(gravity, 3, "gravity", None))
    constants = joint_constants(model)
    if batched:
        wrench = None if f_ext is None else _wrench_in_last_frame(model, q, f_ext, True)
        N = q.shape[0]
        out = np.empty((N, len(constants)))
        g = g.tolist()
        # Large batches in chunks: the recursion keeps ~15 columns per joint alive, and beyond a
        # few MB of them the allocator returns the memory to the system after every call, so that
        # every column of the next call page-faults (slower than the arithmetic on it).
        chunks = max(-(-N // _CHUNK), 1)
        size = max(-(-N // chunks), 1)
        for start in range(0, N, size):
            stop = start + size
            part = None if wrench is None else [w[start:stop] for w in wrench]
            # A joint whose torque does not depend on the state (e.g. massless links) is a float
            # (broadcast by the assignment).
            # (columns transposed per chunk: small copies, reused by the allocator)
            q_c, qd_c, qdd_c = (np.ascontiguousarray(v[start:stop].T) for v in (q, qd, qdd))
            for j, t in enumerate(_recursion(constants, q_c, qd_c, qdd_c, g, part, np, np.sign)):
                out[start:stop, j] = t
        return out
    wrench = None if f_ext is None else _wrench_in_last_frame(model, q, f_ext, False)
    return np.array(_recursion(constants, q.tolist(), qd.tolist(), qdd.tolist(), g.tolist(), wrench,
                               math, _float_sign))


def gravity_torques(model, q, gravity=None):
    """g(q): the joint torques that hold the robot still against gravity (seed 002, 7.39)."""
    (q,), _ = joint_arrays(model, q=q)
    zeros = np.zeros_like(q)
    return rnea(model, q, zeros, zeros, gravity=gravity)


def nonlinear_effects(model, q, qd, gravity=None):
    """n(q, qd) = C(q, qd) qd + F_v qd + F_s sgn(qd) + g(q) (seed 002, 7.116 without h_e)."""
    (q, qd), _ = joint_arrays(model, q=q, qd=qd)
    return rnea(model, q, qd, np.zeros_like(q), gravity=gravity)
