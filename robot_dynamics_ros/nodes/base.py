"""
The base classes of the dynamics nodes, and the ``main()`` of every node executable.

Two kinds of node share one base (:class:`DynamicsNodeBase`):

* :class:`DynamicsNode` (an rclpy Node): loads its robot when it is created and serves from then
  on (dynamics_service, trajectory_scaler, simulator: they answer requests or stand in for the
  robot, like robot_state_publisher or a simulator);
* :class:`~robot_dynamics_ros.nodes.managed.ManagedDynamicsNode` (an rclpy LifecycleNode): loads
  its robot in ``configure`` and publishes only while ``active`` (the torque nodes; see
  ``nodes/managed.py``).

The base gives a node

* ``self.dynamics``: a :class:`~robot_dynamics_ros.nodes.dynamics.Dynamics` (model and dynamics
  functions in the model's joint order), replaced as a whole when the payload or gravity changes;
* ``self.params``: a :class:`~robot_dynamics_ros.nodes.parameters.NodeParameters` with the
  parameters of the node's tables (``PARAMETER_TABLES``: ``nodes/params/<table>.yaml``, the
  reference in doc/parameters.md) declared; a node validates its own with
  ``self.params.add_hook`` and per-joint ones against a new robot in :meth:`check_model`;
* the joint orders: ``input_order`` (incoming name lists matched onto the model's order) and
  ``joint_names`` / ``output_index`` (the configured output order);
* inputs: :meth:`subscribe` (QoS overridable through ``qos_overrides.<topic>.subscription.*``),
  :meth:`subscribe_joint_states` for the measured state that triggers the torque outputs,
  :meth:`watch_input` for the input timeout, :meth:`reject` for dropped messages (wrap
  callbacks in :func:`~robot_dynamics_ros.nodes.errors.topic_guard`);
* outputs: :meth:`advertise` (QoS overridable too; a lifecycle publisher in a managed node),
  :meth:`create_effort_outputs`;
* ``/diagnostics`` (every node, whatever its state).

The robot (parameters of the ``common`` table): ``robot_description`` a shipped robot name, a
robot YAML or URDF path or URDF XML text; empty: the node subscribes to ``/robot_description``
(std_msgs/String, reliable, transient local), starts computing when a valid URDF arrives and
replaces its model as a whole with each later valid one (an invalid one is refused with the
reason and the old model kept); until a model exists nothing is published (said once) and
services answer ``success: false`` (saying whether a URDF is awaited or being built).  A model
from the topic is built in a worker thread (``model_builder``): outputs continue with the old
model until it is ready.  ``gravity`` and
``payload.*`` are unset until the robot is loaded, then the robot file's unless given; they
change the model at run time (``nodes/model_settings.py``).
"""
from __future__ import annotations

import signal
import sys
import time

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import (InvalidParameterValueException, NameValidationException,
                              ParameterException)
from rclpy._rclpy_pybind11 import RCLError
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.qos_overriding_options import QoSOverridingOptions
from std_msgs.msg import String

from ..core import RobotDescriptionError, RobotDynamicsError, joint_index
from ..core.trajectories.topp import passes as topp_passes
from ..core.joint_names import inverse
from ..messages.conversions import MAX_MESSAGE_JOINTS, JointOrder, MessageRejected
from ..messages.serialized import JointStateReader, trajectory_size
from .diagnostics import DiagnosticsReporter, Extra, diagnostic_array
from .dynamics import ModelOptions, load_robot, model_from_topic, select_dynamics
from .errors import describe, topic_guard
from .executor import make_executor, spin
from .memory import MemoryTrimmer
from .model_builder import ModelBuilder
from .model_settings import ModelSettings
from .outputs import EffortOutputs
from .parameters import NodeParameters
from .watchdog import RejectionLog, Watchdog

WATCHDOG_PERIOD = 0.05          # s, steady clock: how often input ages are checked
TRIM_AFTER_BYTES = 1_000_000    # a serialized trajectory or description this large: memory back
# Every subscription and publisher: QoS overridable by parameters (rclpy's QoS overriding options).
OVERRIDABLE = QoSOverridingOptions.with_default_policies()
# What robot_state_publisher publishes the URDF on (its QoS: reliable, transient local, depth 1).
DESCRIPTION_TOPIC = "/robot_description"
DESCRIPTION_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                             reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)


