"""
robot-dynamics convert <robot.urdf> -o <robot.yaml>: the DH robot file of a URDF's chain.

Writes the modified-DH YAML of the chain from ``--root-link`` to ``--tip-link`` (base and tool
transforms included, inertias in the DH frames); before writing, the file is read back and must
give the same dynamics and tool pose to 1e-12.
"""
from __future__ import annotations

import sys

from ..core import RobotModel
from ..core.model.dh_description import modified_dh_description, robot_yaml_text
from ..core.yaml_loader import parse_yaml
from .conversion import add_output_arguments, check_conversion, disagreement, write_output
from .robot_argument import add_robot_argument, load_robot

HELP = ("write the modified-DH robot file (YAML) of a URDF's chain, or of any robot, with the "
        "same dynamics")


def add_arguments(parser):
    add_robot_argument(parser)
    add_output_arguments(parser, "robot YAML")


def run(args) -> int:
    model = load_robot(args)
    chain = "".join(f", {label} '{link}'" for label, link in (("root link", args.root_link),
                                                              ("tip link", args.tip_link)) if link)
    source = args.robot if not args.robot.lstrip().startswith("<") else "URDF text"
    text = robot_yaml_text(modified_dh_description(model),
                           f"{model.name}: converted by `robot-dynamics convert` from {source}"
                           f"{chain}.\nModified DH; link inertias in the DH frames.")
    converted = RobotModel.from_dict(parse_yaml(text), "converted robot file")
    check_conversion(model, converted, "converted robot file")
    code = write_output(args, text, (args.robot,))
    if code == 0 and args.output:
        print(f"{model.name}: wrote {args.output} ({model.n} joints; reloaded, dynamics agree to "
              f"{disagreement(model, converted):.1e})", file=sys.stderr)
    return code
