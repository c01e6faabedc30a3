"""Small homogeneous-transform helpers (4x4 matrices, numpy)."""
from __future__ import annotations

import math

import numpy as np


def rot_x(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


ROUNDING = 1e-12   # |cos|, |sin| this close to 0 are taken as exact (multiples of pi/2)
# ... and this close to +-1: the cosine of an angle within ROUNDING of a multiple of pi/2 is
# +-(1 - 5e-25), i.e. +-1 in floating point, so only a few ulps of rounding are snapped.  (A
# ROUNDING-wide snap to +-1 would turn cos(3.5e-7 rad) = 1 - 6e-14, almost parallel axes of a
# URDF, into 1 while the sine stays: a rotation off by 6e-14.)
UNIT_ROUNDING = 8 * np.finfo(float).eps


def snap_unit(x: float) -> float:
    """Snap a sine or cosine (or rotation-matrix entry) to exactly 0 or +-1 (the roundings)."""
    if abs(x) < ROUNDING:
        return 0.0
    if abs(abs(x) - 1.0) < UNIT_ROUNDING:
        return math.copysign(1.0, x)
    return float(x)


def exact_cos_sin(angle: float) -> tuple[float, float]:
    """
    Return cos and sin of a constant angle, with the round-off of multiples of pi/2 removed.

    So alpha = pi/2 gives exactly 0 and 1, and the recursions can skip products with them; an
    angle that is not within ROUNDING of a multiple of pi/2 keeps both as computed.
    """
    c, s = math.cos(angle), math.sin(angle)
    if abs(s) < ROUNDING:
        return math.copysign(1.0, c), 0.0
    if abs(c) < ROUNDING:
        return 0.0, math.copysign(1.0, s)
    return c, s


def placement(alpha: float, a: float, e: float, d: float) -> np.ndarray:
    """
    Return p_{i-1,i}(i-1) = Rx(alpha) (a, e, d): joint i's origin in frame i-1 (``model.Chain``).

    The modified-DH translation (a, -d sin alpha, d cos alpha) when e = 0; e is the offset along
    the y axis of Rx(alpha), perpendicular to x_{i-1} and to z_i (axes_to_dh.py).  cos and sin
    are exact at multiples of pi/2, so alpha = pi/2 gives (a, -d, e) with no 6e-17 d terms.
    """
    ca, sa = exact_cos_sin(alpha)
    return np.array([a + 0.0, ca * e - sa * d, sa * e + ca * d])


def joint_transform(alpha: float, theta: float, p) -> np.ndarray:
    """
    T_{i-1,i} = [Rx(alpha) Rz(theta), p]: a joint of the internal chain (``model.Chain``).

    A modified-DH row (Craig 1989's Rx(alpha) Tx(a) Rz(theta) Tz(d)) with ``p`` the general
    translation of :func:`placement`, as Pinocchio's jointPlacement restricted to that rotation.
    """
    ct, st = math.cos(theta), math.sin(theta)
    rz = np.array([[ct, -st, 0.0], [st, ct, 0.0], [0.0, 0.0, 1.0]])
    return homogeneous(rot_x(alpha) @ rz, p)


def rpy_matrix(rpy) -> np.ndarray:
    """Rotation from roll-pitch-yaw (URDF convention: R = Rz(yaw) Ry(pitch) Rx(roll))."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def homogeneous(rotation: np.ndarray, translation) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = rotation
    T[:3, 3] = translation
    return T


def pose_matrix(pose: dict) -> np.ndarray:
    """4x4 transform from a {'xyz': [...], 'rpy': [...]} mapping."""
    return homogeneous(rpy_matrix(pose["rpy"]), pose["xyz"])


def skew(v: np.ndarray) -> np.ndarray:
    """
    Return the cross-product matrix, batched over leading dimensions.

    skew(a) @ b == cross(a, b).
    """
    v = np.asarray(v)
    S = np.zeros(v.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2] = -v[..., 2], v[..., 1]
    S[..., 1, 0], S[..., 1, 2] = v[..., 2], -v[..., 0]
    S[..., 2, 0], S[..., 2, 1] = -v[..., 1], v[..., 0]
    return S


def rpy_from_matrix(rotation) -> list[float]:
    """
    Return the roll-pitch-yaw angles of a rotation matrix (the inverse of :func:`rpy_matrix`).

    URDF's fixed-axis angles.  Yaw first, then pitch and roll from Rz(-yaw) R = Ry(pitch) Rx(roll),
    which keeps the round trip exact to rounding also near pitch = +-pi/2 (where yaw is 0 if
    undefined).
    """
    R = np.asarray(rotation, dtype=float)
    yaw = math.atan2(R[1, 0], R[0, 0]) if abs(R[1, 0]) + abs(R[0, 0]) > 1e-300 else 0.0
    cy, sy = math.cos(yaw), math.sin(yaw)
    r00, r20 = cy * R[0, 0] + sy * R[1, 0], R[2, 0]
    r11, r12 = -sy * R[0, 1] + cy * R[1, 1], -sy * R[0, 2] + cy * R[1, 2]
    return [math.atan2(-r12, r11) + 0.0, math.atan2(-r20, r00) + 0.0, yaw + 0.0]  # no -0.0


def snap_small(values, relative: float = 1e-14) -> np.ndarray:
    """Return ``values`` with the entries below ``relative`` times the largest one made 0."""
    v = np.asarray(values, dtype=float)
    return np.where(np.abs(v) <= relative * np.abs(v).max(initial=0.0), 0.0, v) + 0.0


def pose_dict(T) -> dict:
    """
    Return the {'xyz': [...], 'rpy': [...]} mapping of a 4x4 transform (see pose_matrix).

    Rounding noise is removed: coordinates below 1e-14 of max(1 m, the largest) become 0 and
    angles within 1e-14 of a multiple of pi/2 that multiple.
    """
    T = np.asarray(T, dtype=float)
    xyz = T[:3, 3]
    xyz = np.where(np.abs(xyz) <= 1e-14 * max(1.0, float(np.abs(xyz).max())), 0.0, xyz) + 0.0
    rpy = []
    for angle in rpy_from_matrix(T[:3, :3]):
        k = round(angle / (math.pi / 2))
        rpy.append(k * (math.pi / 2) + 0.0 if abs(angle - k * (math.pi / 2)) < 1e-14 else angle)
    return {"xyz": [float(x) for x in xyz], "rpy": rpy}
