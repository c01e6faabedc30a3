"""Small homogeneous-transform helpers (4x4 matrices, numpy)."""
from __future__ import annotations

import math

import numpy as np


def rot_x(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


ROUNDING = 1e-12   # |cos|, |sin| this close to 0 or 1 are taken as exact (multiples of pi/2)


def snap_unit(x: float) -> float:
    """A sine or cosine (or rotation-matrix entry) within ROUNDING of 0 or +-1 made exact."""
    if abs(x) < ROUNDING:
        return 0.0
    if abs(abs(x) - 1.0) < ROUNDING:
        return math.copysign(1.0, x)
    return float(x)


def exact_cos_sin(angle: float) -> tuple[float, float]:
    """cos and sin of a constant angle, with the round-off of multiples of pi/2 removed (so that
    alpha = pi/2 gives exactly 0 and 1, and the recursions can skip products with them)."""
    return snap_unit(math.cos(angle)), snap_unit(math.sin(angle))


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
    """Cross-product matrix, batched over leading dimensions: skew(a) @ b == cross(a, b)."""
    v = np.asarray(v)
    S = np.zeros(v.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2] = -v[..., 2], v[..., 1]
    S[..., 1, 0], S[..., 1, 2] = v[..., 2], -v[..., 0]
    S[..., 2, 0], S[..., 2, 1] = -v[..., 1], v[..., 0]
    return S
