"""
What to start: the one node list of launch/robot_dynamics.launch.py and `robot-dynamics bringup`.

:func:`node_descriptions` turns the launch arguments (robot, namespace, which nodes, use_sim_time,
parameter file, topics) into a list of :class:`NodeDescription`, checking every argument (a bad
one raises ValueError with one clear message, so a launch fails before any node starts).  The
launch file makes one launch_ros ``Node`` action of each (``parameters=[params_file,
parameters]``, ``remappings``); the bringup makes all of them in one process
(:func:`create_nodes`: the global ``--params-file`` first, then the same explicit parameters as
overrides and the same remappings, the precedence of launch) and spins them (:class:`Spinner`).
So what the tests and the demo run is what ``ros2 launch`` starts.

Topics: the nodes use relative names (``joint_states``, ``reference_trajectory``,
``effort_command``...), so namespaces and remappings work.  :data:`TOPIC_ARGUMENTS` are the ones a
user wires into a stack, with the defaults of the launch file and the bringup (joint states from
``/joint_states``, where joint_state_broadcaster publishes them; the rest under the namespace).

This module sits above the nodes: the command line (``commands/bringup.py``, ``commands/demo.py``)
and the launch file import it, no node does (the table of node kinds the nodes read is
``kinds.py``).
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ..core import RobotDynamicsError, RobotModel
from ..core.model.xacro_file import parse_arguments
from ..messages.topics import DEFAULT_NAMESPACE
from .executor import make_executor, spin as spin_executor
from .kinds import DEFAULT_NODES, NODE_TYPES, PACKAGE, NodeDescription

PARAMS_FILE_NAME = "robot_dynamics.params.yaml"
DEFAULT_ROBOT = "puma560"
ROBOT_TOPIC = "topic"           # robot:=topic -> robot_description '' (the URDF by topic)


class TopicArgument(NamedTuple):
    """A topic a user wires: the nodes' relative name, its default target, what it carries."""

    default: str
    description: str


# launch argument / bringup option -> TopicArgument; the argument's name is the nodes' own
# (relative) topic name, which the value remaps.
TOPIC_ARGUMENTS = {
    "joint_states": TopicArgument(
        "/joint_states", "sensor_msgs/JointState input of inverse_dynamics and "
        "gravity_compensation (joint_state_broadcaster publishes /joint_states), output of the "
        "simulator"),
    "reference_trajectory": TopicArgument(
        "reference_trajectory", "trajectory_msgs/JointTrajectory input of inverse_dynamics and "
        "trajectory_scaler (relative: under the namespace)"),
    "effort_command": TopicArgument(
        "effort_command", "std_msgs/Float64MultiArray feedforward torques of inverse_dynamics, "
        "e.g. /effort_controller/commands of a JointGroupEffortController; the simulator's "
        "torque input"),
    "gravity_effort_command": TopicArgument(
        "gravity_effort_command", "std_msgs/Float64MultiArray holding torques of "
        "gravity_compensation, e.g. /effort_controller/commands"),
    "scaled_trajectory": TopicArgument(
        "scaled_trajectory", "trajectory_msgs/JointTrajectory output of trajectory_scaler "
        "(transient local), e.g. /joint_trajectory_controller/joint_trajectory"),
}
DEFAULT_TOPICS = {name: argument.default for name, argument in TOPIC_ARGUMENTS.items()}

_HERE = Path(__file__).resolve()
# config/ of a source checkout (or editable install), else <prefix>/share/robot_dynamics_ros/config
CONFIG_DIRS = (_HERE.parents[2] / "config",) + tuple(
    prefix / "share" / PACKAGE / "config" for prefix in _HERE.parents[5:6])


def default_params_file() -> str:
    """Find config/robot_dynamics.params.yaml of this package ('' if not found)."""
    for directory in CONFIG_DIRS:
        path = directory / PARAMS_FILE_NAME
        if path.is_file():
            return str(path)
    return ""


def _as_bool(value, what: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off", ""):
        return False
    raise ValueError(f"{what}: expected true or false, got {value!r}")


def _as_list(value) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.replace(" ", ",").split(",") if v.strip()]
    return [str(v) for v in value]


