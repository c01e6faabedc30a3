"""
Statics and stiffness (Asada & Slotine 1986, ch. 4).

Equivalent joint torques, the wrench transformation between frames, and the end-point compliance
of joint servo stiffness with its principal axes.  A wrench F = [f; m] is a force and a moment
about a point, in world axes unless said otherwise; as in Asada & Slotine 1986, eq. 4-3 it is what
the arm applies to the environment.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ..inputs import joint_arrays, vector_argument
from ..transforms import skew
from .task import task_jacobian


def joint_torques_for_wrench(model, q, wrench, task="pose", frame=None, point=None) -> np.ndarray:
    """
    Return tau = J^T F: the joint torques that balance the end-point wrench F.

    Asada & Slotine 1986, eq. 4-7.

    Gravity is excluded (Asada & Slotine 1986, after eq. 4-7).  F has one entry per task row
    (default [f; m], the moment about the tool point, world axes).  By virtual work tau^T dq = F^T
    dp for every dp = J dq (4-9, 4-10).
    """
    tj = task_jacobian(model, q, None, task, frame, point)
    batch = tj.J.shape[0] if tj.J.ndim == 3 else None
    F = vector_argument(wrench, tj.J.shape[-2], "wrench", batch)
    return np.einsum("...ji,...j->...i", tj.J, F)


def _pose_argument(pose) -> np.ndarray:
    T = np.asarray(pose, dtype=float)
    if T.shape != (4, 4) or not np.isfinite(T).all():
        raise InputError(f"pose: expected a finite 4x4 homogeneous transform, got shape {T.shape}")
    R = T[:3, :3]
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) <= 0.0:
        raise InputError("pose: the rotation block is not a proper rotation "
                         "(R^T R = I, det R = +1)")
    return T


def wrench_transform(pose) -> np.ndarray:
    """
    Return the 6x6 map of a wrench [f_b; m_b] in frame b to the same wrench in frame a.

    ``pose`` = T_ab is b's pose in a; the wrench in b has b's axes and its moment about b's
    origin: f_a = R f_b, m_a = R m_b + r x (R f_b), r the position of b's origin in a.  For
    parallel frames this is Asada & Slotine 1986's (4-17): F_xyz = F_uvw, M_xyz = M_uvw + r x F_uvw
    (r from the new reference point O to the old one O').  It is the transpose of the twist map
    from a to b (4-13, 4-14: Q = J^T P), so power f.v + m.w is the same in both frames.
    """
    T = _pose_argument(pose)
    R, r = T[:3, :3], T[:3, 3]
    X = np.zeros((6, 6))
    X[:3, :3], X[3:, 3:], X[3:, :3] = R, R, skew(r) @ R
    return X


def transform_wrench(wrench, pose) -> np.ndarray:
    """Express a wrench [f; m] of frame b in frame a (``pose`` = T_ab, see wrench_transform)."""
    F = np.asarray(wrench, dtype=float)
    if F.shape[-1:] != (6,) or F.ndim > 2 or not np.isfinite(F).all():
        raise InputError(f"wrench: expected 6 finite components [f; m] (or an (N, 6) batch), "
                         f"got shape {F.shape}")
    return F @ wrench_transform(pose).T


class Compliance(NamedTuple):
    """End-point compliance dp = C F (Asada & Slotine 1986, eq. 4-23) and its principal axes."""

    matrix: np.ndarray                 # (m, m) C = J K^-1 J^T (4-24), symmetric, semi-definite
    stiffness: np.ndarray | None       # (m, m) C^-1 (4-25), None where C is singular
    principal_compliances: np.ndarray  # (m,) sqrt(eig(C^2)) = eig(C), largest first (4-32, 4-33)
    principal_axes: np.ndarray         # (m, m) orthonormal directions (columns): E^T C E diagonal
    rows: tuple                        # the rows of [v; w] in the task


def end_point_compliance(model, q, joint_stiffness, task="pose", frame=None,
                         point=None) -> Compliance:
    """
    Compute the end-point compliance of joint stiffnesses k_i (tau_i = k_i dq_i, 4-18) at q.

    C = J K^-1 J^T with K = diag(k) (4-21, 4-24); a force F along a principal axis e deflects
    the end point along e by (its compliance) |F| (Sect. 4.2; E^T C E diagonal, eq. 4-34).  At a
    singularity C is singular and the stiffness infinite along N(J^T) (Sect. 4.2): ``stiffness`` is
    then None.  Batched over q (N, n).
    """
    (q,), _ = joint_arrays(model, q=q)
    k = np.asarray(joint_stiffness, dtype=float)
    if k.shape != (model.n,) or not np.isfinite(k).all() or np.any(k <= 0):
        raise InputError(f"joint_stiffness: expected {model.n} finite values > 0 (one per joint), "
                         f"got {joint_stiffness!r}")
    tj = task_jacobian(model, q, None, task, frame, point)
    J = tj.J
    C = (J / k) @ np.swapaxes(J, -1, -2)
    C = 0.5 * (C + np.swapaxes(C, -1, -2))
    eig, E = np.linalg.eigh(C)
    eig, E = eig[..., ::-1], E[..., :, ::-1]
    # C^2 has the eigenvalues eig(C)^2: their square roots (4-33) are the compliances themselves.
    compliances = np.maximum(eig, 0.0)
    singular = eig[..., -1] <= 1e-12 * np.maximum(eig[..., 0], np.finfo(float).tiny)
    stiffness = None if np.any(singular) else np.linalg.inv(C)
    return Compliance(C, stiffness, compliances, E, tj.rows)
