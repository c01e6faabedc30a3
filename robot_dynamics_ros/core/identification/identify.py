"""
Least-squares identification of the base parameters.

Siciliano et al. 2009, Sect. 7.4, eqs. 7.85-7.86.

tau = Y(q, qd, qdd) pi = W_b pi_b stacked over N samples (7.85) is solved for the base parameters
pi_b (``base_parameters.py``) by least squares (7.86), through a QR factorisation W_b = Q R
(never the normal equations):

* ordinary least squares (``weights=None``);
* weighted least squares: each joint's rows divided by that joint's noise level, either given as
  ``weights`` (n,) (w_j = 1 / sigma_j) or ``weights="auto"``: sigma_j estimated from the joint's
  ordinary-least-squares residual, sigma_j^2 = ||r_j||^2 / (N - b/n) (Gautier's weighting),
  re-estimated from the weighted fit's residual until the weights settle (at most 5 times);
* ``consistent=True``: the same weighted fit over physically consistent parameters only
  (``physical.consistent_fit``, an LMI-constrained problem after Wensing et al. 2017).

**Friction and offsets.**  ``friction`` names the kinds fitted for every joint (a subset of
``("viscous", "coulomb", "offset")``: Siciliano et al., Robotics: Modelling, Planning and Control,
eq. 7.114, F_v qd + F_s sgn(qd), and the torque offset of the joint's sensor), whether or not the
robot file has them; kinds the file has but ``friction`` leaves out are taken as known (their
torques are subtracted from the measurements and the file keeps them).  ``None``: the model's own.

**Is the fit determined by the data?**  Two tests; either failing makes ``result.determined``
False and ``result.verdict`` say why.  (1) The F test of the regression (does the motion explain
the efforts better than per-joint constants?): F = ((S0 - S) / (b - c)) / (S / (N n - b)), S the
weighted residual sum of squares, S0 that of per-joint means, c the number of offset columns;
under "the efforts do not depend on the motion" F follows F(b - c, N n - b), and a p-value above
``SIGNIFICANCE`` (1e-6) fails (random efforts, the wrong field or joint order).  (2) The
estimates' covariance carried to torques at random states (:func:`_prediction_std`): where a
recording leaves parameter combinations nearly free, the fit matches it (and its held-out share)
yet is wrong on other motions; more uncertainty than the noise (``PREDICTION_LIMIT``) on a joint
fails.  (A Puma excitation that used 11 % of the velocity limits: 5-26 x the noise, and 33 N m
wrong at other states; a good one: 0.03-0.07 x; the UR10e recordings: 0.13-0.31 x.)

**What the data do not determine is held, not refused.**  Directions of the base parameters
that the data do not see (a numerical null space of the column-scaled regressor: a joint that
never moves; Coulomb friction and the offset of a joint that turns one way only) stay at the
starting file's values theta0 -- the prior of Lee, Wensing and Park, "Geometric robot dynamic
identification", T-RO 2020, in its limit -- and the data move only the others (the minimum-norm
least-squares change of a truncated SVD, :func:`_solve`).  The base parameters in such
directions are named in ``result.held`` and the report with an infinite standard deviation; the
others' covariance is the pseudo-inverse's over the determined directions.  The consistent fit
holds the same directions at the file's values by a further term of its objective
(``physical.consistent_fit``, ``hold``).

**What the data determine weakly is pulled toward the file.**  Where test (2) fails, the
consistent fit adds gamma times the log-det divergence of each link's pseudo-inertia from the
file's (Lee, Wensing and Park 2020) and a Gaussian prior of the same weight on the drives'
rotor inertias and friction (``physical.consistent_fit``, ``weight``), with gamma chosen
on the held-out samples (:func:`_prior_weighted_fit`); the report names the base parameters the
prior then decides more than the data (``result.prior_decided``, :func:`_posterior_std`).

Standard deviations are those of the (weighted) least-squares estimator,
cov = s^2 (R^T R)^-1 with s^2 = ||r_w||^2 / (N n - b), reported for the consistent solve as well
(the constraint can only reduce the spread).  They assume independent errors: data filtered at a
cut-off far below the sample rate must be decimated first (``filtering.identification_data``).

The full parameter set written to a robot file (``result.model``): with ``consistent=True`` the
constrained solution itself; otherwise the set closest to the input file that reproduces the
estimated base parameters (``physical.closest_affine``: each parameter's change scaled by its own
size), and if that set is not a real body, the closest consistent set that reproduces them
(``physical.closest_consistent``).  If there is none, ``result.model`` is None and an
:class:`InconsistentParametersWarning` says which links are unphysical.

The work is split for many recordings: :func:`joint_factors` reduces any block of samples to small
per-joint triangular factors, and factors of several blocks merge by stacking
(:func:`merge_factors`), so blocks may be processed apart (one per bag) and only the factors
brought together.
"""
from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import scipy.linalg
import scipy.stats

