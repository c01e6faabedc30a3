"""
robot-dynamics ik <robot> --xyz X Y Z [--rpy R P Y]: inverse kinematics of a tool pose.

Solves numerically (damped least squares within the joint limits, with restarts;
``core.task_space.inverse_kinematics``) for the pose of the tool (or ``--frame``) given as a
position and roll-pitch-yaw angles (R = Rz(yaw) Ry(pitch) Rx(roll), as in URDF); without
``--rpy`` only the position is solved for.  ``--all`` lists the closed-form solutions of Asada &
Slotine 1986's 5R-1P arm instead.  Exits with 1 when the target is not reached.
"""
from __future__ import annotations

import time

import numpy as np

from ..core import InputError
from ..core.task_space import closed_form_ik_5r1p, inverse_kinematics, rotation_matrix
from ..core.transforms import homogeneous
from .robot_argument import add_robot_argument, load_robot

HELP = "inverse kinematics: joint positions that put the tool (or a frame) at a pose"


def add_arguments(parser):
    """Add the command's arguments to ``parser``."""
    add_robot_argument(parser)
    parser.add_argument("--xyz", type=float, nargs=3, required=True, metavar=("X", "Y", "Z"),
                        help="target position in the world frame (m)")
    parser.add_argument("--rpy", type=float, nargs=3, metavar=("ROLL", "PITCH", "YAW"),
                        help="target orientation (rad), R = Rz(yaw) Ry(pitch) Rx(roll); "
                             "omitted: position only")
    parser.add_argument("--frame", help="frame to place: 'tool' (default) or a joint's name")
    parser.add_argument("--q0", type=float, nargs="+", metavar="Q",
                        help="start configuration (default: the middle of the joint ranges)")
    parser.add_argument("--restarts", type=int, default=20, help="random restarts (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the restarts (default 0)")
    parser.add_argument("--all", action="store_true",
                        help="all closed-form solutions (Asada & Slotine 1986's 5R-1P arm only)")


def run(args) -> int:
    """Solve and print the joint positions; 0 if the target is reached."""
    model = load_robot(args)
    rotation = np.eye(3) if args.rpy is None else rotation_matrix("rpy", args.rpy)
    target = homogeneous(rotation, args.xyz)
    if args.all:
        if args.rpy is None or args.frame not in (None, "tool"):
            raise InputError("--all: the closed form solves for the tool's full pose: give "
                             "--rpy, and no --frame")
        return _closed_form(model, target)
    start = time.perf_counter()
    result = inverse_kinematics(model, target, q0=args.q0, frame=args.frame,
                                position_only=args.rpy is None, restarts=args.restarts,
                                seed=args.seed)
    elapsed = time.perf_counter() - start
    what = "position" if args.rpy is None else "pose"
    print(f"{model.name}: {what} of frame '{args.frame or 'tool'}' at xyz {list(args.xyz)}"
          + ("" if args.rpy is None else f", rpy {list(args.rpy)}"))
    _print_configuration(model, result.q)
    status = "reached" if result.success else "NOT reached (closest configuration found)"
    print(f"{status}: position error {result.position_error:.3g} m, orientation error "
          f"{result.orientation_error:.3g} rad; {result.iterations} iterations, "
          f"{result.attempts} attempt(s), {1e3 * elapsed:.2f} ms")
    return 0 if result.success else 1


def _print_configuration(model, q, label="q"):
    width = max(len(name) for name in model.joint_names)
    for name, kind, value in zip(model.joint_names, model.joint_types, q):
        unit = "m" if kind == "prismatic" else "rad"
        print(f"  {label} {name:<{width}} {value: .6f} {unit}")


def _closed_form(model, target) -> int:
    solutions = closed_form_ik_5r1p(model, target)
    print(f"{model.name}: {len(solutions.q)} closed-form solutions "
          "(Asada & Slotine 1986, eqs. 2-42 - 2-63)")
    for k, (q, inside) in enumerate(zip(solutions.q, solutions.within_limits)):
        print(f"solution {k + 1}" + ("" if inside else " (outside the joint limits)"))
        _print_configuration(model, q)
    return 0
