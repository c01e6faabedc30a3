"""
Recursive Newton-Euler inverse dynamics in link frames (Siciliano et al. 2009, eqs. 7.107-7.114).

This file is the recursion as the textbook writes it, for one configuration, on Python floats (no
numpy call per operation: about 15 us for six joints).  A batch (N, n) runs the same recursion on
numpy columns in ``rnea_batch.py``, which also skips the work on components that are zero for the
whole batch.

Frames are the model's internal modified-DH frames (see ``model/model.py``): joint i turns about,
or slides along, the local z of frame i; T_{i-1,i} = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i)
Tz(d_i).  Each parent-to-child rotation is done in two steps, first Rx(-alpha) into the
intermediate frame X, where the offset between origins is simply (a, 0, d), then Rz(-theta).

Gravity enters as an upward acceleration of the base, pdd_0 = -g (Siciliano et al. 2009, Sect.
7.5.2; Milićević et al., Table 2).  Motors follow Siciliano et al. 2009: rotor i sits on link i-1
and spins about joint axis i at k_r,i qd_i; the link data include the locked rotor, and the spin
adds::

  k_r,i I_m,i (qdd_i z + qd_i w_{i-1} x z)   to the moment balance of link i-1   (7.113)
  k_r,i I_m,i (wd_{i-1} . z + k_r,i qdd_i)    to tau_i                             (7.111), (7.114)

Friction adds F_v qd + F_s sgn(qd) on the joint side (7.114).
"""
from __future__ import annotations

import math

import numpy as np

from ..inputs import joint_arrays, vector_argument
from ..model.joint_constants import joint_fields
from .rotations import rot_x, rot_x_inv

# The per-joint constants each pass reads (model/joint_constants.py), in the order unpacked below.
FORWARD_FIELDS = ("prismatic", "cos_alpha", "sin_alpha", "a", "theta0", "d0", "offset")
BACKWARD_FIELDS = ("prismatic", "cos_alpha", "sin_alpha", "a", "mass", "cx", "cy", "cz",
                   "ixx", "iyy", "izz", "ixy", "ixz", "iyz", "rotor", "gear_ratio", "viscous",
                   "coulomb", "offset", "off_centre", "diagonal")


def _sign(x: float) -> float:
    return float((x > 0.0) - (x < 0.0))


def _recursion(model, q, qd, qdd, g, wrench):
    """
    Return tau (list of floats) for one configuration (lists of floats).

    ``wrench`` is (fx, fy, fz, nx, ny, nz) on the last link in internal frame n, moment about its
    origin, or None.
    """
    n = model.n
    # Forward pass (7.107)-(7.111): angular velocity w, angular acceleration wd and the linear
    # acceleration a of each frame origin (minus g), in the link's own frame.
    wx = wy = wz = 0.0
    wdx = wdy = wdz = 0.0
    ax, ay, az = -g[0], -g[1], -g[2]
    kin = []
    for i, (prism, ca, sa, a, th0, d0, offset) in enumerate(joint_fields(model, FORWARD_FIELDS)):
        qi, qdi, qddi = q[i], qd[i], qdd[i]
        th, d = (th0, d0 + qi) if prism else (th0 + qi, d0)
        ct, st = math.cos(th), math.sin(th)
        # Parent quantities in the intermediate frame X.
        pwx, pwy, pwz = rot_x_inv(ca, sa, wx, wy, wz)
        pdx, pdy, pdz = rot_x_inv(ca, sa, wdx, wdy, wdz)
        vx, vy, vz = rot_x_inv(ca, sa, ax, ay, az)
        if offset:
            # a_i = a_{i-1} + wd x p + w x (w x p), p = (a, 0, d) in X   (7.109)
            tx, ty, tz = pwy * d, pwz * a - pwx * d, -pwy * a                    # w x p
            vx = vx + pdy * d + pwy * tz - pwz * ty
            vy = vy + pdz * a - pdx * d + pwz * tx - pwx * tz
            vz = vz - pdy * a + pwx * ty - pwy * tx
        # Rotate by Rz(-theta) into frame i.
        wx, wy = ct * pwx + st * pwy, ct * pwy - st * pwx
        wdx, wdy = ct * pdx + st * pdy, ct * pdy - st * pdx
        ax, ay = ct * vx + st * vy, ct * vy - st * vx
        wz, wdz, az = pwz, pdz, vz
        if prism:
            # Coriolis and relative acceleration of a sliding joint (7.109, prismatic case).
            ax = ax + 2.0 * qdi * wy
            ay = ay - 2.0 * qdi * wx
            az = az + qddi
        else:
            # (7.107), (7.108): w_i = w_{i-1} + qd z, wd_i = wd_{i-1} + qdd z + qd w_{i-1} x z.
            wdx = wdx + qdi * wy
            wdy = wdy - qdi * wx
            wz = wz + qdi
            wdz = wdz + qddi
        kin.append((wx, wy, wz, wdx, wdy, wdz, ax, ay, az, ct, st, d, pwx, pwy, pdz))

    # Backward pass (7.112)-(7.114): force f and moment nm on each link, from link n to 1.
    fx, fy, fz, nx, ny, nz = wrench if wrench is not None else (0.0,) * 6
    tau = [0.0] * n
    backward = joint_fields(model, BACKWARD_FIELDS)
    for i in range(n - 1, -1, -1):
        (prism, ca, sa, a, m, cx, cy, cz, ixx, iyy, izz, ixy, ixz, iyz,
         rotor, kr, fv, fc, offset, off_centre, diagonal) = backward[i]
        wx, wy, wz, wdx, wdy, wdz, ax, ay, az, ct, st, d, pwx, pwy, pdz = kin[i]
        if m != 0.0 and not off_centre:
            fx, fy, fz = fx + m * ax, fy + m * ay, fz + m * az
        elif m != 0.0:
            # Acceleration of the centre of mass (7.110) and the inertial force m a_c.
            ux, uy, uz = wy * cz - wz * cy, wz * cx - wx * cz, wx * cy - wy * cx      # w x c
            Fx = m * (ax + wdy * cz - wdz * cy + wy * uz - wz * uy)
            Fy = m * (ay + wdz * cx - wdx * cz + wz * ux - wx * uz)
            Fz = m * (az + wdx * cy - wdy * cx + wx * uy - wy * ux)
            fx, fy, fz = fx + Fx, fy + Fy, fz + Fz
            nx = nx + cy * Fz - cz * Fy
            ny = ny + cz * Fx - cx * Fz
            nz = nz + cx * Fy - cy * Fx
        # Euler's equation about the centre of mass: I wd + w x (I w)   (7.113)
        if diagonal:
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
        if rotor != 0.0:
            t = t + rotor * (pdz + kr * qdd[i])
        if fv != 0.0:
            t = t + fv * qd[i]
        if fc != 0.0:
            t = t + fc * _sign(qd[i])
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
        fx, fy, fz = rot_x(ca, sa, fx, fy, fz)
        nx, ny, nz = rot_x(ca, sa, nx, ny, nz)
    return tau