def _check_names(namespace: str, topics: dict):
    """Raise ValueError unless the namespace and every topic are valid ROS names."""
    from rclpy.exceptions import InvalidNamespaceException, InvalidTopicNameException
    from rclpy.validate_namespace import validate_namespace
    from rclpy.validate_topic_name import validate_topic_name
    try:
        validate_namespace(namespace)
    except InvalidNamespaceException as exc:
        raise ValueError(f"namespace: '{namespace}' is not a valid ROS namespace "
                         f"({str(exc).splitlines()[0]})") from None
    for name, topic in topics.items():
        try:
            validate_topic_name(topic)
        except InvalidTopicNameException as exc:
            raise ValueError(f"{name}: '{topic}' is not a valid ROS topic name "
                             f"({str(exc).splitlines()[0]})") from None


def _check_robot(robot: str, root_link: str, tip_link: str, model: dict):
    """Raise ValueError unless ``robot`` (with the links of a URDF) loads as a valid robot."""
    if not robot:
        raise ValueError(f"robot: empty (give '{ROBOT_TOPIC}' to take the URDF from "
                         "/robot_description)")
    if robot == ROBOT_TOPIC:
        return
    try:
        RobotModel.from_description(
            robot, root_link, tip_link, _as_bool(model.get("strict_inertia", False),
                                                 "strict_inertia"),
            parse_arguments(str(model.get("xacro_arguments", "")).split(), "xacro_arguments:"))
    except (RobotDynamicsError, OSError) as exc:
        raise ValueError(f"robot: {exc}") from None


def node_descriptions(robot: str = DEFAULT_ROBOT, namespace: str = DEFAULT_NAMESPACE,
                      nodes=DEFAULT_NODES, use_sim_time=False, params_file: str | None = None,
                      parameters: dict | None = None, root_link: str = "", tip_link: str = "",
                      topics: dict | None = None, model: dict | None = None,
                      autostart=True) -> list[NodeDescription]:
    """
    Describe the nodes to start, checking every argument.

    ``robot``: shipped name, robot YAML or URDF path (-> ``robot_description``; loaded here, so
    a bad one fails at once; ``ROBOT_TOPIC``: the nodes take the URDF from
    ``/robot_description``); ``root_link``, ``tip_link``: the chain of a URDF (-> the parameters
    of the same names, set only when given); ``namespace``: of every node ('' = root);
    ``nodes``: kinds from NODE_TYPES, a list or a comma-separated string ('all' = the default
    set); ``use_sim_time``: bool or 'true'/'false'; ``params_file``: ROS parameter file, None =
    the shipped config/robot_dynamics.params.yaml, '' = none; ``parameters``: extra parameters
    for every node; ``topics``: {TOPIC_ARGUMENTS name: topic} remappings (None: none, the
    nodes' relative names; the launch file and the bringup pass DEFAULT_TOPICS overridden by
    the user's); ``model``: ``xacro_arguments`` ('name:=value ...') and ``strict_inertia`` (->
    the parameters of the same names, set when given); ``autostart``: bool or 'true'/'false',
    the managed nodes configure and activate themselves once started (false: they start
    unconfigured, for ``ros2 lifecycle`` or a lifecycle manager).  The simulator publishes
    /clock when the nodes use simulated time (someone must).  Raises ValueError naming a bad
    argument.
    """
    kinds = _as_list(nodes)
    if kinds == ["all"]:
        kinds = list(DEFAULT_NODES)
    unknown = [k for k in kinds if k not in NODE_TYPES]
    if unknown:
        raise ValueError(f"nodes: unknown {unknown}; available {sorted(NODE_TYPES)}")
    if not kinds:
        raise ValueError("nodes: none selected")
    if len(set(kinds)) != len(kinds):
        raise ValueError(f"nodes: repeated in {kinds}")
    topics = dict(topics or {})
    extra = sorted(set(topics) - set(TOPIC_ARGUMENTS))
    if extra:
        raise ValueError(f"topics: unknown {extra}; available {sorted(TOPIC_ARGUMENTS)}")
    namespace = "/" + namespace.strip().strip("/")
    _check_names(namespace, topics)
    sim_time = _as_bool(use_sim_time, "use_sim_time")
    managed = {"autostart": _as_bool(autostart, "autostart")}
    params_file = default_params_file() if params_file is None else params_file
    if params_file and not Path(params_file).is_file():
        raise ValueError(f"params_file: {params_file}: no such file")
    model = {k: v for k, v in (model or {}).items() if v not in ("", None)}
    extra = sorted(set(model) - {"xacro_arguments", "strict_inertia"})
    if extra:
        raise ValueError(f"model: unknown {extra}; available ['strict_inertia', "
                         "'xacro_arguments']")
    _check_robot(robot, root_link, tip_link, model)
    common = {"robot_description": "" if robot == ROBOT_TOPIC else str(robot),
              "use_sim_time": sim_time}
    if _as_bool(model.get("strict_inertia", False), "strict_inertia"):
        common["strict_inertia"] = True
    if "xacro_arguments" in model:
        common["xacro_arguments"] = str(model["xacro_arguments"])
    links = {"root_link": root_link, "tip_link": tip_link}
    common.update({name: str(link) for name, link in links.items() if link})
    common.update(parameters or {})
    remappings = tuple((name, topic) for name, topic in topics.items() if topic != name)
    own = {"simulator": {"publish_clock": sim_time}}
    own.update({kind: managed for kind, node_type in NODE_TYPES.items() if node_type.managed})
    return [NodeDescription(kind, NODE_TYPES[kind].executable, kind, namespace,
                            {**own.get(kind, {}), **common}, params_file, remappings)
            for kind in kinds]


