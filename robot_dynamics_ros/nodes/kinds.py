"""
The node kinds: which console script, module and class each node of the package is.

The one place where nodes are loaded by name (:meth:`NodeDescription.node_class` imports the
module on demand), so that the launch file, the command line, the node executables
(``executables.py``) and the parameter reference (``parameter_table.py``) read this table
without rclpy or any node module.  What to start and with which arguments is ``bringup.py``,
above the nodes; this table sits below them, so any module of ``nodes/`` may import it.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import NamedTuple

PACKAGE = "robot_dynamics_ros"


class NodeType(NamedTuple):
    """A node kind: its console script, the module and class that implement it, if managed."""

    executable: str
    module: str
    class_name: str
    managed: bool = False           # a lifecycle node (``nodes/managed.py``): takes autostart


# node kind -> NodeType.  Default node name = kind.
# The one place where nodes are loaded by name: NodeDescription.node_class imports the module on
# demand, so that the launch file and the CLI import this table without rclpy or any node module
# (launch_ros starts the console script; the bringup imports the class).  Every console script
# runs ``robot_dynamics_ros.nodes.executables:main``, which finds its kind here by the name it
# was started as; setup.py's console_scripts list the same executables (test_ros_bringup checks).
NODE_TYPES = {
    "inverse_dynamics": NodeType("inverse_dynamics_node", f"{PACKAGE}.nodes.inverse_dynamics",
                                 "InverseDynamicsNode", managed=True),
    "gravity_compensation": NodeType("gravity_compensation_node",
                                     f"{PACKAGE}.nodes.gravity_compensation",
                                     "GravityCompensationNode", managed=True),
    "dynamics_service": NodeType("dynamics_service_node", f"{PACKAGE}.nodes.dynamics_service",
                                 "DynamicsServiceNode"),
    "trajectory_scaler": NodeType("trajectory_scaler_node", f"{PACKAGE}.nodes.trajectory_scaler",
                                  "TrajectoryScalerNode"),
    # between a planner (MoveIt) and the controller's FollowJointTrajectory action (not started
    # by default: it needs the controller's name)
    "trajectory_proxy": NodeType("trajectory_proxy_node", f"{PACKAGE}.nodes.trajectory_proxy",
                                 "TrajectoryProxyNode"),
    # the stand-in for the robot (not started by default): publishes joint_states, takes
    # effort_command, so the topic arguments below wire it to the other nodes
    "simulator": NodeType("dynamics_simulator_node", f"{PACKAGE}.nodes.simulator",
                          "DynamicsSimulatorNode"),
    # collision detection (not started by default: it needs a joint torque in joint_states or
    # the command topic, and thresholds that suit the robot): external_effort, external_wrench,
    # contact
    "external_torque_observer": NodeType("external_torque_observer_node",
                                         f"{PACKAGE}.nodes.external_torque_observer",
                                         "ExternalTorqueObserverNode", managed=True),
}
DEFAULT_NODES = ("inverse_dynamics", "gravity_compensation", "dynamics_service",
                 "trajectory_scaler")


@dataclass(frozen=True)
class NodeDescription:
    """One node to start: what, under which name, with which parameters and remappings."""

    kind: str                       # key of NODE_TYPES
    executable: str                 # console script (launch_ros Node executable)
    name: str
    namespace: str
    parameters: dict = field(default_factory=dict)   # explicit parameters, override params_file
    params_file: str = ""           # ROS parameter file ('/**: ros__parameters:' ...), may be ''
    remappings: tuple = ()          # (from, to) pairs, as launch_ros Node(remappings=...)

    def node_class(self):
        """Import the class of this node's kind."""
        node_type = NODE_TYPES[self.kind]
        return getattr(importlib.import_module(node_type.module), node_type.class_name)

    def cli_args(self) -> list[str]:
        """Node-specific ROS arguments (the remappings) for an rclpy Node created in-process."""
        args = []
        for source, target in self.remappings:
            args += ["-r", f"{source}:={target}"]
        return ["--ros-args", *args] if args else []