from ..errors import InputError, RobotDescriptionError
from ..inputs import joint_arrays
from .base_parameters import BaseParameters, base_parameters, sample_states
from .parameters import (consistency_problems, friction_kinds, known_friction,
                         model_with_parameters, parameter_layout, parameter_vector,
                         predicted_effort)
from .physical import (MU, closest_affine, closest_consistent, consistent_fit, consistent_prior,
                       divergence_hessian, drive_columns, parameter_scales)
from .regressor import regressor

EQUATIONS_PER_PARAMETER = 5
CHUNK = 8192
AUTO_ITERATIONS = 5
SINGULAR = 1e-9
SIGNIFICANCE = 1e-6
PREDICTION_LIMIT = 1.0      # prediction std at random states, in units of the torque noise
LOOSE_RELATIVE_STD = 0.5    # a base parameter whose std exceeds half its value is named loose
MAX_NAMED = 12              # at most this many loose parameters named (the loosest first)
PREDICTION_STATES = 200
PRIOR_WEIGHTS = (0.0, 1.0, 10.0, 100.0, 1000.0)   # gamma of the prior's divergence, tried
SIGNIFICANT = 2.0           # paired standard errors by which a weight must beat the first
PRIOR_SHARE = 0.5           # named as decided by the prior: std with it < this x the data's


class InconsistentParametersWarning(UserWarning):
    """The identified parameters are not those of real bodies (no robot file can hold them)."""


@dataclass(frozen=True)
class Regularisation:
    """
    The consistent fit's pull toward the starting file (``physical.consistent_fit``'s weight).

    ``weight``: gamma, fixed; or None and ``heldout`` = (W, tau): the held-out samples' base
    regressor (M, n, b) and efforts (M, n) (known friction taken off), on which gamma is chosen
    among ``PRIOR_WEIGHTS`` (:func:`_prior_weighted_fit`).  Neither: gamma = 0.
    """

    weight: float | None = None
    heldout: tuple | None = None