class DynamicsNodeBase:
    """
    What every dynamics node has (see the module docstring); mixed into Node or LifecycleNode.

    Subclasses set ``PARAMETER_TABLES``; the robot is loaded by :meth:`configure_robot` and
    released by :meth:`release_robot` (a managed node's configure and cleanup).
    """

    PARAMETER_TABLES: tuple = ("common",)
    # the executor kind the node needs (``nodes.executor.SINGLE``: its comment says when), or
    # None: the configured one
    EXECUTOR: str | None = None
    WARM_UP_SCALING = False         # load the time-optimal passes in warm_up (the scaler)
    active = True                   # a managed node is active only between activate/deactivate

    def __init__(self, node_name: str, **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        logger = self.get_logger()
        self.watchdog = Watchdog(logger)
        self.rejections = RejectionLog(logger)
        self.params = NodeParameters(self)
        values = self.params.declare_tables(self.PARAMETER_TABLES)
        self.root_link, self.tip_link = values["root_link"], values["tip_link"]
        self.model_options = ModelOptions(self.root_link, self.tip_link, values["strict_inertia"],
                                          tuple(values["xacro_arguments"].split()))
        self._configured_names = tuple(values["joint_names"])
        self.qos_depth = values["qos_depth"]
        if values["use_generated_model"]:
            # deprecated (issue 27): the generated model is an export, not a route; said once
            logger.warning("use_generated_model is deprecated and ignored: the nodes compute "
                           "with the core's compiled kernels (the faster, doc/benchmarks.md)")
        self.base_model = self.dynamics = self._settings = None
        self.joint_names, self.output_index = (), None
        self.input_order = self.joint_state_reader = None
        self._effort_outputs: list[EffortOutputs] = []
        self._said_no_model = False
        self._description_text = self._description_subscription = None
        self._model_builder = None              # made when the robot comes by topic
        self.trimmer = None                     # made with the first trajectory input
        self.params.add_hook(self._common_parameters)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        # timer callbacks take no argument: rclpy's EventsExecutor passes a TimerInfo to any
        # callable with a parameter (watchdog.check's optional ``now``)
        self.create_timer(WATCHDOG_PERIOD, self._check_inputs, clock=self._steady)
        self.diagnostics = DiagnosticsReporter(f"{self.get_fully_qualified_name()[1:]}: dynamics",
                                               self.watchdog, self.rejections)
        # (a plain publisher also in a managed node: diagnostics say its state in every state)
        self._diagnostics_publisher = Node.create_publisher(
            self, DiagnosticArray, "/diagnostics", self.qos(),
            qos_overriding_options=OVERRIDABLE)
        self.create_timer(values["diagnostics_period"], self.publish_diagnostics,
                          clock=self._steady)

    def _common_parameters(self, values: dict):
        timeout, period = float(values["input_timeout"]), float(values["warning_period"])
        base = self.base_model
        settings = ModelSettings.from_values(values, base)
        dynamics = None
        if base is not None and settings != self._settings:
            dynamics = select_dynamics(settings.applied_to(base))

        def apply():
            self.watchdog.timeout, self.rejections.period = timeout, period
            if dynamics is None:
                return
            previous, self._settings, self.dynamics = self._settings, settings, dynamics
            for name, old, new in (("payload", previous.payload, settings.payload),
                                   ("gravity", previous.gravity, settings.gravity)):
                if old != new:
                    self.get_logger().info(f"{name} now {_describe_setting(new)}")
        return apply

    # -- the robot model -----------------------------------------------------------------------
    @property
    def robot_label(self) -> str:
        """Say which robot the node computes for (or that it waits for one)."""
        model = self.base_model
        if model is not None:
            return f"'{model.name}' ({model.n} joints)"
        if self._description_subscription is not None:
            return f"(no robot yet: waiting for {DESCRIPTION_TOPIC})"
        return "(no robot: not configured)"

    def configure_robot(self):
        """
        Load the robot of ``robot_description`` (or wait for it on ``/robot_description``).

        Raises a core error or ValueError saying what is wrong; then nothing is kept.
        """
        robot = self.get_parameter("robot_description").value
        if not robot:
            if self._model_builder is None:
                self._model_builder = ModelBuilder(self, self._build_from_topic,
                                                   self._model_built)
            self._description_subscription = self.create_subscription(
                String, DESCRIPTION_TOPIC, self._on_robot_description, DESCRIPTION_QOS)
            self.get_logger().info(f"no robot model yet: waiting for a URDF on "
                                   f"{DESCRIPTION_TOPIC}; nothing is published until one arrives")
            return
        model, quirks = load_robot(robot, self.model_options)
        for quirk in quirks:
            self.get_logger().warning(f"robot_description accepted: {quirk}")
        self.use_model(model)()
        self.warm_up(self.dynamics)
        if self.dynamics.fallback_reason:
            self.get_logger().info(self.dynamics.fallback_reason)
        self.get_logger().info(f"robot '{model.name}' ({model.n} joints), "
                               f"{self.dynamics.implementation} dynamics")

    def warm_up(self, dynamics):
        """
        Call each of ``dynamics``' functions once on its model (configure, or the builder).

        The compiled kernels are loaded (compiled only where ``robot-dynamics compile`` was not
        run) and the model's constants built now, so that after activate the first joint state
        costs what every later one does (as ros2_controllers do their heavy work in
        on_configure).  A node that also scales trajectories (``WARM_UP_SCALING``) loads the
        time-optimal passes too.
        """
        started = time.perf_counter()
        model = dynamics.model
        q = np.clip(np.zeros(model.n), model.lower, model.upper)
        zero = np.zeros(model.n)
        try:
            dynamics.rnea_values(q.tolist(), zero.tolist(), zero.tolist())
            dynamics.holding_values(q.tolist(), zero.tolist())
            for x, v in ((q, zero), (q[None, :], zero[None, :])):
                dynamics.rnea(x, v, v)
                dynamics.gravity_torques(x)
                dynamics.nonlinear_effects(x, v)
                dynamics.mass_matrix(x)
            dynamics.forward_dynamics(q, zero, zero)
        except RobotDynamicsError:      # (a singular pose of an odd robot: nothing to warm)
            pass
        if self.WARM_UP_SCALING:
            topp_passes.compiled()
        self.get_logger().debug(f"warmed up in {time.perf_counter() - started:.3f} s")

    def release_robot(self):
        """Forget the robot (a managed node's cleanup): nothing is computed until configured."""
        if self._description_subscription is not None:
            self.destroy_subscription(self._description_subscription)
        self._description_text = self._description_subscription = None
        self.base_model = self.dynamics = self._settings = None
        self.joint_names, self.output_index = (), None
        self.input_order = self.joint_state_reader = None
        self._said_no_model = False
        for outputs in self._effort_outputs:
            outputs.set_order((), None)
        self.forget_model()

    def use_model(self, model, built=None):
        """
        Check ``model`` with the node's parameters; return how to make it the node's model.

        Nothing changes until the returned function is called; raises (ValueError, a core error)
        with the reason when the model does not fit (output order, per-joint parameters, the
        payload and gravity on it).  ``built``: (settings, dynamics) already built for it.
        """
        joint_names, output_index = self._output_order(model)
        settings = ModelSettings.from_values(self.params.values(), model)
        if built is not None and built[0] == settings:
            dynamics = built[1]
        else:               # (the settings changed while the model was built: build again)
            dynamics = select_dynamics(settings.applied_to(model))
        apply_node = self.check_model(model, joint_names, output_index)

        def apply():
            self.base_model, self.dynamics, self._settings = model, dynamics, settings
            self.joint_names, self.output_index = joint_names, output_index
            self._set_input_order(model)
            for outputs in self._effort_outputs:
                outputs.set_order(joint_names, output_index)
            if apply_node is not None:
                apply_node()
            # the robot's payload and gravity, where not set (the same settings: no rebuild)
            self.params.set_robot_defaults(settings.parameter_values())
        return apply

    def waiting_for_model(self) -> bool:
        """Tell whether there is no robot model yet (the first time, say so once)."""
        if self.dynamics is not None:
            return False
        if not self._said_no_model:
            self._said_no_model = True
            self.get_logger().warning("input received but no robot model yet: nothing is "
                                      "published until a valid URDF arrives on "
                                      f"{DESCRIPTION_TOPIC}")
        return True

    def require_model(self):
        """Return the current Dynamics; RobotDescriptionError when there is no model yet."""
        dynamics = self.dynamics
        if dynamics is None:
            builder = self._model_builder
            if builder is not None and builder.busy:
                raise RobotDescriptionError(f"no robot model yet: building it from the URDF "
                                            f"received on {DESCRIPTION_TOPIC}")
            raise RobotDescriptionError(f"no robot model yet: {self.robot_label}")
        return dynamics

    def _output_order(self, model):
        """Return the output joint names and ``output_index`` for ``model`` (ValueError if not)."""
        names = self._configured_names or model.joint_names
        # outputs: model vector[output_index] is in the configured order
        return tuple(names), inverse(joint_index(model.joint_names, names,
                                                 "joint_names parameter", allow_extra=False))

    def _set_input_order(self, model):
        """Match incoming name lists onto ``model``'s joints (JointOrder, JointStateReader)."""
        self.input_order = JointOrder(model.joint_names)
        self.joint_state_reader = JointStateReader(self.input_order)

    def check_model(self, model, joint_names: tuple, output_index):
        """
        Check what a node keeps per joint against a new model; return how to apply it (or None).

        Called before a model (from ``robot_description`` or ``/robot_description``) becomes the
        node's (nothing is changed yet); raise ValueError or a core error with the reason to
        refuse the model.  Nodes with per-joint state (gains, a matched reference) override it.
        """
        return None

    def forget_model(self):
        """Drop what a node keeps per model (override: e.g. the reference); at cleanup."""

    def _on_robot_description(self, msg):
        """Build a model from the description in the worker thread (model_builder)."""
        if msg.data != self._description_text:      # the same description again: nothing
            self._model_builder.submit(msg.data)

    def _build_from_topic(self, text: str):
        """Load ``text`` and build its dynamics (worker thread: nothing of the node changes)."""
        model, quirks = model_from_topic(text, self.model_options)
        settings = ModelSettings.from_values(self.params.values(), model)
        dynamics = select_dynamics(settings.applied_to(model))
        self.warm_up(dynamics)
        return model, quirks, settings, dynamics

    def _model_built(self, built):
        """Switch to a model built from ``/robot_description`` (the executor's thread)."""
        if self._description_subscription is None:
            return                              # released meanwhile (a managed node's cleanup)
        previous = self.base_model
        if len(built.text) > TRIM_AFTER_BYTES:      # a large text: its memory given back after
            self.trimmer = self.trimmer or MemoryTrimmer(self)
            self.trimmer.soon()
        error = built.error
        if error is None:
            model, quirks, settings, dynamics = built.result
            try:
                apply = self.use_model(model, (settings, dynamics))
            except Exception as exc:  # noqa: BLE001 -- a bad description must not stop the node
                error = exc.with_traceback(None)        # (no frame kept: issue 31, D1)
        if error is not None:
            kept = f"keeping robot '{previous.name}'" if previous is not None else \
                "still no robot model: nothing is published"
            self.get_logger().error(f"{DESCRIPTION_TOPIC} refused: {describe(error)[1]}; {kept}")
            return
        for quirk in quirks:
            self.get_logger().warning(f"{DESCRIPTION_TOPIC} accepted: {quirk}")
        apply()
        self._description_text = built.text
        self.get_logger().info(
            f"robot '{model.name}' ({model.n} joints) from {DESCRIPTION_TOPIC}, "
            f"{self.dynamics.implementation} dynamics"
            + (f", replacing '{previous.name}'" if previous is not None else ""))

    def destroy_node(self):
        """Stop the model builder's thread, then destroy the node."""
        builder = getattr(self, "_model_builder", None)     # (none after a configuration error)
        if builder is not None:
            builder.stop()
        return super().destroy_node()

    def _check_inputs(self):
        """Warn once for each input that just went stale (the watchdog timer)."""
        self.watchdog.check()

    def publish_diagnostics(self):
        """Publish this node's status on /diagnostics (see ``nodes.diagnostics``)."""
        status = self.diagnostics.status(self.dynamics, extra=self.diagnostic_extra())
        self._diagnostics_publisher.publish(
            diagnostic_array(self.get_clock().now().to_msg(), status))

    def diagnostic_extra(self) -> Extra:
        """Return what this node adds to its diagnostics (override; ``nodes.diagnostics``)."""
        return Extra()

    # -- inputs --------------------------------------------------------------------------------
    def qos(self, best_effort: bool = False) -> QoSProfile:
        """
        KEEP_LAST ``qos_depth``; reliable, or best effort.

        A best-effort subscription takes messages from reliable and best-effort publishers alike
        (sensor-data QoS, as joint_state_broadcaster or a bag player may use).
        """
        return QoSProfile(depth=self.qos_depth, history=HistoryPolicy.KEEP_LAST,
                          reliability=ReliabilityPolicy.BEST_EFFORT if best_effort
                          else ReliabilityPolicy.RELIABLE)

    def subscribe(self, msg_type, topic: str, callback, qos: QoSProfile | None = None,
                  raw: bool = False):
        """Subscribe with a QoS the user can override (``qos_overrides.<topic>...``)."""
        return self.create_subscription(msg_type, topic, callback, qos or self.qos(),
                                        qos_overriding_options=OVERRIDABLE, raw=raw)

    def subscribe_joint_states(self, handler):
        """
        Subscribe ``handler`` to ``joint_states`` (best effort, overridable): a torque input.

        The subscription is raw: ``handler`` gets the serialized message, which
        ``self.joint_state_reader`` reads (``messages.serialized``: at 1 kHz, taking a JointState
        as a Python object costs more CPU than the dynamics).  ``joint_states_handler`` /
        ``joint_states_subscription`` let the one-process bringup feed several nodes from one
        subscription (``nodes.bringup.share_joint_states``).
        """
        from sensor_msgs.msg import JointState
        self.joint_states_handler = handler
        self.joint_states_subscription = self.subscribe(JointState, "joint_states", handler,
                                                        self.qos(best_effort=True), raw=True)
        return self.joint_states_subscription

    def subscribe_trajectory(self, topic: str, handler, max_points: int):
        """
        Subscribe ``handler`` to a trajectory_msgs/JointTrajectory topic, sizes checked first.

        The subscription is raw: a message with more than ``max_points`` points (or more joint
        names than any message may have) is refused from its serialized bytes
        (``messages.serialized.trajectory_size``), before rclpy would turn it into Python
        objects; the others are converted and passed to ``handler`` (a topic_guard method).
        After a large message the freed memory goes back to the system (``nodes/memory.py``).
        """
        from rclpy.serialization import deserialize_message
        from trajectory_msgs.msg import JointTrajectory

        if self.trimmer is None:
            self.trimmer = MemoryTrimmer(self)

        @topic_guard
        def check(node, raw: bytes):
            if len(raw) > TRIM_AFTER_BYTES:     # its memory goes back once it is done with
                self.trimmer.soon()
            names, points = trajectory_size(raw)
            if names > MAX_MESSAGE_JOINTS or points > max_points:
                raise MessageRejected("too large", f"{topic}: {names} joint names and {points} "
                                                   f"points, more than the {MAX_MESSAGE_JOINTS} "
                                                   f"and {max_points} accepted")
            try:
                msg = deserialize_message(raw, JointTrajectory)
            except Exception as exc:  # noqa: BLE001 -- rmw's error types vary: say what it was
                raise MessageRejected("malformed", f"{topic}: {len(raw)} bytes that are not a "
                                                   f"serialized JointTrajectory ({exc})") from None
            return handler(msg)
        return self.subscribe(JointTrajectory, topic, lambda raw: check(self, raw), raw=True)

    def watch_input(self, topic: str):
        """Start watching ``topic`` for the input timeout and diagnostics."""
        return self.watchdog.watch(topic)

    def input_accepted(self, watch, started: float):
        """Record a valid message on ``watch`` handled since ``started`` (time.monotonic())."""
        if watch.stale:
            self.watchdog.resumed(watch)
        watch.accepted(started, time.monotonic())

    def reject(self, kind: str, message: str):
        """Say (throttled per ``kind``) that a message was dropped and why, and count it."""
        self.rejections.reject(kind, message)

    # -- outputs -------------------------------------------------------------------------------
    def advertise(self, msg_type, topic: str, qos: QoSProfile | None = None):
        """Create a publisher with a QoS the user can override (``qos_overrides.<topic>...``)."""
        return self.create_publisher(msg_type, topic, qos or self.qos(),
                                     qos_overriding_options=OVERRIDABLE)

    def create_effort_outputs(self, state_topic: str, command_topic: str) -> EffortOutputs:
        """Create the JointState + Float64MultiArray pair (see ``nodes.outputs``)."""
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        outputs = EffortOutputs(self.advertise(JointState, state_topic),
                                self.advertise(Float64MultiArray, command_topic),
                                self.joint_names, self.output_index)
        self._effort_outputs.append(outputs)       # re-ordered when the model is replaced
        return outputs


def _describe_setting(value) -> str:
    """Say a payload or gravity setting in the log."""
    if hasattr(value, "mass"):
        return f"{value.mass} kg at {list(value.com)} m"
    return f"{list(value)} m/s^2"


class DynamicsNode(DynamicsNodeBase, Node):
    """
    A node that loads its robot when created and serves from then on (not managed).

    A bad robot (or a parameter that does not fit it) raises at construction, which ``main()``
    reports as a configuration error.
    """

    def __init__(self, node_name: str, **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        self.configure_robot()

    def start(self) -> bool:
        """Begin (nothing to do: a plain node works from its creation); True."""
        return True


# --------------------------------------------------------------------------------- main()
# What a bad robot file, parameter value or parameter *type* (rclpy: "Trying to set parameter 'x'
# to '1' of type 'INTEGER', expecting type 'DOUBLE'") or node name raises while a node is created.
CONFIGURATION_ERRORS = (RobotDynamicsError, ValueError, ParameterException,
                        NameValidationException, InvalidParameterValueException)


def run_node(node_class, args=None) -> int:
    """
    Create ``node_class()`` and spin it until shutdown; return the exit code.

    0 after SIGINT / SIGTERM (also when they arrive while the node is still being created, and
    a second one during the clean-up: ``ros2 launch`` sends SIGINT to the process group, so each
    node gets it from the terminal and from launch), 2 for a configuration error (one line on
    stderr saying what is wrong, no traceback): at creation, or in the configure of a managed
    node started with ``autostart`` (its robot is read-only, so the error cannot go away).
    """
    rclpy.init(args=args)
    node = None
    try:
        try:
            node = node_class()
        except Exception as exc:  # noqa: BLE001 -- sorted below
            if not rclpy.ok():            # interrupted while starting: not an error
                return 0
            if not isinstance(exc, CONFIGURATION_ERRORS):
                raise
            print(f"{node_class.__name__}: configuration error: {exc}", file=sys.stderr)
            return 2
        if not node.start():          # a managed node with autostart that failed to configure
            print(f"{node_class.__name__}: configuration error: {node.configure_error}",
                  file=sys.stderr)
            return 2
        executor = make_executor(node.context, node.EXECUTOR)
        executor.add_node(node)
        spin(executor, node.context)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RCLError:
        # SIGTERM's shutdown can land while the executor builds its wait set ("the given context
        # is not valid"): that is the requested stop, not a failure.
        if rclpy.ok():
            raise
    finally:
        _clean_up(node)
    return 0


def _clean_up(node):
    """Destroy ``node`` and shut rclpy down, ignoring further Ctrl-C meanwhile."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    except KeyboardInterrupt:
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # rclpy restores Python's handler


def main_for(node_class):
    """Make the ``main()`` of ``node_class`` (``python -m robot_dynamics_ros.nodes.<kind>``)."""
    def main(args=None):
        sys.exit(run_node(node_class, args))
    return main
