"""
Identification from recordings with nothing to tune: filter, hold out, check, fit, validate.

:func:`identify_recordings` is what ``robot-dynamics identify`` runs on the joint states of one or
more recordings (their rows are stacked: least squares does not need them to be contiguous):

0. **Where the torque is measured** (``torque_side``).  Motor currents times torque constants (or a
   commanded effort) are motor-side: they contain each drive's reflected rotor inertia and the
   gearbox's friction.  A link-side joint-torque sensor (Franka Emika Panda, KUKA LBR iiwa,
   Kinova Gen3) sits after the gearbox: its data see no rotor inertia, so ``"link"`` fits the
   model without motors (``link_side``: no rotor columns, the friction fitted is what lies on the
   link side of the sensor) and the file written keeps the robot file's motors.  ``"auto"`` (the
   command's default without torque constants) fits motor-side and, if no rotor inertia comes out
   of the data (each below its standard deviation, or on its bound 0), takes the data as
   link-side: the same fit (rotor terms nil) with the file's motors kept.
1. **Rotors.**  With ``rotors`` every joint gets a rotor inertia column, also where the robot file
   has no motor (a drive's reflected inertia k_r^2 I_m is a large part of a geared joint's
   inertia): such a joint is given the motor model of ``with_rotors`` (gear ratio from the
   drive-gain file, else ``DEFAULT_GEAR_RATIO``; beyond k_r^2 I_m qdd the rotor's terms scale
   with 1 / k_r, so its exact value barely matters, and the file written holds exactly the
   rotor that was fitted).
2. **Acceleration estimation.**  Each recording's cut-off is chosen from its spectrum
   (``filtering.choose_cutoff``) and then *checked on held-out data*: the fit is repeated with
   the cut-off scaled by each of ``CUTOFF_FACTORS`` and the one whose weighted least-squares fit
   predicts the held-out samples best is kept (the same samples for every candidate: the ones
   every candidate keeps).  A cut-off too low distorts the motion, one too high lets encoder
   noise into qdd (errors in the regressor bias the fit): the held-out torque error sees both.
3. **Held-out share.**  ``holdout`` of each recording (``validation.holdout_mask``: the last
   fifth of five stretches of time by default) is left out of every fit and used for the checks
   and the report; the written model is the one fitted to the rest, so the report describes it.
4. **Fit**: ``identify.solve_factors`` (consistent by default, weighted, friction and offsets
   fitted), then per-joint errors of the starting and the identified model on the held-out
   samples (``validation.validation_report``).  The further friction terms (quadratic viscous,
   load-dependent Coulomb) are kept only where the data determine them: a kind no joint's
   coefficient of which is ``SUPPORT`` standard deviations from 0 is left out and the fit
   repeated (``_supported_terms``).  The load-dependent friction's column ``|g_j(q)| sgn(qd_j)``
   (``core/control/friction.py``) takes g from the starting model's bodies in the cut-off search
   and the first fit; the fit is then repeated with g from the fitted bodies
   until no joint's F_l changes by more than its standard deviation, at most
   ``LOAD_ITERATIONS`` times (``_iterate_load``).  Where the data leave directions weakly
   determined, the first fit chooses on the held-out samples how hard the consistent fit is
   pulled toward the starting file's bodies (``identify.Regularisation``); the refits keep that
   weight.
5. **Refit** (``refit``; the command sets it when ``--validate`` bags are given).  Once the choices
   are made on the held-out share -- cut-off, reversal window, friction terms, the weight of the
   starting file's bodies -- the model is fitted once more to all samples, held-out share
   included, with those choices kept: the usual last step of model selection (Hastie,
   Tibshirani and Friedman, "The Elements of Statistical Learning", 2nd ed., Sect. 7.10: the
   held-out data choose, all the data fit).  It is done only where independent recordings
   (the validation bags) judge the model written, since the held-out share then no longer can;
   its report (``RecordingsFit.holdout``) stays that of the fit without it, which made the
   choices.  Without validation bags the model written is the one the held-out share checked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ..model import RobotModel
from .base_parameters import base_parameters
from .filtering import IdentificationData, derivatives, identification_data
from .identify import (EQUATIONS_PER_PARAMETER, Regularisation, _weighted_fit, joint_factors,
                       merge_factors, solve_factors)
from .parameters import (FRICTION_KINDS, FRICTION_PREFIX, friction_kinds,
                         joint_has_motor, known_friction, parameter_vector,
                         predicted_effort)
from .regressor import regressor
from .validation import holdout_mask, rms, validation_report

CUTOFF_FACTORS = (0.5, 0.71, 1.0, 1.41, 2.0)
MIN_FACTOR = 1.0 / 16.0
DEFAULT_GEAR_RATIO = 100.0
SUPPORT = 3.0                 # a further friction term is kept if some joint's is this many std
EXTRA_KINDS = ("viscous_quadratic", "coulomb_load")
LOAD_ITERATIONS = 3           # refits at most with g(q) from the fitted bodies (_iterate_load)
NYQUIST_SHARE = 0.45          # cut-offs stay below this share of the sample rate
WINDOWS = (0.25, 0.5, 1.0)    # reversal windows tried, in 1 / f_c
WINDOW = 0.25                 # the one the cut-off search uses and the others must beat
SIGNIFICANT = 2.0             # standard errors by which a candidate must beat the reference
EFFORT_MARGIN = 10.0          # efforts beyond this times the effort limit are unusable samples
MAX_EFFORT = 1e9              # the robot files' bound on efforts, where no limit is known


class Recording(NamedTuple):
    """One recording's raw samples: stamps (s), positions, velocities or None, efforts."""

    name: str
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray | None
    tau: np.ndarray               # joint torques or forces; NaN where a sample is bad