class WeightCheck(NamedTuple):
    """The prior weights tried and their held-out RMS errors per joint (None: no real body)."""

    weights: tuple
    heldout_rms: tuple
    chosen: int

    def table(self, joint_names) -> str:
        """Return the check as the report prints it."""
        lines = ["weight of the starting file's bodies (log-det divergence, Lee, Wensing and "
                 "Park 2020) checked on the held-out samples (torque RMS per joint):"]
        for k, (weight, errors) in enumerate(zip(self.weights, self.heldout_rms)):
            text = ("no real bodies" if errors is None
                    else " ".join(f"{e:.4g}" for e in errors))
            mark = "  <- chosen" if k == self.chosen else ""
            lines.append(f"  gamma {weight:<7g} {text}{mark}")
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class IdentificationResult:
    """What :func:`identify` found; arrays are per base parameter (b,) or per joint (n,)."""

    base: BaseParameters
    estimates: np.ndarray            # pi_b
    std: np.ndarray                  # standard deviation of each estimate
    prior: np.ndarray                # pi_b of the input model
    condition_number: float          # of the (weighted) base regressor
    residual_rms: np.ndarray         # per joint, identified model (tau - W_b pi_b)
    initial_residual_rms: np.ndarray  # per joint, input model
    noise_std: np.ndarray            # per-joint noise estimate from the residual
    weights: np.ndarray              # per-joint row weights used
    method: str                      # "ols", "wls" or "consistent"
    samples: int
    parameters: np.ndarray           # the full pi chosen (see the module docstring)
    problems: tuple = ()             # why ``parameters`` is not physically consistent
    model: object = None             # RobotModel with ``parameters``, or None
    joint_names: tuple = field(default=())
    friction: tuple = ()             # the friction kinds fitted
    f_statistic: float = np.inf      # the regression's F test (module docstring)
    p_value: float = 0.0
    prediction_std: np.ndarray = None  # per joint, at random states (module docstring)
    held: tuple = ()                 # base parameters the data do not determine (module doc.)
    prior_weight: float = 0.0        # gamma of the divergence from the starting file's bodies
    weight_check: WeightCheck = None  # how gamma was chosen (None: given)
    prior_decided: tuple = ()        # (name, std from the data, std with the prior), weakest first

    @property
    def names(self) -> tuple[str, ...]:
        return self.base.names

    def with_weight_check_of(self, earlier) -> "IdentificationResult":
        """Return this refit with the weight check of the fit that chose its weight."""
        if self.weight_check is not None or earlier.weight_check is None:
            return self
        return dataclasses.replace(self, weight_check=earlier.weight_check)

    @property
    def relative_std(self) -> np.ndarray:
        """
        Return each estimate's relative standard deviation.

        std / |estimate| (inf for an estimate of exactly zero).
        """
        with np.errstate(divide="ignore"):
            return self.std / np.abs(self.estimates)

    @property
    def consistent(self) -> bool:
        return not self.problems

    @property
    def determined(self) -> bool:
        """Tell whether the data determine the parameters (module docstring: both tests)."""
        return bool(self.p_value <= SIGNIFICANCE) and not self._loose().size

    def _loose(self) -> np.ndarray:
        """Return the joints whose torques the fit does not pin down away from the recording."""
        if self.prediction_std is None:
            return np.zeros(0, dtype=int)
        return np.flatnonzero(self.prediction_std > PREDICTION_LIMIT * self.noise_std)

    @property
    def verdict(self) -> str:
        """Return why the fit is not determined by the data ('' when it is)."""
        if self.determined:
            return ""
        if self.p_value <= SIGNIFICANCE:
            loose = self._loose()
            ratios = ", ".join(f"'{self.joint_names[j]}' "
                               f"{self.prediction_std[j] / self.noise_std[j]:.3g}"
                               for j in loose)
            return ("the data leave some parameters nearly free: away from the recorded motion "
                    "(random states within the limits) the predicted torques are uncertain by "
                    f"more than the noise (x the noise: {ratios}), so the model would be wrong "
                    "elsewhere; record a motion that excites them (`robot-dynamics excite`)")
        return (f"the recorded efforts are not explained by the motion: the fit is no better "
                f"than per-joint constants (F = {self.f_statistic:.3g}, p = {self.p_value:.2g}; "
                f"relative standard deviations up to {100 * np.nanmax(self.relative_std):.3g} %), "
                "so the data do not determine the parameters (is the effort field the joint "
                "torques, in the robot's joint order and units?)")

    def report(self) -> str:
        """Return a table of the estimates and the per-joint torque errors."""
        lines = [f"{self.method.upper()} identification from {self.samples} samples: "
                 f"{self.base.count} base parameters, "
                 f"condition number {self.condition_number:.4g}, friction fitted: "
                 f"{', '.join(self.friction) or 'none'}",
                 f"{'base parameter':<22} {'input':>12} {'identified':>12} {'std':>10} "
                 f"{'rel. std':>9}"]
        for name, prior, est, std, rel in zip(self.names, self.prior, self.estimates, self.std,
                                              self.relative_std):
            rel_text = f"{100 * rel:8.2f}%" if np.isfinite(rel) else "      inf"
            lines.append(f"{name:<22} {prior:12.6g} {est:12.6g} {std:10.3g} {rel_text}")
        lines.append(f"{'joint':<22} {'RMS before':>12} {'RMS after':>12} {'noise est.':>10}")
        for j, name in enumerate(self.joint_names):
            lines.append(
                f"{name:<22} {self.initial_residual_rms[j]:12.5g} {self.residual_rms[j]:12.5g} "
                f"{self.noise_std[j]:10.3g}")
        lines.append(f"F test of the fit: F = {self.f_statistic:.4g}, p = {self.p_value:.3g}")
        if self.prediction_std is not None:
            lines.append("torque uncertainty at random states / noise, per joint: " + " ".join(
                f"{x:.3g}" for x in self.prediction_std / self.noise_std))
        if self.weight_check is not None:
            lines.append(self.weight_check.table(self.joint_names))
        if self.prior_decided:
            lines.append(prior_note(self))
        if self.held:
            lines.append(held_note(self))
        if self.problems:
            lines.append("not physically consistent: " + "; ".join(self.problems))
        if not self.determined:
            lines.append("NOT DETERMINED: " + self.verdict)
        return "\n".join(lines)


def loose_parameters(result) -> str:
    """
    Name what the data leave nearly free and how well each is determined (a note, no failure).

    The base parameters whose standard deviation exceeds ``LOOSE_RELATIVE_STD`` of their value
    (loosest first, at most ``MAX_NAMED``), and the joints whose torques at random states are
    uncertain by more than the noise.  The consistent fit keeps such directions at the starting
    file's values (its prior term, ``physical.consistent_fit``), so they are no error.
    """
    rel = result.relative_std
    order = [k for k in np.argsort(-np.nan_to_num(rel, posinf=1e300))
             if rel[k] > LOOSE_RELATIVE_STD and result.names[k] not in result.held]
    named = ", ".join(f"{result.names[k]} ({result.estimates[k]:.3g} +- {result.std[k]:.2g})"
                      for k in order[:MAX_NAMED])
    more = f" and {len(order) - MAX_NAMED} more" if len(order) > MAX_NAMED else ""
    joints = ", ".join(f"'{result.joint_names[j]}' "
                       f"{result.prediction_std[j] / result.noise_std[j]:.3g}"
                       for j in result._loose())
    return ("the data leave some parameters nearly free, kept near the starting file's values: "
            + (named + more if named else "no single base parameter")
            + (f"; torque uncertainty at random states, x the noise: {joints}" if joints else "")
            + "; a motion that excites them (`robot-dynamics excite`) determines them"
            + (f"; {held_note(result)}" if result.held else ""))