# ------------------------------------------------------------------------------- in one process
def ros_args(descriptions) -> list[str]:
    """Make the rclpy.init arguments that load the parameter file of ``descriptions``."""
    files = {d.params_file for d in descriptions if d.params_file}
    if len(files) > 1:
        raise ValueError(f"one parameter file per bringup, got {sorted(files)}")
    return ["--ros-args", "--params-file", files.pop()] if files else []


def create_nodes(descriptions, context=None) -> list:
    """
    Instantiate and start every described node in this process; torque nodes share joint_states.

    rclpy must be initialised, with :func:`ros_args` so that the parameter file applies.  See
    :func:`share_joint_states`.  Managed nodes with ``autostart`` configure and activate here; a
    configure that fails raises ValueError with its reason (and no node is left).
    """
    from rclpy.parameter import Parameter
    nodes = []
    try:
        for d in descriptions:
            overrides = [Parameter(k, value=v) for k, v in d.parameters.items()]
            nodes.append(d.node_class()(d.name, namespace=d.namespace, context=context,
                                        parameter_overrides=overrides, cli_args=d.cli_args()))
        share_joint_states(nodes)
        for node in nodes:
            if not node.start():
                raise ValueError(f"{node.get_fully_qualified_name()}: configure failed: "
                                 f"{node.configure_error}")
    except BaseException:
        for node in nodes:
            node.destroy_node()
        raise
    return nodes


def share_joint_states(nodes) -> None:
    """
    Feed the torque nodes of one process from one joint_states subscription.

    Nodes whose ``joint_states_subscription`` (``DynamicsNode.subscribe_joint_states``) has the
    same topic and QoS: the first one's subscription calls every such node's handler in turn
    (each handler converts, checks and publishes for its own node, as before), the others'
    subscriptions are destroyed and the nodes are marked ``joint_states_leader`` so that
    :class:`Spinner` spins them on the leader's executor thread (every callback of these nodes
    on one thread, as each node alone had it).  One message is then taken and dispatched once
    instead of once per node (each node reads the serialized message itself): at 1 kHz the
    executor's share per message is most of a node's CPU (doc/benchmarks.md, "ROS throughput").
    """
    groups: list[list] = []             # nodes with equal topic and QoS (QoSProfile: ==)
    for node in nodes:
        subscription = getattr(node, "joint_states_subscription", None)
        if subscription is None:
            continue
        for group in groups:
            first = group[0].joint_states_subscription
            if (first.topic_name, first.qos_profile) == (subscription.topic_name,
                                                         subscription.qos_profile):
                group.append(node)
                break
        else:
            groups.append([node])
    for leader, *followers in groups:
        if not followers:
            continue
        handlers = [node.joint_states_handler for node in (leader, *followers)]

        def on_joint_states(msg, handlers=tuple(handlers)):
            for handler in handlers:        # each one guarded: never raises (topic_guard)
                handler(msg)
        leader.joint_states_subscription.callback = on_joint_states
        for node in followers:
            node.destroy_subscription(node.joint_states_subscription)
            node.joint_states_subscription = None
            node.joint_states_leader = leader


