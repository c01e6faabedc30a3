"""
robot-dynamics identify <robot> <bag> -o identified.yaml: a corrected robot file from a recording.

Reads sensor_msgs/JointState (position, effort, and velocity if recorded) from a rosbag2 bag
(MCAP or SQLite3, ``robot_dynamics_ros.bags``), estimates velocities and accelerations by
zero-phase filtering with a cut-off chosen from the data, identifies the base parameters by
(weighted) least squares, optionally constrained to physical consistency, and writes a robot YAML
with the input's kinematics, limits and names and the identified dynamic parameters (read back
and checked before it is written, atomically).  With ``--payload`` only a payload on the last
link is identified (the robot file is trusted, or ``--reference`` gives a recording without the
payload) and written as the file's ``payload``.  Prints each base parameter with its standard
deviation and the torque RMS per joint before (input model) and after, on the recording and on
``--validate``, and plots measured against predicted torques.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

from ..core import RobotModel, rnea
from ..core.errors import InputError
from ..core.identification import (InconsistentParametersWarning, identification_data, identify,
                                   identify_payload, parameter_vector)
from ..core.model.dh_description import modified_dh_description, robot_yaml_text
from ..core.model.urdf import is_urdf
from ..core.yaml_loader import parse_yaml
from .conversion import add_output_arguments, write_output
from .robot_argument import add_robot_argument, load_robot

HELP = ("identify the robot's dynamic parameters (or a payload) from a bag of joint states and "
        "write the corrected robot file")


def add_arguments(parser):
    add_robot_argument(parser)
    parser.add_argument("bag", help="rosbag2 bag directory (MCAP or SQLite3) with joint states")
    add_output_arguments(parser, "identified robot YAML")
    parser.add_argument("--topic", default="/joint_states",
                        help="JointState topic (default /joint_states)")
    parser.add_argument("--consistent", action="store_true",
                        help="constrain the fit to physically consistent parameters (LMI, cvxpy)")
    parser.add_argument("--payload", action="store_true",
                        help="identify only a payload on the last link and write it as `payload`")
    parser.add_argument("--reference", metavar="BAG",
                        help="with --payload: a recording without the payload (else the robot "
                             "file's parameters are trusted)")
    parser.add_argument("--validate", metavar="BAG",
                        help="another recording to check the result on")
    parser.add_argument("--weights", choices=("auto", "none"), default="auto",
                        help="per-joint weights from the noise estimates (auto, default) or none")
    parser.add_argument("--cutoff", type=float, default=None,
                        help="low-pass cut-off in Hz (default: chosen from the data)")
    parser.add_argument("--filter", choices=("butterworth", "savgol"), default="butterworth")
    parser.add_argument("--decimate", type=int, default=1,
                        help="keep every k-th sample (default 1)")
    parser.add_argument("--plot", metavar="PNG",
                        help="measured vs predicted torques (default: the output with .png)")


def _recording(model, bag, topic, args, what):
    from ..bags import load_joint_states
    states = load_joint_states(bag, topic, joint_names=model.joint_names, progress=True)
    if states.position.shape[0] == 0:
        raise InputError(f"{what} {bag}: no joint states on {topic}")
    missing = np.isnan(states.effort).any(axis=1)
    if missing.all():
        raise InputError(f"{what} {bag}: the joint states on {topic} have no effort field "
                         f"(identification needs the measured joint torques)")
    if missing.any():
        k = int(np.argmax(missing))
        raise InputError(f"{what} {bag}: {int(missing.sum())} of {missing.size} joint states on "
                         f"{topic} lack a finite effort for some joint (first: message {k}, "
                         f"t = {states.time[k] * 1e-9:.9f} s)")
    stamp = states.stamp if np.all(np.diff(states.stamp) > 0) else states.time
    t = (stamp - stamp[0]) * 1e-9
    velocity = states.velocity if np.isfinite(states.velocity).all() else None
    data = identification_data(t, states.position, states.effort, velocity, args.cutoff,
                               args.filter, args.decimate)
    print(f"{what} {bag}: {states.position.shape[0]} joint states, "
          f"{data.sample_rate:.6g} Hz, cut-off {data.cutoff:.3g} Hz "
          f"({'measured velocities' if velocity is not None else 'velocities from positions'}), "
          f"{data.q.shape[0]} samples used (filter start-up and velocity reversals left out)",
          file=sys.stderr)
    return data


def _rms(a):
    return np.sqrt(np.mean(a ** 2, axis=0))


def _table(title, names, before, after):
    lines = [title, f"  {'joint':<20} {'RMS before':>12} {'RMS after':>12}"]
    lines += [f"  {n:<20} {b:12.5g} {a:12.5g}" for n, b, a in zip(names, before, after)]
    return "\n".join(lines)


def plot(path, model, data, predicted_before, predicted_after):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = model.n
    fig, axes = plt.subplots(n, 1, figsize=(9, 1.8 * n), sharex=True)
    for j, ax in enumerate(np.atleast_1d(axes)):
        ax.plot(data.t, data.tau[:, j], color="0.6", lw=0.8, label="measured")
        ax.plot(data.t, predicted_before[:, j], color="C3", lw=0.8, ls="--", label="input model")
        ax.plot(data.t, predicted_after[:, j], color="C0", lw=1.0, label="identified")
        ax.set_ylabel(f"{model.joint_names[j]}\nN m")
        if j == 0:
            ax.legend(loc="upper right", fontsize=7, ncol=3)
    np.atleast_1d(axes)[-1].set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def run(args) -> int:
    model = load_robot(args)
    if not args.output:
        raise InputError("identify: give the output robot file with -o/--output")
    data = _recording(model, args.bag, args.topic, args, "bag")
    weights = "auto" if args.weights == "auto" else None
    if args.payload:
        reference = None
        if args.reference:
            ref = _recording(model, args.reference, args.topic, args, "reference bag")
            reference = (ref.q, ref.qd, ref.qdd, ref.tau)
        payload = identify_payload(model, data.q, data.qd, data.qdd, data.tau, reference=reference)
        identified = model.with_payload(**payload.as_dict())
        print(f"payload: mass {payload.mass:.6g} kg, "
              f"centre of mass {np.round(payload.com, 6).tolist()} m "
              f"(tool frame), inertia about it {np.round(payload.inertia, 8).tolist()} kg m^2")
        print(f"  std of (m, m c, I) in joint frame '{model.joint_names[-1]}': "
              f"{np.array2string(payload.std, precision=3)}")
        after = _rms(data.tau - rnea(identified, data.q, data.qd, data.qdd))
    else:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", InconsistentParametersWarning)
            result = identify(model, data.q, data.qd, data.qdd, data.tau, weights=weights,
                              consistent=args.consistent)
        print(result.report())
        if result.model is None:
            for w in caught:
                print(f"warning: {w.message}", file=sys.stderr)
            raise InputError("the identified parameters are not physically consistent, so no "
                             "robot file can hold them: run again with --consistent")
        identified = result.model
        after = result.residual_rms
    before = _rms(data.tau - rnea(model, data.q, data.qd, data.qdd))
    print(_table("torque RMS error on the identification data [N m or N]:", model.joint_names,
                 before, after))
    if args.validate:
        val = _recording(model, args.validate, args.topic, args, "validation bag")
        print(_table("torque RMS error on the validation data [N m or N]:", model.joint_names,
                     _rms(val.tau - rnea(model, val.q, val.qd, val.qdd)),
                     _rms(val.tau - rnea(identified, val.q, val.qd, val.qdd))))
    spec = modified_dh_description(identified) if is_urdf(args.robot) else identified.to_dict()
    what = ("payload" if args.payload
            else ("physically consistent " if args.consistent else "") + "parameters")
    text = robot_yaml_text(spec, f"{model.name}: {what} identified by `robot-dynamics identify` "
                                 f"from {Path(args.bag).name}.")
    reloaded = RobotModel.from_dict(parse_yaml(text), "identified robot file")
    if not np.allclose(parameter_vector(reloaded), parameter_vector(identified),
                       rtol=1e-9, atol=1e-12):
        raise InputError("the identified robot file does not read back the same (nothing written)")
    code = write_output(args, text, (args.robot, args.bag))
    if code == 0:
        print(f"wrote {args.output}", file=sys.stderr)
        png = args.plot or str(Path(args.output).with_suffix(".png"))
        plot(png, model, data, rnea(model, data.q, data.qd, data.qdd),
             rnea(identified, data.q, data.qd, data.qdd))
        print(f"wrote {png} (measured vs predicted torques)", file=sys.stderr)
    return code
