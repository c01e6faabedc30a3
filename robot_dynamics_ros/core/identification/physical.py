"""
Physically consistent parameters as a semidefinite program (Wensing, Kim and Slotine 2017).

A link's 10 parameters (m, h = m c, I_O about the frame origin) belong to a real body exactly when
its pseudo-inertia

    J = [[Sigma, h], [h^T, m]],   Sigma = tr(I_O)/2 E - I_O  (= integral of r r^T dm),

is positive semi-definite: that gives m >= 0, an inertia about the CoM that is positive
semi-definite and obeys the triangle inequalities, and no first moment without mass.  The
condition is a linear matrix inequality in pi, so fits under it are convex (cvxpy, solved by
Clarabel).  Rotor inertias and friction coefficients are kept non-negative, and the
load-dependent Coulomb friction's F_l below 1 (``LOAD_MARGIN``) and the quadratic viscous
friction's F_v2 above -F_v / (2 v_max) (friction growing with speed up to the velocity limit).

Two problems use it:

* :func:`consistent_fit`: min ||R K pi - y||^2 + mu ||D (pi - pi0)||^2 over consistent pi, where
  R, y come from the QR factorisation of the (weighted) base regressor, K maps pi to the base
  parameters and the small mu (1e-6 per parameter against a chi-square of one per equation) only
  decides the directions the data cannot see: those are kept as close as possible to the
  prior pi0 (the input robot file), each parameter scaled by D (see :func:`parameter_scales`);
  with a ``weight`` gamma > 0, the squared data term plus gamma times the sum over links of the
  log-det divergence of each link's pseudo-inertia from the prior's,
  d(J || J0) = tr(J0^-1 J) - log det(J0^-1 J) - 4 (Lee, Wensing and Park, "Geometric robot
  dynamic identification: a convex programming approach", T-RO 2020, Sect. IV: the Bregman
  divergence of -log det, the natural distance on the cone of pseudo-inertias; -2 log of a
  Wishart prior of gamma + 5 degrees of freedom whose mode is J0).  Directions the data
  determine weakly are pulled to the prior as hard as gamma says; the divergence is invariant
  under J -> T J T, so it is the same in the dimensionless J~.  The prior must be a real body
  (:func:`consistent_prior`).  The drives' parameters (rotor inertias, friction coefficients;
  not the offsets: :func:`drive_columns`) get the Gaussian prior of the same weight,
  gamma / 2 sum_k ((pi_k - pi0_k) / s_k)^2, s_k the parameter's scale
  (:func:`parameter_scales`): near J0 the divergence is 1/2 ||J0^-1/2 dJ J0^-1/2||_F^2, the
  squared relative change over 2, so one gamma pulls a link and a drive alike, a prior of
  relative standard deviation 1 / sqrt(gamma) (-2 log of the normal density N(pi0, s^2 / gamma):
  the maximum a posteriori estimate, i.e. a ridge toward the file's drives);
* :func:`closest_consistent`: min ||D (pi - pi0)||^2 over consistent pi with K pi = pi_b (a full
  parameter set for given base parameters); None when there is none.

**Margin and check.**  An interior-point solver meets its constraints only to its tolerance
(Clarabel: 1e-8 relative, 5e-5 when it reports "optimal, inaccurate"), so a solution on the
boundary of the cone (a thin rod, a point mass: a principal moment 0) comes out on either side of
it depending on the last bits of the arithmetic, i.e. on the CPU's BLAS.  Hence:

1. each link's pseudo-inertia is made dimensionless, J~ = T J T with T = diag(1/L, 1/L, 1/L, 1) /
   sqrt(M), M and L a mass and a length of the prior body (:func:`link_scales`), and the solver
   is asked for J~ >= ``MARGIN`` E with ``MARGIN`` = 1e-6, 100 times its tolerance: the answer is
   inside the cone whatever the rounding;
2. :func:`checked_consistent` then measures every link in its *own* scale (M, L of the solution)
   and accepts it if its J~ >= ``CHECK`` E (1e-7, 100 times the robot-file validator's 1e-9);
   a link between ``CHECK`` and ``-REFUSE`` is projected (eigenvalues of its J~ raised to
   2 ``CHECK``: the closest such body in that metric), negative rotor inertias and friction
   coefficients are set to 0, and anything worse is refused (the solver failed).  The last step
   runs the robot-file validator's own test (``consistency_problems``) on the result.

So the verdict never depends on rounding: the margin is two orders above what the solver can
miss and the check two orders above what the validator tolerates.
"""
from __future__ import annotations

