"""
The `robot-dynamics` command: one subcommand per module in robot_dynamics_ros.commands.

Each command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from .core.errors import RobotDynamicsError, error_summary

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
    args = parser.parse_args(argv)
    try:
        return int(modules[args.command].run(args) or 0)
    except RobotDynamicsError as exc:
        # Bad files and arguments are the user's to fix: one line that says what, no traceback.
        print(f"robot-dynamics {args.command}: {error_summary(exc)}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
