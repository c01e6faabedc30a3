"""
The ``main()`` of every node executable (``ros2 run robot_dynamics_ros <kind>_node``).

Every node console script points here; the node kind is found in ``kinds.NODE_TYPES`` by the
name the script was started as.  This module imports nothing heavy at module level, so that a
Ctrl-C while rclpy and numpy are still being imported ends the process quietly (exit 0) instead
of with a KeyboardInterrupt traceback: ``ros2 launch`` sends SIGINT to nodes that may still be
starting.
"""
from __future__ import annotations

import os
import sys


def main(argv=None) -> int:
    """Run the node kind whose executable this process was started as."""
    name = os.path.basename(sys.argv[0])
    try:
        from .kinds import NODE_TYPES
        kinds = [kind for kind, node_type in NODE_TYPES.items() if node_type.executable == name]
        if not kinds:
            known = sorted(t.executable for t in NODE_TYPES.values())
            print(f"{name}: not a robot_dynamics_ros node executable ({known})", file=sys.stderr)
            sys.exit(2)
        from .kinds import NodeDescription
        from .base import run_node
        node_class = NodeDescription(kinds[0], name, kinds[0], "/").node_class()
        code = run_node(node_class, argv)
    except KeyboardInterrupt:
        code = 0
    sys.exit(code)