@dataclass(frozen=True)
class IdentificationOptions:
    """What :func:`identify_recordings` does (the command's defaults)."""

    consistent: bool = True
    weights: object = "auto"
    friction: tuple = FRICTION_KINDS
    rotors: bool = True
    gear_ratios: dict = field(default_factory=dict)    # joint name -> k_r for added rotors
    cutoff: float | None = None                        # Hz; None: chosen and checked
    method: str = "butterworth"
    decimate: int = 1
    holdout: float = 0.2
    torque_side: str = "motor"                         # "motor", "link" or "auto" (step 0)
    refit: bool = False                                # step 5: the held-out share refitted too


TORQUE_SIDES = ("motor", "link", "auto")


class CutoffCheck(NamedTuple):
    """The cut-off candidates and their held-out errors (module docstring, step 2)."""

    factors: tuple
    cutoffs: list                 # per candidate: the cut-off of each recording (Hz)
    heldout_rms: list             # per candidate: per-joint held-out RMS error
    score: list                   # per candidate: sum over joints of (RMS / noise)^2
    chosen: int
    windows: object = None        # WindowCheck at the chosen cut-off

    def table(self, joint_names) -> str:
        """Return the check as printed by ``robot-dynamics identify``."""
        lines = ["acceleration filter: cut-off checked on the held-out samples "
                 "(held-out torque RMS per joint):"]
        for k, factor in enumerate(self.factors):
            mark = "  <- chosen" if k == self.chosen else ""
            cut = ", ".join(f"{c:.3g}" for c in self.cutoffs[k])
            errs = _errors_text(self.heldout_rms[k])
            lines.append(f"  x{factor:<6.3g} {cut:>10} Hz  {errs}{mark}")
        if self.windows is not None:
            w = self.windows
            lines.append("  samples left out around velocity reversals, checked the same way:")
            for k, width in enumerate(w.windows):
                mark = "  <- chosen" if k == w.chosen else ""
                errs = _errors_text(w.heldout_rms[k])
                lines.append(f"  +-{width:<4g} / f_c      {errs}{mark}")
        return "\n".join(lines)


class WindowCheck(NamedTuple):
    """The reversal windows tried at the chosen cut-off and their held-out errors."""

    windows: tuple                # in 1 / f_c
    heldout_rms: list
    score: list
    chosen: int


def _errors_text(errors) -> str:
    return "(no common held-out samples)" if errors is None else " ".join(
        f"{e:.4g}" for e in errors)


class RecordingsFit(NamedTuple):
    """What :func:`identify_recordings` found."""

    model: RobotModel             # the model identified against (rotors added)
    result: object                # IdentificationResult
    training: IdentificationData  # the samples fitted (all recordings)
    held_out: IdentificationData | None
    cutoffs: list                 # the cut-off used for each recording (Hz)
    check: CutoffCheck | None
    holdout: object               # ValidationReport on the held-out samples, or None
    measured: RobotModel = None   # the starting model as the torque sensor sees it (step 0)
    written: RobotModel = None    # the model to write: result.model with the file's motors kept
    torque_side: str = "motor"    # "motor" or "link": where the efforts were taken as measured
    refitted: bool = False        # the held-out share refitted too (step 5): in ``training``


