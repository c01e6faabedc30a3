"""
The `robot-dynamics` command: one subcommand per module in robot_dynamics_ros.commands.

Each command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import re
import sys

from ..core.errors import RobotDynamicsError, error_summary

# xacro's command-line arguments, as in `robot-dynamics check robot.urdf.xacro ur_type:=ur5e`
# (bringup passes ROS arguments through: its NAME:=VALUE are remappings, not xacro's).
_XACRO_ARGUMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*:=")
COMMANDS = ("check", "demo", "bringup", "scale", "codegen", "convert", "urdf", "bag", "ik",
            "ellipsoid", "excite", "identify", "compile")


def _help_of(name: str) -> str | None:
    """Return the ``HELP`` of a command's module, read from its text (not imported), or None."""
    spec = importlib.util.find_spec(f"robot_dynamics_ros.commands.{name}")
    if spec is None or not spec.origin:
        return None
    with open(spec.origin, encoding="utf-8") as f:
        for node in ast.parse(f.read()).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "HELP"
                                                    for t in node.targets):
                return ast.literal_eval(node.value)
    return None


def main(argv=None) -> int:
    # Only the chosen command's module is imported (each imports what it needs: scipy.signal
    # for `excite` alone); the others' help lines are read from their text for --help.
    parser = argparse.ArgumentParser(prog="robot-dynamics", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    modules = {}
    for name in COMMANDS:
        if name != chosen:
            if chosen is None and (text := _help_of(name)) is not None:
                sub.add_parser(name, help=text, description=text)
            continue
        module = importlib.import_module(f"robot_dynamics_ros.commands.{name}")
        modules[name] = module
        module.add_arguments(sub.add_parser(name, help=module.HELP, description=module.HELP))
    xacro = [] if "bringup" in argv[:1] else [a for a in argv if _XACRO_ARGUMENT.match(a)]
    args = parser.parse_args([a for a in argv if a not in xacro])
    args.xacro_arguments = xacro
    try:
        return int(modules[args.command].run(args) or 0)
    except RobotDynamicsError as exc:
        # Bad files and arguments are the user's to fix: one line that says what, no traceback.
        _print_error(f"robot-dynamics {args.command}: {error_summary(exc)}: {exc}")
        return 1


def _print_error(text: str) -> None:
    """
    Print ``text`` on stderr on a line of its own, whatever progress bar is showing.

    A tqdm bar draws with carriage returns and no newline; a message written behind it shares
    its line (on a terminal the next redraw cuts it, in a log it follows the bar's text).  tqdm's
    ``external_write_mode`` clears the live bars around the write, and a newline first ends the
    line a live bar was drawing (in a log, where clearing is no more than a carriage return).
    """
    tqdm = sys.modules.get("tqdm")
    live = list(getattr(tqdm.tqdm, "_instances", ())) if tqdm is not None else []
    if not live:                     # no bar on the screen: a line of its own already
        print(text, file=sys.stderr)
        return
    with tqdm.tqdm.external_write_mode(file=sys.stderr):
        print("\n" + text, file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
