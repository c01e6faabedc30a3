"""
The modified-DH chain of any serial chain of joint axes.

Craig's construction; the frames of Renaud 1987.

Given the n joint axes at q = 0 as lines (a point o_i and a unit direction z_i, in one frame, the
world), frames F_i are placed with z_i along axis i and x_i along the common normal from axis i to
axis i+1, the origin O_i where that normal meets axis i.  Then each joint's transform is
T_{i-1,i} = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i + q) Tz(d_i) (revolute) or with d_i + q
(prismatic): the model's internal form (``model.Chain``), so every algorithm works unchanged.

* alpha_{i-1}: the angle from z_{i-1} to z_i about x_{i-1}; a_{i-1}: the distance from axis i-1 to
  axis i along x_{i-1}; theta_i: the angle from x_{i-1} to x_i about z_i; d_i: the distance from
  x_{i-1} to x_i along z_i (measured from h_i, where x_{i-1} meets axis i).
* x_i points from axis i to axis i+1 (a_i >= 0); for intersecting axes its sign keeps theta_i
  within +-pi/2.  Parallel axes (within :data:`PARALLEL`) have no unique common normal: x_i is the
  perpendicular through h_i (so d_i = 0), or x_{i-1} again if the axes are the same line.
* Frame 0 (the base): the world frame itself when axis 1 is its z axis (the usual arm standing on
  its base), otherwise F_1 at q = 0 (alpha_0 = a_0 = theta_1 = d_1 = 0).  The last frame F_n keeps
  x_{n-1} (theta_n = d_n = 0); the tool transform carries the rest.
* Lengths within rounding of zero and angles within rounding of a multiple of pi/2 are made exact
  (so a_{i-1} = 0 for intersecting axes and the recursions skip that work).

Almost parallel axes (a rounded pi such as 3.1416 in a vendor's rpy: 7e-6 rad) have a common
normal whose foot lies distance / angle away, kilometres from the robot; frames there would put
every moment arm of the recursions kilometres long, and they would cancel catastrophically
(errors of eps (D / size)^2 in the mass matrix: 6e-7 for UFACTORY's Lite6).  Even where the foot
is near, the normal's direction from a cross product of the world directions is off by
eps / angle (3e-11 rad at 7e-6 rad; 5e-9 at 4.6e-8), and x_i then misses axis i+1 by that times
a_i.  So where axes i and i+1 are within :data:`NEAR_PARALLEL` of parallel (but not parallel)
or the foot on axis i lies farther than :data:`FAR_NORMAL` times the chain's size from the URDF
joint origin o_i, F_i stays at o_i, its x_i still along z_i x z_{i+1} (computed in a frame whose
z is z_i, so that x_i is perpendicular to both axes to rounding), and row i+1 gets a general
offset: O_{i+1} in F_i is
Rx(alpha_i) (a_i, e_{i+1}, d_{i+1}), e_{i+1} along the y axis of Rx(alpha_i) (``model.Chain``).
a_i is still the axes' distance (the common normal's length); e and d are the exact offsets,
all of the robot's size.  This is Pinocchio's joint placement restricted to the DH rotation (the
rotation Rx(alpha) Rz(theta) needs x_i perpendicular to z_i and z_{i+1}, which the common
normal's direction gives), in the spirit of the extra offset b along z_{i-1} of W. Khalil and J.
Kleinfinger, "A new geometric notation for open and closed-loop robots", IEEE ICRA 1986; their b
itself would not do here: for almost parallel axes b and d are both kilometres and cancel.
Everywhere else the construction is the plain one above (e = 0).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import RobotDescriptionError
from ..transforms import exact_cos_sin, homogeneous, joint_transform, placement

PARALLEL = 1e-12        # |z_i x z_{i+1}| below this: parallel axes (rounding of aligned axes)
ROUNDING = 1e-13        # lengths (relative to the chain's size) and angles this close are exact
# The frame stays at the URDF joint origin (module docstring) where the axes are this close to
# parallel, |z_i x z_{i+1}| (rad; 0.57 degrees: the plain construction's error eps / angle then
# stays below 2e-14), or where the common normal's foot is farther than FAR_NORMAL times the
# chain's size from the joint origin.
NEAR_PARALLEL = 1e-2
FAR_NORMAL = 1.0


class DhChain(NamedTuple):
    """Modified-DH parameters (rows i = 1..n), offsets e and the frames they give at q = 0."""

    alpha_prev: list[float]
    a_prev: list[float]
    theta: list[float]
    d: list[float]
    e: list[float]          # 0 but after a frame kept at its joint origin (module docstring)
    base: np.ndarray        # F_0 in the world
    frames: np.ndarray      # F_i in the world at q = 0, (n, 4, 4), from the parameters above


def _cross(u, v) -> np.ndarray:
    """Return u x v of two 3-vectors (np.cross costs ~20 us a call on these)."""
    return np.array([u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                     u[0] * v[1] - u[1] * v[0]])


def _angle_about(u, v, axis) -> float:
    """Return the angle that turns u into v about ``axis`` (u, v perpendicular to it)."""
    return math.atan2(float(_cross(u, v) @ axis), float(u @ v))


def _perpendicular(v, z) -> np.ndarray:
    return v - (v @ z) * z


def _snap_angle(x: float) -> float:
    k = round(x / (math.pi / 2))
    return k * (math.pi / 2) if abs(x - k * (math.pi / 2)) < ROUNDING else x + 0.0


def _any_normal(z) -> np.ndarray:
    """Return a unit vector perpendicular to z, near the world x axis (y if z is near x)."""
    w = _perpendicular(np.array([1.0, 0.0, 0.0]), z)
    if w @ w < 0.25:
        w = _perpendicular(np.array([0.0, 1.0, 0.0]), z)
    return w / np.linalg.norm(w)


def _foot(o1, z1, o2, z2) -> np.ndarray:
    """Return the point of line (o1, z1) closest to line (o2, z2) (lines not parallel)."""
    c = _cross(z1, z2)
    t = float(_cross(o2 - o1, z2) @ c) / float(c @ c)
    return o1 + t * z1


def _frame(origin, x, z) -> np.ndarray:
    return homogeneous(np.column_stack([x, _cross(z, x), z]), origin)


def _normal_direction(z1, z2) -> np.ndarray:
    """
    Return z1 x z2 normalised, perpendicular to z1 and z2 to rounding however close they are.

    Computed in an orthonormal frame whose z is z1, where z1 x z2 = (-w_y, w_x, 0) with w = z2 in
    that frame: no difference of nearly equal products, which the world cross product of two
    almost parallel directions has (off by eps / angle).
    """
    u = _any_normal(z1)
    basis = np.column_stack([u, _cross(z1, u), z1])
    w = basis.T @ z2
    local = np.array([-w[1], w[0], 0.0])
    return basis @ (local / math.hypot(local[0], local[1]))


def dh_transform(alpha: float, a: float, theta: float, d: float, e: float = 0.0) -> np.ndarray:
    """T = Rx(alpha) Trans(a, e, d) Rz(theta): Renaud 1987's T_{i-1,i}, and the offset e."""
    return joint_transform(alpha, theta, placement(alpha, a, e, d))