def prior_note(result) -> str:
    """
    Name the base parameters that the starting file's bodies decide more than the data.

    Each with its standard deviation from the data alone and with the prior term of the chosen
    weight (the posterior's, :func:`_posterior_std`): the data's share of what is known about it
    is (std with the prior / std from the data)^2.
    """
    named = ", ".join(f"{name} ({result.estimates[result.names.index(name)]:.3g}: std "
                      f"{data:.2g} from the data, {both:.2g} with the prior)"
                      for name, data, both in result.prior_decided[:MAX_NAMED])
    more = len(result.prior_decided) - MAX_NAMED
    return (f"weakly determined, pulled toward the starting file's bodies (gamma = "
            f"{result.prior_weight:g}), weakest first: {named}"
            + (f" and {more} more" if more > 0 else ""))


def held_note(result) -> str:
    """Name the base parameters the data do not determine, held at the starting file's values."""
    return ("held at the starting file's values, the data do not determine them (std inf; "
            "move the joints they belong to, e.g. `robot-dynamics excite`): "
            + ", ".join(f"{name} = {result.estimates[result.names.index(name)]:.6g}"
                        for name in result.held))


def _check_data(model, q, qd, qdd, tau):
    try:
        (q, qd, qdd, tau), batched = joint_arrays(model, q=q, qd=qd, qdd=qdd, tau=tau)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if not batched:
        raise InputError("identification needs a batch of samples (N, n), got one configuration")
    return q, qd, qdd, tau


def _row_weights(model, weights, n):
    if weights is None or (isinstance(weights, str) and weights == "auto"):
        return np.ones(n)
    w = np.asarray(weights, dtype=float)
    if w.shape != (n,) or not np.isfinite(w).all() or np.any(w <= 0):
        raise InputError(
            f"weights: expected {n} positive finite per-joint weights (1/sigma_j) or 'auto', "
            f"got {weights!r}")
    return w


def joint_factors(model, base, friction, q, qd, qdd, tau, load_model=None) -> np.ndarray:
    """
    Return each joint's triangular factor of its base regressor and torques, with two sums.

    Per joint j, the triangular factor R_j (b+1, b+1) of [W_j, tau_j] (W_j: joint j's rows of
    the base regressor), accumulated over chunks of samples, so that the whole regressor is
    never held in memory; any row weighting then works on these factors alone.  Returned as
    (n, b + 3, b + 1): rows b+1 and b+2 hold, in their first two entries, the sample count and
    the sum of tau_j (for the F test's per-joint means).  ``load_model``: whose g(q) the
    load-dependent friction's column takes (``regressor``; default ``model``).
    """
    b, n = base.count, model.n
    factors = np.zeros((n, b + 3, b + 1))
    for start in range(0, q.shape[0], CHUNK):
        stop = start + CHUNK
        W = base.columns(regressor(model, q[start:stop], qd[start:stop], qdd[start:stop],
                                   friction, load_model))
        for j in range(n):
            rows = np.hstack([W[:, j, :], tau[start:stop, j, None]])
            factors[j, :b + 1] = scipy.linalg.qr(np.vstack([factors[j, :b + 1], rows]),
                                                 mode="r")[0][:b + 1]
    factors[:, b + 1, 0] = q.shape[0]
    factors[:, b + 2, 0] = tau.sum(axis=0)
    return factors


def merge_factors(parts) -> np.ndarray:
    """Return the factors of several blocks of samples as if they had been one block."""
    parts = list(parts)
    b = parts[0].shape[2] - 1
    out = np.zeros_like(parts[0])
    for j in range(out.shape[0]):
        stacked = np.vstack([p[j, :b + 1] for p in parts])
        out[j, :b + 1] = scipy.linalg.qr(stacked, mode="r")[0][:b + 1]
    out[:, b + 1:] = sum(p[:, b + 1:] for p in parts)
    return out


def _solve(factors: np.ndarray, w: np.ndarray, theta0: np.ndarray):
    """
    Solve the weighted least-squares problem from the joints' factors, held at ``theta0``.

    Stacking w_j [W_j, tau_j] is equivalent to stacking w_j R_j (same Gram matrix).  Where the
    data do not determine some directions of the base parameters (singular values of the
    column-scaled R below ``SINGULAR`` x the largest), those directions stay at ``theta0``, the
    starting file's values: the change theta - theta0 is the minimum-norm least-squares one in
    the scaled columns (a truncated SVD); otherwise the plain triangular solve.  Returns (theta,
    R, Q^T y, residual sum of squares per joint, held: the indices of the base parameters in
    the undetermined directions, :func:`_held`).
    """
    b = factors.shape[2] - 1
    R_aug = scipy.linalg.qr(np.concatenate(factors[:, :b + 1] * w[:, None, None]),
                            mode="r")[0][:b + 1]
    R, Qty = R_aug[:b, :b], R_aug[:b, b]
    scale, U, s, Vt, keep = _scaled_svd(R)
    if keep.all():
        theta = scipy.linalg.solve_triangular(R, Qty)
        return theta, R, Qty, _residual_ss(factors, theta), ()
    change = Vt[keep].T @ ((U[:, keep].T @ (Qty - R @ theta0)) / s[keep])
    theta = theta0 + change / scale
    return theta, R, Qty, _residual_ss(factors, theta), _held(Vt[~keep])


