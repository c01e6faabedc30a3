"""
The `robot-dynamics` command: one subcommand per module in robot_dynamics_ros.commands.

Each command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``.
"""
from __future__ import annotations

import argparse
import importlib
import re
import sys

from ..core.errors import RobotDynamicsError, error_summary

# xacro's command-line arguments, as in `robot-dynamics check robot.urdf.xacro ur_type:=ur5e`
# (bringup passes ROS arguments through: its NAME:=VALUE are remappings, not xacro's).
_XACRO_ARGUMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*:=")
COMMANDS = ("check", "demo", "bringup", "scale", "codegen", "convert", "urdf", "bag", "ik",
            "ellipsoid", "excite", "identify")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="robot-dynamics", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"robot_dynamics_ros.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"robot_dynamics_ros.commands.{name}":
                raise
            continue  # command not built yet
        modules[name] = module
        module.add_arguments(sub.add_parser(name, help=module.HELP, description=module.HELP))
    argv = list(sys.argv[1:] if argv is None else argv)
    xacro = [] if "bringup" in argv[:1] else [a for a in argv if _XACRO_ARGUMENT.match(a)]
    args = parser.parse_args([a for a in argv if a not in xacro])
    args.xacro_arguments = xacro
    try:
        return int(modules[args.command].run(args) or 0)
    except RobotDynamicsError as exc:
        # Bad files and arguments are the user's to fix: one line that says what, no traceback.
        print(f"robot-dynamics {args.command}: {error_summary(exc)}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