def wrench_in_last_frame(model, q, f_ext, batched):
    """
    Convert f_ext to the force and moment on the last link, internal frame n, about its origin.

    f_ext: wrench [f; mu] exerted BY the end effector ON the environment, world frame, moment
    about the tool point (Siciliano et al. 2009, h_e in 7.42) -> force and moment on the last link
    in internal frame n about its origin (the terminal condition of 7.112-7.113), as six
    components.
    """
    from .kinematics import internal_frames
    T = model.chain.base @ internal_frames(model, q)[..., -1, :, :]
    R = T[..., :3, :3]
    f_ext = vector_argument(f_ext, 6, "f_ext", q.shape[0] if batched else None)
    f = np.einsum("...ji,...j->...i", R, f_ext[..., :3])
    mu = np.einsum("...ji,...j->...i", R, f_ext[..., 3:])
    mu = mu + np.cross(model.chain.flange[:3, 3], f)
    w = np.concatenate([f, mu], axis=-1)
    return list(w.T) if batched else w.tolist()


def gravity_in_base(model, gravity):
    """Return the base-frame gravity vector: the model's, or the world-frame ``gravity`` given."""
    if gravity is None:
        return model.chain.gravity_base
    return model.base[:3, :3].T @ vector_argument(gravity, 3, "gravity", None)


def rnea(model, q, qd, qdd, gravity=None, f_ext=None):
    """
    Inverse dynamics tau = B(q) qdd + C(q, qd) qd + F_v qd + F_s sgn(qd) + g(q) + J^T f_ext.

    ``q, qd, qdd``: shape (n,) or (N, n).  ``gravity``: world-frame gravity vector (default: the
    model's).  ``f_ext``: the wrench [force; moment] that the end effector exerts on the
    environment, world frame, moment about the tool point, shape (6,) or (N, 6).
    Returns tau with the shape of q.
    """
    (q, qd, qdd), batched = joint_arrays(model, q=q, qd=qd, qdd=qdd)
    g = gravity_in_base(model, gravity)
    wrench = None if f_ext is None else wrench_in_last_frame(model, q, f_ext, batched)
    if batched:
        from .rnea_batch import rnea_columns      # (it reads this module's field lists)
        return rnea_columns(model, q, qd, qdd, g.tolist(), wrench)
    return np.array(_recursion(model, q.tolist(), qd.tolist(), qdd.tolist(), g.tolist(), wrench))


def gravity_torques(model, q, gravity=None):
    """g(q): the torques that hold the robot against gravity (Siciliano et al. 2009, eq. 7.39)."""
    (q,), _ = joint_arrays(model, q=q)
    zeros = np.zeros_like(q)
    return rnea(model, q, zeros, zeros, gravity=gravity)


def nonlinear_effects(model, q, qd, gravity=None):
    """n(q, qd) = C qd + F_v qd + F_s sgn(qd) + g(q) (Siciliano et al. 2009, eq. 7.116, h_e 0)."""
    (q, qd), _ = joint_arrays(model, q=q, qd=qd)
    return rnea(model, q, qd, np.zeros_like(q), gravity=gravity)
