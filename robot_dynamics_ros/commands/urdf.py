"""
robot-dynamics urdf <robot.yaml> -o <robot.urdf>: a URDF of a robot, for robot_state_publisher.

Links are the DH frames with their inertials, limits and friction, cylinders along each link for
RViz, the tool frame as link ``tool0``; rotor inertias and non-default gravity go into the
package's extension elements (``core/model/urdf_export.py``).  Before writing, the URDF is read
back (chain from ``base_link`` to ``tool0``) and must give the same dynamics to 1e-12.
"""
from __future__ import annotations

import sys

from ..core import RobotModel
from ..core.model.urdf_export import urdf_text
from .conversion import add_output_arguments, check_conversion, write_output
from .robot_argument import add_robot_argument, load_robot

HELP = "write a URDF of a robot (links, joints, inertials, limits, friction, cylinder visuals)"


def add_arguments(parser):
    add_robot_argument(parser)
    add_output_arguments(parser, "URDF")


def run(args) -> int:
    model = load_robot(args)
    source = args.robot if not args.robot.lstrip().startswith("<") else "URDF text"
    text = urdf_text(model, source)
    converted = RobotModel.from_urdf(text, "base_link", "tool0")
    check_conversion(model, converted, "URDF")
    code = write_output(args, text, (args.robot,))
    if code == 0 and args.output:
        print(f"{model.name}: wrote {args.output} ({model.n} joints, tool frame 'tool0')",
              file=sys.stderr)
    return code
