"""
The task: frame, point, rows of [v; w] and orientation representation; its Jacobian.

Every task-space function takes the same keywords:

* ``task``: ``"pose"`` (rows [v; w], 6), ``"position"`` (v, 3), ``"orientation"`` (w, 3), or a
  sequence of row indices into [vx, vy, vz, wx, wy, wz], e.g. ``(0, 1)`` for a planar arm in the
  x-y plane (Asada & Slotine 1986's m-dimensional task, 3-39);
* ``frame``, ``point``: the frame (default the tool) and a point fixed to it (see
  ``algorithms.kinematics.jacobian``), world axes;
* ``representation``: None (the geometric Jacobian, the default) or ``"zyz"`` / ``"rpy"`` for
  the analytic Jacobian J_A of [p; phi] (Siciliano et al. 2009, eq. 7.128; Siciliano 3.66: J = T_A
  J_A).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..algorithms.kinematics import (_columns, _point_argument, frame_jacobian_dot_qd,
                                     frame_state, resolve_frame)
from ..errors import InputError, SingularityError
from ..inputs import joint_arrays
from ..model.cache import model_constant
from .orientation import (angles_from_matrix, angular_velocity_map_derivative,
                          angular_velocity_map_inverse, check_representation)
from .scalar_kinematics import frame_constants, pose_and_jacobian

TASKS = {"pose": (0, 1, 2, 3, 4, 5), "position": (0, 1, 2), "orientation": (3, 4, 5)}
ROW_NAMES = ("vx", "vy", "vz", "wx", "wy", "wz")
# Relative size of the smallest eigenvalue of a task Gram matrix (J B^-1 J^T, J J^T) below which
# the task is singular (its inverse would have lost every digit).
RANK_TOLERANCE = 1e-12
TINY = np.finfo(float).tiny


def task_rows(task) -> tuple[int, ...]:
    """Return the rows of [v; w] a task names (see the module docstring)."""
    expected = f"expected one of {list(TASKS)} or row indices 0..5 {ROW_NAMES}, got {task!r}"
    if isinstance(task, str):
        if task in TASKS:
            return TASKS[task]
        raise InputError(f"task: {expected}")
    try:
        rows = tuple(int(r) for r in task)
        integral = all(float(r) == float(t) for r, t in zip(rows, task))
    except (TypeError, ValueError):
        raise InputError(f"task: {expected}") from None
    distinct = len(set(rows)) == len(rows)
    if not rows or not integral or not distinct or not all(0 <= r <= 5 for r in rows):
        raise InputError(f"task: {expected} (distinct integers)")
    return rows


def parse_task(text: str):
    """Read a task from text: "pose", "position", "orientation" or row indices such as "0,1"."""
    if text in TASKS:
        return text
    try:
        return task_rows(tuple(int(part) for part in text.split(",")))
    except ValueError:
        raise InputError(f"task: expected one of {list(TASKS)} or row indices such as '0,1', "
                         f"got {text!r}") from None


def planar_task_rows(model, q) -> tuple[int, int] | None:
    """
    Return the rows of the arm's plane, e.g. (0, 1), if every joint moves the tool in one plane.

    That is: for some world axis k, no joint moves the tool point along k or turns the tool
    about the other two axes at q (rows v_k and w_i, i != k, of the Jacobian are zero).
    """
    J = task_jacobian(model, q).J
    for k in range(3):
        others = [i for i in range(3) if i != k]
        if np.allclose(J[k], 0.0, atol=1e-12) and np.allclose(J[[3 + i for i in others]], 0.0,
                                                              atol=1e-12):
            return tuple(others)
    return None


class TaskJacobian(NamedTuple):
    """The task Jacobian and what it was built from (a leading N for a batch)."""

    J: np.ndarray                 # (m, n): rows of the geometric (or analytic) Jacobian
    Jdot_qd: np.ndarray | None    # (m,): Jdot qd, or None when no qd was given
    pose: np.ndarray              # (4, 4): world pose of the frame
    angles: np.ndarray | None     # (3,): orientation angles (analytic Jacobian only)
    rows: tuple                   # the rows of [v; w] (or [pd; phid]) kept
    frame: str                    # the frame's name


def task_jacobian(model, q, qd=None, task="pose", frame=None, point=None,
                  representation=None) -> TaskJacobian:
    """
    Compute J, and Jdot qd when qd is given, of a task for one configuration or a batch.

    Analytic Jacobian (``representation`` given): J_A = T_A^-1 J and, differentiating
    J = T_A J_A, Jdot_A qd = T_A^-1 (Jdot qd - Tdot_A J_A qd) with phid = T^-1 w (Siciliano
    3.64-3.66).  A representation singularity raises ``SingularityError`` naming it.
    """
    rows = task_rows(task)
    if qd is None:
        (q,), _ = joint_arrays(model, q=q)
    else:
        (q, qd), _ = joint_arrays(model, q=q, qd=qd)
    link, offset, name = resolve_frame(model, frame)
    point = _point_argument(point)
    if q.ndim == 1:
        J, Jdot_qd, pose = _single(model, q, qd, link, offset, point)
    else:
        z, p, pose, target = frame_state(model, q, link, offset, point)
        linear, angular = _columns(model, z, p, target, link)
        J = np.concatenate([np.swapaxes(linear, -1, -2), np.swapaxes(angular, -1, -2)], axis=-2)
        Jdot_qd = None if qd is None else frame_jacobian_dot_qd(model, qd, z, p, pose, target,
                                                                link)
    angles = None
    if representation is not None:
        check_representation(representation)
        angles = angles_from_matrix(representation, pose)
        Tinv = angular_velocity_map_inverse(representation, angles)
        J = J.copy()
        J[..., 3:, :] = Tinv @ J[..., 3:, :]
        if qd is not None:
            phid = _matvec(J[..., 3:, :], qd)
            Td = angular_velocity_map_derivative(representation, angles, phid)
            Jdot_qd = Jdot_qd.copy()
            Jdot_qd[..., 3:] = _matvec(Tinv, Jdot_qd[..., 3:] - _matvec(Td, phid))
    index = list(rows)
    Jdot_qd = None if Jdot_qd is None else Jdot_qd[..., index]
    return TaskJacobian(J[..., index, :], Jdot_qd, pose, angles, rows, name)


def _single(model, q, qd, link, offset, point):
    """Return J, Jdot qd and the frame pose for one configuration, on floats."""
    if point is not None:           # the point's frame: the frame's axes, the point as origin
        offset = offset.copy()
        offset[:3, 3] += offset[:3, :3] @ point
    key = ("task_frame_constants", link, offset.tobytes())
    constants = model_constant(model, key, lambda m: frame_constants(m, link, offset))
    R, p, columns, bias = pose_and_jacobian(constants, q.tolist(), True,
                                            None if qd is None else qd.tolist())
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = np.reshape(R, (3, 3)), p
    if point is not None:           # back to the frame's own origin
        pose[:3, 3] -= pose[:3, :3] @ point
    J = np.reshape(columns, (model.n, 6)).T
    return J, None if bias is None else np.array(bias), pose


def _matvec(A, x):
    return np.einsum("...ij,...j->...i", A, x)


def analytic_jacobian(model, q, representation="zyz", frame=None, point=None) -> np.ndarray:
    """
    Return the analytic Jacobian J_A (6, n) of a frame's pose [p; phi]: [pd; phid] = J_A qd.

    Siciliano 3.66: J = T_A(phi) J_A.  ``SingularityError`` at a representation singularity.
    """
    representation = check_representation(representation)
    return task_jacobian(model, q, None, "pose", frame, point, representation).J


def gram_inverse(A, damping: float, what: str, rows) -> np.ndarray:
    """
    Invert a symmetric positive semi-definite task matrix such as J B^-1 J^T (..., m, m).

    Where it is singular (the task Jacobian loses rank) ``SingularityError`` names ``what``, the
    task rows and, for a batch, the configuration; with ``damping`` > 0, (A + damping^2 I)^-1.
    """
    if not (isinstance(damping, (int, float, np.floating, np.integer)) and math.isfinite(damping)
            and damping >= 0.0):
        raise InputError(f"damping: expected a finite number >= 0, got {damping!r}")
    if damping:
        A = A + damping ** 2 * np.eye(A.shape[-1])
    eig = np.linalg.eigvalsh(A)
    smallest, largest = eig[..., 0], eig[..., -1]
    if A.ndim == 2:
        bad = smallest <= RANK_TOLERANCE * max(largest, TINY)
    else:
        bad = smallest <= RANK_TOLERANCE * np.maximum(largest, TINY)
    if np.any(bad):
        k = int(np.argmax(bad)) if A.ndim > 2 else 0
        where = "" if A.ndim == 2 else f" (configuration {k} of the batch)"
        names = ", ".join(ROW_NAMES[r] for r in rows)
        value = float(np.ravel(smallest)[k])
        raise SingularityError(
            f"{what} is singular{where}: the task Jacobian (rows {names}) loses rank (smallest "
            f"eigenvalue {value:.3g}); give damping > 0 for a damped result, or a task with "
            "fewer rows")
    inverse = np.linalg.inv(A)
    return 0.5 * (inverse + np.swapaxes(inverse, -1, -2))
