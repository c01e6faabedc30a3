"""
The base class of the dynamics nodes, and the ``main()`` of every node executable.

A node derives from :class:`DynamicsNode`, which gives it

* ``self.dynamics``: a :class:`~robot_dynamics_ros.nodes.dynamics.Dynamics` (model and dynamics
  functions in the model's joint order), replaced as a whole when the payload changes;
* ``self.parameters``: a :class:`~robot_dynamics_ros.nodes.parameters.NodeParameters` with the
  common parameters declared (below); a node declares its own with ``self.parameters.declare``
  and validates them with ``self.params.add_hook``;
* the joint orders: ``input_order`` (incoming name lists matched onto the model's order) and
  ``joint_names`` / ``output_index`` (the configured output order);
* inputs: :meth:`subscribe` (QoS overridable through ``qos_overrides.<topic>.subscription.*``),
  :meth:`subscribe_joint_states` for the measured state that triggers the torque outputs,
  :meth:`watch_input` for the input timeout, :meth:`reject` for dropped messages (wrap
  callbacks in :func:`~robot_dynamics_ros.nodes.errors.topic_guard`);
* outputs: :meth:`advertise` (QoS overridable too), :meth:`create_effort_outputs`.

Common parameters:
  ``robot_description`` (read-only) a shipped robot name (config/robots), a robot YAML path, a
      URDF path or URDF XML text (robot_state_publisher's parameter); empty: the node subscribes
      to ``/robot_description`` (std_msgs/String, reliable, transient local), starts computing
      when a valid URDF arrives and replaces its model as a whole with each later valid one (an
      invalid one is refused with the reason and the old model kept); until a model exists
      nothing is published (said once) and services answer ``success: false``;
  ``root_link``, ``tip_link`` (read-only) the chain of a URDF (empty: the URDF's root link, and
      the end of its only chain; see doc/urdf.md); a model from the topic is built in
      a worker thread (``model_builder``): outputs continue with the old model until it is ready;
  ``strict_inertia`` (read-only) refuse physically inconsistent link inertias (default: accept
      each with a warning in the log);
  ``xacro_arguments`` (read-only) ``name:=value ...`` for a xacro ``robot_description`` path
      (never applied to the topic: xacro text from the graph is refused, not run);
  ``joint_names`` (read-only) the joint order of the outputs (default: the model's order), which
      must name exactly the model's joints;
  ``input_timeout`` s without a valid input after which the node says once that it stopped
      publishing (0 disables the check);
  ``qos_depth`` (read-only) history depth of every subscription and publisher;
  ``use_generated_model`` (read-only) compute with the generated straight-line model (default)
      or the core's algorithms (see ``nodes.dynamics``);
  ``warning_period`` s between two warnings of the same kind about rejected inputs;
  ``diagnostics_period`` (read-only) s between two reports on ``/diagnostics``;
  ``payload.mass`` / ``payload.com`` (3, tool frame) / ``payload.inertia`` (6: ixx iyy izz ixy
      ixz iyz about the payload's CoM, tool frame), changeable at run time.
"""
from __future__ import annotations

import signal
import sys
import time

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
from ..core.joint_names import inverse
from ..ros_messages import JointOrder
from ..serialized_messages import JointStateReader
from .diagnostics import DiagnosticsReporter, diagnostic_array
from .dynamics import ModelOptions, Payload, load_robot, model_from_topic, select_dynamics
from .errors import describe
from .executor import make_executor, spin
from .model_builder import ModelBuilder
from .outputs import EffortOutputs
from .parameters import NodeParameters
from .watchdog import RejectionLog, Watchdog

WATCHDOG_PERIOD = 0.05          # s, steady clock: how often input ages are checked
MAX_PERIOD = 3600.0             # s: upper bound of the time parameters
MAX_QOS_DEPTH = 1000
MAX_PAYLOAD_MASS = 1000.0       # kg
MAX_PAYLOAD_COM = 10.0          # m from the tool frame's origin
MAX_PAYLOAD_INERTIA = 1000.0    # kg m^2
# Every subscription and publisher: QoS overridable by parameters (rclpy's QoS overriding options).
OVERRIDABLE = QoSOverridingOptions.with_default_policies()
# What robot_state_publisher publishes the URDF on (its QoS: reliable, transient local, depth 1).
DESCRIPTION_TOPIC = "/robot_description"
DESCRIPTION_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                             reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)


