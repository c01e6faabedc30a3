"""
external_torque_observer_node: joint_states -> external joint torques, the tool wrench, contact.

A managed (lifecycle) node (``nodes/managed.py``): configure loads the robot, activate starts
publishing, deactivate stops it and forgets the observer's state (it restarts from zero with the
next message once active again).  For every valid ``joint_states`` message while active (position,
velocity, and with ``effort_source: joint_states`` the effort as the measured or applied joint
torque; with ``command`` the latest std_msgs/Float64MultiArray on ``effort_command_topic``
instead), the generalized-momentum residual r of ``core.observer.MomentumObserver`` (De Luca and
Mattone, 2005; doc/observer.md), the robot file's friction subtracted, is published:

* ``external_effort`` (sensor_msgs/JointState): r per joint as effort, the input's stamp;
* ``external_wrench`` (geometry_msgs/WrenchStamped): the wrench at the tool, tool axes, frame
  ``tool_frame``, with J^T F = r by damped least squares (``core.observer.wrench``);
* ``contact`` (std_msgs/Bool): per-joint thresholds with hysteresis (``core.observer.contact``),
  every message; each rise is also logged (warning) with its stamp and the joints above their
  thresholds;
* diagnostics: contact, how often it rose, the largest |r_i| / threshold since the last report,
  restarts after gaps longer than ``max_interval``.

Time is the header stamp, as integer nanoseconds since the first message (so 1 ms intervals of
wall-clock stamps are exact), monotonic per source: a stamp not after the previous one is
refused.  A stamp that cannot be a sample's time is refused on its own, before it could become
"the previous one": negative, or ahead of the node's clock by more than
``INPUT_BOUNDS["stamp ahead"]`` (1 s; not checked while the node's clock reads 0, a simulated
clock before its first /clock).  Should the stamps still go back (a source restarted, a bag
looped, a stamp ahead that got in), the observer re-anchors once the refused stamps span more
than ``max_interval``: it restarts from zero at the latest one instead of refusing for ever.
Every input is bounded as joint states are (``messages.checks.INPUT_BOUNDS``: position,
velocity, effort and the command, 1e6), the gains by their parameter's bounds; a residual or
wrench that is still not finite resets the observer with one error in the log, and is never
published.  While the observer cannot estimate (stamps refused, a non-finite residual), its
diagnostics are ERROR.  A change of the
robot (payload, gravity, /robot_description) or of the observer's parameters restarts it.
Parameters: tables ``common``, ``managed``, ``external_torque_observer`` (doc/parameters.md).
"""
from __future__ import annotations

import math
import time

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray

from ..core.observer import ContactDetector, MomentumObserver, ObserverOptions
from ..core.observer.wrench import wrench_values
from ..messages.conversions import (INPUT_BOUNDS, MessageRejected, check_joint_values,
                                    joint_state_effort, joint_state_values)
from ..messages.serialized import JointStateWriter
from .base import main_for
from .diagnostics import Extra
from .errors import topic_guard
from .managed import ManagedDynamicsNode

THRESHOLD_SHARE = 0.05          # default contact threshold: this share of the effort limit


class ObserverSetup:
    """The observer, contact detector and wrench settings for one Dynamics (model order)."""

    def __init__(self, dynamics, options: ObserverOptions, thresholds, release_ratio: float,
                 damping: float, singular_value: float):
        self.dynamics = dynamics
        self.observer = MomentumObserver(dynamics.model, options,
                                         gravity=dynamics.holding_values)
        self.detector = ContactDetector(thresholds, release_ratio)
        self.damping, self.singular_value = damping, singular_value


def _per_joint(values, joint_names, output_index, name: str) -> np.ndarray:
    """Return a parameter of one value or one per joint (joint_names order) in model order."""
    values = np.asarray(values, dtype=float)
    n = len(joint_names)
    if values.size == 1:
        return np.full(n, float(values[0]))
    if values.size != n:
        raise ValueError(f"{name}: expected 1 or {n} values (one per joint in "
                         f"{list(joint_names)}), got {values.size}")
    model_order = np.empty(n)
    model_order[output_index] = values
    return model_order