def _hold_rows(R: np.ndarray) -> np.ndarray:
    """
    Return the rows that hold the undetermined directions in the consistent fit (``hold``).

    The unit null directions of the column-scaled R, in base-parameter units, times R's largest
    scaled singular value: held as firmly as the data hold their best-determined direction.
    """
    scale, _, s, Vt, keep = _scaled_svd(R)
    return s[0] * Vt[~keep] * scale


def _scaled_svd(R):
    """Return the SVD of R with unit-norm columns (scale, U, s, Vt, the directions kept)."""
    scale = np.linalg.norm(R, axis=0)
    scale = np.where(scale > 1e-300, scale, 1.0)
    U, s, Vt = np.linalg.svd(R / scale)
    keep = s > SINGULAR * max(s[0], 1e-300)
    return scale, U, s, Vt, keep


def _residual_ss(factors, theta) -> np.ndarray:
    b = factors.shape[2] - 1
    x = np.append(theta, -1.0)
    return np.array([float(np.sum((F[:b + 1] @ x) ** 2)) for F in factors])


def _held(directions: np.ndarray) -> tuple:
    """
    Return the base parameters that the data do not determine (held at the starting values).

    Those with a weight above 0.1 in a unit direction (rows of ``directions``, in the scaled
    columns) that the data do not see: a parameter the data never move, or two they cannot tell
    apart (Coulomb friction and the offset of a joint turning one way only).
    """
    return tuple(sorted({int(k) for v in directions for k in np.flatnonzero(np.abs(v) > 0.1)}))


def _weighted_fit(model, base, factors, weights, prior: np.ndarray):
    """
    Return the (weighted) least squares: (theta, R, Qty, residual_ss, w, noise, method, held).

    ``prior``: the starting file's base parameters, at which what the data do not determine
    is held.
    """
    n, b, N = model.n, base.count, factors[0, base.count + 1, 0]
    w = _row_weights(model, weights, n)
    theta, R, Qty, residual_ss, held = _solve(factors, w, prior)
    noise = np.sqrt(residual_ss / max(N - b / n, 1.0))
    method = "ols" if weights is None else "wls"
    if isinstance(weights, str) and weights == "auto":
        # the ordinary fit leaks the noisiest joint's errors into the others' residuals, so the
        # weights are refined until the noise estimates settle (a few iterations)
        for _ in range(AUTO_ITERATIONS):
            w_new = 1.0 / np.maximum(noise, 1e-12 * max(noise.max(), 1e-300))
            settled = np.allclose(w_new, w, rtol=0.01)
            w = w_new
            theta, R, Qty, residual_ss, held = _solve(factors, w, prior)
            noise = np.sqrt(residual_ss / max(N - b / n, 1.0))
            if settled:
                break
    return theta, R, Qty, residual_ss, w, noise, method, held


def _f_test(factors, residual_ss, w, b, offsets):
    """
    Return the F statistic and p-value of the fit against per-joint constants (module docstring).

    S0 per joint: ||tau_j||^2 - (sum tau_j)^2 / N (the factor's last diagonal entry is
    ||tau_j - projection||, so ||tau_j||^2 is the squared norm of its last column).
    """
    N = factors[0, b + 1, 0]
    total = np.array([float(np.sum(F[:b + 1, b] ** 2)) for F in factors])
    S0 = float(np.sum(w ** 2 * (total - factors[:, b + 2, 0] ** 2 / N)))
    S = float(np.sum(w ** 2 * residual_ss))
    n = factors.shape[0]
    dof_model, dof_rest = b - offsets, N * n - b
    if dof_model <= 0 or dof_rest <= 0 or S <= 0.0:
        return np.inf, 0.0
    F = max(S0 - S, 0.0) / dof_model / (S / dof_rest)
    return float(F), float(scipy.stats.f.sf(F, dof_model, dof_rest))