import warnings

import numpy as np

from .parameters import (COULOMB_LOAD_MAX, NONNEGATIVE_KINDS, TENSOR_ENTRIES,
                         consistency_problems, friction_columns, parameter_layout,
                         parameter_vector, quadratic_floor)

MU = 1e-6
SOLVER_TOLERANCE = 1e-8   # Clarabel's feasibility and gap tolerances (its defaults, made explicit)
MARGIN = 1e-6             # each dimensionless J~ >= MARGIN E in the solve (100 x its tolerance)
CHECK = 1e-7              # accepted as solved: J~ >= CHECK E in the link's own scale
REFUSE = 1e-3             # below -REFUSE the solver failed (no projection)
LOAD_MARGIN = 1e-3        # the fit keeps F_l <= COULOMB_LOAD_MAX - LOAD_MARGIN (F_l < 1 strictly)
FLOOR = 100.0 * SOLVER_TOLERANCE  # absolute floor of the sign tests, in each parameter's unit
PRIOR_FLOOR = 0.05        # the prior body's CoM second moments >= this x its largest


class InconsistentPriorWarning(UserWarning):
    """The starting file's link is no real body: the prior is the nearest consistent one."""


def pseudo_inertia_map(model, friction=None) -> list[np.ndarray]:
    """Return per link, the (16, p) matrix A with vec(J) = A pi (row-major 4 x 4)."""
    layout = parameter_layout(model, friction)
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


def parameter_scales(model, prior: np.ndarray, friction=None, estimate=None) -> np.ndarray:
    """
    Return a scale per parameter for distances to the prior.

    A scale per parameter for distances to the prior: |prior value| (or |estimate|, an
    unconstrained fit's full parameters, where that is larger: a robot file without friction
    has zeros there) plus 1 % of the largest value of the same kind (so that zero-valued
    parameters are not pinned).
    """
    layout = parameter_layout(model, friction)
    scales = np.abs(prior).astype(float)
    if estimate is not None:
        scales = np.maximum(scales, np.abs(estimate))
    groups = [layout.link[:, k] for k in range(10)]
    groups += [c[c >= 0] for c in (layout.rotor, layout.viscous, layout.coulomb, layout.offset)]
    groups += [friction_columns(layout, kind) for kind in ("viscous_quadratic", "coulomb_load")
               if kind in layout.friction]
    groups[1] = layout.link[:, 1:4].ravel()            # first moments together
    groups[4] = layout.link[:, 4:10].ravel()           # inertias together
    reference = scales.copy()
    for cols in groups:
        if cols.size:
            floor = 0.01 * reference[cols].max()
            scales[cols] += floor if floor > 0 else 1e-6
    return np.maximum(scales, 1e-12)


def link_scales(model, prior: np.ndarray, friction=None) -> tuple[np.ndarray, np.ndarray]:
    """
    Return per link a mass M and a length L of the prior body, for dimensionless pseudo-inertias.

    M = the link's mass, L^2 = tr(Sigma) / M (its radius of gyration about the joint frame's
    origin), each at least 1 % of the robot's largest (so that a massless or tiny prior link is
    measured on the robot's scale); 1 kg and 0.1 m for a robot whose prior has no mass at all.
    """
    J = np.array([(A @ prior).reshape(4, 4) for A in pseudo_inertia_map(model, friction)])
    mass = J[:, 3, 3]
    top = float(mass.max()) if mass.size else 0.0
    M = np.maximum(mass, 0.01 * top) if top > 0 else np.ones(len(J))
    L2 = np.trace(J[:, :3, :3], axis1=1, axis2=2) / M
    top = float(L2.max()) if L2.size else 0.0
    L2 = np.maximum(L2, 1e-4 * top) if top > 0 else np.full(len(J), 0.01)
    return M, np.sqrt(L2)


