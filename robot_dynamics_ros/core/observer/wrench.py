"""
The external wrench at the tool and its joint torques: J^T F, and F from a residual r (damped).

A wrench F = [f; m] (force, moment about the tool point) applied to the robot at the tool causes
the joint torques J^T F (Siciliano et al., Robotics: Modelling, Planning and Control, eq. 3.111;
Asada & Slotine 1986, eq. 4-7).  Given the residual r, F is the damped least-squares solution
(Nakamura and Hanafusa, 1986; Chiaverini, "Singularity-robust task-priority redundancy resolution",
IEEE TRA 13(3), 1997) of J^T F = r:

    F = argmin |J^T F - r|^2 + lambda^2 |F|^2 = sum_i sigma_i / (sigma_i^2 + lambda^2) u_i v_i^T r

from the SVD J = sum_i sigma_i u_i v_i^T.  The damping acts only near a singularity:
lambda^2 = (1 - (sigma_min / epsilon)^2) lambda_max^2 when the smallest singular value sigma_min
is below epsilon, else 0 (then F is the exact minimum-norm solution for n <= 6, the least-squares
one for n > 6).  Near a singularity the wrench components along the lost directions are not
observable from joint torques; the damping bounds them instead of amplifying noise.  Force and
moment rows are mixed in one norm, as in any Jacobian pseudo-inverse (units: N, N m, m).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from ..inputs import joint_arrays, vector_argument
from ..model.cache import model_constant
from ..task_space.scalar_kinematics import frame_constants, pose_and_jacobian
from ..task_space.task import task_jacobian

REFERENCES = ("local", "world")


def check_damping(damping: float, singular_value: float):
    """Raise InputError unless lambda_max >= 0 and epsilon > 0 are finite."""
    if not (math.isfinite(damping) and damping >= 0.0):
        raise InputError(f"damping: expected a finite value >= 0, got {damping!r}")
    if not (math.isfinite(singular_value) and singular_value > 0.0):
        raise InputError(f"singular_value: expected a finite value > 0, got {singular_value!r}")


def damped_transpose_solve(J: np.ndarray, r: np.ndarray, damping: float,
                           singular_value: float) -> np.ndarray:
    """Return F with J^T F = r, damped as in the module docstring; J (..., 6, n), r (..., n)."""
    U, s, Vt = np.linalg.svd(J, full_matrices=False)
    if J.ndim == 2 and s[-1] > 0.0:         # (one configuration of full rank: the common case)
        ratio = min(float(s[-1]) / singular_value, 1.0)
        return U @ (s / (s * s + (1.0 - ratio * ratio) * (damping * damping)) * (Vt @ r))
    ratio = np.minimum(s[..., -1:] / singular_value, 1.0)
    denominator = s * s + (1.0 - ratio * ratio) * (damping * damping)
    gain = np.divide(s, denominator, out=np.zeros_like(s), where=denominator > 0.0)
    coefficients = gain * (Vt @ r[..., None])[..., 0]
    return (U @ coefficients[..., None])[..., 0]


def _rotate(R, F, inverse: bool = False) -> np.ndarray:
    """Return the wrench F = [f; m] with both parts turned by R (by R^T with ``inverse``)."""
    if inverse:
        R = np.swapaxes(R, -1, -2)
    return np.concatenate([np.einsum("...ij,...j->...i", R, F[..., :3]),
                           np.einsum("...ij,...j->...i", R, F[..., 3:])], axis=-1)


def _check_reference(reference: str):
    if reference not in REFERENCES:
        raise InputError(f"reference: expected one of {list(REFERENCES)}, got {reference!r}")


def joint_torques_of_wrench(model, q, wrench, reference: str = "local") -> np.ndarray:
    """
    Return J^T F: the joint torques that the wrench F applied to the robot at the tool causes.

    ``wrench`` [f; m], moment about the tool point, in the tool's axes ("local") or the world's;
    (6,) or (N, 6) with ``q`` (n,) or (N, n).  (The core's statics give the same J^T F in world
    axes for the wrench the arm exerts, Asada & Slotine 1986, eq. 4-7.)
    """
    (q,), batched = joint_arrays(model, q=q)
    F = vector_argument(wrench, 6, "wrench", q.shape[0] if batched else None)
    _check_reference(reference)
    tj = task_jacobian(model, q)                  # world axes, the tool point
    if reference == "local":
        F = _rotate(tj.pose[..., :3, :3], F)
    return np.einsum("...ji,...j->...i", tj.J, F)


def wrench_from_residual(model, q, residual, damping: float = 0.05,
                         singular_value: float = 0.1, reference: str = "local") -> np.ndarray:
    """
    Return the wrench [f; m] at the tool point whose J^T F best explains ``residual``.

    ``reference``: "local" (the tool frame's axes, as a wrist force-torque sensor reports it) or
    "world".  ``damping`` lambda_max and ``singular_value`` epsilon as in the module docstring.
    ``q``, ``residual``: (n,) or (N, n); the result (6,) or (N, 6).
    """
    (q, residual), _ = joint_arrays(model, q=q, residual=residual)
    check_damping(damping, singular_value)
    _check_reference(reference)
    tj = task_jacobian(model, q)                  # world axes, the tool point
    F = damped_transpose_solve(tj.J, residual, damping, singular_value)
    # the damped solution turns with the axes (the norms are invariant): rotate F, not J
    return _rotate(tj.pose[..., :3, :3], F, inverse=True) if reference == "local" else F


def wrench_values(model, q: list, residual: list, damping: float = 0.05,
                  singular_value: float = 0.1) -> list:
    """
    Return :func:`wrench_from_residual` in the tool's axes for lists of n finite floats.

    The per-message path of the node: no argument checks, the tool Jacobian on floats
    (``task_space.scalar_kinematics``), the same damped solution (the same numbers to rounding).
    """
    constants = model_constant(model, "observer_tool_frame",
                               lambda m: frame_constants(m, m.n, m.chain.flange))
    R, _, columns, _ = pose_and_jacobian(constants, q, True)
    J = np.array(columns).reshape(model.n, 6).T
    fx, fy, fz, mx, my, mz = damped_transpose_solve(J, np.array(residual), damping,
                                                    singular_value).tolist()
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = R          # world <- tool; apply R^T
    return [r00 * fx + r10 * fy + r20 * fz, r01 * fx + r11 * fy + r21 * fz,
            r02 * fx + r12 * fy + r22 * fz, r00 * mx + r10 * my + r20 * mz,
            r01 * mx + r11 * my + r21 * mz, r02 * mx + r12 * my + r22 * mz]