def identify(model, q, qd, qdd, tau, weights=None, consistent: bool = False,
             friction=None) -> IdentificationResult:
    """
    Identify the base parameters of a model from measured motion and torques.

    Identify ``model``'s base parameters from measured joint motion and torques (Siciliano et al.
    2009, 7.86).

    ``q, qd, qdd, tau``: (N, n) arrays (positions, velocities, accelerations, measured joint
    efforts: torques or forces, friction, rotors and the sensor's offset included).
    ``weights``: None (ordinary least squares), "auto" (per-joint noise estimated from the
    ordinary fit), or (n,) per-joint weights 1/sigma_j.  ``consistent``: constrain the fit to
    physically consistent parameters.  ``friction``: the friction kinds fitted (module
    docstring; None: the model's own).  Raises :class:`InputError` for bad or insufficient data;
    base parameters the data do not excite are held at ``model``'s values (``result.held``).
    """
    q, qd, qdd, tau = _check_data(model, q, qd, qdd, tau)
    kinds = friction_kinds(model, friction)
    base = base_parameters(model, kinds)
    N, n, b = q.shape[0], model.n, base.count
    if N * n < EQUATIONS_PER_PARAMETER * b:
        raise InputError(
            f"too few samples: {N} samples x {n} joints = {N * n} equations for {b} base "
            f"parameters of '{model.name}'; need at least {EQUATIONS_PER_PARAMETER * b} "
            f"({-(-EQUATIONS_PER_PARAMETER * b // n)} samples)")
    fitted = tau - known_friction(model, qd, kinds, q)
    factors = joint_factors(model, base, kinds, q, qd, qdd, fitted)
    return solve_factors(model, factors, kinds, weights, consistent,
                         initial=np.sqrt(np.mean((tau - predicted_effort(model, q, qd, qdd)) ** 2,
                                                 axis=0)))


def solve_factors(model, factors, friction, weights=None, consistent: bool = False,
                  initial=None, regularisation=None) -> IdentificationResult:
    """
    Return the identification from the joints' factors (:func:`joint_factors`, merged).

    ``initial``: the input model's per-joint RMS error on the same samples (for the report).
    ``regularisation``: the consistent fit's pull toward the starting file's bodies
    (:class:`Regularisation`; default none).
    """
    kinds = friction_kinds(model, friction)
    base = base_parameters(model, kinds)
    b, N = base.count, int(factors[0, base.count + 1, 0])
    if N * model.n < EQUATIONS_PER_PARAMETER * b:
        raise InputError(f"too few samples: {N} samples x {model.n} joints for {b} base "
                         f"parameters of '{model.name}'")
    prior, K = parameter_vector(model, kinds), base.combination
    theta0 = K @ prior
    theta, R, Qty, residual_ss, w, noise, method, held = _weighted_fit(model, base, factors,
                                                                       weights, theta0)
    s2 = float(np.sum(residual_ss * w ** 2)) / (N * model.n - b)
    covariance = _covariance(R, s2)
    std = np.sqrt(np.diag(covariance))
    std[list(held)] = np.inf
    offsets = int(np.count_nonzero(parameter_layout(model, kinds).offset >= 0))
    F, p = _f_test(factors, residual_ss, w, b, offsets)
    spread = _prediction_std(model, base, kinds, covariance)
    pi = closest_affine(model, K, theta, prior, kinds)
    weight, check, decided = 0.0, None, ()
    if consistent:
        # chi-square units: divide by s so that the prior term's weight means the same everywhere
        s = np.sqrt(s2) if s2 > 0 else 1.0
        consistent_prior(model, prior, kinds, warn=True)
        problem = _Problem(model, R / s, Qty / s, K, prior, kinds, pi,
                           _hold_rows(R / s) if held else None)
        determined = not np.any(spread > PREDICTION_LIMIT * noise)
        pi, weight, check = _prior_weighted_fit(problem, w, regularisation, determined)
        decided = _prior_decided(problem, base, std, weight, held)
        if pi is None:
            raise InputError(
                f"the physically consistent fit failed for '{model.name}' "
                "(the solver did not converge, or its answer was not a set of real bodies)")
        theta = K @ pi
        residual_ss = _residual_ss(factors, theta)
        method = "consistent"
    elif consistency_problems(model, pi, friction=kinds):
        pi = closest_consistent(model, K, theta, prior, kinds)
        if pi is None:
            pi = closest_affine(model, K, theta, prior, kinds)
    problems, identified = _identified_model(model, pi, kinds, R)
    return IdentificationResult(
        base=base, estimates=theta, std=std, prior=K @ prior,
        condition_number=float(np.linalg.cond(R)),
        residual_rms=np.sqrt(residual_ss / N),
        initial_residual_rms=np.full(model.n, np.nan) if initial is None else initial,
        noise_std=noise, weights=w, method=method, samples=N, parameters=pi, problems=problems,
        model=identified, joint_names=model.joint_names, friction=kinds, f_statistic=F,
        p_value=p, prediction_std=spread, held=tuple(base.names[k] for k in held),
        prior_weight=weight, weight_check=check, prior_decided=decided)


