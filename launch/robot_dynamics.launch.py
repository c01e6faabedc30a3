"""
Start the robot_dynamics_ros nodes.

    ros2 launch robot_dynamics_ros robot_dynamics.launch.py robot:=puma560 \
        joint_states:=/joint_states effort_command:=/effort_controller/commands
    ros2 launch robot_dynamics_ros robot_dynamics.launch.py robot:=/path/arm.urdf tip_link:=tool0
    ros2 launch robot_dynamics_ros robot_dynamics.launch.py robot:=topic  # /robot_description

By default the nodes run in one process (``robot-dynamics bringup``: each node on its own
executor thread, as a component container holds them): at 1 kHz the nodes in their own processes
cost more CPU per message than the same nodes in one and lost messages under load
(bench/bench_ros_latency.py, deployments ``launch`` and ``split``).  ``split:=true`` starts each
node in a process of its own instead (launch_ros Node / LifecycleNode actions, which a launch file
including this one can drive with lifecycle events).

Arguments: ``robot``, ``namespace``, ``nodes``, ``use_sim_time``, ``params_file``, ``autostart``
(true: the managed nodes, inverse_dynamics and gravity_compensation, configure and activate
themselves; false: they stay unconfigured for ``ros2 lifecycle set``) and the topics
of ``robot_dynamics_ros.nodes.bringup.TOPIC_ARGUMENTS`` (``ros2 launch ... --show-args`` lists them
with their defaults).  The node list comes from ``bringup.node_descriptions``, the function that
``robot-dynamics bringup`` (all nodes in one process) uses, which checks every argument: a bad
one (an unknown robot, node or topic name) fails the launch with one message before any node
starts.  Parameters come from config/robot_dynamics.params.yaml (or params_file:=...),
overridden by the launch arguments.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import LifecycleNode, Node

from robot_dynamics_ros.nodes.bringup import (DEFAULT_NAMESPACE, DEFAULT_NODES, DEFAULT_ROBOT,
                                              NODE_TYPES, ROBOT_TOPIC, TOPIC_ARGUMENTS,
                                              default_params_file, node_descriptions)


def _nodes(context, *args, **kwargs):
    def arg(name):
        return LaunchConfiguration(name).perform(context)
    descriptions = node_descriptions(
        robot=arg("robot"), namespace=arg("namespace"), nodes=arg("nodes"),
        use_sim_time=arg("use_sim_time"), params_file=arg("params_file"),
        root_link=arg("root_link"), tip_link=arg("tip_link"),
        topics={name: arg(name) for name in TOPIC_ARGUMENTS},
        model={"xacro_arguments": arg("xacro_arguments"),
               "strict_inertia": arg("strict_inertia")}, autostart=arg("autostart"))
    if not _flag(arg("split"), "split"):
        return [Node(package="robot_dynamics_ros", executable="robot-dynamics",
                     arguments=bringup_arguments(arg), output="screen")]
    # managed nodes as launch_ros LifecycleNode actions (so that a launch file including this one
    # can drive their transitions with ChangeState events); they start themselves with the
    # autostart parameter
    return [(LifecycleNode if NODE_TYPES[d.kind].managed else Node)(
                package="robot_dynamics_ros", executable=d.executable, name=d.name,
                namespace=d.namespace, remappings=list(d.remappings), output="screen",
                parameters=([d.params_file] if d.params_file else []) + [d.parameters])
            for d in descriptions]


def _flag(value: str, name: str) -> bool:
    text = value.strip().lower()
    if text not in ("true", "1", "yes", "on", "false", "0", "no", "off", ""):
        raise ValueError(f"{name}: expected true or false, got {value!r}")
    return text in ("true", "1", "yes", "on")


def bringup_arguments(arg) -> list:
    """Return ``robot-dynamics bringup``'s arguments for the launch arguments (``arg(name)``)."""
    argv = ["bringup", "--robot", arg("robot"), "--namespace", arg("namespace"),
            "--nodes", arg("nodes"), "--params-file", arg("params_file"),
            "--root-link", arg("root_link"), "--tip-link", arg("tip_link"),
            "--xacro-arguments", arg("xacro_arguments")]
    for name, flag, when in (("use_sim_time", "--use-sim-time", True),
                             ("strict_inertia", "--strict-inertia", True),
                             ("autostart", "--no-autostart", False)):
        if _flag(arg(name), name) == when:
            argv.append(flag)
    for name in TOPIC_ARGUMENTS:
        argv += [f"--{name.replace('_', '-')}", arg(name)]
    return argv


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value=DEFAULT_ROBOT,
                              description="shipped robot name (config/robots), robot YAML, "
                                          f"URDF or xacro path, or '{ROBOT_TOPIC}': the URDF on "
                                          "/robot_description"),
        DeclareLaunchArgument("root_link", default_value="",
                              description="URDF: first link of the chain (default: its root)"),
        DeclareLaunchArgument("tip_link", default_value="",
                              description="URDF: last link of the chain (default: the end of "
                                          "the only chain)"),
        DeclareLaunchArgument("xacro_arguments", default_value="",
                              description="a xacro robot's arguments, 'name:=value ...' (quoted "
                                          "as one launch argument)"),
        DeclareLaunchArgument("strict_inertia", default_value="false",
                              description="refuse physically inconsistent link inertias"),
        DeclareLaunchArgument("namespace", default_value=DEFAULT_NAMESPACE,
                              description="namespace of the nodes"),
        DeclareLaunchArgument("nodes", default_value=",".join(DEFAULT_NODES),
                              description="comma-separated nodes to start, from "
                                          f"{sorted(NODE_TYPES)}"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="use /clock"),
        DeclareLaunchArgument("autostart", default_value="true",
                              description="configure and activate the managed nodes "
                                          "(inverse_dynamics, gravity_compensation); false: "
                                          "leave them unconfigured for `ros2 lifecycle set`"),
        DeclareLaunchArgument("params_file", default_value=default_params_file(),
                              description="ROS parameter file for the nodes"),
        DeclareLaunchArgument("split", default_value="false",
                              description="true: each node in a process of its own; false: all "
                                          "in one process (robot-dynamics bringup)"),
        *(DeclareLaunchArgument(name, default_value=topic.default, description=topic.description)
          for name, topic in TOPIC_ARGUMENTS.items()),
        OpaqueFunction(function=_nodes),
    ])
