"""
The dynamic manipulability ellipsoid (Siciliano et al. 2009, Sect. 7.9, eqs. 7.142-7.149).

At rest (qd = 0, no contact), the torques of unit norm, tau^T tau = 1 (7.142), give the
end-effector accelerations vd_e = J qdd (7.144) with B qdd + g = tau (7.143).  With the
minimum-norm accelerations (J^+ = J^T (J J^T)^-1, the right pseudo-inverse, 7.145) and the
null-space part of B^-1 g dropped (7.146-7.147), tau = B J^+ (vd_e + J B^-1 g), so

    (vd_e + J B^-1 g)^T J^+T B^T B J^+ (vd_e + J B^-1 g) = 1           (7.148)

(J^+ = J^-1 for a square Jacobian, 7.149).  The core Q = J^+T B^T B J^+ gives the shape:
semi-axes 1/sqrt(lambda_k) along the eigenvectors of Q; gravity moves the centre to -J B^-1 g,
the end-effector acceleration of the arm falling from rest with zero torque.

The torque-limit-normalised variant (not in the book) takes tau = L tau' with tau'^T tau' = 1 and
L = diag(effort limits), i.e. Q = J^+T B L^-2 B J^+: the accelerations the actuators can give
when every joint's torque, relative to its limit, has unit norm (the centre is unchanged).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..algorithms.mass import mass_matrix
from ..algorithms.rnea import gravity_torques
from ..inputs import joint_arrays
from .task import _matvec, gram_inverse, task_jacobian


class ManipulabilityEllipsoid(NamedTuple):
    """The ellipsoid (vd - centre)^T matrix (vd - centre) = 1 in task coordinates."""

    matrix: np.ndarray       # (m, m) Q = J^+T B^T B J^+ (or with L^-2 between the B's)
    semi_axes: np.ndarray    # (m,) lengths 1/sqrt(eig(Q)), longest first
    directions: np.ndarray   # (m, m) unit directions of the semi-axes, as columns
    centre: np.ndarray       # (m,) -J B^-1 g: the gravity-induced shift (7.147)
    J: np.ndarray            # (m, n) the task Jacobian
    rows: tuple              # the rows of [v; w] in the task
    torque_limited: bool     # True: joint torques normalised by their effort limits


def dynamic_manipulability(model, q, task="pose", frame=None, point=None,
                           torque_limited: bool = False,
                           damping: float = 0.0) -> ManipulabilityEllipsoid:
    """
    Compute the dynamic manipulability ellipsoid at q.

    Siciliano et al. 2009, eq. 7.148 (eq. 7.149 for a square J).

    ``task``, ``frame``, ``point``: the task (see ``task_space.task``; default the tool frame's
    [v; w]); for a planar arm give its plane's rows, e.g. ``task=(0, 1)``.  ``torque_limited``:
    normalise the joint torques by the effort limits.  At a kinematic singularity J J^T is
    singular: ``SingularityError``, or with ``damping`` > 0 the damped pseudo-inverse
    J^T (J J^T + damping^2 I)^-1.  Batched over q (N, n): every field gets a leading N.
    """
    (q,), _ = joint_arrays(model, q=q)
    tj = task_jacobian(model, q, None, task, frame, point)
    J, Jt = tj.J, np.swapaxes(tj.J, -1, -2)
    B = mass_matrix(model, q)
    J_pinv = Jt @ gram_inverse(J @ Jt, damping, f"{model.name}: J J^T", tj.rows)   # J^+
    BJ = B @ J_pinv
    if torque_limited:
        model.require_limits(("effort",), "the torque-limited ellipsoid")
        BJ = BJ / model.effort_limit[:, None]
    Q = np.swapaxes(BJ, -1, -2) @ BJ                                                # (7.148)
    Q = 0.5 * (Q + np.swapaxes(Q, -1, -2))
    eig, directions = np.linalg.eigh(Q)           # ascending: the longest semi-axis first
    fall = np.linalg.solve(B, gravity_torques(model, q)[..., None])[..., 0]         # B^-1 g
    return ManipulabilityEllipsoid(Q, 1.0 / np.sqrt(eig), directions, -_matvec(J, fall), J,
                                   tj.rows, bool(torque_limited))


def projected_ellipse(ellipsoid: ManipulabilityEllipsoid, axes) -> tuple[np.ndarray, np.ndarray]:
    """
    Project the ellipsoid onto some of its task coordinates (its shadow).

    ``axes``: positions in ``ellipsoid.rows``.  Returns (shape matrix, centre) of the projection:
    (E^T Q^-1 E)^-1 and E^T centre, with E the selection of ``axes``.
    """
    index = list(axes)
    Qinv = np.linalg.inv(ellipsoid.matrix)
    sub = Qinv[..., index, :][..., :, index]
    return np.linalg.inv(sub), ellipsoid.centre[..., index]