def _identified_model(model, pi, kinds, R):
    """
    Return (why ``pi`` is no real robot, the model with ``pi`` or None).

    Inconsistent parameters are a warning (:class:`InconsistentParametersWarning`: the plain
    least squares may give them, no file is written); consistent ones out of a robot file's
    ranges (a mass of 7e8 kg) an :class:`InputError` saying the data are too weak.
    """
    problems = tuple(consistency_problems(model, pi, tolerance=1e-7, friction=kinds))
    if problems:
        warnings.warn(
            f"identified parameters of '{model.name}' are not physically consistent "
            f"({'; '.join(problems)}); no robot file is written from them: identify with "
            f"consistent=True (the default of `robot-dynamics identify`)",
            InconsistentParametersWarning, stacklevel=3)
        return problems, None
    try:
        return problems, model_with_parameters(model, pi, friction=kinds)
    except RobotDescriptionError as exc:    # e.g. a mass of 7e8 kg: not the user's file
        raise InputError(
            f"the fit for '{model.name}' gives parameters no robot has ({exc}): the data "
            "determine some directions too weakly (condition number "
            f"{np.linalg.cond(R):.3g}); record a richer excitation (`robot-dynamics "
            "excite`) or longer data") from None


class _Problem(NamedTuple):
    """The consistent fit's data (chi-square units), prior and unconstrained estimate."""

    model: object
    R: np.ndarray
    y: np.ndarray
    K: np.ndarray
    prior: np.ndarray
    kinds: tuple
    estimate: np.ndarray          # the unconstrained fit's full parameters (for the scales)
    hold: np.ndarray | None

    def estimate_for(self, weight: float) -> np.ndarray:
        """
        Return the estimate whose scales the fit uses at ``weight``.

        With the divergence the links' scales are the prior's (an unconstrained estimate of
        7e8 kg would make the links' unknowns 1e-8 of their change); friction keeps the
        estimate's (a file without friction has zeros there).
        """
        if weight <= 0:
            return self.estimate
        estimate = self.estimate.copy()
        links = parameter_layout(self.model, self.kinds).link
        estimate[links] = self.prior[links]
        return estimate

    def fit(self, weight: float):
        """Return the consistent fit at ``weight`` (``physical.consistent_fit``) or None."""
        return consistent_fit(self.model, self.R, self.y, self.K, self.prior, self.kinds,
                              estimate=self.estimate_for(weight), hold=self.hold,
                              weight=weight)


def _real_bodies(problem, pi) -> bool:
    """Tell whether ``pi`` makes a robot file (consistent, every value in its range)."""
    if pi is None or consistency_problems(problem.model, pi, tolerance=1e-7,
                                          friction=problem.kinds):
        return False
    try:
        model_with_parameters(problem.model, pi, friction=problem.kinds)
    except RobotDescriptionError:
        return False
    return True


def _prior_weighted_fit(problem, w, regularisation, determined: bool):
    """
    Return (pi, gamma, WeightCheck or None): the consistent fit at a weight from the data.

    Data that determine every direction (``determined``: the torque uncertainty at random
    states within the noise on every joint, the module docstring's test (2)) keep the plain
    consistent fit, gamma = 0, if it gives real bodies: the prior has nothing to decide, and a
    pull toward a wrong file would bias what the data determine.  Otherwise each of
    ``PRIOR_WEIGHTS`` is fitted and scored on the held-out samples, sum_j (w_j r_j)^2 per sample;
    the lowest mean score wins if it beats the first weight that gives real bodies by
    ``SIGNIFICANT`` standard errors of the paired differences (:func:`paired_error`), else that
    first weight stands.  So weak directions that make no robot (a link of 7e8 kg) or that
    predict the held-out samples worse get the prior's pull, no more than the held-out samples
    ask for.
    """
    reg = regularisation or Regularisation()
    if reg.weight is not None or reg.heldout is None:
        weight = float(reg.weight or 0.0)
        return problem.fit(weight), weight, None
    if determined:
        pi = problem.fit(0.0)
        if _real_bodies(problem, pi):
            return pi, 0.0, None
    W, tau = reg.heldout
    fits, scores = [], []
    for weight in PRIOR_WEIGHTS:
        pi = problem.fit(weight)
        real = _real_bodies(problem, pi)
        fits.append(pi if real else None)
        scores.append(np.sum(((tau - W @ (problem.K @ pi)) * w) ** 2, axis=1) if real else None)
    valid = [k for k, score in enumerate(scores) if score is not None]
    if not valid:
        return None, 0.0, None
    first = valid[0]
    best = min(valid, key=lambda k: float(np.mean(scores[k])))
    difference = scores[first] - scores[best]
    pick = best if difference.mean() > SIGNIFICANT * paired_error(difference) else first
    errors = tuple(None if score is None else
                   np.sqrt(np.mean((tau - W @ (problem.K @ fits[k])) ** 2, axis=0))
                   for k, score in enumerate(scores))
    return fits[pick], PRIOR_WEIGHTS[pick], WeightCheck(PRIOR_WEIGHTS, errors, pick)