def bad_efforts(model, tau) -> tuple[np.ndarray, str]:
    """
    Return which samples have an unusable effort, and a message naming the joints and counts.

    Unusable: not finite, or beyond ``EFFORT_MARGIN`` times the joint's effort limit (when the
    model knows it; else beyond the robot files' bound on efforts): a value no drive produced, a
    corrupt or uninitialised field.  Such samples are left out of the fit (positions are kept for
    the filter), never clipped.
    """
    tau = np.asarray(tau, dtype=float)
    limit = np.where(np.isfinite(model.effort_limit) & (model.effort_limit > 0),
                     EFFORT_MARGIN * model.effort_limit, MAX_EFFORT)
    with np.errstate(invalid="ignore"):
        bad_entries = ~(np.abs(tau) <= limit)
    bad = bad_entries.any(axis=1)
    if not bad.any():
        return bad, ""
    counts = [f"'{name}': {int(c)}" for name, c in zip(model.joint_names, bad_entries.sum(axis=0))
              if c]
    return bad, (f"{int(bad.sum())} of {bad.size} samples left out for an effort that is not "
                 f"finite or beyond {EFFORT_MARGIN:g} x the joint's effort limit "
                 f"(by joint: {', '.join(counts)})")


def with_rotors(model, gear_ratios=None) -> RobotModel:
    """Return the model with a motor on every joint (rotor inertia 0 where the file has none)."""
    gear_ratios = gear_ratios or {}
    spec = model.to_dict()
    for i, joint in enumerate(spec["joints"]):
        if not joint_has_motor(model, i):
            ratio = float(gear_ratios.get(joint["name"], DEFAULT_GEAR_RATIO))
            joint["motor"] = {"rotor_inertia": 0.0, "gear_ratio": ratio}
    return RobotModel.from_dict(spec, f"{model.name} (with rotors)")


def link_side(model) -> RobotModel:
    """Return the model as a link-side joint-torque sensor sees it: no motor on any joint."""
    spec = model.to_dict()
    for joint in spec["joints"]:
        joint["motor"] = {"rotor_inertia": 0.0, "gear_ratio": 1.0}
    spec.pop("coupling", None)      # (behind the gearbox: each joint's own friction)
    return RobotModel.from_dict(spec, model.name)


def with_motors_of(model, source) -> RobotModel:
    """Return ``model`` with the motors (rotor inertia, gear ratio, coupling) of ``source``."""
    spec, motors = model.to_dict(), [j.get("motor") for j in source.to_dict()["joints"]]
    for joint, motor in zip(spec["joints"], motors):
        joint["motor"] = motor or {"rotor_inertia": 0.0, "gear_ratio": 1.0}
    if "coupling" in source.to_dict():
        spec["coupling"] = source.to_dict()["coupling"]
    return RobotModel.from_dict(spec, model.name)


def _sees_rotors(result) -> bool:
    """
    Tell whether the data show a rotor inertia (step 0).

    True if some joint's rotor inertia is a base parameter of its own that is ``SUPPORT``
    standard deviations above 0, or if none is (then the data cannot tell the sides apart, and
    the fit stays motor-side).
    """
    named = [result.names.index(f"Im[{joint}]") for joint in result.joint_names
             if f"Im[{joint}]" in result.names]
    if not named:
        return True
    return any(result.estimates[k] > SUPPORT * result.std[k] for k in named)


def _concat(parts) -> IdentificationData:
    first = parts[0]
    joined = {f: np.concatenate([getattr(p, f) for p in parts])
              for f in ("t", "q", "qd", "qdd", "tau", "index")}
    return first._replace(**joined, bad_torques=sum(p.bad_torques for p in parts))


class _Candidate(NamedTuple):
    """One cut-off factor's data and weighted least-squares fit (module docstring, step 2)."""

    factor: float
    cutoffs: list            # per recording, Hz
    training: list           # per recording
    held: list               # per recording (None where nothing is held out)
    factors: np.ndarray      # QR factors of the training samples (identify.joint_factors)
    theta: np.ndarray        # weighted least-squares base parameters
    noise: np.ndarray        # per-joint noise estimate


