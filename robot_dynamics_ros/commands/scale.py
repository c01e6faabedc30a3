"""
robot-dynamics scale: re-time a trajectory (or time a geometric path) within the limits.

``robot-dynamics scale <robot> <trajectory.yaml>`` scales a timed trajectory (uniform, Siciliano et
al. 2009 Sect. 7.7, or time-optimal); ``robot-dynamics scale <robot> --path <waypoints.yaml>``
times a geometric path (time-optimal; format in doc/scaling.md and core/trajectories/topp/path.py).
Prints the
scale factor or the new duration, the peak torque and velocity per joint against their limits
and, for the time-optimal law, the binding limit of each stretch of the path; ``--plot`` writes
each joint's torque and velocity against its limits and the time law.
"""
from __future__ import annotations

import time

import numpy as np

from ..core import JointTrajectory, Limits, rnea, uniform_scaling
from ..core.algorithms.route import select
from ..core.errors import InputError
from ..core.files import write_atomically
from ..core.trajectories.joint_limits_file import load_joint_limits
from ..core.trajectories.limits import with_jerk
from ..core.yaml_loader import dump_yaml
from ..core.trajectories.topp.constraint_set import Payload, PathConstraint, path_uniform_factor
from ..core.trajectories.topp.from_parameters import constraint_list
from .robot_argument import add_robot_argument, load_robot

HELP = ("retime a joint trajectory or time a geometric path so that no joint exceeds its "
        "torque/velocity/acceleration limits (uniform or time-optimal)")
SEGMENTS = 10       # stretches of the path in the binding-limit report


def add_arguments(parser):
    add_robot_argument(parser)
    parser.add_argument("trajectory", nargs="?",
                        help="trajectory YAML (joint_names, points: time_from_start, positions, "
                             "velocities?, accelerations?)")
    parser.add_argument("--path", metavar="YAML",
                        help="instead of a trajectory: a geometric path (joint_names, waypoints, "
                             "s?, boundary?), timed by the time-optimal method")
    parser.add_argument("--method", choices=("uniform", "time_optimal"), default=None,
                        help="default: uniform for a trajectory, time_optimal for a path")
    for kind in ("effort", "velocity", "acceleration"):
        parser.add_argument(f"--{kind}-margin", f"--{kind}-scale", dest=f"{kind}_margin",
                            type=float, default=1.0,
                            help=f"fraction of each {kind} limit to use, (0, 1]")
    parser.add_argument("--acceleration", type=float, nargs="+", metavar="A",
                        help="acceleration limit(s) overriding the robot file's "
                             "limits.acceleration: "
                        "one value for every joint or one per joint (rad/s^2 or m/s^2)")
    for kind, unit in (("velocity", "rad/s or m/s"), ("effort", "N m or N")):
        parser.add_argument(f"--{kind}", type=float, nargs="+", metavar=kind[0].upper(),
                            help=f"{kind} limit(s) instead of the description's (needed where it "
                                 f"leaves them unknown): one value or one per joint ({unit})")
    parser.add_argument("--joint-limits", metavar="YAML",
                        help="a MoveIt joint_limits.yaml (<robot>_moveit_config/config/): its "
                             "velocity, acceleration, jerk and effort limits replace the robot's "
                             "where its has_* flag is true (jerk: time_optimal then smooths "
                             "its law to keep it); "
                             "--velocity, --acceleration and --effort still override it")
    parser.add_argument("--tool-speed", type=float, metavar="V",
                        help="limit of the tool frame's linear speed (m/s)")
    parser.add_argument("--tool-angular-speed", type=float, metavar="W",
                        help="limit of the tool frame's angular speed (rad/s)")
    parser.add_argument("--tool-frame", default="tool", metavar="FRAME",
                        help="the frame whose speed --tool-speed limits (default: the tool; a "
                             "joint name gives the frame of the link it moves)")
    parser.add_argument("--jerk", type=float, nargs="+", metavar="J",
                        help="jerk limit(s), one value or one per joint (rad/s^3 or m/s^3); "
                             "time_optimal: the output's acceleration is then continuous "
                             "(jerk-limited, torque-feasible)")
    parser.add_argument("--payload", metavar="YAML",
                        help="a payload held by the tool (mass, com, inertia in the tool frame; "
                             "or under 'payload:'): the torques are those of the robot "
                             "carrying it")
    parser.add_argument("--plot", metavar="PNG",
                        help="write torques and velocities vs limits (before/after) and the time "
                             "law")
    parser.add_argument("--output", metavar="YAML",
                        help="write the scaled trajectory (with effort) as YAML")