def paired_error(difference: np.ndarray) -> float:
    """
    Return the standard error of the mean of a series of correlated per-sample differences.

    Neighbouring samples of filtered data are not independent (the acceleration filter's
    bandwidth is far below the sample rate), so the plain std / sqrt(N) overstates how sure the
    mean is.  The variance of the mean is var x tau / N with tau the integrated autocorrelation
    time, 1 + 2 sum_k rho_k, summed to the first window M >= 5 tau(M) (Sokal, "Monte Carlo
    methods in statistical mechanics: foundations and new algorithms", 1997, Sect. 3, the
    automatic windowing).  The held-out samples' stretches are taken as one series.
    """
    d = np.asarray(difference, dtype=float) - np.mean(difference)
    size = d.size
    if size < 2 or not np.any(d):
        return 0.0
    spectrum = np.fft.rfft(d, 2 * size)
    acf = np.fft.irfft(spectrum * np.conj(spectrum))[:size]
    rho = acf / acf[0]
    tau = 1.0 + 2.0 * np.cumsum(rho[1:])
    window = np.flatnonzero(np.arange(1, size) >= 5.0 * tau)
    tau_int = tau[window[0]] if window.size else tau[-1]
    return float(np.sqrt(max(tau_int, 1.0) * np.var(d) / size))


def _prior_decided(problem, base, std, weight, held) -> tuple:
    """
    Return the base parameters the prior decides more than the data, weakest first.

    (name, std from the data, std with the prior) where the second is below ``PRIOR_SHARE`` x
    the first: the data carry less than a quarter of what is known about it.
    """
    if weight <= 0:
        return ()
    posterior = _posterior_std(problem, weight)
    ratio = posterior / np.where(np.isfinite(std) & (std > 0), std, np.inf)
    order = [k for k in np.argsort(ratio) if ratio[k] < PRIOR_SHARE and k not in held]
    return tuple((base.names[k], float(std[k]), float(posterior[k])) for k in order)


def _posterior_std(problem, weight: float) -> np.ndarray:
    """
    Return each base parameter's standard deviation with the prior term at ``weight``.

    The fit minimises chi^2 + gamma sum d(J || J0) (+ the hold and the vanishing ridge):
    -2 log of a posterior whose precision near the prior is K^T R^T R K + gamma / 2 H + ...,
    H the divergence's Hessian (``physical.divergence_hessian``), plus gamma / 2 / s_k^2 on
    each drive parameter (the drives' Gaussian prior, ``physical.drive_columns``, s_k its
    scale); the covariance of the base parameters is K P^-1 K^T (R in chi-square units: the
    estimates' own s^2 is in it).
    """
    K, R = problem.K, problem.R
    precision = K.T @ (R.T @ R) @ K + 0.5 * weight * divergence_hessian(
        problem.model, problem.prior, problem.kinds)
    if problem.hold is not None:
        precision += K.T @ problem.hold.T @ problem.hold @ K
    scales = parameter_scales(problem.model, problem.prior, problem.kinds,
                              problem.estimate_for(weight))
    drives = np.zeros(scales.size)
    drives[drive_columns(parameter_layout(problem.model, problem.kinds))] = 0.5 * weight
    precision += np.diag((MU + drives) / scales ** 2)
    covariance = K @ np.linalg.solve(precision, K.T)
    return np.sqrt(np.maximum(np.diag(covariance), 0.0))


def _covariance(R: np.ndarray, s2: float) -> np.ndarray:
    """
    Return the estimates' covariance, s^2 (R^T R)^-1, over the directions the data determine.

    With directions held at the starting values (:func:`_solve`), the pseudo-inverse over the
    others: the held ones do not vary with the data, so they add nothing to the spread of the
    predicted torques (their std is reported as inf).
    """
    scale, _, s, Vt, keep = _scaled_svd(R)
    if keep.all():
        Rinv = scipy.linalg.solve_triangular(R, np.eye(R.shape[0]))
        return s2 * (Rinv @ Rinv.T)
    V = Vt[keep].T / s[keep] / scale[:, None]
    return s2 * (V @ V.T)


def _prediction_std(model, base, kinds, covariance) -> np.ndarray:
    """
    Return per joint the RMS standard deviation of the predicted (weighted) torque elsewhere.

    At ``PREDICTION_STATES`` random states (positions within the limits, at most +-pi; velocities
    and accelerations of 1 rad/s (m/s) and 1 rad/s^2 RMS: ``base_parameters.sample_states``),
    sqrt(mean w C w^T) with C the estimates' covariance: how far a model fitted to this recording
    may be off on motions it did not see (N m or N).
    """
    q, qd, qdd = sample_states(model, PREDICTION_STATES, np.random.default_rng(11))
    W = base.columns(regressor(model, q, qd, qdd, kinds))
    return np.sqrt(np.maximum(np.mean(np.einsum("sjb,bc,sjc->sj", W, covariance, W), axis=0),
                              0.0))
