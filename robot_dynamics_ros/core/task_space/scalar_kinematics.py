"""
A frame's pose and geometric Jacobian for one configuration, on Python floats.

Iterative solvers (inverse kinematics) evaluate the kinematics of one configuration many times;
on small arrays numpy's per-call cost dominates, so, as ``algorithms/rnea.py`` does for the
dynamics, this is the computation of ``algorithms.kinematics`` written on scalars (about 5x
faster for a 7-joint arm).  The tests check it against ``algorithms.kinematics``.

Internal modified-DH frames (``model/model.py``): with R_{i-1} = [r_x r_y r_z] and X = R_{i-1}
Rx(alpha), R_i = X Rz(theta) and p_i = p_{i-1} + a r_x + d X z.
"""
from __future__ import annotations

import math

from ..algorithms.kinematics import acceleration_bias
from ..model.joint_constants import joint_fields

FIELDS = ("prismatic", "cos_alpha", "sin_alpha", "a", "theta0", "d0", "e")


def frame_constants(model, link, offset) -> tuple:
    """
    Collect what :func:`pose_and_jacobian` needs, as floats (once per solve).

    The model's joint constants and base, and the frame fixed to ``link`` at ``offset`` (see
    ``algorithms.kinematics.resolve_frame``).
    """
    base = model.chain.base
    return (model.n, link, joint_fields(model, FIELDS), tuple(map(float, base[:3, :3].ravel())),
            tuple(map(float, base[:3, 3])), tuple(map(float, offset[:3, :3].ravel())),
            tuple(map(float, offset[:3, 3])))


def pose_and_jacobian(constants, q, with_rotation=True, qd=None):
    """
    Return (R, p, columns, Jdot qd) of a frame for the joint positions ``q`` (floats).

    ``constants``: from :func:`frame_constants`.
    R: the world rotation as 9 floats, row-major (None if not ``with_rotation``); p: the world
    origin (3 floats); columns: J^T as a flat list, per joint (vx, vy, vz, wx, wy, wz), zeros
    beyond ``link``; Jdot qd (6 floats, world axes) when the joint velocities ``qd`` are given,
    else None.
    """
    n, link, joints, base_rotation, (px, py, pz), rot_off, pos_off = constants
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = base_rotation
    # Columns of R: x = (b00, b10, b20), y = (b01, b11, b21), z = (b02, b12, b22).
    xx, xy, xz, yx, yy, yz, zx, zy, zz = b00, b10, b20, b01, b11, b21, b02, b12, b22
    axes = []
    for i in range(link):
        prism, ca, sa, a, th0, d0, e = joints[i]
        qi = q[i]
        th, d = (th0, d0 + qi) if prism else (th0 + qi, d0)
        # X = R Rx(alpha): x stays, y' = ca y + sa z, z' = ca z - sa y
        y2x, y2y, y2z = ca * yx + sa * zx, ca * yy + sa * zy, ca * yz + sa * zz
        z2x, z2y, z2z = ca * zx - sa * yx, ca * zy - sa * yy, ca * zz - sa * yz
        px, py, pz = px + a * xx + d * z2x, py + a * xy + d * z2y, pz + a * xz + d * z2z
        if e != 0.0:                # O_i = O_{i-1} + a x + e y' + d z' (model.Chain)
            px, py, pz = px + e * y2x, py + e * y2y, pz + e * y2z
        ct, st = math.cos(th), math.sin(th)
        xx, xy, xz, yx, yy, yz = (ct * xx + st * y2x, ct * xy + st * y2y, ct * xz + st * y2z,
                                  ct * y2x - st * xx, ct * y2y - st * xy, ct * y2z - st * xz)
        zx, zy, zz = z2x, z2y, z2z
        axes.append((prism, zx, zy, zz, px, py, pz))
    o00, o01, o02, o10, o11, o12, o20, o21, o22 = rot_off
    ox, oy, oz = pos_off
    tx = px + xx * ox + yx * oy + zx * oz
    ty = py + xy * ox + yy * oy + zy * oz
    tz = pz + xz * ox + yz * oy + zz * oz
    R = None
    if with_rotation:
        # world R = [x y z] @ offset rotation, row-major
        R = (xx * o00 + yx * o10 + zx * o20, xx * o01 + yx * o11 + zx * o21,
             xx * o02 + yx * o12 + zx * o22,
             xy * o00 + yy * o10 + zy * o20, xy * o01 + yy * o11 + zy * o21,
             xy * o02 + yy * o12 + zy * o22,
             xz * o00 + yz * o10 + zz * o20, xz * o01 + yz * o11 + zz * o21,
             xz * o02 + yz * o12 + zz * o22)
    columns = []
    for prism, ax, ay, az, ox, oy, oz in axes:
        if prism:
            columns += (ax, ay, az, 0.0, 0.0, 0.0)
        else:
            rx, ry, rz = tx - ox, ty - oy, tz - oz
            columns += (ay * rz - az * ry, az * rx - ax * rz, ax * ry - ay * rx, ax, ay, az)
    columns += [0.0] * (6 * (n - link))
    bias = None
    if qd is not None:
        a, wd, _, _ = acceleration_bias(axes, qd, tx, ty, tz)
        bias = a + wd
    return R, (tx, ty, tz), columns, bias
