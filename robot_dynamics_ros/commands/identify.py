"""
robot-dynamics identify <robot> <bag>... -o identified.yaml: a corrected robot file from bags.

Reads sensor_msgs/JointState (position, effort, and velocity if recorded) from rosbag2 bags (MCAP
or SQLite3, ``robot_dynamics_ros.bags``; several bags: their samples are stacked), turns motor
currents into torques if asked (``--torque-constant``), leaves out bad samples by count, and runs
``core.identification.pipeline.identify_recordings``: the acceleration filter chosen from the data
and checked on a held-out share, rotors, friction (viscous, quadratic viscous, Coulomb and
load-dependent Coulomb) and torque offsets fitted for every joint, the fit constrained to
physically consistent parameters.  Prints each base parameter with its standard deviation, the
F test, the cut-off check and per-joint torque errors
of the starting and the identified file on the held-out samples (and on ``--validate`` bags;
with them, the file written is refitted to all samples once the held-out share has made the
choices, and the held-out errors are those of the fit that made them: ``pipeline``, step 5),
then writes the robot file (YAML, or URDF with the package's extension for ``.urdf``) with the
input's kinematics, limits and names, read back and checked, atomically, and a plot.  Nothing is
written when the efforts are not explained by the motion (the F test), when the identified file
predicts the held-out samples (``--validate`` bags, else the held-out share) worse than the
starting file overall (unless ``--force``; worse joints are named in any case), or with
``--ols`` (plain least squares, for inspection).  Parameters the data leave nearly free are no
failure: the consistent fit keeps them at the starting file's values (its prior term) and the
report names them.  ``--torque-source`` says where the efforts are measured (motor or link
side: ``core.identification.pipeline``, step 0).  With ``--payload`` only a payload on the last
link is identified.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..bags.engine import Engine
from ..core import RobotModel
from ..core.errors import InputError, RobotDynamicsError, error_summary
from ..core.identification import (FRICTION_KINDS, InconsistentParametersWarning,
                                   InconsistentPriorWarning,
                                   identification_data, identify_payload, parameter_vector,
                                   predicted_effort)
from ..core.identification.drives import gains_from_constants, gains_from_file
from ..core.identification.identify import SIGNIFICANCE, held_note, loose_parameters
from ..core.identification.pipeline import (IdentificationOptions, Recording, bad_efforts,
                                            identify_recordings, prepare_validation)
from ..core.identification.validation import rms, validation_report
from ..core.model.dh_description import modified_dh_description, robot_yaml_text
from ..core.model.urdf import is_urdf
from ..core.model.urdf_export import urdf_text
from ..core.yaml_loader import parse_yaml
from .conversion import write_output
from .identify_plot import plot
from .robot_argument import add_robot_argument, load_robot

HELP = ("identify the robot's dynamic parameters (or a payload) from bags of joint states and "
        "write the corrected robot file")
# (with F_v and F_c go the joint-side F_vj, F_cj of joints whose drive is coupled: a model
# without a coupling has no such columns, identification.parameters.friction_kinds)
FRICTION_CHOICES = {"none": (), "viscous": ("viscous", "joint_viscous"),
                    "coulomb": ("coulomb", "joint_coulomb"),
                    "coulomb_viscous": ("viscous", "coulomb", "joint_viscous", "joint_coulomb"),
                    "quadratic": ("viscous", "coulomb", "viscous_quadratic", "joint_viscous",
                                  "joint_coulomb"),
                    "load": ("viscous", "coulomb", "coulomb_load", "joint_viscous",
                             "joint_coulomb"),
                    "full": ("viscous", "coulomb", "viscous_quadratic", "coulomb_load",
                             "joint_viscous", "joint_coulomb")}


def add_arguments(parser):
    add_robot_argument(parser)
    parser.add_argument("bags", nargs="+", metavar="BAG",
                        help="rosbag2 bag directories (MCAP or SQLite3) with joint states; "
                             "several: their samples are stacked")
    parser.add_argument("-o", "--output", help="identified robot file to write (.yaml, or .urdf "
                                               "with the package's extension elements)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite an existing output, and write a fit even when the data do "
                             "not determine the parameters")
    parser.add_argument("--topic", default="/joint_states",
                        help="JointState topic (default /joint_states)")
    parser.add_argument("--ols", action="store_true",
                        help="plain least squares without the consistency constraint: report "
                             "only (with why the parameters are not real bodies), no file written")
    parser.add_argument("--consistent", action="store_true",
                        help="physically consistent fit (the default; kept for old scripts)")
    parser.add_argument("--friction", choices=sorted(FRICTION_CHOICES), default="full",
                        help="joint friction fitted (default full: F_v qd + F_v2 qd|qd| + "
                             "(F_c + F_l |g(q)|) sgn(qd); coulomb_viscous: F_v qd + F_c sgn(qd); "
                             "quadratic, load: coulomb_viscous with F_v2 or F_l); kinds not "
                             "fitted keep the robot file's values")
    parser.add_argument("--no-offset", action="store_true",
                        help="do not fit a torque offset per joint (the robot file's is kept)")
    parser.add_argument("--rotors", choices=("all", "file"), default="all",
                        help="rotor inertia fitted for every joint (all, default) or only where "
                             "the robot file has a motor")
    parser.add_argument("--torque-constant", nargs="+", metavar="K",
                        help="efforts are motor currents: per-joint torque constants (1 value or "
                             "one per joint, times the file's gear ratios), or a YAML file of "
                             "drive gains (doc/identification.md)")
    parser.add_argument("--torque-source", choices=("auto", "motor", "link"), default="auto",
                        help="where the efforts are measured: motor (motor currents or commanded "
                             "effort: rotor inertia and gearbox friction are in them), link "
                             "(joint-torque sensors after the gearbox, e.g. Franka, KUKA iiwa: "
                             "no rotor inertia fitted, the file's motors kept) or auto (default: "
                             "motor with --torque-constant, else link when the data show no "
                             "rotor inertia)")
    parser.add_argument("--holdout", type=float, default=0.2,
                        help="share of each bag held out to check the filter and the result "
                             "(default 0.2; 0: none); with --validate, the file written is then "
                             "refitted to all samples with the choices kept")
    parser.add_argument("--validate", metavar="BAG", nargs="+", default=[],
                        help="other recordings to check the result on")
    parser.add_argument("--weights", choices=("auto", "none"), default="auto",
                        help="per-joint weights from the noise estimates (auto, default) or none")
    parser.add_argument("--cutoff", type=float, default=None,
                        help="low-pass cut-off in Hz (default: chosen from the data and checked "
                             "on the held-out samples)")
    parser.add_argument("--filter", choices=("butterworth", "savgol"), default="butterworth")
    parser.add_argument("--decimate", type=int, default=1,
                        help="keep every k-th sample (default 1)")
    parser.add_argument("--payload", action="store_true",
                        help="identify only a payload on the last link and write it as `payload`")
    parser.add_argument("--reference", metavar="BAG",
                        help="with --payload: a recording without the payload (else the robot "
                             "file's parameters are trusted)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="several bags: read and filter them and build their regressor rows "
                             "in N local processes (default: the machine's cores)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="several bags: do that on a dask.distributed cluster, e.g. "
                             "tcp://host:8786 (its workers need this package and the paths)")
    parser.add_argument("--plot", metavar="PNG",
                        help="measured vs predicted torques (default: the output with .png)")


def _gains(model, args):
    if not args.torque_constant:
        return None
    values = args.torque_constant
    if len(values) == 1 and Path(values[0]).suffix in (".yaml", ".yml"):
        return gains_from_file(model, values[0])
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        raise InputError(f"--torque-constant: expected numbers or one YAML file, got "
                         f"{' '.join(values)}") from None
    return gains_from_constants(model, numbers)


class _BagJob(NamedTuple):
    """One bag to read (a task of the engine: plain, picklable data)."""

    model: RobotModel
    bag: str
    topic: str
    gains: object
    what: str
    progress: bool


def _read_recording(job: _BagJob) -> tuple:
    """Return (Recording, notes, None) for a usable bag, (None, [], its error) for another."""
    try:
        return (*_recording(job), None)
    except RobotDynamicsError as exc:
        return None, [], exc


def _recording(job: _BagJob) -> tuple:
    from ..bags import load_joint_states
    model, bag, topic, what = job.model, job.bag, job.topic, job.what
    states = load_joint_states(bag, topic, joint_names=model.joint_names, progress=job.progress,
                               skip_invalid=True)
    dropped = sum(states.rejected.values())
    if states.position.shape[0] == 0:
        if dropped:     # read again, stopping at the first message, to say what is wrong with it
            load_joint_states(bag, topic, joint_names=model.joint_names)
        raise InputError(f"{what} {bag}: no joint states on {topic}")
    if np.isnan(states.effort).all():
        raise InputError(f"{what} {bag}: the joint states on {topic} have no effort field "
                         f"(identification needs the measured joint torques or currents)")
    stamp = states.stamp if np.all(np.diff(states.stamp) > 0) else states.time
    tau = states.effort if job.gains is None else job.gains.torques(states.effort)
    bad, message = bad_efforts(model, tau)
    tau = np.where(bad[:, None], np.nan, tau)
    notes = [f"{dropped} joint states dropped ({_reasons(states.rejected)})"] if dropped else []
    notes += [message] if message else []
    total = states.position.shape[0] + dropped
    if dropped + int(bad.sum()) > total // 2:
        raise InputError(f"{what} {bag}: more than half of the joint states are unusable: "
                         + "; ".join(notes))
    velocity = states.velocity if np.isfinite(states.velocity).all() else None
    return Recording(str(bag), (stamp - stamp[0]) * 1e-9, states.position, velocity, tau), notes


def _recordings(engine, model, bags, args, gains, what) -> list:
    """
    Read ``bags`` on the engine (in parallel) and print their notes in order.

    Raises the error of an unusable bag as reading it alone would, or for several an InputError
    naming each.
    """
    alone = engine.client is None and (engine.workers == 1 or len(bags) == 1)
    jobs = [_BagJob(model, str(bag), args.topic, gains, what, alone) for bag in bags]
    results = engine.map(_read_recording, jobs)
    for job, (_, notes, _) in zip(jobs, results):
        for note in notes:
            print(f"{what} {job.bag}: {note}", file=sys.stderr)
    errors = [error for _, _, error in results if error is not None]
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise InputError(f"{len(errors)} of {len(bags)} bags are unusable: " + "; ".join(
            f"{error_summary(e)}: {e}" for e in errors))
    return [recording for recording, _, _ in results]


def _reasons(rejected: dict) -> str:
    return ", ".join(f"{reason}: {count}" for reason, count in sorted(rejected.items()))


def _options(args, gains) -> IdentificationOptions:
    if not 0.0 <= args.holdout < 1.0:
        raise InputError(f"--holdout: must be at least 0 and below 1, got {args.holdout}")
    friction = FRICTION_CHOICES[args.friction] + (() if args.no_offset else ("offset",))
    return IdentificationOptions(
        consistent=not args.ols, weights="auto" if args.weights == "auto" else None,
        friction=tuple(k for k in FRICTION_KINDS if k in friction), rotors=args.rotors == "all",
        gear_ratios=gains.gear_ratios if gains is not None else {}, cutoff=args.cutoff,
        method=args.filter, decimate=args.decimate, holdout=args.holdout,
        torque_side=_torque_side(args), refit=bool(args.validate))


def _torque_side(args) -> str:
    if args.torque_constant and args.torque_source == "link":
        raise InputError("--torque-source link: the efforts are motor currents "
                         "(--torque-constant), which are measured on the motor side")
    return "motor" if args.torque_constant else args.torque_source


def _describe(fit, recordings, args) -> None:
    for rec, cutoff in zip(recordings, fit.cutoffs):
        print(f"bag {rec.name}: {rec.t.size} joint states over {rec.t[-1]:.4g} s, "
              f"{'measured velocities' if rec.qd is not None else 'velocities from positions'},"
              f" {args.filter} cut-off {cutoff:.3g} Hz", file=sys.stderr)
    held = 0 if fit.held_out is None else fit.held_out.q.shape[0]
    print(f"{fit.training.q.shape[0]} samples fitted, {held} held out (filter start-up, "
          f"velocity reversals and slow samples left out)" + (
              "; the held-out samples made the choices below, then the file written was "
              "refitted to all of them (checked on the --validate bags)" if fit.refitted else ""))
    if fit.check is not None:
        print(fit.check.table(fit.model.joint_names))


def run(args) -> int:
    model = load_robot(args)
    if args.payload:
        return _run_payload(model, args)
    if not args.output and not args.ols:
        raise InputError("identify: give the output robot file with -o/--output")
    gains = _gains(model, args)
    options = _options(args, gains)
    with Engine(args.workers, args.scheduler) as engine:
        recordings = _recordings(engine, model, args.bags, args, gains, "bag")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", InconsistentParametersWarning)
            fit = identify_recordings(model, recordings, options, mapper=engine.map)
        _describe(fit, recordings, args)
        for note in dict.fromkeys(str(w.message) for w in caught
                                  if issubclass(w.category, InconsistentPriorWarning)):
            print(f"note: {note}", file=sys.stderr)      # (once: the refits warn again)
        result = fit.result
        print(result.report())
        if fit.holdout is not None:
            print(fit.holdout.table())
        validations = _validate(engine, model, fit, args, gains, options)
    if args.ols:
        for w in caught:
            print(f"note: {w.message}", file=sys.stderr)
        print("--ols: plain least squares for inspection; no robot file written", file=sys.stderr)
        return 0
    _check_written(fit, validations, args)
    code = _write(model, fit.written, args)
    if code == 0:
        png = args.plot or str(Path(args.output).with_suffix(".png"))
        plot(png, fit.measured, result.model, fit, validations)
        print(f"wrote {png} (measured vs predicted torques)", file=sys.stderr)
    return code


def _check_written(fit, validations, args) -> None:
    """
    Refuse (unless --force) what would make the robot file wrong, and say what it rests on.

    The efforts must depend on the motion (the F test), the parameters must be real bodies, and
    the identified file must predict the held-out samples (the ``--validate`` bags, else the
    held-out share) at least as well as the starting file overall (the sum over joints of the
    squared error relative to the measured effort); joints where it is worse are named.
    Parameters the data leave nearly free are kept at the starting file's values by the fit's
    prior term and named; those they do not determine at all are held at them and named.
    """
    result = fit.result
    print(f"efforts taken as measured on the {fit.torque_side} side"
          + (" (no rotor inertia in the data)" if fit.torque_side == "link"
             and args.torque_source == "auto" else ""), file=sys.stderr)
    if result.p_value > SIGNIFICANCE and not args.force:
        raise InputError(result.verdict + "; nothing written (--force writes it anyway)")
    if fit.written is None:
        raise InputError("the identified parameters are not physically consistent: "
                         + "; ".join(result.problems))
    if not result.determined:
        print("note: " + loose_parameters(result), file=sys.stderr)
    elif result.held:
        print("note: " + held_note(result), file=sys.stderr)
    reports = [r for r, _ in validations] or ([fit.holdout] if fit.holdout else [])
    worse = [(r.title, name) for r in reports for name, b, a in
             zip(r.joint_names, r.before_rms, r.after_rms) if a > b]
    overall = [r.title for r in reports if _normalised(r.after_rms, r) > _normalised(
        r.before_rms, r)]
    if worse:
        print("warning: the identified file predicts worse than the starting file on "
              + ", ".join(f"'{j}' ({t})" for t, j in worse), file=sys.stderr)
    if overall and not args.force:
        raise InputError("the identified file predicts worse than the starting file overall on "
                         + ", ".join(overall) + " (per-joint errors above); nothing written "
                         "(--force writes it anyway)")


def _normalised(errors, report) -> float:
    """Return the sum over joints of (RMS error / RMS measured effort)^2: one joint, one vote."""
    return float(np.sum((errors / np.maximum(report.measured_rms, 1e-300)) ** 2))


def _validate(engine, model, fit, args, gains, options) -> list:
    reports = []
    if not args.validate or fit.result.model is None:
        return reports
    factor = 1.0 if fit.check is None else fit.check.factors[fit.check.chosen]
    recordings = _recordings(engine, model, args.validate, args, gains, "validation bag")
    for bag, recording in zip(args.validate, recordings):
        data = prepare_validation(recording, factor, options)
        report = validation_report(f"validation bag {bag}", fit.measured, fit.result.model, data)
        print(report.table())
        reports.append((report, data))
    return reports


def _write(model, identified, args) -> int:
    urdf = Path(args.output).suffix.lower() == ".urdf"
    what = "physically consistent parameters, friction and torque offsets"
    note = f"{model.name}: {what} identified by `robot-dynamics identify` from " + \
        ", ".join(Path(b).name for b in args.bags)
    if urdf:
        text = urdf_text(identified, note)
        reloaded = RobotModel.from_urdf(text, tip_link="tool0")
    else:
        spec = modified_dh_description(identified) if is_urdf(args.robot) else \
            identified.to_dict()
        text = robot_yaml_text(spec, note + ".")
        reloaded = RobotModel.from_dict(parse_yaml(text), "identified robot file")
    _check_reloaded(identified, reloaded)
    code = write_output(args, text, (args.robot, *args.bags))
    if code == 0:
        print(f"wrote {args.output}", file=sys.stderr)
    return code


def _check_reloaded(identified, reloaded) -> None:
    """Refuse to write a file that does not read back as the identified model."""
    rng = np.random.default_rng(0)
    low = np.where(np.isfinite(identified.lower), identified.lower, -np.pi)
    high = np.where(np.isfinite(identified.upper), identified.upper, np.pi)
    q = rng.uniform(low, high, (20, identified.n))
    qd, qdd = rng.uniform(-1, 1, (2, 20, identified.n))
    a = predicted_effort(identified, q, qd, qdd)
    b = predicted_effort(reloaded, q, qd, qdd)
    if np.abs(a - b).max() > 1e-9 * max(1.0, np.abs(a).max()):
        raise InputError("the identified robot file does not read back the same (nothing "
                         "written)")


def _payload_data(model, bag, args, what):
    rec, notes = _recording(_BagJob(model, str(bag), args.topic, _gains(model, args), what, True))
    for note in notes:
        print(f"{what} {bag}: {note}", file=sys.stderr)
    data = identification_data(rec.t, rec.q, rec.tau, rec.qd, args.cutoff, args.filter,
                               args.decimate)
    print(f"{what} {bag}: {rec.t.size} joint states, {data.sample_rate:.6g} Hz, cut-off "
          f"{data.cutoff:.3g} Hz, {data.q.shape[0]} samples used", file=sys.stderr)
    return data


def _run_payload(model, args) -> int:
    if not args.output:
        raise InputError("identify: give the output robot file with -o/--output")
    data = _payload_data(model, args.bags[0], args, "bag")
    reference = None
    if args.reference:
        ref = _payload_data(model, args.reference, args, "reference bag")
        reference = (ref.q, ref.qd, ref.qdd, ref.tau)
    payload = identify_payload(model, data.q, data.qd, data.qdd, data.tau, reference=reference)
    identified = model.with_payload(**payload.as_dict())
    print(f"payload: mass {payload.mass:.6g} kg, "
          f"centre of mass {np.round(payload.com, 6).tolist()} m "
          f"(tool frame), inertia about it {np.round(payload.inertia, 8).tolist()} kg m^2")
    print(f"  std of (m, m c, I) in joint frame '{model.joint_names[-1]}': "
          f"{np.array2string(payload.std, precision=3)}")
    before = rms(data.tau - predicted_effort(model, data.q, data.qd, data.qdd))
    after = rms(data.tau - predicted_effort(identified, data.q, data.qd, data.qdd))
    print("torque RMS error on the recording [N m or N]:")
    for name, b, a in zip(model.joint_names, before, after):
        print(f"  {name:<20} {b:12.5g} {a:12.5g}")
    spec = modified_dh_description(identified) if is_urdf(args.robot) else identified.to_dict()
    text = robot_yaml_text(spec, f"{model.name}: payload identified by `robot-dynamics identify`"
                                 f" from {Path(args.bags[0]).name}.")
    reloaded = RobotModel.from_dict(parse_yaml(text), "identified robot file")
    if not np.allclose(parameter_vector(reloaded), parameter_vector(identified),
                       rtol=1e-9, atol=1e-12):
        raise InputError("the identified robot file does not read back the same (nothing written)")
    code = write_output(args, text, (args.robot, *args.bags))
    if code == 0:
        print(f"wrote {args.output}", file=sys.stderr)
    return code