def settings_for(values: dict, model, joint_names, output_index) -> dict:
    """Check the observer's parameters against a robot; return ObserverSetup's arguments."""
    gains = _per_joint(values["gains"], joint_names, output_index, "gains")
    command = values["effort_source"] == "command"
    options = ObserverOptions(tuple(gains), "interval" if command else values["effort_timing"],
                              values["subtract_friction"], values["static_velocity"],
                              values["max_interval"]).checked(model)
    given = values["contact_thresholds"]
    if len(given):
        thresholds = _per_joint(given, joint_names, output_index, "contact_thresholds")
    else:
        limits = np.asarray(model.effort_limit, dtype=float)
        unknown = [name for name, limit in zip(model.joint_names, limits)
                   if not (np.isfinite(limit) and limit > 0.0)]
        if unknown:
            raise ValueError(f"contact_thresholds: the effort limits of {unknown} are unknown, "
                             f"so the default ({THRESHOLD_SHARE:.0%} of each limit) cannot be "
                             "used; give the thresholds")
        thresholds = THRESHOLD_SHARE * limits
    if not (thresholds > 0.0).all():
        raise ValueError("contact_thresholds: every threshold must be > 0")
    return dict(options=options, thresholds=thresholds, release_ratio=values["release_ratio"],
                damping=values["wrench_damping"], singular_value=values["wrench_singular_value"])