def _scaling(M: float, L: float) -> np.ndarray:
    """T with J~ = T J T (module docstring, step 1)."""
    return np.diag([1.0 / L, 1.0 / L, 1.0 / L, 1.0]) / np.sqrt(M)


def _constraints(model, pi, prior, friction):
    import cvxpy as cp
    layout = parameter_layout(model, friction)
    cons = []
    for A, M, L in zip(pseudo_inertia_map(model, friction),
                       *link_scales(model, prior, friction)):
        T = _scaling(M, L)
        J = cp.reshape(np.kron(T, T) @ A @ pi, (4, 4), order="C")
        cons.append(0.5 * (J + J.T) - MARGIN * np.eye(4) >> 0)
    for cols in _nonnegative(layout):
        cons.append(pi[cols] >= 0)
    if "coulomb_load" in layout.friction:      # F_l < 1, with the margin of the other bounds
        cons.append(pi[layout.coulomb_load] <= COULOMB_LOAD_MAX - LOAD_MARGIN)
    if "viscous_quadratic" in layout.friction:
        cons.append(_quadratic_slope(model, layout, pi) >= 0)
    return cons


def _quadratic_slope(model, layout, pi):
    """
    Return F_v + 2 F_v2 v_max per joint with a known velocity limit (F_v2 >= 0 for the others).

    The friction's slope at the velocity limit (``control.friction.viscous_quadratic_floor``),
    affine in pi: a cvxpy expression for a cvxpy pi, an array for an array.
    """
    limit = model.velocity_limit
    known = np.isfinite(limit) & (limit > 0)
    doubled = np.where(known, 2.0 * np.where(known, limit, 0.0), 1.0)
    viscous = pi[layout.viscous] if "viscous" in layout.friction else model.viscous
    return _times(np.where(known, 1.0, 0.0), viscous) + \
        _times(doubled, pi[layout.viscous_quadratic])


def _times(a: np.ndarray, x):
    """Return a * x element-wise for an array or a cvxpy expression x."""
    import cvxpy as cp
    return cp.multiply(a, x) if isinstance(x, cp.Expression) else a * np.asarray(x)


def _nonnegative(layout) -> list:
    """Return the columns kept >= 0: rotor inertias and friction coefficients (not offsets)."""
    groups = [layout.rotor] + [friction_columns(layout, kind) for kind in NONNEGATIVE_KINDS
                               if kind in layout.friction]
    return [cols[cols >= 0] for cols in groups if np.any(cols >= 0)]


def _solve(problem) -> bool:
    """
    Solve with Clarabel; True if it solved, to its tolerance or to its reduced one.

    "Optimal, inaccurate" (Clarabel's reduced tolerances, 5e-5) is taken without cvxpy's
    warning: which of the two a problem near the cone's boundary ends in depends on the last bits
    of the arithmetic (it changed with the number of BLAS threads on the same machine), and
    :func:`checked_consistent` judges the answer either way.
    """
    import cvxpy as cp
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Solution may be inaccurate",
                                category=UserWarning)
        try:
            problem.solve(solver=cp.CLARABEL, tol_feas=SOLVER_TOLERANCE,
                          tol_gap_abs=SOLVER_TOLERANCE, tol_gap_rel=SOLVER_TOLERANCE)
        except cp.error.SolverError:
            return False
    return problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)


def _scaled_variable(model, prior, friction, estimate):
    """
    Return (z, pi) with pi = pi0 + S z, S the parameter scales (each unknown of order one).

    The unknowns of the cone program are the dimensionless changes z, so that masses (kg) and
    wrist inertias (1e-4 kg m^2) weigh alike in the solver's tolerances.
    """
    import cvxpy as cp
    z = cp.Variable(prior.size)
    return z, prior + cp.multiply(parameter_scales(model, prior, friction, estimate), z)