def _in_turn(function, items) -> list:
    """Call ``function`` on every item, one after the other (the default mapper)."""
    return [function(item) for item in items]


def _spectral(job) -> tuple:
    """Return a recording's spectral cut-off and sample rate (Hz): job (recording, options)."""
    r, options = job
    data = derivatives(r.t, r.q, r.qd, options.cutoff, options.method)
    return data.cutoff, data.sample_rate


def _recording_rows(job) -> tuple:
    """
    Return one recording's share of a candidate: training and held-out samples, QR factors.

    ``job``: (recording, cut-off, reversal windows, model, base, kinds, options).  The factors
    are those of the recording's training rows of the base regressor (``joint_factors``); the
    caller merges the recordings' factors in their order, which gives the same factors however
    the recordings were spread over workers.
    """
    r, cutoff, windows, model, base, kinds, options = job
    data = identification_data(r.t, r.q, r.tau, r.qd, cutoff, options.method, options.decimate,
                               reversal_window=windows)
    mask = holdout_mask(data.t, options.holdout, r.t[0], r.t[-1])
    training = data.subset(~mask)
    factors = joint_factors(model, base, kinds, training.q, training.qd, training.qdd,
                            training.tau - known_friction(model, training.qd, kinds, training.q))
    return training, data.subset(mask) if mask.any() else None, factors


class _Search:
    """
    The cut-off candidates of a set of recordings, evaluated on demand.

    ``mapper(function, items)`` returns ``[function(item) for item in items]``, perhaps
    computed in parallel (the command's Dask engine): the per-recording work -- filtering,
    regressor rows and their QR factors -- goes through it; the fit on the merged factors stays
    one solve here.
    """

    def __init__(self, model, kinds, recordings, options, mapper=None):
        self.model, self.kinds, self.recordings, self.options = model, kinds, recordings, options
        self.mapper = mapper or _in_turn
        self.base = base_parameters(model, kinds)
        spectral = self.mapper(_spectral, [(r, options) for r in recordings])
        self.spectral = [cutoff for cutoff, _ in spectral]
        self.top = [NYQUIST_SHARE * rate for _, rate in spectral]
        self.done: dict = {}

    def cutoffs(self, factor: float) -> list:
        return [min(factor * c, t) for c, t in zip(self.spectral, self.top)]

    def capped(self, factor: float) -> bool:
        """Tell whether every recording's cut-off is at the Nyquist cap at this factor."""
        return all(factor * c >= t for c, t in zip(self.spectral, self.top))

    def usable(self, factor: float, windows=WINDOW) -> bool:
        """Tell whether this candidate leaves enough samples to determine the parameters."""
        try:
            self(factor, windows)
        except InputError:
            return False
        return True

    def __call__(self, factor: float, windows=WINDOW) -> _Candidate:
        key = (factor, tuple(np.atleast_1d(windows).tolist()))
        if key not in self.done:
            self.done[key] = self._evaluate(factor, windows)
        return self.done[key]

    def _evaluate(self, factor: float, windows) -> _Candidate:
        options, model, kinds = self.options, self.model, self.kinds
        rows = self.mapper(_recording_rows, [
            (r, c, windows, model, self.base, kinds, options)
            for r, c in zip(self.recordings, self.cutoffs(factor))])
        training, held, parts = (list(x) for x in zip(*rows))
        factors = merge_factors(parts)
        count = int(factors[0, -2, 0])
        if count * model.n < EQUATIONS_PER_PARAMETER * self.base.count:
            raise InputError(f"only {count} samples left to fit at a cut-off of "
                             f"{', '.join(f'{c:.3g}' for c in self.cutoffs(factor))} Hz (filter "
                             "start-up, velocity reversals and slow samples left out)")
        prior = self.base.values(parameter_vector(model, kinds))    # (held where not excited)
        theta, *_, noise, _, _ = _weighted_fit(model, self.base, factors, options.weights, prior)
        return _Candidate(factor, self.cutoffs(factor), training, held, factors, theta, noise)

    def heldout(self, candidates) -> list:
        """
        Return each candidate's held-out residuals (samples, joints) on common samples.

        The held-out samples every candidate keeps, so that they are compared on the same ones;
        None if there are none.
        """
        sets = [[] for _ in candidates]
        for i in range(len(self.recordings)):
            parts = [c.held[i] for c in candidates]
            if any(p is None for p in parts):
                continue
            common = parts[0].index
            for p in parts[1:]:
                common = np.intersect1d(common, p.index)
            for k, p in enumerate(parts):
                sets[k].append(p.subset(np.searchsorted(p.index, common)))
        if not sets[0] or sum(p.t.size for p in sets[0]) < self.model.n:
            return None
        residuals = []
        for c, parts in zip(candidates, sets):
            held = _concat(parts)
            W = self.base.columns(regressor(self.model, held.q, held.qd, held.qdd, self.kinds))
            residuals.append(held.tau - W @ c.theta - known_friction(self.model, held.qd,
                                                                     self.kinds, held.q))
        return residuals