class DynamicsNode(Node):
    """Base class of the dynamics nodes (see the module docstring)."""

    def __init__(self, node_name: str, **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        self.params = NodeParameters(self)
        declare = self.params.declare
        logger = self.get_logger()
        self.watchdog = Watchdog(logger)
        self.rejections = RejectionLog(logger)

        robot = declare("robot_description", "puma560",
                        "shipped robot name, robot YAML or URDF path, or URDF XML text; empty: "
                        f"subscribe to {DESCRIPTION_TOPIC}", read_only=True)
        self.root_link = declare("root_link", "", "URDF: the chain's first link, the world frame "
                                 "(empty: the URDF's root link)", read_only=True)
        self.tip_link = declare("tip_link", "", "URDF: the chain's last link, the tool frame "
                                "(empty: the end of the URDF's only chain)", read_only=True)
        strict = declare("strict_inertia", False, "refuse physically inconsistent link inertias "
                         "(default: accept each with a warning, as Pinocchio does)",
                         read_only=True)
        xacro = declare("xacro_arguments", "", "a xacro robot_description's arguments, "
                        "'name:=value name2:=value2' as on xacro's command line", read_only=True)
        self.model_options = ModelOptions(self.root_link, self.tip_link, strict,
                                          tuple(xacro.split()))
        model = None
        if robot:
            model, quirks = load_robot(robot, self.model_options)
            for quirk in quirks:
                logger.warning(f"robot_description accepted: {quirk}")
        self.base_model = model
        names = declare("joint_names", list(model.joint_names) if model else [],
                        "joint order of the outputs (exactly the model's joints; empty: the "
                        "model's order)", read_only=True)
        self._configured_names = tuple(names)
        self._effort_outputs: list[EffortOutputs] = []
        self._said_no_model = False
        self.joint_names, self.output_index = (), None
        self.input_order = self.joint_state_reader = None
        if model is not None:
            self.joint_names, self.output_index = self._output_order(model)
            self._set_input_order(model)
        self.qos_depth = declare("qos_depth", 10, "history depth of subscriptions and publishers",
                                 read_only=True, bounds=(1, MAX_QOS_DEPTH))
        declare("input_timeout", 0.5, "s without valid input before the node says it stopped "
                "publishing (0 disables)", bounds=(0.0, MAX_PERIOD))
        declare("warning_period", 2.0, "s between warnings of the same kind",
                bounds=(0.0, MAX_PERIOD))
        file_payload = Payload.of_model(model)          # zeros until a model exists
        declare("payload.mass", file_payload.mass, "payload mass [kg] on the tool flange",
                bounds=(0.0, MAX_PAYLOAD_MASS))
        declare("payload.com", list(file_payload.com), "payload CoM [m], tool frame",
                bounds=(-MAX_PAYLOAD_COM, MAX_PAYLOAD_COM))
        declare("payload.inertia", list(file_payload.inertia),
                "payload inertia about its CoM [kg m^2], tool frame: ixx iyy izz ixy ixz iyz",
                bounds=(-MAX_PAYLOAD_INERTIA, MAX_PAYLOAD_INERTIA))
        generated = declare("use_generated_model", True,
                            "compute with the generated straight-line model (robot-dynamics "
                            "codegen) instead of the general algorithms", read_only=True)
        self._implementation = "generated" if generated else "core"
        self._payload = None
        self.dynamics = None
        self.params.add_hook(self._common_parameters)
        self._description_text = None
        self._model_builder = None
        if model is None:
            self._model_builder = ModelBuilder(self, self._build_from_topic, self._model_built)
            self.create_subscription(String, DESCRIPTION_TOPIC, self._on_robot_description,
                                     DESCRIPTION_QOS)
            logger.info(f"no robot model yet: waiting for a URDF on {DESCRIPTION_TOPIC}; nothing "
                        "is published until one arrives")
        else:
            if self.dynamics.fallback_reason:
                logger.info(self.dynamics.fallback_reason)
            logger.info(f"robot '{model.name}' ({model.n} joints), "
                        f"{self.dynamics.implementation} dynamics")
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        # timer callbacks take no argument: rclpy's EventsExecutor passes a TimerInfo to any
        # callable with a parameter (watchdog.check's optional ``now``)
        self.create_timer(WATCHDOG_PERIOD, self._check_inputs, clock=self._steady)
        period = declare("diagnostics_period", 1.0, "s between two reports on /diagnostics",
                         read_only=True, bounds=(0.1, 60.0))
        self.diagnostics = DiagnosticsReporter(f"{self.get_fully_qualified_name()[1:]}: dynamics",
                                               self.watchdog, self.rejections)
        self._diagnostics_publisher = self.advertise(DiagnosticArray, "/diagnostics")
        self.create_timer(period, self.publish_diagnostics, clock=self._steady)

    def _common_parameters(self, values: dict):
        timeout, period = float(values["input_timeout"]), float(values["warning_period"])
        payload = Payload(float(values["payload.mass"]), tuple(values["payload.com"]),
                          tuple(values["payload.inertia"]))
        previous = self._payload
        dynamics = None
        if payload != previous and self.base_model is not None:
            dynamics = select_dynamics(payload.applied_to(self.base_model), self._implementation)

        def apply():
            self.watchdog.timeout, self.rejections.period = timeout, period
            if dynamics is not None:
                self.dynamics = dynamics
            if payload != previous:
                self._payload = payload
                if previous is not None:
                    self.get_logger().info(
                        f"payload now {payload.mass} kg at {list(payload.com)} m")
        return apply

    # -- the robot model -----------------------------------------------------------------------
    @property
    def robot_label(self) -> str:
        """Say which robot the node computes for (or that it waits for one)."""
        model = self.base_model
        if model is None:
            return f"(no robot yet: waiting for {DESCRIPTION_TOPIC})"
        return f"'{model.name}' ({model.n} joints)"

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
            raise RobotDescriptionError(f"no robot model yet: waiting for a URDF on "
                                        f"{DESCRIPTION_TOPIC}")
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

        Called before a model from ``/robot_description`` replaces the current one (nothing is
        changed yet); raise ValueError or a core error with the reason to refuse the model.
        Nodes with per-joint state (gains, a matched reference) override it.
        """
        return None

    def _on_robot_description(self, msg):
        """Build a model from the description in the worker thread (model_builder)."""
        if msg.data != self._description_text:      # the same description again: nothing
            self._model_builder.submit(msg.data)

    def _build_from_topic(self, text: str):
        """Load ``text`` and build its dynamics (worker thread: nothing of the node changes)."""
        payload = self._payload
        model, quirks = model_from_topic(text, self.model_options)
        return model, quirks, payload, select_dynamics(payload.applied_to(model),
                                                       self._implementation)

    def _model_built(self, built):
        """Switch to a model built from ``/robot_description`` (the executor's thread)."""
        previous = self.base_model
        try:
            if built.error is not None:
                raise built.error
            model, quirks, payload, dynamics = built.result
            if payload != self._payload:        # changed meanwhile: the current one counts
                dynamics = select_dynamics(self._payload.applied_to(model), self._implementation)
            joint_names, output_index = self._output_order(model)
            apply_node = self.check_model(model, joint_names, output_index)
        except Exception as exc:  # noqa: BLE001 -- a bad description must not take the node down
            kept = f"keeping robot '{previous.name}'" if previous is not None else \
                "still no robot model: nothing is published"
            self.get_logger().error(f"{DESCRIPTION_TOPIC} refused: {describe(exc)[1]}; {kept}")
            return
        for quirk in quirks:
            self.get_logger().warning(f"{DESCRIPTION_TOPIC} accepted: {quirk}")
        self.base_model, self.dynamics = model, dynamics
        self.joint_names, self.output_index = joint_names, output_index
        self._set_input_order(model)
        for outputs in self._effort_outputs:
            outputs.set_order(joint_names, output_index)
        if apply_node is not None:
            apply_node()
        self._description_text = built.text
        self.get_logger().info(
            f"robot '{model.name}' ({model.n} joints) from {DESCRIPTION_TOPIC}, "
            f"{dynamics.implementation} dynamics"
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
        status = self.diagnostics.status(self.dynamics)
        self._diagnostics_publisher.publish(
            diagnostic_array(self.get_clock().now().to_msg(), status))

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
        ``self.joint_state_reader`` reads (``serialized_messages``: at 1 kHz, taking a JointState
        as a Python object costs more CPU than the dynamics).  ``joint_states_handler`` /
        ``joint_states_subscription`` let the one-process bringup feed several nodes from one
        subscription (``bringup.share_joint_states``).
        """
        from sensor_msgs.msg import JointState
        self.joint_states_handler = handler
        self.joint_states_subscription = self.subscribe(JointState, "joint_states", handler,
                                                        self.qos(best_effort=True), raw=True)
        return self.joint_states_subscription

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
    stderr saying what is wrong, no traceback).
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
        executor = make_executor(node.context)
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