def consistent_prior(model, prior: np.ndarray, friction=None,
                     warn: bool = False) -> np.ndarray:
    """
    Return per link the prior's pseudo-inertia for the divergence, a real body (n, 4, 4).

    The log-det divergence needs a positive definite J0.  Each link keeps its mass and centre of
    mass; its second moments about the CoM, Sigma_c = Sigma - h h^T / m, get eigenvalues of at
    least ``PRIOR_FLOOR`` x its largest (the nearest such matrix: eigenvalues clipped, the same
    principal axes).  A point mass or a rod, real bodies with no extent along some axis, would
    make the divergence infinite there; a link that violates the triangle inequality (a negative
    eigenvalue) becomes the nearest body that does not, and with ``warn``
    :class:`InconsistentPriorWarning` names it.  A link without mass gets a sphere of the
    robot's scale (:func:`link_scales`).
    """
    M, L = link_scales(model, prior, friction)
    out, wrong = [], []
    for j, (A, mass, length) in enumerate(zip(pseudo_inertia_map(model, friction), M, L)):
        J = (A @ prior).reshape(4, 4)
        m, h = J[3, 3], J[:3, 3]
        if m <= 0:
            out.append(np.diag([mass * length ** 2 / 3] * 3 + [mass]))
            continue
        values, vectors = np.linalg.eigh(J[:3, :3] - np.outer(h, h) / m)
        if values[0] < -CHECK * max(values[-1], 0.0):
            wrong.append(f"the link of joint '{model.joint_names[j]}' (second moments about "
                         f"its CoM {values[0]:.3g} .. {values[-1]:.3g} kg m^2)")
        top = max(values[-1], mass * length ** 2 * 1e-6)
        J = J.copy()
        J[:3, :3] = (vectors * np.maximum(values, PRIOR_FLOOR * top)) @ vectors.T \
            + np.outer(h, h) / m
        out.append(J)
    if wrong and warn:
        warnings.warn(
            f"the starting file's {', '.join(wrong)}: no real body (a negative second moment "
            "about the CoM: the inertia breaks the triangle inequality); the identification's "
            "prior is the nearest real body (same mass, CoM and principal axes)",
            InconsistentPriorWarning, stacklevel=3)
    return np.array(out)


def divergence_hessian(model, prior: np.ndarray, friction=None) -> np.ndarray:
    """
    Return the Hessian of sum_i d(J_i || J0_i) at the prior, in pi (p, p).

    d2/dJ2 of tr(J0^-1 J) - log det J at J0 is the quadratic form tr(J0^-1 dJ J0^-1 dJ)
    (Lee, Wensing and Park 2020, the affine-invariant metric): A^T (J0^-1 kron J0^-1) A per
    link.  Zero for rotor and friction parameters (no divergence on them).
    """
    J0 = consistent_prior(model, prior, friction)
    H = np.zeros((prior.size, prior.size))
    for A, J in zip(pseudo_inertia_map(model, friction), J0):
        inverse = np.linalg.inv(J)
        H += A.T @ np.kron(inverse, inverse) @ A
    return H


def consistent_fit(model, R: np.ndarray, y: np.ndarray, K: np.ndarray, prior=None,
                   friction=None, estimate=None, hold=None, weight: float = 0.0):
    """
    Return the consistent parameters that fit best.

    The consistent pi minimising ||R K pi - y||^2 + mu ||D (pi - pi0)||^2, checked by
    :func:`checked_consistent`; None if the solver fails.  Posed as the minimum of the norm (a
    second-order cone), not of its square: a quadratic objective's Hessian has the squared
    condition number of R, on which the solver stalled short of its tolerance.  ``estimate``:
    an unconstrained fit's full parameters, for the scales (:func:`parameter_scales`).
    ``hold``: rows H (h, b) of directions of the base parameters the data do not determine,
    held at the prior's by the further term ||H K (pi - pi0)||^2 (``identify._solve``).
    ``weight``: gamma of the log-det divergence from the prior (module docstring); then the
    objective is the squared norm plus gamma sum_i d(J_i || J0_i) plus the drives' Gaussian
    prior gamma / 2 ||z_drives||^2 (z = (pi - pi0) / s, the solver's unknowns), which is
    strongly convex in the links' and drives' parameters (the squared norm's conditioning no
    longer decides the solve).
    """
    import cvxpy as cp
    prior = parameter_vector(model, friction) if prior is None else np.asarray(prior, float)
    z, pi = _scaled_variable(model, prior, friction, estimate)
    terms = [R @ K @ pi - y, np.sqrt(MU) * z]
    if hold is not None and len(hold):
        terms.append(hold @ K @ pi - hold @ K @ prior)
    if weight > 0:
        # divided by the prior's chi-square (+ 1): the same minimiser, in numbers of order one
        # (unscaled, Clarabel failed at gamma = 1 on a well-excited Panda whose chi^2 was 1e5)
        start = float(np.sum(np.square(R @ K @ prior - y))) + 1.0
        drives = drive_columns(parameter_layout(model, friction))
        objective = (cp.sum_squares(cp.hstack(terms)) / start
                     + weight / start * _divergence(model, pi, prior, friction)
                     + 0.5 * weight / start * cp.sum_squares(z[drives]))
    else:
        objective = cp.norm(cp.hstack(terms), 2)
    problem = cp.Problem(cp.Minimize(objective), _constraints(model, pi, prior, friction))
    return checked_consistent(model, pi.value, friction) if _solve(problem) else None