def _pick(search, candidates, noise, reference: int):
    """
    Return the candidate to keep, the scores and the held-out RMS errors of all.

    Score: the mean over held-out samples of sum_j (r_j / sigma_j)^2.  The lowest score wins only
    if it beats the reference candidate's significantly: the paired difference of the per-sample
    scores is more than ``SIGNIFICANT`` standard errors (the same samples, so the comparison is
    not blurred by their scatter); else the reference stands.
    """
    residuals = search.heldout(candidates)
    if residuals is None:
        return reference, [np.nan] * len(candidates), [None] * len(candidates)
    per_sample = [np.sum((r / noise) ** 2, axis=1) for r in residuals]
    scores = [float(np.mean(p)) for p in per_sample]
    best = int(np.argmin(scores))
    difference = per_sample[reference] - per_sample[best]
    error = np.std(difference) / np.sqrt(max(difference.size - 1, 1))
    keep = best if difference.mean() > SIGNIFICANT * error else reference
    return keep, scores, [rms(r) for r in residuals]


def _check_cutoff(search: _Search) -> tuple[_Candidate, CutoffCheck]:
    """
    Return the chosen candidate and the check (module docstring, step 2).

    ``CUTOFF_FACTORS`` first; while the best is the lowest or the highest factor tried, the
    search steps on by sqrt(2) that way (to ``MIN_FACTOR``, until the cut-off reaches the
    Nyquist cap, or until a cut-off leaves too few samples to fit).  The best held-out score
    replaces the spectral cut-off if significantly better (:func:`_pick`).
    """
    factors = [f for f in CUTOFF_FACTORS if f <= 1.0 or not search.capped(f / np.sqrt(2))]
    factors = [f for f in factors if f == 1.0 or search.usable(f)]
    while True:
        candidates = [search(f) for f in factors]
        scores = _pick(search, candidates, search(1.0).noise, factors.index(1.0))[1]
        best = int(np.nanargmin(scores)) if not np.all(np.isnan(scores)) else factors.index(1.0)
        lower, upper = factors[0] / np.sqrt(2), factors[-1] * np.sqrt(2)
        if best == 0 and lower >= MIN_FACTOR and search.usable(lower):
            factors.insert(0, lower)
        elif (best == len(factors) - 1 and not search.capped(factors[-1])
              and search.usable(upper)):
            factors.append(upper)
        else:
            break
    chosen, scores, errors = _pick(search, candidates, search(1.0).noise, factors.index(1.0))
    return candidates[chosen], CutoffCheck(tuple(factors), [c.cutoffs for c in candidates],
                                           errors, scores, chosen)


def _check_window(search: _Search, chosen: _Candidate):
    """
    Return the candidate at the chosen cut-off with the reversal window checked, and the check.

    ``WINDOWS`` (in 1 / f_c) around velocity reversals are tried at the chosen cut-off and scored
    like the cut-offs, on the held-out samples all of them keep (those far from reversals, where
    every estimate of qdd is good): a narrow window fits more samples, a wide one fewer samples
    whose accelerations the Coulomb jumps have not spoilt (``filtering.step_settling``).
    """
    windows = tuple(w for w in WINDOWS if w == WINDOW or search.usable(chosen.factor, w))
    candidates = [search(chosen.factor, w) for w in windows]
    pick, scores, errors = _pick(search, candidates, chosen.noise, windows.index(WINDOW))
    return candidates[pick], WindowCheck(windows, errors, scores, pick)


