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

Axes that are almost but not exactly parallel (a rounded pi in a vendor's rpy) have a common
normal far away (distance / angle): the chain is kept, with a warning saying how much accuracy
the far frames cost (:data:`FAR_NORMAL_ACCURACY` bounds it).
"""
from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from ..errors import RobotDescriptionError
from ..transforms import homogeneous, rot_x
from .robot_file import BOUNDS

PARALLEL = 1e-12        # |z_i x z_{i+1}| below this: parallel axes (rounding of aligned axes)
ROUNDING = 1e-13        # lengths (relative to the chain's size) and angles this close are exact


class DhChain(NamedTuple):
    """Modified-DH parameters (rows i = 1..n) and the frames they give at q = 0."""

    alpha_prev: list[float]
    a_prev: list[float]
    theta: list[float]
    d: list[float]
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


# Almost parallel axes: the common normal lies D away, and the recursions on those frames lose
# accuracy: about eps kappa in torques and eps kappa^2 in the mass matrix, kappa = D / size (the
# composite inertia about a point D away is m D^2 before it cancels); FAR_NORMAL_FACTOR is what
# the corpus measured against Pinocchio (Lite6: 1.9e-6 for 16 eps kappa^2 = 2.6e-6).  Beyond
# FAR_NORMAL_ACCURACY the mass matrix would keep fewer than 4 digits: refused.
FAR_NORMAL_ACCURACY = 1e-4
FAR_NORMAL_FACTOR = 16


def _far_normal(relative: float, z1, z2, names, source: str) -> None:
    """Warn about (or refuse) almost parallel axes whose common normal is ``relative`` away."""
    angle = math.asin(min(1.0, float(np.linalg.norm(_cross(z1, z2)))))
    eps = FAR_NORMAL_FACTOR * np.finfo(float).eps
    accuracy = eps * relative ** 2
    message = (f"{source}: the axes of joints '{names[0]}' and '{names[1]}' are almost parallel "
               f"({angle:.3g} rad apart, as from a rounded pi such as 3.1416 in an rpy): their "
               f"common normal is {relative:.3g} times the chain's size away, so the "
               "modified-DH chain computes the mass matrix to about "
               f"{accuracy:.0e} relative and torques to about "
               f"{eps * relative:.0e}")
    if accuracy > FAR_NORMAL_ACCURACY:
        raise RobotDescriptionError(message + ", which is too inaccurate to use")
    warnings.warn(message + " (accepted)", stacklevel=3)


def dh_transform(alpha: float, a: float, theta: float, d: float) -> np.ndarray:
    """T = Rx(alpha) Tx(a) Rz(theta) Tz(d) (Renaud 1987's T_{i-1,i})."""
    ct, st = math.cos(theta), math.sin(theta)
    rz = homogeneous(np.array([[ct, -st, 0.0], [st, ct, 0.0], [0.0, 0.0, 1.0]]), [0.0, 0.0, d])
    return homogeneous(rot_x(alpha), [a, 0.0, 0.0]) @ rz


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
    params, base = [], np.eye(4)
    for i in range(n):
        if i + 1 < n and np.linalg.norm(_cross(z[i], z[i + 1])) > PARALLEL:
            x = _cross(z[i], z[i + 1])
            x /= np.linalg.norm(x)
            origin = _foot(o[i], z[i], o[i + 1], z[i + 1])
            # x's sign: a_i >= 0 (towards axis i+1) or, for intersecting axes, theta_i small.
            towards = (_foot(o[i + 1], z[i + 1], o[i], z[i]) - origin) @ x
            reference = x_prev if x_prev is not None else np.array([1.0, 0.0, 0.0])
            if towards < -tiny or (abs(towards) <= tiny and x @ reference < 0):
                x = -x
            if np.linalg.norm(origin - o[i]) > BOUNDS["length"][0]:
                _far_normal(float(np.linalg.norm(origin - o[i])) / scale, z[i], z[i + 1],
                            names[i:i + 2], source)
        else:
            origin = h
            w = _perpendicular(o[i + 1] - h, z[i]) if i + 1 < n else np.zeros(3)
            if w @ w > tiny * tiny:
                x = w / np.linalg.norm(w)
            else:
                x = x_prev if x_prev is not None else _any_normal(z[i])
        if x_prev is None:          # frame 0 is F_1 at q = 0
            base = _frame(origin, x, z[i])
            params.append((0.0, 0.0, 0.0, 0.0))
        else:
            params.append((_angle_about(z_prev, z[i], x_prev), float((h - origin_prev) @ x_prev),
                           _angle_about(x_prev, x, z[i]), float((origin - h) @ z[i])))
        if i + 1 < n:               # where x_i meets axis i+1
            h = _foot(o[i + 1], z[i + 1], origin, x)
        x_prev, z_prev, origin_prev = x, z[i], origin
    alpha, a, theta, d = (list(column) for column in zip(*params))
    alpha, theta = [_snap_angle(v) for v in alpha], [_snap_angle(v) for v in theta]
    a, d = [0.0 if abs(v) < tiny else v for v in a], [0.0 if abs(v) < tiny else v for v in d]
    if not np.all(np.isfinite([alpha, a, theta, d])):
        raise RobotDescriptionError(f"{source}: joints {list(names)}: the joint axes and origins "
                                    "give no finite modified-DH chain")
    frames, frame = [], base
    for row in zip(alpha, a, theta, d):
        frame = frame @ dh_transform(*row)
        frames.append(frame)
    return DhChain(alpha, a, theta, d, base, np.array(frames))
