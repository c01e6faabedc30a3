"""
Identification of a payload on the last link: its 10 inertial parameters only.

Siciliano et al. 2009 (end of Sect. 7.4): an unknown load is a modification of the last link's
parameters.  The load adds theta_p = (m, m c, I_O) to link n (in joint frame n), so with the
torques it causes, tau = tau_robot + Y_n(q, qd, qdd) theta_p, where Y_n are link n's 10 columns of
the regressor (``regressor.py``).  Two ways to separate it from the robot:

* with a known robot model (``reference=None``): tau - rnea(model) = Y_n theta_p, ten unknowns;
* with data recorded without the payload (``reference=(q, qd, qdd, tau)``): the robot's base
  parameters are unknown too and shared by both recordings,
  [tau_ref; tau] = [[W_b(ref), 0], [W_b, Y_n]] [pi_b; theta_p]  (7.85 for both at once).
  The payload's parameters are all identifiable this way although some of link n's are not
  separately (they fold into link n-1's base parameters): their differences between the two
  recordings are what the second block measures.

The fit is least squares through QR; with ``consistent=True`` (the default) theta_p is constrained
to a real body (its pseudo-inertia positive semi-definite, ``physical.py``) by a small cvxpy
problem on the least-squares factor.  The result is reported and written in the robot file's
terms: mass, centre of mass and inertia about the centre of mass in the tool frame (the
``payload`` entry, see doc/robot_files.md), and ``model.with_payload(...)`` reproduces theta_p.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg

from ..errors import InputError
from ..model.inertia import inertia_entries
from .base_parameters import base_parameters
from .identify import _check_data
from .parameters import LINK_KINDS, origin_inertia, parameter_layout, predicted_effort
from .regressor import regressor

SINGULAR = 1e-9


class PayloadResult(NamedTuple):
    """The identified payload, in the tool frame (as the robot file's ``payload`` entry)."""

    mass: float
    com: np.ndarray              # (3,) tool frame
    inertia: np.ndarray          # (3, 3) about the CoM, tool frame axes
    parameters: np.ndarray       # theta_p: (m, m c, I_O) in joint frame n
    std: np.ndarray              # standard deviation of each of theta_p (least squares)
    residual_rms: np.ndarray     # per joint, on the data with the payload

    def as_dict(self) -> dict:
        """Return the robot file's ``payload`` mapping."""
        return {"mass": float(self.mass), "com": [float(x) for x in self.com],
                "inertia": inertia_entries(self.inertia)}


def _to_tool_frame(model, theta):
    m = float(theta[0])
    c = theta[1:4] / m if m > 0 else np.zeros(3)
    I_com = origin_inertia(theta) - m * (c @ c * np.eye(3) - np.outer(c, c))
    F = model.chain.flange   # pose of the tool frame in joint frame n: p_n = R p_tool + t
    R, t = F[:3, :3], F[:3, 3]
    I_tool = R.T @ I_com @ R
    return m, R.T @ (c - t), 0.5 * (I_tool + I_tool.T)


def _consistent(R, y, theta_ls):
    """
    Fit the payload under the physical-consistency constraint.

    min ||R theta - y||^2 over theta with a positive semi-definite pseudo-inertia.
    """
    import cvxpy as cp
    theta = cp.Variable(10)
    m, h = theta[0], theta[1:4]
    tensor = cp.bmat([[theta[4], theta[5], theta[6]], [
                theta[5], theta[7], theta[8]], [theta[6], theta[8], theta[9]]])
    Sigma = 0.5 * cp.trace(tensor) * np.eye(3) - tensor
    J = cp.bmat([[Sigma, cp.reshape(h, (3, 1), order="C")], [
                cp.reshape(h, (1, 3), order="C"), cp.reshape(m, (1, 1), order="C")]])
    problem = cp.Problem(cp.Minimize(cp.sum_squares(R @ theta - y)), [0.5 * (J + J.T) >> 0])
    try:
        problem.solve(solver=cp.CLARABEL)
    except cp.error.SolverError:
        return theta_ls
    return np.array(theta.value) if problem.status in (
        cp.OPTIMAL, cp.OPTIMAL_INACCURATE) else theta_ls


def identify_payload(model, q, qd, qdd, tau, reference=None,
                     consistent: bool = True) -> PayloadResult:
    """
    Return the payload carried during the recording (q, qd, qdd, tau), see the module docstring.

    ``model``: the robot without the payload (its parameters are trusted unless ``reference``, a
    tuple (q, qd, qdd, tau) recorded without the payload, is given).  Raises :class:`InputError`
    when the data do not determine all ten payload parameters, naming them.
    """
    q, qd, qdd, tau = _check_data(model, q, qd, qdd, tau)
    layout = parameter_layout(model)
    cols = layout.link[-1]
    N, n = q.shape
    Y = regressor(model, q, qd, qdd)
    if reference is None:
        A = Y[..., cols].reshape(N * n, 10)
        y = (tau - predicted_effort(model, q, qd, qdd)).reshape(N * n)
        payload_columns = np.arange(10)
    else:
        q0, qd0, qdd0, tau0 = _check_data(model, *reference)
        base = base_parameters(model)
        b = base.count
        W0 = base.columns(regressor(model, q0, qd0, qdd0)).reshape(-1, b)
        W1 = base.columns(Y).reshape(-1, b)
        A = np.block([[W0, np.zeros((W0.shape[0], 10))], [W1, Y[..., cols].reshape(N * n, 10)]])
        y = np.concatenate([tau0.reshape(-1), tau.reshape(-1)])
        payload_columns = b + np.arange(10)
    if A.shape[0] < 3 * A.shape[1]:
        raise InputError(
            f"too few samples for the payload: {A.shape[0]} equations for {A.shape[1]} unknowns")
    Q, R = np.linalg.qr(A)
    Qty = Q.T @ y
    scale = np.linalg.norm(R, axis=0)
    _, s, Vt = np.linalg.svd(R / np.where(scale > 0, scale, 1.0))
    weak = {k for v in Vt[s < SINGULAR * s[0]] for k in np.flatnonzero(np.abs(v) > 0.1)}
    weak |= set(np.flatnonzero(scale == 0).tolist())
    weak_payload = sorted(k for k in weak if k in set(payload_columns.tolist()))
    if weak:
        names = [LINK_KINDS[k - payload_columns[0]] + " of the payload" for k in weak_payload] or \
            [base_parameters(model).names[k] for k in sorted(weak)]
        raise InputError(f"the data do not determine: {', '.join(names)} (robot '{model.name}'); "
                         f"move the wrist joints more, or use a known robot model")
    estimate = scipy.linalg.solve_triangular(R, Qty)
    residual = y - A @ estimate
    s2 = float(residual @ residual) / (A.shape[0] - A.shape[1])
    Rinv = scipy.linalg.solve_triangular(R, np.eye(R.shape[0]))
    std = np.sqrt(s2 * (Rinv ** 2).sum(axis=1))[payload_columns]
    theta = estimate[payload_columns]
    if consistent:
        # the payload's rows of the triangular factor: for any theta_p the robot's parameters
        # (rows above) can still zero their part of the residual, so only these rows matter
        k = payload_columns[0]
        theta = _consistent(R[k:, k:], Qty[k:], theta)
        estimate = estimate.copy()
        estimate[payload_columns] = theta
        if k:
            estimate[:k] = scipy.linalg.solve_triangular(R[:k, :k], Qty[:k] - R[:k, k:] @ theta)
        residual = y - A @ estimate
    mass, com, inertia = _to_tool_frame(model, theta)
    rows = residual[-N * n:].reshape(N, n)
    return PayloadResult(mass, com, inertia, theta, std, np.sqrt(np.mean(rows ** 2, axis=0)))