def identify_recordings(model, recordings, options=None, mapper=None) -> RecordingsFit:
    """
    Identify ``model`` from recordings (module docstring); ``model``: the starting robot file.

    ``mapper(function, items)``: how the per-recording work is spread (``_Search``; default:
    in turn, here); the result is the same bits either way.

    Returns the fit, the samples used, the cut-off check and the held-out report.  Raises
    :class:`InputError` for recordings that cannot be used (named).
    """
    options = options or IdentificationOptions()
    if not 0.0 <= options.holdout < 1.0:
        raise InputError(f"holdout: must be in [0, 1), got {options.holdout}")
    if options.torque_side not in TORQUE_SIDES:
        raise InputError(f"torque_side: must be one of {', '.join(TORQUE_SIDES)}, "
                         f"got {options.torque_side!r}")
    side = options.torque_side
    measured = link_side(model) if side == "link" else model
    working = with_rotors(measured, options.gear_ratios) \
        if options.rotors and side != "link" else measured
    kinds = friction_kinds(working, options.friction)
    search = _Search(working, kinds, recordings, options, mapper)
    if options.cutoff is not None or options.holdout <= 0.0:
        chosen, check = search(1.0), None
    else:
        chosen, check = _check_cutoff(search)
    if check is not None:
        chosen, windows = _check_window(search, chosen)
        check = check._replace(windows=windows)
    fitted = _concat(chosen.training)
    held_parts = [h for h in chosen.held if h is not None]
    held = _concat(held_parts) if held_parts else None
    result = _fit(working, kinds, chosen, options, measured, fitted, held)
    if side == "auto":
        side = "motor" if _sees_rotors(result) else "link"
        measured = model if side == "motor" else link_side(model)
    report, refitted = None, False
    if held is not None and result.model is not None:
        report = validation_report("held-out samples", measured, result.model, held)
    if options.refit and report is not None:
        samples = chosen.training + held_parts
        everything = _concat(samples)
        refit = _refit_all(working, samples, everything, result, options, measured)
        if refit is not None:
            result, fitted, refitted = refit, everything, True
            report = report._replace(title="held-out samples, by the fit without them (the "
                                           "file written is refitted to them)")
    written = result.model
    if side == "link" and written is not None:
        written = with_motors_of(written, model)
    return RecordingsFit(working, result, fitted, held, chosen.cutoffs, check, report,
                         measured, written, side, refitted)


def _fit(working, kinds, chosen, options, measured, fitted, held):
    """
    Fit the chosen candidate's factors (docstring, step 4); ``measured``: the start.

    The weight of the starting file's bodies in the consistent fit is chosen on the held-out
    samples ``held`` in the first fit (``identify.Regularisation``) and kept in the refits.
    """
    initial = _file_errors(measured, fitted)
    regularisation = None
    if held is not None and options.consistent:
        base = base_parameters(working, kinds)
        W = base.columns(regressor(working, held.q, held.qd, held.qdd, kinds))
        regularisation = Regularisation(heldout=(W, held.tau - known_friction(
            working, held.qd, kinds, held.q)))
    result = solve_factors(working, chosen.factors, kinds, options.weights, options.consistent,
                           initial=initial, regularisation=regularisation)
    fixed = Regularisation(weight=result.prior_weight)
    kinds, result = _supported_terms(working, kinds, chosen.training, result, options, initial,
                                     fixed)
    return _iterate_load(working, kinds, chosen.training, result, options, initial, fixed)


def _file_errors(measured, data) -> np.ndarray:
    """Return the starting file's per-joint RMS error on ``data`` (for the fit's report)."""
    return rms(data.tau - predicted_effort(measured, data.q, data.qd, data.qdd))


def _refit_all(working, samples, everything, chosen, options, measured):
    """
    Return the fit to all ``samples`` with the choices of the fit ``chosen`` kept (step 5).

    ``everything``: the samples concatenated.  The friction kinds and the prior weight are
    ``chosen``'s, and the load-dependent friction's g(q) starts from its bodies
    (:func:`_iterate_load`).  Returns None where the refit gives no real bodies: ``chosen`` then
    stands, as in the refits of step 4.
    """
    initial = _file_errors(measured, everything)
    kinds = chosen.friction
    load_model = chosen.model if "coulomb_load" in kinds else None
    fixed = Regularisation(weight=chosen.prior_weight)
    refit = solve_factors(working, _training_factors(working, kinds, samples, load_model), kinds,
                          options.weights, options.consistent, initial=initial,
                          regularisation=fixed)
    if refit.model is None:
        return None
    refit = refit.with_weight_check_of(chosen)
    return _iterate_load(working, kinds, samples, refit, options, initial, fixed)