def drive_columns(layout) -> np.ndarray:
    """
    Return the drive parameters' columns: rotor inertias and friction coefficients, no offsets.

    The Gaussian part of the prior (``consistent_fit``, ``weight``) acts on them; an offset is
    the effort sensor's zero, which the file rarely knows.
    """
    groups = [layout.rotor] + [friction_columns(layout, kind) for kind in layout.friction
                               if kind != "offset"]
    cols = np.concatenate([np.ravel(c) for c in groups]) if groups else np.zeros(0, int)
    return np.sort(cols[cols >= 0]).astype(int)


def _divergence(model, pi, prior, friction):
    """
    Return sum_i d(J~_i || J~0_i) as a cvxpy expression, up to its constant (module docstring).

    In the dimensionless J~ = T J T of the constraints (the divergence is invariant under the
    congruence), with J0 the real-body prior (:func:`consistent_prior`).
    """
    import cvxpy as cp
    total = 0
    J0 = consistent_prior(model, prior, friction)
    for A, M, L, J_prior in zip(pseudo_inertia_map(model, friction),
                                *link_scales(model, prior, friction), J0):
        T = _scaling(M, L)
        J = cp.reshape(np.kron(T, T) @ A @ pi, (4, 4), order="C")
        J = 0.5 * (J + J.T)
        inverse = np.linalg.inv(T @ J_prior @ T)
        total += cp.trace(inverse @ J) - cp.log_det(J)
    return total


def closest_consistent(model, K: np.ndarray, base_values: np.ndarray, prior=None,
                       friction=None):
    """
    Return the consistent parameters closest to the prior for given base parameters.

    The consistent pi closest to the prior (min ||D (pi - pi0)||) with K pi = base_values, or
    None if there is none.
    """
    import cvxpy as cp
    prior = parameter_vector(model, friction) if prior is None else np.asarray(prior, float)
    z, pi = _scaled_variable(model, prior, friction, None)
    scale = np.maximum(np.abs(base_values), 1e-9)
    cons = _constraints(model, pi, prior, friction) + [
        cp.multiply(1.0 / scale, K @ pi - base_values) == 0]
    problem = cp.Problem(cp.Minimize(cp.norm(z, 2)), cons)
    return checked_consistent(model, pi.value, friction) if _solve(problem) else None


def _link_from_pseudo_inertia(J: np.ndarray) -> np.ndarray:
    """Return (m, h, I_O entries) from a pseudo-inertia: I_O = tr(Sigma) E - Sigma."""
    Sigma = J[:3, :3]
    I_O = np.trace(Sigma) * np.eye(3) - Sigma
    return np.concatenate([[J[3, 3]], J[:3, 3], [I_O[r, k] for r, k in TENSOR_ENTRIES]])


