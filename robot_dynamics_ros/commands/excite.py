"""
robot-dynamics excite <robot> -o excitation.yaml: an excitation trajectory for identification.

Designs a periodic finite-Fourier-series trajectory within the position, velocity, acceleration
and torque limits that minimises the base regressor's condition number
(``core/identification/excitation.py``), writes it as a trajectory file (positions, velocities,
accelerations at ``--rate`` Hz over ``--periods`` periods, starting and ending at rest) that the
nodes, ``robot-dynamics scale`` and the simulator run, and prints the condition number.

The base regressor is that of what ``robot-dynamics identify`` fits by default, a rotor on every
joint and viscous friction, but for the Coulomb friction and offset columns: sgn(qd) and 1, which
any motion in both directions excites.  Left in, their constant-size columns beside the rotors'
k_r^2 qdd dominate the (unscaled) condition number, and sgn(qd) jumps where the optimiser's
finite differences cannot follow: on the Puma the design then stopped at 1.8e6 using 11 % of
the velocity limits (5.3e3 and 42 % without them, 40 iterations).
"""
from __future__ import annotations

import sys

from tqdm import tqdm

from ..core.yaml_loader import dump_yaml
from ..core.identification import design_excitation
from ..core.identification.pipeline import with_rotors
from .conversion import add_output_arguments, write_output
from .robot_argument import add_robot_argument, load_robot

HELP = ("design a periodic excitation trajectory within the limits that minimises the base "
        "regressor's condition number (for identify)")


def add_arguments(parser):
    add_robot_argument(parser)
    add_output_arguments(parser, "trajectory YAML")
    parser.add_argument("--period", type=float, default=10.0, help="period in s (default 10)")
    parser.add_argument("--harmonics", type=int, default=5, help="Fourier harmonics (default 5)")
    parser.add_argument("--periods", type=int, default=3, help="periods in the file (default 3)")
    parser.add_argument("--rate", type=float, default=100.0,
                        help="points per second (default 100)")
    parser.add_argument("--max-acceleration", type=float, default=None,
                        help="acceleration limit for every joint, rad/s^2 (default: the robot "
                             "file's, else only the torque limits bound it)")
    parser.add_argument("--velocity-scale", type=float, default=0.8,
                        help="fraction of each velocity limit to use (default 0.8)")
    parser.add_argument("--effort-scale", type=float, default=0.8,
                        help="fraction of each effort limit to use (default 0.8)")
    parser.add_argument("--seed", type=int, default=0, help="random start (default 0)")
    parser.add_argument("--maxiter", type=int, default=100,
                        help="optimiser iterations (default 100)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args) -> int:
    model = load_robot(args)
    # the robot file's acceleration limits (inf where it gives none) unless overridden
    acceleration = (model.acceleration_limit if args.max_acceleration is None
                    else args.max_acceleration)
    print(f"{model.name}: optimising a {args.harmonics}-harmonic Fourier series, period "
          f"{args.period} s ...", file=sys.stderr)
    # the optimiser may stop before maxiter: the bar shows iterations done out of the most
    with tqdm(total=args.maxiter, desc="SLSQP iterations", unit="it", leave=False,
              disable=args.no_progress) as bar:
        excitation = design_excitation(with_rotors(model), period=args.period,
                                       harmonics=args.harmonics,
                                       friction=("viscous",),
                                       acceleration_limit=acceleration,
                                       velocity_scale=args.velocity_scale,
                                       effort_scale=args.effort_scale, seed=args.seed,
                                       maxiter=args.maxiter, on_iteration=bar.update)
    traj = excitation.trajectory.to_trajectory(model.joint_names, args.periods, args.rate)
    peaks = ", ".join(f"{k} {v:.2f}" for k, v in excitation.peak_ratios.items())
    comment = (f"# Excitation trajectory for {model.name} (robot-dynamics excite): period "
               f"{args.period} s, {args.harmonics} harmonics, {args.periods} periods.\n"
               f"# Condition number of the base regressor: {excitation.condition_number:.4g} "
               f"(random start: {excitation.initial_condition_number:.4g}).\n"
               f"# Peak use of the limits: {peaks}.\n")
    text = comment + dump_yaml(traj.to_dict(), default_flow_style=None, sort_keys=False)
    code = write_output(args, text, (args.robot,))
    print(f"condition number {excitation.condition_number:.4g} (random start "
          f"{excitation.initial_condition_number:.4g}); peak use of the limits: {peaks}",
          file=sys.stderr)
    if code == 0 and args.output:
        print(f"wrote {args.output}: {traj.num_points} points, {traj.duration:.3f} s, starting at "
              f"rest at q = {[round(float(x), 4) for x in traj.positions[0]]}", file=sys.stderr)
    return code