def _training_factors(working, kinds, training, load_model=None) -> np.ndarray:
    """Return the merged QR factors of the training samples for the friction ``kinds``."""
    base = base_parameters(working, kinds)
    return merge_factors([
        joint_factors(working, base, kinds, d.q, d.qd, d.qdd,
                      d.tau - known_friction(working, d.qd, kinds, d.q), load_model)
        for d in training])


def _supported_terms(working, kinds, training, result, options, initial, fixed):
    """
    Leave out the further friction terms the data do not determine (docstring, step 4).

    A kind among ``EXTRA_KINDS`` is kept if some joint's coefficient is at least
    ``SUPPORT`` standard deviations from 0; else the fit is repeated without it, so that a term
    the recording cannot tell from noise neither loosens the other estimates nor makes the
    model's torques uncertain on motions not recorded (a qd|qd| term fitted to slow motion).
    Returns the kinds kept and the fit; the first fit stands (the terms kept) where the refit
    at the chosen prior weight gives no real bodies, as in :func:`_iterate_load`.
    """
    dropped = []
    for kind in EXTRA_KINDS:
        if kind not in kinds:
            continue
        columns = [result.names.index(f"{FRICTION_PREFIX[kind]}[{joint}]")
                   for joint in result.joint_names
                   if f"{FRICTION_PREFIX[kind]}[{joint}]" in result.names]
        t = [abs(result.estimates[k]) / result.std[k] for k in columns if result.std[k] > 0]
        if not t or max(t) < SUPPORT:
            dropped.append(kind)
    if not dropped:
        return kinds, result
    kept = tuple(k for k in kinds if k not in dropped)
    refit = solve_factors(working, _training_factors(working, kept, training), kept,
                          options.weights, options.consistent, initial=initial,
                          regularisation=fixed)
    if result.model is not None and refit.model is None:
        return kinds, result
    return kept, refit.with_weight_check_of(result)


def _load_std(result) -> np.ndarray:
    """Return the standard deviation of each joint's F_l (inf where it is no base parameter)."""
    base, out = result.base, []
    layout_cols = [base.parameter_names.index(f"Fl[{joint}]") for joint in result.joint_names]
    for col in layout_cols:
        rows = np.flatnonzero(base.independent == col)
        out.append(result.std[rows[0]] if rows.size else np.inf)
    return np.array(out)


def _iterate_load(working, kinds, training, result, options, initial, fixed):
    """
    Refit with the load-dependent friction's column from the fitted bodies (docstring, step 4).

    ``|g_j(q)| sgn(qd_j)`` depends on the rigid-body parameters: the first fit takes g from the
    starting model, each next one from the previous fit, until no joint's F_l changes by more
    than its standard deviation (at most ``LOAD_ITERATIONS`` refits), so that the model written
    has the g its F_l was fitted with (to within the F_l's own uncertainty).
    """
    if "coulomb_load" not in kinds or result.model is None:
        return result
    for _ in range(LOAD_ITERATIONS):
        factors = _training_factors(working, kinds, training, result.model)
        refit = solve_factors(working, factors, kinds, options.weights, options.consistent,
                              initial=initial, regularisation=fixed).with_weight_check_of(result)
        if refit.model is None:
            return result
        change = np.abs(refit.model.coulomb_load - result.model.coulomb_load)
        result = refit
        if np.all(change <= _load_std(refit)):
            break
    return result


def prepare_validation(recording: Recording, factor: float, options) -> IdentificationData:
    """Return a validation recording's samples, filtered at its spectral cut-off x ``factor``."""
    spectral = derivatives(recording.t, recording.q, recording.qd, options.cutoff,
                           options.method)
    cutoff = min(factor * spectral.cutoff, NYQUIST_SHARE * spectral.sample_rate)
    return identification_data(recording.t, recording.q, recording.tau, recording.qd, cutoff,
                               options.method, options.decimate)
