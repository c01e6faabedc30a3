"""
Minimal orientation representations: ZYZ Euler angles and roll-pitch-yaw.

Both describe a rotation by three angles phi (Siciliano et al., Sect. 2.4, the book of Siciliano et
al. 2009):

* ``"zyz"``: Euler angles (phi, theta, psi), R = Rz(phi) Ry(theta) Rz(psi) (rotations about the
  current axes; Asada & Slotine 1986 uses the ZXZ variant, 2-20).  Singular (a representation
  singularity) where sin(theta) = 0: there only phi + psi (theta = 0) or phi - psi (theta = pi) is
  defined.
* ``"rpy"``: roll-pitch-yaw (roll, pitch, yaw) about x, y, z, R = Rz(yaw) Ry(pitch) Rx(roll): the
  URDF / ROS convention, and Siciliano's ZYX angles (phi, theta, psi) = (yaw, pitch, roll) listed
  in reverse.  (Asada & Slotine 1986 calls the rotation about z "roll", Sect. 2.1; we follow ROS.)
  Singular where cos(pitch) = 0.

The angular velocity w and the angle rates satisfy w = T(phi) phid (Siciliano 3.64 for ZYZ); the
analytic Jacobian J_A of a pose [p; phi] is related to the geometric one by J = T_A(phi) J_A with
T_A = blockdiag(I, T(phi)) (3.66; Siciliano et al. 2009, eq. 7.128 uses T_A^T to map the forces).
Where det T = 0 the analytic Jacobian does not exist: :func:`angular_velocity_map_inverse` raises a
``SingularityError`` that names the representation and the angle.

Every function takes one set of angles (3,) or a batch (N, 3); matrices (3, 3) or (N, 3, 3).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError, SingularityError

REPRESENTATIONS = ("zyz", "rpy")
# |sin(theta)| (ZYZ) or |cos(pitch)| (RPY) below this: the representation singularity (T is not
# invertible to machine precision: its inverse would amplify rounding by more than 1e9).
SINGULARITY_TOLERANCE = 1e-9


def check_representation(representation) -> str:
    """Return ``representation`` if it is one of REPRESENTATIONS, else raise an InputError."""
    if representation not in REPRESENTATIONS:
        raise InputError(f"representation: expected one of {list(REPRESENTATIONS)}, "
                         f"got {representation!r}")
    return representation


def _angles(angles) -> np.ndarray:
    a = np.asarray(angles, dtype=float)
    if a.shape[-1:] != (3,) or a.ndim > 2 or not np.isfinite(a).all():
        raise InputError(f"angles: expected 3 finite angles (or an (N, 3) batch), "
                         f"got shape {a.shape}")
    return a


def _rotations(R) -> np.ndarray:
    R = np.asarray(R, dtype=float)
    if R.shape[-2:] not in ((3, 3), (4, 4)) or R.ndim > 3 or not np.isfinite(R).all():
        raise InputError(f"rotation: expected a finite 3x3 rotation or 4x4 pose (or a batch), "
                         f"got shape {R.shape}")
    return R[..., :3, :3]


def rotation_matrix(representation: str, angles) -> np.ndarray:
    """Return the rotation matrix of three angles in a representation (module docstring)."""
    check_representation(representation)
    a = _angles(angles)
    c, s = np.cos(a), np.sin(a)
    R = np.empty(a.shape[:-1] + (3, 3))
    if representation == "zyz":
        c1, c2, c3 = c[..., 0], c[..., 1], c[..., 2]
        s1, s2, s3 = s[..., 0], s[..., 1], s[..., 2]
        # Rz(phi) Ry(theta) Rz(psi) (Siciliano 2.18)
        R[..., 0, 0] = c1 * c2 * c3 - s1 * s3
        R[..., 0, 1] = -c1 * c2 * s3 - s1 * c3
        R[..., 0, 2] = c1 * s2
        R[..., 1, 0] = s1 * c2 * c3 + c1 * s3
        R[..., 1, 1] = -s1 * c2 * s3 + c1 * c3
        R[..., 1, 2] = s1 * s2
        R[..., 2, 0], R[..., 2, 1], R[..., 2, 2] = -s2 * c3, s2 * s3, c2
    else:
        cr, cp, cy = c[..., 0], c[..., 1], c[..., 2]
        sr, sp, sy = s[..., 0], s[..., 1], s[..., 2]
        # Rz(yaw) Ry(pitch) Rx(roll) (Siciliano 2.21 with (phi, theta, psi) = (yaw, pitch, roll))
        R[..., 0, 0] = cy * cp
        R[..., 0, 1] = cy * sp * sr - sy * cr
        R[..., 0, 2] = cy * sp * cr + sy * sr
        R[..., 1, 0] = sy * cp
        R[..., 1, 1] = sy * sp * sr + cy * cr
        R[..., 1, 2] = sy * sp * cr - cy * sr
        R[..., 2, 0], R[..., 2, 1], R[..., 2, 2] = -sp, cp * sr, cp * cr
    return R


def angles_from_matrix(representation: str, R, branch: int = 1) -> np.ndarray:
    """
    Return the three angles of a rotation (or of a pose's rotation), shape (3,) or (N, 3).

    ZYZ (Siciliano 2.19): theta = atan2(+-sqrt(r13^2 + r23^2), r33), phi = atan2(+-r23, +-r13),
    psi = atan2(+-r32, -+r31); ``branch`` = 1 takes theta in (0, pi), -1 in (-pi, 0).
    RPY (2.22): yaw = atan2(+-r21, +-r11), pitch = atan2(-r31, +-sqrt(r32^2 + r33^2)),
    roll = atan2(+-r32, +-r33); ``branch`` = 1 takes pitch in (-pi/2, pi/2).
    At a representation singularity the angles are not unique: ``SingularityError``.
    """
    check_representation(representation)
    if branch not in (1, -1):
        raise InputError(f"branch: expected 1 or -1, got {branch!r}")
    R = _rotations(R)
    if representation == "zyz":
        sin_theta = branch * np.hypot(R[..., 0, 2], R[..., 1, 2])
        theta = np.arctan2(sin_theta, R[..., 2, 2])
        _raise_if_singular(representation, np.abs(sin_theta), theta)
        phi = np.arctan2(branch * R[..., 1, 2], branch * R[..., 0, 2])
        psi = np.arctan2(branch * R[..., 2, 1], -branch * R[..., 2, 0])
        return np.stack([phi, theta, psi], axis=-1)
    cos_pitch = branch * np.hypot(R[..., 2, 1], R[..., 2, 2])
    pitch = np.arctan2(-R[..., 2, 0], cos_pitch)
    _raise_if_singular(representation, np.abs(cos_pitch), pitch)
    yaw = np.arctan2(branch * R[..., 1, 0], branch * R[..., 0, 0])
    roll = np.arctan2(branch * R[..., 2, 1], branch * R[..., 2, 2])
    return np.stack([roll, pitch, yaw], axis=-1)


def _raise_if_singular(representation, measure, angle):
    bad = np.atleast_1d(measure) < SINGULARITY_TOLERANCE
    if not bad.any():
        return
    k = int(np.argmax(bad))
    at = "" if np.ndim(measure) == 0 else f" (configuration {k} of the batch)"
    value = float(np.atleast_1d(angle)[k])
    if representation == "zyz":
        raise SingularityError(
            f"ZYZ Euler angles are singular at theta = {value:.6g} rad{at}: sin(theta) = 0, so "
            "only phi + psi (theta = 0) or phi - psi (theta = pi) is defined and T(phi) is not "
            "invertible")
    raise SingularityError(
        f"roll-pitch-yaw angles are singular at pitch = {value:.6g} rad{at}: cos(pitch) = 0 "
        "(gimbal lock), so only roll -+ yaw is defined and T(phi) is not invertible")


def angular_velocity_map(representation: str, angles) -> np.ndarray:
    """
    Return T(phi) with w = T(phi) phid, w the world-frame angular velocity (Siciliano 3.64).

    ZYZ: the columns are z, Rz(phi) y and Rz(phi) Ry(theta) z:
    T = [[0, -s_phi, c_phi s_theta], [0, c_phi, s_phi s_theta], [1, 0, c_theta]].
    RPY (order roll, pitch, yaw): the columns are Rz(yaw) Ry(pitch) x, Rz(yaw) y and z:
    T = [[c_y c_p, -s_y, 0], [s_y c_p, c_y, 0], [-s_p, 0, 1]].
    """
    check_representation(representation)
    a = _angles(angles)
    c, s = np.cos(a), np.sin(a)
    T = np.zeros(a.shape[:-1] + (3, 3))
    if representation == "zyz":
        T[..., 0, 1], T[..., 1, 1], T[..., 2, 0] = -s[..., 0], c[..., 0], 1.0
        T[..., 0, 2] = c[..., 0] * s[..., 1]
        T[..., 1, 2] = s[..., 0] * s[..., 1]
        T[..., 2, 2] = c[..., 1]
    else:
        T[..., 0, 0] = c[..., 2] * c[..., 1]
        T[..., 1, 0] = s[..., 2] * c[..., 1]
        T[..., 2, 0] = -s[..., 1]
        T[..., 0, 1], T[..., 1, 1], T[..., 2, 2] = -s[..., 2], c[..., 2], 1.0
    return T


def angular_velocity_map_derivative(representation: str, angles, rates) -> np.ndarray:
    """Return Tdot = dT(phi)/dt for the angle rates phid (for Jdot_A qd of J_A)."""
    check_representation(representation)
    a, r = _angles(angles), _angles(rates)
    c, s = np.cos(a), np.sin(a)
    Td = np.zeros(np.broadcast_shapes(a.shape, r.shape)[:-1] + (3, 3))
    if representation == "zyz":
        c1, c2, s1, s2 = c[..., 0], c[..., 1], s[..., 0], s[..., 1]
        r1, r2 = r[..., 0], r[..., 1]
        Td[..., 0, 1], Td[..., 1, 1] = -c1 * r1, -s1 * r1
        Td[..., 0, 2] = -s1 * s2 * r1 + c1 * c2 * r2
        Td[..., 1, 2] = c1 * s2 * r1 + s1 * c2 * r2
        Td[..., 2, 2] = -s2 * r2
    else:
        cp, cy, sp, sy = c[..., 1], c[..., 2], s[..., 1], s[..., 2]
        rp, ry = r[..., 1], r[..., 2]
        Td[..., 0, 0] = -sy * cp * ry - cy * sp * rp
        Td[..., 1, 0] = cy * cp * ry - sy * sp * rp
        Td[..., 2, 0] = -cp * rp
        Td[..., 0, 1], Td[..., 1, 1] = -cy * ry, -sy * ry
    return Td


def angular_velocity_map_inverse(representation: str, angles) -> np.ndarray:
    """Return T(phi)^-1 (phid = T^-1 w); SingularityError at a representation singularity."""
    check_representation(representation)
    a = _angles(angles)
    measure = np.abs(np.sin(a[..., 1]) if representation == "zyz" else np.cos(a[..., 1]))
    _raise_if_singular(representation, measure, a[..., 1])
    return np.linalg.inv(angular_velocity_map(representation, a))


def analytic_jacobian_transform(representation: str, angles) -> np.ndarray:
    """Return T_A(phi) = blockdiag(I_3, T(phi)), 6x6: J = T_A J_A (Siciliano 3.66; 7.128)."""
    T = angular_velocity_map(representation, angles)
    TA = np.zeros(T.shape[:-2] + (6, 6))
    TA[..., :3, :3] = np.eye(3)
    TA[..., 3:, 3:] = T
    return TA