def _general_row(z_prev, x_prev, origin_prev, z, x, origin) -> tuple:
    """Return (alpha, a, theta, d, e) of a frame after one kept at its joint origin."""
    alpha = _angle_about(z_prev, z, x_prev)
    p = np.column_stack([x_prev, _cross(z_prev, x_prev), z_prev]).T @ (origin - origin_prev)
    ca, sa = exact_cos_sin(alpha)           # (a, e, d) = Rx(-alpha) p, as model.Chain has it
    return (alpha, float(p[0]), _angle_about(x_prev, x, z), float(ca * p[2] - sa * p[1]),
            float(ca * p[1] + sa * p[2]))


def _common_normal(o, z, i, x_prev, tiny, scale):
    """Return (O_i, x_i, kept) of axes i, i+1 not parallel; kept: O_i kept at o_i (doc)."""
    origin = _foot(o[i], z[i], o[i + 1], z[i + 1])
    kept = bool(np.linalg.norm(_cross(z[i], z[i + 1])) < NEAR_PARALLEL
                or np.linalg.norm(origin - o[i]) > FAR_NORMAL * scale)
    if kept:
        origin, x = o[i], _normal_direction(z[i], z[i + 1])
        towards = (o[i + 1] - o[i]) @ x         # the axes' distance along the normal, signed
    else:
        x = _cross(z[i], z[i + 1])
        x /= np.linalg.norm(x)
        towards = (_foot(o[i + 1], z[i + 1], o[i], z[i]) - origin) @ x
    # x's sign: a_i >= 0 (towards axis i+1) or, for intersecting axes, theta_i small.
    reference = x_prev if x_prev is not None else np.array([1.0, 0.0, 0.0])
    if towards < -tiny or (abs(towards) <= tiny and x @ reference < 0):
        x = -x
    return origin, x, kept