def run(args) -> int:
    if (args.trajectory is None) == (args.path is None):
        raise InputError("give either a trajectory file or --path (not both)")
    method = args.method or ("time_optimal" if args.path else "uniform")
    if args.path and method == "uniform":
        raise InputError("--path: a geometric path has no timing to scale uniformly; use "
                         "--method time_optimal")
    model = load_robot(args)
    if method == "time_optimal":        # (its path pulls in scipy.interpolate: only then)
        from ..core import JointPath, time_optimal_scaling
        from ..core.trajectories.topp.jerk_limited import jerk_limited_scaling
    if args.path:
        source = JointPath.from_yaml(args.path)
        described = (f"{source.waypoints.shape[0]} waypoints, C2 cubic spline "
                     f"({source.boundary}), "
                     f"s in [{source.knots[0]:.4g}, {source.knots[-1]:.4g}]")
    else:
        source = JointTrajectory.from_yaml(args.trajectory)
        described = (f"{source.num_points} points, {source.interpolation} interpolation, "
                     f"duration {source.duration:.4f} s")
    limits = command_limits(args, model, method)
    payload = Payload.from_yaml(args.payload) if args.payload else None
    if payload is not None:
        model = payload.carried_by(model)        # every torque below: the robot carrying it
    constraints = constraint_list(limits, args.tool_speed, args.tool_angular_speed,
                                  frame=args.tool_frame)
    if method == "uniform":
        start = time.perf_counter()
        result = uniform_scaling(model, source, limits,
                                 min_scale=path_uniform_factor(model, source, constraints))
    else:
        # the inverse dynamics the scaling evaluates, the core's one route (route.select)
        dynamics = select(model)
        start = time.perf_counter()
        result = time_optimal_scaling(model, source, constraints, dynamics=dynamics)
        optimum = result.duration
        if np.isfinite(limits.jerk).all():
            result = jerk_limited_scaling(model, source, constraints, optimal=result)
    elapsed = time.perf_counter() - start
    print(f"{model.name}: {described}")
    for item in constraints:
        if isinstance(item, PathConstraint):
            print(f"constraint: {item.describe()}")
    if method == "uniform":
        print(f"uniform scaling: c = {result.scale_factor:.6f}, "
              f"new duration {result.duration:.4f} s")
    elif result.method == "jerk_limited":
        print(f"jerk-limited: duration {result.duration:.4f} s, {result.scale_factor:.4f} x "
              f"the time-optimal (jerk-free) {optimum:.4f} s, continuous acceleration "
              f"({result.trajectory.num_points} points, quintic)")
    elif args.path:
        print(f"time-optimal: duration {result.duration:.4f} s, "
              f"{result.trajectory.num_points} points")
    else:
        print(f"time-optimal: new duration {result.duration:.4f} s "
              f"({result.scale_factor:.4f} x the original)")
    out = result.for_controller()
    t = np.linspace(out.times[0], out.times[-1], 10 * out.num_points)
    q, qd, qdd = out.sample(t)
    tau = rnea(model, q, qd, qdd)
    peak = np.abs(tau).max(axis=0) / np.maximum(np.abs(limits.effort_upper),
                                                np.abs(limits.effort_lower))
    print("peak |torque| / limit per joint:  ", np.array2string(peak, precision=4))
    print("peak |velocity| / limit per joint:", np.array2string(np.abs(qd).max(axis=0)
                                                                / limits.velocity, precision=4))
    if method == "time_optimal":
        print("binding limit per stretch of the path (as the controller interpolates the output):")
        for line in binding_report(model, limits, t, tau, qd, qdd):
            print("  " + line)
    print(f"computed in {elapsed * 1e3:.1f} ms")
    if args.output:
        text = dump_yaml(out.to_dict(), default_flow_style=None, sort_keys=False)
        write_atomically(args.output, text)
        print(f"wrote {args.output}")
    if args.plot:
        plot(model, result, args.plot, (t, tau, qd))
        print(f"wrote {args.plot}")
    return 0