def checked_consistent(model, pi, friction=None) -> np.ndarray | None:
    """
    Return a solver's pi made safely consistent, or None (module docstring, step 2).

    Each link is measured in its own scale (M, L of the solution itself); a link whose J~ has an
    eigenvalue below ``CHECK`` but above ``-REFUSE`` is projected to the nearest body with
    eigenvalues of at least 2 ``CHECK``; rotor inertias and friction coefficients below 0 (by
    rounding) become 0.  None if a link is further outside, or if the result still fails the
    robot-file validator's test.
    """
    if pi is None:
        return None
    pi = np.array(pi, dtype=float)
    if not np.isfinite(pi).all():
        return None
    layout = parameter_layout(model, friction)
    M, L = link_scales(model, pi, friction)
    for cols, A, m, length in zip(layout.link, pseudo_inertia_map(model, friction), M, L):
        T = _scaling(m, length)
        J = T @ (A @ pi).reshape(4, 4) @ T
        values, vectors = np.linalg.eigh(0.5 * (J + J.T))
        if values[0] >= CHECK:
            continue
        if values[0] < -REFUSE:
            return None
        J = (vectors * np.maximum(values, 2.0 * CHECK)) @ vectors.T
        Tinv = np.linalg.inv(T)
        pi[cols] = _link_from_pseudo_inertia(Tinv @ J @ Tinv)
    units = parameter_units(model, layout, pi)
    for cols in _nonnegative(layout):
        if np.any(pi[cols] < -np.maximum(REFUSE * np.abs(pi[cols]).max(), FLOOR * units[cols])):
            return None
        pi[cols] = np.maximum(pi[cols], 0.0)
    if "coulomb_load" in layout.friction:
        cols = layout.coulomb_load
        if np.any(pi[cols] > COULOMB_LOAD_MAX - LOAD_MARGIN + REFUSE):
            return None
        pi[cols] = np.minimum(pi[cols], COULOMB_LOAD_MAX - LOAD_MARGIN)
    if "viscous_quadratic" in layout.friction:     # (rounding below the floor: to the floor)
        cols, floor = layout.viscous_quadratic, quadratic_floor(model, layout, pi)
        slack = np.maximum(REFUSE * np.maximum(np.abs(floor), np.abs(pi[cols])),
                           FLOOR * units[cols])
        if np.any(pi[cols] < floor - slack):
            return None
        pi[cols] = np.maximum(pi[cols], floor)
    return None if consistency_problems(model, pi, friction=friction) else pi


def parameter_units(model, layout, pi) -> np.ndarray:
    """
    Return per parameter a size of its kind that the data can resolve, for absolute sign floors.

    A group of parameters that all sit on their bound 0 (the rotor inertias of a robot measured by
    link-side joint-torque sensors, which cannot see them) has no scale of its own: a test
    relative to its largest value refuses the solver's rounding (-1.6e-12 against 4.3e-11).  So
    every sign test also allows ``FLOOR`` (100 x the solver's tolerance) times a size of the
    parameter's kind taken from the robot: rotor inertia, the largest link inertia entry over
    k_r^2 (what the motor side of that joint would reflect); viscous friction, the effort limit
    over the velocity limit; Coulomb friction, the effort limit; quadratic viscous, the effort
    limit over the velocity limit squared; load-dependent Coulomb, 1 (dimensionless).  Unknown
    limits fall back to 1 in SI units.
    """
    units = np.ones(len(pi))
    inertia = max(float(np.abs(pi[layout.link[:, 4:10]]).max()), 1e-300)
    effort = np.where(np.isfinite(model.effort_limit), model.effort_limit, 1.0)
    speed = np.where(np.isfinite(model.velocity_limit) & (model.velocity_limit > 0),
                     model.velocity_limit, 1.0)
    per_joint = {"viscous": effort / speed, "coulomb": effort,
                 "viscous_quadratic": effort / speed ** 2, "coulomb_load": np.ones(model.n)}
    rotor = layout.rotor
    units[rotor[rotor >= 0]] = inertia / np.asarray(model.gear_ratio)[rotor >= 0] ** 2
    for kind, size in per_joint.items():
        if kind in layout.friction:
            cols = friction_columns(layout, kind)
            units[cols[cols >= 0]] = size[cols >= 0]
    return units


def closest_affine(model, K: np.ndarray, base_values: np.ndarray, prior=None,
                   friction=None) -> np.ndarray:
    """
    Return the parameters closest to the prior for given base parameters.

    The pi closest to the prior (scaled as above) with K pi = base_values, no other condition:
    pi = pi0 + S K^T (K S K^T)^-1 (pi_b - K pi0), S = diag(scales^2).
    """
    prior = parameter_vector(model, friction) if prior is None else np.asarray(prior, float)
    S = parameter_scales(model, prior, friction) ** 2
    KS = K * S
    correction = KS.T @ np.linalg.solve(KS @ K.T, base_values - K @ prior)
    return prior + correction
