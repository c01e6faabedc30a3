"""
The operational space dynamic model (Siciliano et al. 2009, Sect. 7.8, eqs. 7.127-7.141).

With x the task coordinates (by default the tool frame's [v; w] rows of the geometric Jacobian),
the joint-space model B qdd + C qd + g = tau (7.42, friction neglected as in the book's
Sect. 7.8)
seen from the task is

    Lambda xdd + mu + p = F - h                                        (7.133)
    Lambda = B_A = (J B^-1 J^T)^-1                                     (7.130)
    mu = C_A xd = Lambda J B^-1 C qd - Lambda Jdot qd                  (7.131)
    p = g_A = Lambda J B^-1 g                                          (7.132)

and for a redundant arm the torque that realises a task force F leaves a null-space torque tau_0
free (dynamic redundancy resolution):

    J_bar = B^-1 J^T Lambda          dynamically consistent inverse    (7.138)
    tau = J^T F + (I - J^T J_bar^T) tau_0                              (7.141)

J B^-1 J^T is invertible only where J has full row rank: at a kinematic singularity (or a
representation singularity of the analytic Jacobian, after eq. 7.131) the model raises
``SingularityError``, unless a ``damping`` lambda is given: Lambda = (J B^-1 J^T + lambda^2 I)^-1
is then a damped, always finite result, for which the relations above hold only approximately.
B, C qd and g are the package's full model (rotor inertias included, friction excluded).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..algorithms.mass import mass_matrix
from ..algorithms.rnea import gravity_torques, rnea
from ..control.friction import friction_torques
from ..inputs import joint_arrays, vector_argument
from .task import _matvec, gram_inverse, task_jacobian


class OperationalSpaceModel(NamedTuple):
    """The task-space model at one configuration (a leading batch dimension N for a batch)."""

    Lambda: np.ndarray     # (m, m) task-space inertia B_A (7.130), symmetric positive definite
    mu: np.ndarray         # (m,) Coriolis and centrifugal force C_A xd (7.131)
    p: np.ndarray          # (m,) gravity force g_A (7.132)
    J: np.ndarray          # (m, n) task Jacobian (rows of [v; w], or of the analytic Jacobian)
    J_bar: np.ndarray      # (n, m) dynamically consistent inverse B^-1 J^T Lambda (7.138)
    Jdot_qd: np.ndarray    # (m,) Jdot qd
    frame: str             # the task frame's name ("tool" by default)
    rows: tuple            # the rows of [v; w] in the task


def coriolis_torques(model, q, qd) -> np.ndarray:
    """Return C(q, qd) qd: the RNEA with qdd = 0, no gravity, friction removed (7.116)."""
    tau = rnea(model, q, qd, np.zeros_like(q), gravity=np.zeros(3))
    return tau - friction_torques(model, qd, q, gravity_torques)


def operational_space_model(model, q, qd=None, task="pose", frame=None, point=None,
                            representation=None, damping: float = 0.0) -> OperationalSpaceModel:
    """
    Compute Lambda, mu, p, J and J_bar (Siciliano et al. 2009, eqs. 7.130-7.132, 7.138) at (q, qd).

    ``q``, ``qd``: (n,) or (N, n) (qd None: at rest, mu = 0).  ``task``, ``frame``, ``point``,
    ``representation``: see ``task_space.task`` (default: the tool frame, geometric Jacobian,
    rows [v; w]).  ``damping``: see the module docstring.  Raises ``SingularityError`` where
    J B^-1 J^T is singular and no damping is given.
    """
    (q, qd), _ = joint_arrays(model, q=q, qd=qd)
    tj = task_jacobian(model, q, qd, task, frame, point, representation)
    J, Jt = tj.J, np.swapaxes(tj.J, -1, -2)
    B = mass_matrix(model, q)
    g = gravity_torques(model, q)
    Binv_Jt = np.linalg.solve(B, Jt)                                           # B^-1 J^T
    Lambda = gram_inverse(J @ Binv_Jt, damping, f"{model.name}: J B^-1 J^T", tj.rows)  # (7.130)
    J_bar = Binv_Jt @ Lambda                                                   # (7.138)
    J_bar_t = np.swapaxes(J_bar, -1, -2)
    # Lambda J B^-1 = J_bar^T: (7.131) mu = J_bar^T C qd - Lambda Jdot qd, (7.132) p = J_bar^T g.
    mu = _matvec(J_bar_t, coriolis_torques(model, q, qd)) - _matvec(Lambda, tj.Jdot_qd)
    p = _matvec(J_bar_t, g)
    return OperationalSpaceModel(Lambda, mu, p, J, J_bar, tj.Jdot_qd, tj.frame, tj.rows)


def null_space_projector(osm: OperationalSpaceModel) -> np.ndarray:
    """Return P = I - J^T J_bar^T (7.141): P tau_0 gives no task force or acceleration."""
    n = osm.J.shape[-1]
    return np.eye(n) - np.swapaxes(osm.J, -1, -2) @ np.swapaxes(osm.J_bar, -1, -2)


def _batch_size(osm):
    return osm.J.shape[0] if osm.J.ndim == 3 else None


def task_force(osm: OperationalSpaceModel, acceleration) -> np.ndarray:
    """Return F = Lambda xdd + mu + p, the force giving the task acceleration xdd (7.133)."""
    xdd = vector_argument(acceleration, osm.J.shape[-2], "acceleration", _batch_size(osm))
    return _matvec(osm.Lambda, xdd) + osm.mu + osm.p


def task_space_torque(osm: OperationalSpaceModel, force, null_torque=None) -> np.ndarray:
    """
    Return tau = J^T F + (I - J^T J_bar^T) tau_0, tau_0 = ``null_torque``.

    Siciliano et al. 2009, eq. 7.141.

    With F = :func:`task_force` of a desired acceleration this is the operational-space inverse
    dynamics; J_bar^T tau = F (7.140) whatever tau_0 (default 0).
    """
    m, n = osm.J.shape[-2:]
    batch = _batch_size(osm)
    F = vector_argument(force, m, "force", batch)
    tau = _matvec(np.swapaxes(osm.J, -1, -2), F)
    if null_torque is not None:
        tau0 = vector_argument(null_torque, n, "null_torque", batch)
        tau = tau + _matvec(null_space_projector(osm), tau0)
    return tau