# s: how long a thread may hold the GIL while another waits for it (CPython's default: 5 ms).  A
# long service request (a time-optimal scaling) in one node's thread otherwise delays the torque
# thread by up to 5 ms per switch, which at 1 kHz loses inputs (doc/benchmarks.md, "ROS
# throughput").
SWITCH_INTERVAL = 0.0005


class Spinner:
    """
    Spins every node on its own executor in its own thread, until :meth:`stop`.

    This is the bringup's multi-threaded executor: nodes run in parallel threads, each node's
    callbacks one at a time (as a node's default mutually exclusive callback group would have
    them), so a long service request of one node does not hold up the torque outputs of another
    beyond what Python's GIL imposes.  Nodes fed by another's joint_states subscription
    (:func:`share_joint_states`, ``joint_states_leader``) run on that node's executor thread.
    rclpy's MultiThreadedExecutor (rclpy 9.1.2) is not used: under CPU load its dispatch loop
    re-submits callbacks that cannot start yet and rescans a growing list of pending futures
    (seen here: ~10 million Task.done() calls in 3 s, and the demo's 100 Hz publisher starved to
    14 of 300 messages).
    """

    def __init__(self, nodes, context=None):
        import rclpy

        self.context = context or rclpy.get_default_context()
        self._executors = []
        self._of = {}                   # node -> its executor
        self._threads = []
        self._stopped = self._started = False
        self.add(nodes)

    def add(self, nodes) -> None:
        """Spin ``nodes`` too (on threads of their own at once, if already started)."""
        new = []
        for node in nodes:
            leader = getattr(node, "joint_states_leader", None)
            executor = self._of.get(leader)
            if executor is None:
                executor = make_executor(self.context)
                self._executors.append(executor)
                new.append(executor)
            executor.add_node(node)
            self._of[node] = executor
        if self._started:
            self._start_threads(new)

    def start(self) -> "Spinner":
        """Start one thread per executor (see :data:`SWITCH_INTERVAL`)."""
        import sys
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
        self._started = True
        self._start_threads(self._executors)
        return self

    def _start_threads(self, executors):
        import threading
        for executor in executors:
            thread = threading.Thread(target=self._run, args=(executor,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _run(self, executor):
        try:
            spin_executor(executor, self.context, lambda: self._stopped)
        except KeyboardInterrupt:
            pass

    def wait(self, duration: float | None = None):
        """Block until ``duration`` s have passed (None: forever) or the context is shut down."""
        import time
        end = None if duration is None else time.monotonic() + duration
        try:
            while self.context.ok() and (end is None or time.monotonic() < end):
                time.sleep(0.05 if end is None else max(0.0, min(0.05, end - time.monotonic())))
        except KeyboardInterrupt:
            pass

    def stop(self, timeout: float = 2.0):
        """Stop spinning (idempotent); the nodes stay alive for the caller to destroy."""
        if self._stopped:
            return
        self._stopped = True
        for thread in self._threads:
            thread.join(timeout)
        for executor in self._executors:
            executor.shutdown(timeout_sec=timeout)

    def __enter__(self) -> "Spinner":
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def spin(nodes, duration: float | None = None, context=None):
    """Spin ``nodes`` (see :class:`Spinner`) until shutdown or for ``duration`` seconds."""
    with Spinner(nodes, context) as spinner:
        spinner.wait(duration)
