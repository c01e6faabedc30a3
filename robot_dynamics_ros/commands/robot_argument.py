"""The robot argument every command that works on a robot takes, and how it becomes a model."""
from __future__ import annotations

from ..core import RobotModel

HELP = "robot description: a YAML file, or the name of a shipped robot (e.g. puma560)"


def add_robot_argument(parser) -> None:
    """Add the positional ``robot`` argument."""
    parser.add_argument("robot", help=HELP)


def load_robot(args) -> RobotModel:
    """The model named by ``args.robot`` (raises RobotDescriptionError, which cli.main reports)."""
    return RobotModel.named(args.robot)
