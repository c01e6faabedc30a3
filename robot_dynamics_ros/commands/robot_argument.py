"""The robot argument every command that works on a robot takes, and how it becomes a model."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:     # (imported where a model is loaded: `bag info` and the parsers need none)
    from ..core import RobotModel
    from ..core.model.urdf import UrdfReport

HELP = ("robot description: a URDF or xacro file (xacro arguments as NAME:=VALUE anywhere on the "
        "line), a YAML file, or the name of a shipped robot (e.g. puma560)")


def add_robot_argument(parser) -> None:
    """Add the positional ``robot`` argument and a URDF's ``--root-link`` and ``--tip-link``."""
    parser.add_argument("robot", help=HELP)
    add_chain_arguments(parser)


def add_chain_arguments(parser) -> None:
    """Add ``--root-link`` and ``--tip-link`` (the chain of a URDF robot)."""
    parser.add_argument("--root-link", default=None,
                        help="URDF only: the link the chain starts from, the world frame "
                             "(default: the URDF's root link)")
    parser.add_argument("--tip-link", default=None,
                        help="URDF only: the link the chain ends at, the tool frame (default: "
                             "the child of the last movable joint, if the movable joints form one "
                             "chain)")
    parser.add_argument("--strict", dest="strict_inertia", action="store_true",
                        help="refuse physically inconsistent link inertias (default: accept each "
                             "with a warning naming the link, as Pinocchio does)")


def load_robot(args) -> RobotModel:
    """Return the model ``args`` name (RobotDescriptionError is reported by commands.cli.main)."""
    from ..core import RobotModel
    from ..core.model.xacro_file import parse_arguments
    return RobotModel.from_description(
        args.robot, getattr(args, "root_link", None), getattr(args, "tip_link", None),
        getattr(args, "strict_inertia", False),
        parse_arguments(getattr(args, "xacro_arguments", None)))


def load_robot_with_report(args) -> tuple[RobotModel, UrdfReport | None]:
    """Return the model ``args`` name and, for a URDF, what was merged and locked into it."""
    from ..core import RobotModel
    from ..core.model.urdf import UrdfOptions, is_urdf, load_urdf
    from ..core.model.xacro_file import parse_arguments
    if not is_urdf(args.robot):
        return load_robot(args), None
    options = UrdfOptions(getattr(args, "root_link", None), getattr(args, "tip_link", None),
                          strict_inertia=getattr(args, "strict_inertia", False),
                          xacro_arguments=parse_arguments(getattr(args, "xacro_arguments", None)))
    description = load_urdf(args.robot, options)
    return RobotModel.from_dict(description.spec, description.report.source), description.report
