"""Plumbing shared by the dynamics nodes: model loading, parameters, input checks, outputs.

A node derives from :class:`DynamicsNode`, which gives it

* ``self.dynamics`` -- a :class:`Dynamics` (the robot model and its dynamics functions, all in the
  model's joint order), built by :func:`select_dynamics`, the one place where the implementation is
  chosen.  It is replaced as a whole (never mutated) when the payload parameters change, so a
  callback that reads it once sees one consistent model.
* the common parameters:
    ``robot_description`` (read-only) a robot YAML path or a shipped robot name (config/robots);
    ``joint_names`` (read-only) the joint order of the outputs (default: the model's order);
        it must name exactly the model's joints;
    ``input_timeout`` seconds without a valid input after which the node says once that it
        stopped publishing (0 disables the check);
    ``qos_depth`` (read-only) history depth of every subscription and publisher;
    ``use_generated_model`` (read-only) use the generated straight-line model (see
        :func:`select_dynamics`);
    ``warning_period`` seconds between two warnings of the same kind about rejected inputs;
    ``payload.mass`` / ``payload.com`` (3, tool frame) / ``payload.inertia`` (6: ixx iyy izz ixy
        ixz iyz about the payload's CoM, tool frame) -- changeable at run time.
* parameter validation at run time: every node registers a hook with :meth:`add_parameter_hook`;
  a hook checks the proposed values and returns a function that applies them (or raises
  ValueError with the reason, which the caller of set_parameters receives).  Nothing is applied
  unless every hook accepts.
* input checks: :meth:`reject` logs a warning that says why a message was dropped, at most once
  per ``warning_period`` per kind of problem (counting the ones it did not print);
  :meth:`watch_input` / :meth:`input_received` feed the input watchdog.  Outputs are event-driven
  (one per valid input message), so when inputs stop, outputs stop; the watchdog (steady clock,
  independent of sim time) says so once per outage ("stopped publishing") and once when inputs
  resume.
* outputs: :meth:`create_effort_outputs` makes the JointState + Float64MultiArray pair every node
  publishes (outputs are in the ``joint_names`` order; the JointState carries the input's stamp).
* :func:`guarded`: wraps callbacks so that no exception ever reaches the executor.
* :func:`run_node` / :func:`main_for`: the ``main()`` of every node executable.
"""
from __future__ import annotations

import functools
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import rclpy
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.exceptions import NameValidationException, ParameterException
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .. import core
from ..core import RobotDescriptionError, RobotModel
from ..ros_messages import JointOrder, MessageRejected, effort_command_msg, effort_state_msg

DEFAULT_ROBOT = "puma560"
WATCHDOG_PERIOD = 0.05          # s, steady clock: how often input ages are checked


# --------------------------------------------------------------------------------- dynamics
@dataclass(frozen=True)
class Dynamics:
    """A robot model and the dynamics functions the nodes call, all in the model's joint order.

    Every function takes one configuration (n,) (or a batch (N, n)) as in ``robot_dynamics_ros.core``.
    """
    model: RobotModel
    rnea: Callable            # (q, qd, qdd) -> tau
    gravity_torques: Callable  # (q) -> g(q)
    nonlinear_effects: Callable  # (q, qd) -> n(q, qd) = C qd + friction + g
    mass_matrix: Callable     # (q) -> B(q)
    forward_dynamics: Callable  # (q, qd, tau) -> qdd
    implementation: str = "core"


IMPLEMENTATIONS = ("core", "generated")


def select_dynamics(model: RobotModel, implementation: str = "core") -> Dynamics:
    """The one place where nodes choose how dynamics are computed.

    ``"core"``: the numeric algorithms of ``robot_dynamics_ros.core``.  ``"generated"``: the
    straight-line model that ``robot-dynamics codegen`` writes (Renaud's quasi-minimal form),
    generated and compiled in memory for this exact model (payload included), 3-5x faster per call
    and equal to the core to 1e-12 (parameter ``use_generated_model``).
    """
    if implementation not in IMPLEMENTATIONS:
        raise ValueError(f"unknown dynamics implementation '{implementation}' (available: {IMPLEMENTATIONS})")
    m = model
    if implementation == "generated":
        from ..codegen import generated_model
        g = generated_model(m)
        return Dynamics(model=m, rnea=g.rnea, gravity_torques=g.gravity_torques,
                        nonlinear_effects=g.nonlinear_effects, mass_matrix=g.mass_matrix,
                        forward_dynamics=g.forward_dynamics, implementation=implementation)
    return Dynamics(
        model=m,
        rnea=lambda q, qd, qdd: core.rnea(m, q, qd, qdd),
        gravity_torques=lambda q: core.gravity_torques(m, q),
        nonlinear_effects=lambda q, qd: core.nonlinear_effects(m, q, qd),
        mass_matrix=lambda q: core.mass_matrix(m, q),
        forward_dynamics=lambda q, qd, tau: core.forward_dynamics(m, q, qd, tau),
        implementation=implementation)


