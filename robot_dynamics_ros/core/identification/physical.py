"""
Physically consistent parameters as a semidefinite program (Wensing, Kim and Slotine 2017).

A link's 10 parameters (m, h = m c, I_O about the frame origin) belong to a real body exactly when
its pseudo-inertia

    J = [[Sigma, h], [h^T, m]],   Sigma = tr(I_O)/2 E - I_O  (= integral of r r^T dm),

is positive semi-definite: that gives m >= 0, an inertia about the CoM that is positive
semi-definite and obeys the triangle inequalities, and no first moment without mass.  The
condition is a linear matrix inequality in pi, so fits under it are convex (cvxpy, solved by
Clarabel).  Rotor inertias and friction coefficients are kept non-negative.

Two problems use it:

* :func:`consistent_fit`: min ||R K pi - y||^2 + mu ||D (pi - pi0)||^2 over consistent pi, where
  R, y come from the QR factorisation of the (weighted) base regressor, K maps pi to the base
  parameters and the small mu (1e-6 per parameter against a chi-square of one per equation) only
  decides the directions the data cannot see: those are kept as close as possible to the
  prior pi0 (the input robot file), each parameter scaled by D (see :func:`parameter_scales`);
* :func:`closest_consistent`: min ||D (pi - pi0)||^2 over consistent pi with K pi = pi_b (a full
  parameter set for given base parameters); None when there is none.

A small margin (1e-9 of the prior's pseudo-inertia trace) keeps solutions off the boundary so
that the robot-file validator, which checks with a 1e-9 relative tolerance, accepts them.
"""
from __future__ import annotations

import numpy as np

from .parameters import parameter_layout, parameter_vector

MU = 1e-6


def pseudo_inertia_map(model) -> list[np.ndarray]:
    """Return per link, the (16, p) matrix A with vec(J) = A pi (row-major 4 x 4)."""
    layout = parameter_layout(model)
    p = layout.size
    maps = []
    for cols in layout.link:
        A = np.zeros((4, 4, p))
        m, hx, hy, hz, ixx, ixy, ixz, iyy, iyz, izz = cols
        # Sigma = tr(I)/2 E - I: Sxx = (-ixx + iyy + izz)/2, Sxy = -ixy, ...
        for r, (plus, minus) in enumerate(
                (((iyy, izz), ixx), ((ixx, izz), iyy), ((ixx, iyy), izz))):
            A[r, r, list(plus)] = 0.5
            A[r, r, minus] = -0.5
        for (r, k), col in (((0, 1), ixy), ((0, 2), ixz), ((1, 2), iyz)):
            A[r, k, col] = A[k, r, col] = -1.0
        for r, col in enumerate((hx, hy, hz)):
            A[r, 3, col] = A[3, r, col] = 1.0
        A[3, 3, m] = 1.0
        maps.append(A.reshape(16, p))
    return maps


def parameter_scales(model, prior: np.ndarray) -> np.ndarray:
    """
    Return a scale per parameter for distances to the prior.

    A scale per parameter for distances to the prior: |prior value| plus 1 % of the largest
    prior value of the same kind (so that zero-valued parameters are not pinned).
    """
    layout = parameter_layout(model)
    scales = np.abs(prior).astype(float)
    groups = [layout.link[:, k] for k in range(10)]
    groups += [c[c >= 0] for c in (layout.rotor, layout.viscous, layout.coulomb)]
    groups[1] = layout.link[:, 1:4].ravel()            # first moments together
    groups[4] = layout.link[:, 4:10].ravel()           # inertias together
    for cols in groups:
        if cols.size:
            floor = 0.01 * np.abs(prior[cols]).max()
            scales[cols] += floor if floor > 0 else 1e-6
    return np.maximum(scales, 1e-12)


def _constraints(model, pi, prior):
    import cvxpy as cp
    layout = parameter_layout(model)
    cons = []
    for A in pseudo_inertia_map(model):
        J = cp.reshape(A @ pi, (4, 4), order="C")
        J0 = (A @ prior).reshape(4, 4)
        margin = 1e-9 * max(float(np.trace(J0)), 1e-9)
        cons.append(0.5 * (J + J.T) - margin * np.eye(4) >> 0)
    for cols in (layout.rotor, layout.viscous, layout.coulomb):
        cols = cols[cols >= 0]
        if cols.size:
            cons.append(pi[cols] >= 0)
    return cons


def _solve(problem) -> bool:
    import cvxpy as cp
    try:
        problem.solve(solver=cp.CLARABEL)
    except cp.error.SolverError:
        return False
    return problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)


def consistent_fit(model, R: np.ndarray, y: np.ndarray, K: np.ndarray, prior=None):
    """
    Return the consistent parameters that fit best.

    The consistent pi minimising ||R K pi - y||^2 (+ the prior term); None if the solver fails.
    """
    import cvxpy as cp
    prior = parameter_vector(model) if prior is None else np.asarray(prior, float)
    D = 1.0 / parameter_scales(model, prior)
    pi = cp.Variable(prior.size)
    fit = cp.sum_squares(R @ K @ pi - y)
    objective = fit + MU * cp.sum_squares(cp.multiply(D, pi - prior))
    problem = cp.Problem(cp.Minimize(objective), _constraints(model, pi, prior))
    return np.array(pi.value) if _solve(problem) else None


def closest_consistent(model, K: np.ndarray, base_values: np.ndarray, prior=None):
    """
    Return the consistent parameters closest to the prior for given base parameters.

    The consistent pi closest to the prior with K pi = base_values, or None if there is none.
    """
    import cvxpy as cp
    prior = parameter_vector(model) if prior is None else np.asarray(prior, float)
    D = 1.0 / parameter_scales(model, prior)
    pi = cp.Variable(prior.size)
    scale = np.maximum(np.abs(base_values), 1e-9)
    cons = _constraints(model, pi, prior) + [cp.multiply(1.0 / scale, K @ pi - base_values) == 0]
    problem = cp.Problem(cp.Minimize(cp.sum_squares(cp.multiply(D, pi - prior))), cons)
    return np.array(pi.value) if _solve(problem) else None


def closest_affine(model, K: np.ndarray, base_values: np.ndarray, prior=None) -> np.ndarray:
    """
    Return the parameters closest to the prior for given base parameters.

    The pi closest to the prior (scaled as above) with K pi = base_values, no other condition:
    pi = pi0 + S K^T (K S K^T)^-1 (pi_b - K pi0), S = diag(scales^2).
    """
    prior = parameter_vector(model) if prior is None else np.asarray(prior, float)
    S = parameter_scales(model, prior) ** 2
    KS = K * S
    correction = KS.T @ np.linalg.solve(KS @ K.T, base_values - K @ prior)
    return prior + correction