class ExternalTorqueObserverNode(ManagedDynamicsNode):
    """The external-torque observer for every joint_states message (see the module docstring)."""

    PARAMETER_TABLES = ManagedDynamicsNode.PARAMETER_TABLES + ("external_torque_observer",)

    def __init__(self, node_name: str = "external_torque_observer", **node_kwargs):
        self.setup: ObserverSetup | None = None
        self._observer_settings = None          # settings_for(...) of the parameters
        self._command = None                    # the latest command, model order
        self._origin_ns = None                  # header stamp of the first message [ns]
        self._last_ns = None                    # header stamp of the latest accepted one [ns]
        self._refused_span = None               # (min, max) stamps refused in a row [ns]
        self._cannot_estimate = ""              # why not, while it cannot (diagnostics ERROR)
        self.reanchors = 0                      # re-anchored after refused stamps
        self.resets = 0                         # reset after a non-finite residual
        self._worst_ratio = 0.0                 # largest |r_i| / h_i since the last report
        self._wrench_msg, self._contact_msg = WrenchStamped(), Bool()
        self._effort_msg, self._effort_writer = JointState(), None
        super().__init__(node_name, **node_kwargs)
        values = self.params.values()
        self.effort_source = values["effort_source"]
        self.tool_frame = values["tool_frame"] or self.tip_link or "tool"
        self._wrench_msg.header.frame_id = self.tool_frame
        self.params.add_hook(self._observer_parameters)
        self.effort_output = self.advertise(JointState, "external_effort")
        self.wrench_output = self.advertise(WrenchStamped, "external_wrench")
        self.contact_output = self.advertise(Bool, "contact")
        self.joint_states_watch = self.watch_input("joint_states")
        self.subscribe_joint_states(self.on_joint_states)
        self.command_topic = values["effort_command_topic"]
        if self.effort_source == "command":
            self.command_watch = self.watch_input(self.command_topic)
            self.subscribe(Float64MultiArray, self.command_topic, self.on_command)

    # -- parameters and the robot --------------------------------------------------------------
    def _observer_parameters(self, values: dict):
        dynamics = self.dynamics
        if dynamics is None:
            return None                 # checked with the robot at configure
        settings = settings_for(values, dynamics.model, self.joint_names, self.output_index)

        def apply():
            self._observer_settings, self.setup = settings, None    # rebuilt when used
        return apply

    def check_model(self, model, joint_names, output_index):
        """Refuse a robot the observer's parameters do not fit (count, unknown limits)."""
        settings = settings_for(self.params.values(), model, joint_names, output_index)

        def apply():
            self._observer_settings, self.setup, self._command = settings, None, None
            self._effort_writer = JointStateWriter.create(joint_names, ("effort",))
            self._effort_msg.name = list(joint_names)
        return apply

    def forget_model(self):
        """Drop the observer with the robot."""
        self.setup, self._observer_settings, self._command = None, None, None

    def _current_setup(self) -> ObserverSetup:
        """Return the observer of the current Dynamics (new payload or gravity: new observer)."""
        dynamics, setup = self.dynamics, self.setup
        if setup is None or setup.dynamics is not dynamics:
            if self._observer_settings is None:
                self._observer_settings = settings_for(self.params.values(), dynamics.model,
                                                       self.joint_names, self.output_index)
            if setup is not None:
                self.get_logger().info("robot or parameters changed: the observer restarts")
            setup = self.setup = ObserverSetup(dynamics, **self._observer_settings)
            self._origin_ns = self._last_ns = self._refused_span = None
        return setup

    # -- the lifecycle -------------------------------------------------------------------------
    def activated(self):
        """Start afresh: the observer begins at the first message after activation."""
        self.setup, self._origin_ns, self._command = None, None, None
        self._last_ns = self._refused_span = None
        self._cannot_estimate = ""

    # -- inputs --------------------------------------------------------------------------------
    @topic_guard
    def on_command(self, msg: Float64MultiArray):
        if not self.accepts_input(self.command_topic):
            return
        started = time.monotonic()
        n = len(self.joint_names)
        data = list(msg.data)
        if len(data) != n:
            raise MessageRejected("length", f"{self.command_topic}: expected {n} efforts (one "
                                            f"per joint in {list(self.joint_names)[:8]}), got "
                                            f"{len(data)}")
        # the bound of a joint state's effort (INPUT_BOUNDS): 1e308 is no command (issue 31, O2)
        check_joint_values(np.asarray(data, dtype=float), "effort", self.joint_names,
                           self.command_topic)
        model_order = [0.0] * n
        for value, i in zip(data, self.output_index):
            model_order[int(i)] = value
        self._command = model_order
        self.input_accepted(self.command_watch, started)

    def _state(self, msg):
        """Return (stamp ns, stamp (sec, nanosec), q, qd, tau) of a joint_states message."""
        if self.effort_source == "command":
            state = self.joint_state_reader.read(msg, need_velocity=True)
            if self._command is None:
                raise MessageRejected("no command", f"joint_states: no message on "
                                                    f"{self.command_topic} yet")
            sec, nanosec = state.stamp
            return sec * 1_000_000_000 + nanosec, state.stamp, state.q, state.qd, self._command
        if isinstance(msg, (bytes, bytearray)):
            try:
                msg = deserialize_message(msg, JointState)
            except Exception as exc:  # noqa: BLE001 -- rmw's error types vary
                raise MessageRejected("malformed", f"joint_states: {len(msg)} bytes that are "
                                                   f"not a serialized JointState ({exc})") \
                    from None
        q, qd = joint_state_values(msg, self.input_order, need_velocity=True)
        tau = joint_state_effort(msg, self.input_order)
        stamp = msg.header.stamp
        return (stamp.sec * 1_000_000_000 + stamp.nanosec, (stamp.sec, stamp.nanosec), q, qd,
                tau)

    @topic_guard
    def on_joint_states(self, msg: JointState | bytes):
        if not self.accepts_input("joint_states"):
            return
        started = time.monotonic()
        ns, stamp, q, qd, tau = self._state(msg)
        setup = self._current_setup()
        observer = setup.observer
        self._check_stamp(ns, stamp, observer.options.max_interval)
        if self._origin_ns is None:
            self._origin_ns = ns
        restarts = observer.restarts
        r = observer.update((ns - self._origin_ns) * 1e-9, q, qd, tau)
        self._last_ns, self._refused_span = ns, None
        if observer.restarts != restarts:
            self.get_logger().warning(f"joint_states: more than max_interval = "
                                      f"{observer.options.max_interval:g} s since the previous "
                                      "message: the observer restarts from zero",
                                      throttle_duration_sec=2.0)
        wrench = wrench_values(setup.dynamics.model, q, r, setup.damping, setup.singular_value)
        if not math.isfinite(sum(r) + sum(wrench)):
            self._reset_non_finite(setup, stamp)
            return
        detector = setup.detector
        was = detector.contact
        contact = detector.update(r)
        if contact and not was:
            self._say_contact(stamp, r, detector)
        ratio = max(abs(x) / h for x, h in zip(r, setup.detector.thresholds))
        self._worst_ratio = max(self._worst_ratio, ratio)
        self._cannot_estimate = ""
        self._publish(stamp, r, wrench, contact)
        self.input_accepted(self.joint_states_watch, started)

    def _check_stamp(self, ns: int, stamp, max_interval: float):
        """
        Refuse a stamp that is no sample time, or not after the previous one (module docstring).

        A run of refused stamps spanning more than ``max_interval`` re-anchors the observer at
        the latest (returns: the message is its first sample).
        """
        text = f"{stamp[0]}.{stamp[1]:09d} s"
        if stamp[0] < 0:
            self._cannot_estimate = "joint_states stamps refused (negative)"
            raise MessageRejected("stamp", f"joint_states: stamp {text} is negative")
        now = self.get_clock().now().nanoseconds
        ahead = INPUT_BOUNDS["stamp ahead"]
        if now > 0 and ns - now > ahead * 1e9:
            self._cannot_estimate = "joint_states stamps refused (ahead of the clock)"
            raise MessageRejected("stamp", f"joint_states: stamp {text} is {(ns - now) * 1e-9:.6g}"
                                           f" s ahead of this node's clock (more than {ahead:g} "
                                           "s): no sample's time")
        if self._last_ns is None or ns > self._last_ns:
            return
        low, high = self._refused_span or (ns, ns)
        low, high = min(low, ns), max(high, ns)
        if (high - low) * 1e-9 > max_interval:
            self.reanchors += 1
            self.get_logger().warning(f"joint_states: stamps not after the previous sample's for "
                                      f"more than max_interval = {max_interval:g} s: the "
                                      f"observer restarts from zero at stamp {text}")
            self.setup.observer.reset()
            self.setup.detector.contact = False
            self._origin_ns = self._last_ns = self._refused_span = None
            return
        self._refused_span = (low, high)
        self._cannot_estimate = "joint_states stamps refused (not after the previous sample's)"
        previous = self._last_ns
        raise MessageRejected("stamp", f"joint_states: stamp {text} is not after the previous "
                                       f"sample's ({previous // 1_000_000_000}."
                                       f"{previous % 1_000_000_000:09d} s)")

    def _reset_non_finite(self, setup: ObserverSetup, stamp):
        """Reset the observer after a residual or wrench that is not finite (said once)."""
        setup.observer.reset()
        setup.detector.contact = False
        self._origin_ns = self._last_ns = self._refused_span = None
        self.resets += 1
        if not self._cannot_estimate.startswith("residual"):
            self.get_logger().error(f"joint_states at stamp {stamp[0]}.{stamp[1]:09d} s: the "
                                    "residual is not finite: the observer restarts from zero "
                                    "(nothing published)")
        self._cannot_estimate = "residual not finite: the observer restarted"

    def _say_contact(self, stamp, r: list, detector: ContactDetector):
        """Log a rising contact: the message's stamp and the joints above their thresholds."""
        names, thresholds = self.dynamics.model.joint_names, detector.thresholds
        joints = ", ".join(f"'{names[i]}' {r[i]:.3g} (threshold {thresholds[i]:.3g})"
                           for i in detector.above(r))
        self.get_logger().warning(f"contact at stamp {stamp[0]}.{stamp[1]:09d} s: external torque "
                                  f"of {joints}")

    # -- outputs -------------------------------------------------------------------------------
    def _publish(self, stamp, r: list, wrench: list, contact: bool):
        index = self.output_index
        effort = [r[int(i)] for i in index]
        if self._effort_writer is not None:
            self.effort_output.publish(self._effort_writer.serialize(stamp, effort=effort))
        else:
            msg = self._effort_msg
            msg.header.stamp.sec, msg.header.stamp.nanosec = stamp
            msg.effort = effort
            self.effort_output.publish(msg)
        msg = self._wrench_msg
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp
        f, m = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, m.x, m.y, m.z = wrench
        self.wrench_output.publish(msg)
        self._contact_msg.data = bool(contact)
        self.contact_output.publish(self._contact_msg)

    def diagnostic_extra(self) -> Extra:
        """Add contact, its rises, the largest |r_i| / threshold and the restarts."""
        extra = super().diagnostic_extra()
        setup = self.setup
        if setup is None:
            return extra
        ratio, self._worst_ratio = self._worst_ratio, 0.0
        detector = setup.detector
        values = [("contact", detector.contact), ("contact rises", detector.rises),
                  ("largest |residual| / threshold since last report", ratio),
                  ("observer restarts (gaps > max_interval)", setup.observer.restarts),
                  ("observer re-anchored (stamps refused for > max_interval)", self.reanchors),
                  ("observer reset (residual not finite)", self.resets)]
        problems = ["contact"] if detector.contact else []
        errors = [f"cannot estimate: {self._cannot_estimate}"] if self._cannot_estimate and \
            self.active else []
        return Extra(extra.values + values, extra.problems + problems, extra.not_active,
                     errors)


main = main_for(ExternalTorqueObserverNode)

if __name__ == "__main__":
    main()