def load_robot(description: str) -> RobotModel:
    """``robot_description`` parameter -> model: a YAML path or a robot shipped in config/robots."""
    if not description:
        raise RobotDescriptionError("robot_description: empty; give a robot YAML path or a shipped "
                                    f"robot name {core.shipped_robots()}")
    return RobotModel.named(description)


def payload_model(base: RobotModel, mass: float, com, inertia6) -> RobotModel:
    """``base`` with the payload given by the payload.* parameters (mass 0: no payload)."""
    com = [float(c) for c in com]
    inertia6 = [float(v) for v in inertia6]
    if len(com) != 3:
        raise ValueError(f"payload.com: expected 3 values (x, y, z in the tool frame), got {len(com)}")
    if len(inertia6) != 6:
        raise ValueError(f"payload.inertia: expected 6 values (ixx iyy izz ixy ixz iyz), got {len(inertia6)}")
    if not np.isfinite([mass, *com, *inertia6]).all():
        raise ValueError("payload: values must be finite")
    if mass < 0.0:
        raise ValueError(f"payload.mass: must be >= 0, got {mass}")
    if mass == 0.0 and base.payload is None:
        return base
    inertia = dict(zip(("ixx", "iyy", "izz", "ixy", "ixz", "iyz"), inertia6))
    try:
        return base.with_payload(mass, com, inertia)
    except (RobotDescriptionError, ValueError) as exc:
        raise ValueError(f"payload: {exc}") from None