def axes_to_dh(origins, directions, names, source: str) -> DhChain:
    """
    Return the modified-DH chain of the axes (o_i, z_i) at q = 0 (see the module docstring).

    ``names`` (the joints') and ``source`` (the file) name the axes in errors.
    """
    o = np.asarray(origins, dtype=float)
    z = np.asarray(directions, dtype=float)
    z = z / np.linalg.norm(z, axis=1)[:, None]
    n = len(o)
    scale = max(1.0, float(np.abs(o).max()))
    tiny = ROUNDING * scale
    ez = np.array([0.0, 0.0, 1.0])
    base_is_world = (np.linalg.norm(_cross(z[0], ez)) < PARALLEL and z[0] @ ez > 0
                     and np.linalg.norm(_perpendicular(o[0], ez)) < tiny)
    h = o[0] - (o[0] @ z[0]) * z[0]            # where x_0 meets axis 1: under the world origin
    x_prev = np.array([1.0, 0.0, 0.0]) if base_is_world else None
    z_prev, origin_prev = ez, np.zeros(3)
    params, base, kept = [], np.eye(4), False
    for i in range(n):
        kept_prev = kept
        if i + 1 < n and np.linalg.norm(_cross(z[i], z[i + 1])) > PARALLEL:
            origin, x, kept = _common_normal(o, z, i, x_prev, tiny, scale)
        else:
            origin, kept = h, False
            w = _perpendicular(o[i + 1] - h, z[i]) if i + 1 < n else np.zeros(3)
            if w @ w > tiny * tiny:
                x = w / np.linalg.norm(w)
            else:
                x = x_prev if x_prev is not None else _any_normal(z[i])
        if x_prev is None:          # frame 0 is F_1 at q = 0
            base = _frame(origin, x, z[i])
            params.append((0.0, 0.0, 0.0, 0.0, 0.0))
        elif kept_prev:
            params.append(_general_row(z_prev, x_prev, origin_prev, z[i], x, origin))
        else:
            params.append((_angle_about(z_prev, z[i], x_prev), float((h - origin_prev) @ x_prev),
                           _angle_about(x_prev, x, z[i]), float((origin - h) @ z[i]), 0.0))
        if i + 1 < n:               # where x_i meets axis i+1 (or passes closest to it)
            h = _foot(o[i + 1], z[i + 1], origin, x)
        x_prev, z_prev, origin_prev = x, z[i], origin
    return _finish(params, base, tiny, names, source)


def _finish(params, base, tiny, names, source) -> DhChain:
    """Snap the rows' rounding (module docstring), check them and chain their frames."""
    alpha, a, theta, d, e = (list(column) for column in zip(*params))
    alpha, theta = [_snap_angle(v) for v in alpha], [_snap_angle(v) for v in theta]
    a, d, e = ([0.0 if abs(v) < tiny else v for v in column] for column in (a, d, e))
    if not np.all(np.isfinite([alpha, a, theta, d, e])):
        raise RobotDescriptionError(f"{source}: joints {list(names)}: the joint axes and origins "
                                    "give no finite modified-DH chain")
    frames, frame = [], base
    for row in zip(alpha, a, theta, d, e):
        frame = frame @ dh_transform(*row)
        frames.append(frame)
    return DhChain(alpha, a, theta, d, e, base, np.array(frames))
