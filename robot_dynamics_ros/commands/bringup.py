"""
robot-dynamics bringup: the nodes of launch/robot_dynamics.launch.py, all in one process.

Same arguments, defaults and node list (``robot_dynamics_ros.nodes.bringup.node_descriptions``)
as the launch file; each node spins in its own thread.  Extra ``--ros-args ...`` (remappings,
parameters) apply to every node.  Ctrl-C (also twice) ends it cleanly with exit code 0.
"""
from __future__ import annotations

import argparse
import signal
import sys

from ..nodes.bringup import (DEFAULT_NAMESPACE, DEFAULT_NODES, DEFAULT_ROBOT, NODE_TYPES,
                             ROBOT_TOPIC, TOPIC_ARGUMENTS)

HELP = "run the dynamics nodes (as the launch file would) in one process"


def add_arguments(parser):
    parser.add_argument("--robot", default=DEFAULT_ROBOT,
                        help=f"shipped robot name, robot YAML or URDF path, or '{ROBOT_TOPIC}' "
                             f"(the URDF on /robot_description) (default {DEFAULT_ROBOT})")
    parser.add_argument("--root-link", default="", help="URDF: first link of the chain")
    parser.add_argument("--tip-link", default="", help="URDF: last link of the chain")
    parser.add_argument("--xacro-arguments", default="", metavar="'NAME:=VALUE ...'",
                        help="a xacro robot's arguments, as one argument (the launch file's "
                             "xacro_arguments)")
    parser.add_argument("--strict-inertia", action="store_true",
                        help="refuse physically inconsistent link inertias")
    parser.add_argument("--namespace", default=DEFAULT_NAMESPACE,
                        help=f"node namespace (default {DEFAULT_NAMESPACE})")
    parser.add_argument("--nodes", default=",".join(DEFAULT_NODES),
                        help=f"comma-separated nodes to run, from {sorted(NODE_TYPES)} "
                             "(default: %(default)s)")
    parser.add_argument("--use-sim-time", action="store_true",
                        help="use /clock (use_sim_time:=true)")
    parser.add_argument("--no-autostart", dest="autostart", action="store_false",
                        help="leave the managed nodes (inverse_dynamics, gravity_compensation) "
                             "unconfigured, for `ros2 lifecycle set` (autostart:=false); by "
                             "default they are configured and activated")
    parser.add_argument("--params-file", default=None,
                        help="ROS parameter file (default: the shipped "
                             "config/robot_dynamics.params.yaml; '' for none)")
    add_topic_arguments(parser)
    parser.add_argument("--duration", type=float, default=None,
                        help="stop after this many seconds")
    parser.add_argument("--ros-args", dest="ros_args", nargs=argparse.REMAINDER, default=[],
                        help="ROS arguments for every node (remappings, -p name:=value, ...); "
                             "must come last")


def add_topic_arguments(parser, defaults: dict | None = None):
    """Add an option per launch-file topic argument (``--joint-states TOPIC``, ...)."""
    for name, topic in TOPIC_ARGUMENTS.items():
        default = (defaults or {}).get(name, topic.default)
        parser.add_argument(f"--{name.replace('_', '-')}", dest=f"topic_{name}",
                            default=default, metavar="TOPIC",
                            help=f"{topic.description} (default {default})")


def topic_values(args) -> dict:
    """Return the {topic argument: topic} of the options added by add_topic_arguments."""
    return {name: getattr(args, f"topic_{name}") for name in TOPIC_ARGUMENTS}


def _model_settings(args) -> dict | None:
    """Return node_descriptions' ``model`` of the options given (None: none given)."""
    given = {"xacro_arguments": getattr(args, "xacro_arguments", ""),
             "strict_inertia": "true" if getattr(args, "strict_inertia", False) else ""}
    return {k: v for k, v in given.items() if v} or None


def run(args) -> int:
    from ..nodes.bringup import node_descriptions
    try:
        descriptions = node_descriptions(
            args.robot, args.namespace, args.nodes, args.use_sim_time, args.params_file,
            root_link=args.root_link, tip_link=args.tip_link, topics=topic_values(args),
            model=_model_settings(args), autostart=args.autostart)
    except ValueError as exc:
        print(f"bringup: {exc}", file=sys.stderr)
        return 2
    try:
        return _run(args, descriptions)
    except KeyboardInterrupt:          # Ctrl-C while rclpy was still being imported
        return 0


def _run(args, descriptions) -> int:
    import rclpy

    from ..nodes.bringup import Spinner, create_nodes, ros_args
    from ..nodes.base import CONFIGURATION_ERRORS
    init_args = ros_args(descriptions)
    if args.ros_args:
        init_args = (init_args or ["--ros-args"]) + list(args.ros_args)
    rclpy.init(args=["robot-dynamics"] + init_args)
    nodes, spinner = [], None
    # the managed (torque) nodes first, spun as soon as they are active: the others' start-up
    # (the scaler loads its passes, 0.6 s) then no longer delays the first torque outputs
    managed = [d for d in descriptions if NODE_TYPES[d.kind].managed]
    batches = [b for b in (managed, [d for d in descriptions if d not in managed]) if b]
    try:
        try:
            for batch in batches:
                started = create_nodes(batch)
                nodes += started
                if spinner is None:
                    spinner = Spinner(started).start()
                else:
                    spinner.add(started)
        except Exception as exc:  # noqa: BLE001 -- sorted below
            if not rclpy.ok():            # interrupted while starting: not an error
                return 0
            if not isinstance(exc, CONFIGURATION_ERRORS):
                raise
            print(f"bringup: configuration error: {exc}", file=sys.stderr)
            return 2
        nodes[0].get_logger().info(
            "bringup: " + ", ".join(n.get_fully_qualified_name() for n in nodes)
            + f" (robot {args.robot})")
        spinner.wait(args.duration)
    except KeyboardInterrupt:
        pass
    finally:
        if spinner is not None:
            spinner.stop()
        signal.signal(signal.SIGINT, signal.SIG_IGN)      # a second Ctrl-C during the clean-up
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    return 0