def _file_payload(model: RobotModel):
    p = model.payload
    if not p:
        return 0.0, [0.0, 0.0, 0.0], [0.0] * 6
    inertia = p.get("inertia") or {}
    return (float(p["mass"]), [float(c) for c in p.get("com", (0.0, 0.0, 0.0))],
            [float(inertia.get(k, 0.0)) for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")])


# --------------------------------------------------------------------------------- helpers
def guarded(method):
    """Decorator for node callbacks: an unexpected exception is logged (throttled), never raised."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except MessageRejected as exc:
            self.reject(exc)
        except Exception as exc:  # noqa: BLE001 -- a callback must never take the node down
            self.reject(MessageRejected(f"internal:{method.__name__}",
                                        f"{method.__name__}: internal error {type(exc).__name__}: {exc}"))
        return None
    return wrapper


class EffortOutputs:
    """The JointState + Float64MultiArray pair of a node; efforts come in the model's order."""

    def __init__(self, node: "DynamicsNode", state_topic: str, command_topic: str):
        self._node = node
        self.state = node.create_publisher(JointState, state_topic, node.qos())
        self.command = node.create_publisher(Float64MultiArray, command_topic, node.qos())

    def publish(self, stamp, effort, position=None, velocity=None):
        """Publish ``effort`` (model order) in the configured order; JointState gets ``stamp``.

        A torque that is not finite (e.g. friction of a huge but finite velocity) is never sent:
        MessageRejected, so the callback's input is reported and nothing is published."""
        if not np.isfinite(effort).all():
            j = int(np.flatnonzero(~np.isfinite(effort))[0])
            raise MessageRejected("non-finite-output", f"torque of joint '{self._node.dynamics.model.joint_names[j]}' "
                                                       f"computed from this input is {effort[j]}")
        node = self._node
        idx = node.output_index
        effort = effort[idx]
        self.state.publish(effort_state_msg(
            node.joint_names, effort, stamp,
            None if position is None else position[idx], None if velocity is None else velocity[idx]))
        self.command.publish(effort_command_msg(effort))


class _Watch:
    """Age of the last valid message on one input; see DynamicsNode.input_received."""

    def __init__(self, topic: str):
        self.topic = topic
        self.last = None          # time.monotonic() of the last valid message, None before the first
        self.stale = False


# --------------------------------------------------------------------------------- the node
class DynamicsNode(Node):
    """Base class of the dynamics nodes (see the module docstring)."""

    def __init__(self, node_name: str, **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        self._hooks: list[Callable] = []
        self._warned: dict[str, list] = {}       # kind -> [last time, suppressed count]
        self._watches: list[_Watch] = []

        robot = self.declare_parameter(
            "robot_description", DEFAULT_ROBOT,
            parameter_descriptor("robot YAML path or shipped robot name (config/robots)", read_only=True)).value
        self.base_model = load_robot(robot)
        model = self.base_model
        names = self.declare_parameter(
            "joint_names", list(model.joint_names),
            parameter_descriptor("joint order of the outputs (exactly the model's joints)", read_only=True)).value
        self.joint_names = tuple(names)
        if sorted(self.joint_names) != sorted(model.joint_names):
            raise ValueError(f"joint_names: {list(self.joint_names)} must list each joint of robot "
                             f"'{model.name}' exactly once: {list(model.joint_names)}")
        # inputs are matched onto the model order; outputs go out in the configured order
        self.input_order = JointOrder(model.joint_names)
        self.output_index = np.array([model.joint_names.index(n) for n in self.joint_names])
        self.qos_depth = self.declare_parameter(
            "qos_depth", 10, parameter_descriptor("history depth of subscriptions and publishers", read_only=True)).value
        if self.qos_depth < 1:
            raise ValueError(f"qos_depth: must be >= 1, got {self.qos_depth}")
        self.input_timeout = self.declare_parameter(
            "input_timeout", 0.5, parameter_descriptor("s without valid input before the node stops publishing "
                                              "(0 disables)")).value
        self.warning_period = self.declare_parameter(
            "warning_period", 2.0, parameter_descriptor("s between warnings of the same kind")).value
        mass, com, inertia = _file_payload(model)
        self.declare_parameter("payload.mass", mass, parameter_descriptor("payload mass [kg] on the tool flange"))
        self.declare_parameter("payload.com", com, parameter_descriptor("payload CoM [m], tool frame"))
        self.declare_parameter("payload.inertia", inertia,
                               parameter_descriptor("payload inertia about its CoM [kg m^2], tool frame: "
                                           "ixx iyy izz ixy ixz iyz"))
        generated = self.declare_parameter(
            "use_generated_model", False,
            parameter_descriptor("compute with the generated straight-line model (robot-dynamics codegen) "
                                 "instead of the general algorithms", read_only=True)).value
        self.dynamics = select_dynamics(model, "generated" if generated else "core")
        self.get_logger().info(f"robot '{model.name}' ({model.n} joints), {self.dynamics.implementation} dynamics")
        self.add_parameter_hook(self._common_parameters)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(WATCHDOG_PERIOD, self._check_inputs, clock=self._steady)

    # -- parameters ----------------------------------------------------------------------------
    def add_parameter_hook(self, hook: Callable[[dict], Callable | None]):
        """Register ``hook(values) -> apply | None``.

        ``values`` maps every parameter name to its value *as it would be after the change*
        (changed ones overridden), so hooks can check combinations.  A hook raises ValueError to
        reject the change.  Hooks run once at start-up (a bad initial value stops the node with
        the reason) and on every set_parameters call; the first hook registration installs the
        rclpy callback.
        """
        if not self._hooks:
            self.add_on_set_parameters_callback(self._on_set_parameters)
        self._hooks.append(hook)
        values = {name: p.value for name, p in self._parameters.items()}
        apply = hook(values)
        if apply is not None:
            apply()

    def _on_set_parameters(self, params) -> SetParametersResult:
        values = {name: p.value for name, p in self._parameters.items()}
        values.update({p.name: p.value for p in params})
        try:
            appliers = [hook(values) for hook in self._hooks]
        except (ValueError, TypeError) as exc:
            self.get_logger().warning(f"parameter change rejected: {exc}")
            return SetParametersResult(successful=False, reason=str(exc))
        except Exception as exc:  # noqa: BLE001 -- a bad parameter must not crash the node
            return SetParametersResult(successful=False, reason=f"{type(exc).__name__}: {exc}")
        for apply in appliers:
            if apply is not None:
                apply()
        return SetParametersResult(successful=True)

    def _common_parameters(self, values: dict):
        timeout, period = float(values["input_timeout"]), float(values["warning_period"])
        if not np.isfinite(timeout) or timeout < 0.0:
            raise ValueError(f"input_timeout: must be >= 0 s (0 disables), got {timeout}")
        if not np.isfinite(period) or period < 0.0:
            raise ValueError(f"warning_period: must be >= 0 s, got {period}")
        payload = (float(values["payload.mass"]), values["payload.com"], values["payload.inertia"])
        current = getattr(self, "_payload", None)
        dynamics = None
        if payload != current:
            dynamics = select_dynamics(payload_model(self.base_model, *payload),
                                       self.dynamics.implementation)

        def apply():
            self.input_timeout, self.warning_period = timeout, period
            if dynamics is not None:
                self._payload = payload
                if current is not None:
                    self.get_logger().info(f"payload now {payload[0]} kg at {list(payload[1])} m")
                self.dynamics = dynamics
        return apply

    # -- inputs --------------------------------------------------------------------------------
    def qos(self) -> QoSProfile:
        return QoSProfile(depth=self.qos_depth, history=HistoryPolicy.KEEP_LAST,
                          reliability=ReliabilityPolicy.RELIABLE)

    def watch_input(self, topic: str) -> _Watch:
        """Start watching ``topic`` for the input timeout; feed it with :meth:`input_received`."""
        watch = _Watch(topic)
        self._watches.append(watch)
        return watch

    def input_received(self, watch: _Watch):
        """Record a valid message on ``watch``; says so once when inputs resume after a timeout."""
        watch.last = time.monotonic()
        if watch.stale:
            watch.stale = False
            self.get_logger().info(f"'{watch.topic}' resumed: publishing again")

    def inputs_fresh(self, watch: _Watch) -> bool:
        """True unless ``watch`` has been silent for longer than input_timeout."""
        t = self.input_timeout
        return not (t > 0.0 and watch.last is not None and time.monotonic() - watch.last > t)

    def _check_inputs(self):
        for watch in self._watches:
            if not watch.stale and not self.inputs_fresh(watch):
                watch.stale = True
                self.get_logger().warning(
                    f"no valid message on '{watch.topic}' for more than input_timeout = "
                    f"{self.input_timeout:g} s: stopped publishing until it resumes")

    def reject(self, exc: MessageRejected):
        """Warn that a message was dropped and why; at most once per warning_period per kind."""
        now = time.monotonic()
        entry = self._warned.get(exc.kind)
        if entry is not None and now - entry[0] < self.warning_period:
            entry[1] += 1
            return
        suppressed = f" ({entry[1]} more like this since the last warning)" if entry and entry[1] else ""
        self._warned[exc.kind] = [now, 0]
        self.get_logger().warning(f"rejected {exc}; nothing published from it{suppressed}")

    # -- outputs -------------------------------------------------------------------------------
    def create_effort_outputs(self, state_topic: str, command_topic: str) -> EffortOutputs:
        return EffortOutputs(self, state_topic, command_topic)


def parameter_descriptor(text: str, read_only: bool = False) -> ParameterDescriptor:
    """A ParameterDescriptor with a description (read-only ones cannot change at run time)."""
    return ParameterDescriptor(description=text, read_only=read_only)


# --------------------------------------------------------------------------------- main()
# What a bad robot file, parameter value or parameter *type* (rclpy: "Trying to set parameter 'x'
# to '1' of type 'INTEGER', expecting type 'DOUBLE'") or node name raises while a node is created.
CONFIGURATION_ERRORS = (RobotDescriptionError, ValueError, ParameterException, NameValidationException)


def run_node(node_class, args=None) -> int:
    """Create ``node_class()`` and spin it until shutdown; a configuration error exits with 2."""
    rclpy.init(args=args)
    node = None
    try:
        try:
            node = node_class()
        except CONFIGURATION_ERRORS as exc:
            print(f"{node_class.__name__}: configuration error: {exc}", file=sys.stderr)
            return 2
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


def main_for(node_class):
    """A console-script ``main()`` for ``node_class``."""
    def main(args=None):
        sys.exit(run_node(node_class, args))
    return main
