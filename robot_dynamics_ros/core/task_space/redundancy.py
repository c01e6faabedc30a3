"""
Redundancy resolution at the velocity level (Asada & Slotine 1986, Sect. 3.2).

For a task p of dimension m < n, pd = J qd (3-40) has the solutions qd = qd* + k qd_0 with
J qd_0 = 0 (3-41, 3-42).  Minimising qd^T W qd subject to J qd = pd (3-43 - 3-48) gives the
weighted solution

    qd = W^-1 J^T (J W^-1 J^T)^-1 pd                                   (3-49)

and, with W = I, the pseudo-inverse solution J^# pd, J^# = J^T (J J^T)^-1 (eq. 3-50; the book's
"m x m identity" is n x n, erratum 5).  Adding the projection (I - J^#_W J) qd_0 of any joint
velocity qd_0 moves the arm in the null space: the task velocity does not change (3-42).

J must have full row rank: at a singular configuration ``SingularityError``, unless a ``damping``
lambda is given (damped least squares, J^T (J J^T + lambda^2 I)^-1: finite everywhere, the task
velocity is then met only approximately; not in the book, which only cites the research, Sect.
3.3).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..inputs import joint_arrays, vector_argument
from .task import _matvec, gram_inverse, task_jacobian


def _weights(weights, n) -> np.ndarray | None:
    if weights is None:
        return None
    W = np.asarray(weights, dtype=float)
    if W.shape == (n,):
        W = np.diag(W)
    expected = f"{n} positive values or a symmetric positive definite {n}x{n} matrix"
    if W.shape != (n, n) or not np.isfinite(W).all() or not np.allclose(W, W.T, rtol=1e-12):
        raise InputError(f"weights: expected {expected}")
    if np.linalg.eigvalsh(W)[0] <= 0.0:
        raise InputError(f"weights: the weighting matrix W (3-43) must be positive definite: "
                         f"expected {expected}")
    return W


def weighted_pseudo_inverse(J, weights=None, damping: float = 0.0, what: str = "J W^-1 J^T",
                            rows=None) -> np.ndarray:
    """
    Return J^#_W = W^-1 J^T (J W^-1 J^T)^-1 (3-49), or J^T (J J^T)^-1 without weights (3-50).

    ``J``: (m, n) or (N, m, n).  Raises ``SingularityError`` (naming ``what`` and the task
    ``rows``) where J W^-1 J^T is singular, unless ``damping`` > 0: then (J W^-1 J^T +
    damping^2 I)^-1.
    """
    J = np.asarray(J, dtype=float)
    W = _weights(weights, J.shape[-1])
    Jt = np.swapaxes(J, -1, -2)
    WinvJt = Jt if W is None else np.linalg.solve(W, Jt)
    rows = tuple(range(J.shape[-2])) if rows is None else rows
    return WinvJt @ gram_inverse(J @ WinvJt, damping, what, rows)


def kinematic_null_space_projector(J, weights=None, damping: float = 0.0) -> np.ndarray:
    """Return I - J^#_W J: joint velocities it maps leave the task velocity unchanged (3-42)."""
    J = np.asarray(J, dtype=float)
    return np.eye(J.shape[-1]) - weighted_pseudo_inverse(J, weights, damping) @ J


def joint_velocities(model, q, task_velocity, weights=None, null_velocity=None, task="pose",
                     frame=None, point=None, damping: float = 0.0) -> np.ndarray:
    """
    Return qd = J^#_W pd + (I - J^#_W J) qd_0 (Asada & Slotine 1986, eq. 3-42 and 3-49/3-50).

    The joint velocities that give the task velocity pd = ``task_velocity`` with the least
    qd^T W qd, plus the null-space motion of qd_0 = ``null_velocity``.  ``weights``: W (n values
    for a diagonal, or n x n; default I).  ``task``, ``frame``, ``point``: see
    ``task_space.task``.  Shapes (n,) or (N, n).
    """
    (q,), _ = joint_arrays(model, q=q)
    tj = task_jacobian(model, q, None, task, frame, point)
    J = tj.J
    batch = J.shape[0] if J.ndim == 3 else None
    pd = vector_argument(task_velocity, J.shape[-2], "task_velocity", batch)
    J_pinv = weighted_pseudo_inverse(J, weights, damping, f"{model.name}: J W^-1 J^T", tj.rows)
    qd = _matvec(J_pinv, pd)
    if null_velocity is not None:
        qd0 = vector_argument(null_velocity, model.n, "null_velocity", batch)
        qd = qd + _matvec(np.eye(model.n) - J_pinv @ J, qd0)
    return qd