def command_limits(args, model, method: str) -> Limits:
    """Return the limits of the command's options: the robot's, --joint-limits, overrides."""
    given = {}
    if args.joint_limits:
        file = load_joint_limits(args.joint_limits)
        given = file.overrides(model)
        print(file.summary(model))
    return with_jerk(Limits.from_model(
        model, args.effort_margin, args.velocity_margin, args.acceleration_margin,
        args.acceleration or given.get("acceleration"), args.velocity or given.get("velocity"),
        args.effort or given.get("effort")), _jerk(args, model, given.get("jerk")))


def _jerk(args, model, from_file):
    """Return the jerk limits: --jerk (one or one per joint) over the joint_limits file's."""
    if not args.jerk:
        return from_file
    if len(args.jerk) not in (1, model.n):
        raise InputError(f"--jerk: expected one value or {model.n} (one per joint), "
                         f"got {len(args.jerk)}")
    return np.broadcast_to(np.asarray(args.jerk, dtype=float), (model.n,))


def usage(limits: Limits, tau, qd, qdd) -> dict:
    """Return the fraction of each limit kind used at each sample, (M, n) per kind."""
    effort = np.where(tau >= 0, tau / limits.effort_upper, tau / limits.effort_lower)
    out = {"torque": effort, "velocity": np.abs(qd) / limits.velocity}
    if np.isfinite(limits.acceleration).any():
        out["acceleration"] = np.abs(qdd) / limits.acceleration
    return out


def binding_report(model, limits: Limits, t, tau, qd, qdd, segments: int = SEGMENTS) -> list:
    """Return one line per stretch of time: the limit closest to binding (kind, joint, usage)."""
    kinds = usage(limits, tau, qd, qdd)
    lines = []
    for chunk in np.array_split(np.arange(t.size), min(segments, t.size)):
        best = max(((float(v[chunk].max()), kind, int(np.unravel_index(np.argmax(v[chunk]),
                                                                       v[chunk].shape)[1]))
                    for kind, v in kinds.items()), key=lambda item: item[0])
        lines.append(f"t = {t[chunk[0]]:8.4f} .. {t[chunk[-1]]:8.4f} s: {best[1]:12s} "
                     f"{model.joint_names[best[2]]:>14s} at {100 * best[0]:6.2f} % of its limit")
    return lines


def plot(model, result, path: str, samples) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, tau, qd = samples
    n = model.n
    fig, axes = plt.subplots(n + 1, 2, figsize=(13, 2.0 * (n + 1)), squeeze=False)
    lim = result.limits
    for j in range(n):
        ax, av = axes[j, 0], axes[j, 1]
        if np.isfinite(result.original_duration):
            ax.plot(result.original_times, result.original_torques[:, j], color="0.6", lw=1,
                    label="before")
        ax.plot(t, tau[:, j], color="C0", lw=1.2, label="after")
        for value in (lim.effort_upper[j], lim.effort_lower[j]):
            ax.axhline(value, color="C3", ls="--", lw=0.8)
        ax.set_ylabel(f"{model.joint_names[j]}\nN m")
        av.plot(t, qd[:, j], color="C1", lw=1.2)
        for value in (lim.velocity[j], -lim.velocity[j]):
            av.axhline(value, color="C3", ls="--", lw=0.8)
        av.set_ylabel("velocity\nrad/s (m/s)")
        if j == 0:
            ax.legend(loc="upper right", fontsize=8)
            ax.set_title(f"{model.name}: {result.method} scaling, torque vs limit "
                         f"({result.duration:.3f} s)")
            av.set_title("velocity vs limit")
    ax = axes[-1, 0]
    ax.plot(result.sample_times, result.path_times, color="C2")
    ax.set_xlabel("time t [s]")
    ax.set_ylabel("time law s(t)\n(path parameter)")
    axes[-1, 1].set_axis_off()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
