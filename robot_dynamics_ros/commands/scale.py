"""
robot-dynamics scale <robot> <trajectory.yaml>: retime a trajectory within the torque limits.

Prints the scale factor (uniform, seed 002 Sect. 7.7) or the new duration (time-optimal), and with
--plot writes each joint's torque against its limits, before and after, and the time law.
"""
from __future__ import annotations

import sys
import time

import numpy as np
import yaml

from ..core import RobotDescriptionError
from ..core import Limits, ScalingError, uniform_scaling
from ..core import time_optimal_scaling
from ..core import JointTrajectory
from .robot_argument import add_robot_argument, load_robot

HELP = "retime a joint trajectory so that no joint exceeds its torque/velocity limits (uniform or time-optimal)"


def add_arguments(parser):
    add_robot_argument(parser)
    parser.add_argument("trajectory", help="trajectory YAML (joint_names, points: time_from_start, positions, "
                                           "velocities?, accelerations?)")
    parser.add_argument("--method", choices=("uniform", "time_optimal"), default="uniform")
    parser.add_argument("--effort-scale", type=float, default=1.0, help="fraction of each effort limit to use")
    parser.add_argument("--velocity-scale", type=float, default=1.0, help="fraction of each velocity limit to use")
    parser.add_argument("--plot", metavar="PNG", help="write torques vs limits (before/after) and the time law")
    parser.add_argument("--output", metavar="YAML", help="write the scaled trajectory (with effort) as YAML")


def run(args) -> int:
    try:
        model = load_robot(args)
        traj = JointTrajectory.from_yaml(args.trajectory)
        limits = Limits.from_model(model, args.effort_scale, args.velocity_scale)
        start = time.perf_counter()
        scale = uniform_scaling if args.method == "uniform" else time_optimal_scaling
        result = scale(model, traj, limits)
        elapsed = time.perf_counter() - start
    except (RobotDescriptionError, ScalingError, ValueError) as exc:
        print(f"cannot scale: {exc}", file=sys.stderr)
        return 1
    print(f"{model.name}: {traj.num_points} points, {traj.interpolation} interpolation, "
          f"duration {traj.duration:.4f} s")
    if args.method == "uniform":
        print(f"uniform scaling: c = {result.scale_factor:.6f}, new duration {result.duration:.4f} s")
    else:
        print(f"time-optimal: new duration {result.duration:.4f} s "
              f"({result.scale_factor:.4f} x the original)")
    peak = np.abs(result.torques).max(axis=0) / np.maximum(np.abs(limits.effort_upper), np.abs(limits.effort_lower))
    print("peak |torque| / limit per joint:", np.array2string(peak, precision=4))
    print(f"computed in {elapsed * 1e3:.1f} ms")
    if args.output:
        out = result.for_controller()
        with open(args.output, "w") as f:
            yaml.safe_dump(out.to_dict(), f, default_flow_style=None, sort_keys=False)
        print(f"wrote {args.output}")
    if args.plot:
        plot(model, result, args.plot)
        print(f"wrote {args.plot}")
    return 0


def plot(model, result, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = model.n
    fig, axes = plt.subplots(n + 1, 1, figsize=(9, 2.0 * (n + 1)), sharex=False)
    lim = result.limits
    for j in range(n):
        ax = axes[j]
        ax.plot(result.original_times, result.original_torques[:, j], color="0.6", lw=1, label="before")
        ax.plot(result.sample_times, result.torques[:, j], color="C0", lw=1.2, label="after")
        for value in (lim.effort_upper[j], lim.effort_lower[j]):
            ax.axhline(value, color="C3", ls="--", lw=0.8)
        ax.set_ylabel(f"{model.joint_names[j]}\nN m")
        if j == 0:
            ax.legend(loc="upper right", fontsize=8)
            ax.set_title(f"{model.name}: {result.method} scaling, {result.original_duration:.3f} s -> "
                         f"{result.duration:.3f} s")
    ax = axes[-1]
    ax.plot(result.sample_times, result.path_times, color="C2")
    ax.plot(result.sample_times, result.sample_times, color="0.7", ls=":", lw=0.8)
    ax.set_xlabel("time t [s]")
    ax.set_ylabel("time law s(t)\n(original time)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
