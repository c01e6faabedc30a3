"""
dynamics_simulator_node: the robot simulated by forward dynamics, driven by effort commands.

The stand-in for a robot with an effort interface (ros2_control's JointGroupEffortController and
joint_state_broadcaster): it integrates the model's forward dynamics (``core.Simulator``: RK4 by
default, rotors and friction, joint limits as inelastic stops, torques saturated at the effort
limits and counted) and publishes what the robot's driver would.

Subscriptions::

  ``effort_command_topics`` (default ``[effort_command]``): std_msgs/Float64MultiArray, one
      value per joint in the ``joint_names`` order (the layout of forward_command_controller /
      JointGroupEffortController); add ``gravity_effort_command`` to add the gravity
      compensation node's output, as a stack that sums feedforward and gravity does.
  ``effort_state_topic`` (default none): a sensor_msgs/JointState whose effort is matched by
      name, e.g. ``feedforward_effort``.
  Every input's latest value is held until a newer one arrives; the torque applied is their sum.
  An input older than ``command_timeout`` seconds of simulated time counts as zero, and the node
  says so once (and once when it resumes).

Publications::

  ``joint_states`` (sensor_msgs/JointState): position, velocity and the applied (saturated)
      effort in the ``joint_names`` order at ``publish_rate`` Hz of simulated time, stamped with
      the simulated time, with optional Gaussian measurement noise (``noise.position``,
      ``noise.velocity``, ``noise.effort``: standard deviations; ``noise.seed``); the effort as a
      sensor reads it: plus the robot file's torque offset (``friction.offset``), which is no
      torque on the simulated robot.
  ``/clock`` (rosgraph_msgs/Clock) when ``publish_clock``: the simulated time, published before
      each joint_states, so the other nodes run with ``use_sim_time`` on the simulated clock.

Timing: ``rate`` Hz integration steps of 1/rate s; ``real_time_factor`` simulated seconds per
wall-clock second (1: real time; 0: as fast as possible, which needs ``publish_clock``).  With
``lockstep`` the simulator waits after each joint_states (up to ``command_timeout`` wall-clock
seconds) for a new message on every effort command topic before integrating on, so a controller
that answers every state closes the loop without delay jitter, at any speed.  It starts once the
nodes that publish the commands also read joint_states (at most 15 s), and then only once every
command input has answered the initial state: that state (time 0) is published again every
0.25 s until each has (DDS matches the two ends of a topic separately, and a state or an answer
sent before the other end has matched is lost: the first step was then taken without its
command, and the controller started its reference one step late); answers to the repeated
initial state are let through before time advances, so that each later state's command is the
answer to that state.

External forces, to simulate a collision: ``applied_wrench`` (geometry_msgs/WrenchStamped) is a
wrench applied to the robot at the tool point (force, and moment about that point): in the tool's
axes when ``header.frame_id`` is empty or ``tool_frame`` (it turns with the tool), in the world's
when it is ``world_frame``; ``applied_joint_torque`` (sensor_msgs/JointState, effort matched by
name) an external torque per joint.  (Not ``external_wrench``: in a shared namespace that is the
external-torque observer's estimate, which would be fed back as a force.)  Each is held until the
next message (all zeros removes it); a wrench whose ``header.stamp`` lies ahead of the simulated
time (on the joint states' clock) acts from that time on: a collision scheduled in simulated
time, whatever the transport's delay; a zero or past stamp acts at once.  Every step adds
J(q)^T F (at the step's start) and the joint torque to the dynamics, after the effort saturation
and outside the published effort, which stays the motors' (what the observer node estimates is
then exactly the difference).

Every input is bounded (``messages.checks.INPUT_BOUNDS``, the table of every node): an
effort or applied joint torque of more than 1e6 N m, a force or moment of more than 1e6 N or
N m, or a value that is not finite, is refused by name and the previous one kept.  Should the
simulation diverge all the same (a step whose state is not finite or beyond 1e6 rad or rad/s:
a bounded but huge wrench), the robot is put back in the state of the last joint_states and
held there (time stands still; that state keeps being published), the log says so once
and ``/diagnostics`` is ERROR; every period the simulator tries again with the inputs of the
moment, so it runs on from there as soon as they no longer make it diverge.

With ``hold_until_command`` the robot is held at its initial state (simulated time does not
advance; joint_states and /clock keep being published) until every effort input has delivered a
message: the brakes of a real arm, released when its controller is up.

Initial state: ``initial_position`` / ``initial_velocity`` (``joint_names`` order).
``integrator``: rk4, semi_implicit_euler or solve_ivp.  ``compiled`` (true): each step one call
into the core's compiled kernels (``core/simulation/dynamics.py``; the same machine code for
every robot, loaded while the node starts, before its loop publishes the first joint_states and
/clock), or plain Python if numba does not work (warned; false chooses it).  The payload
parameters of every node change the simulated robot at run time (the state is kept; the new
robot's dynamics are built before the loop is paused for the swap).
"""
from __future__ import annotations

import threading
import time

import numpy as np
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..core.errors import InputError
from ..core.observer import joint_torques_of_wrench
from ..core.simulation import MeasurementNoise, Simulator
from ..core.simulation.dynamics import ForwardDynamics
from ..messages.conversions import (MAX_JOINT_VALUE, MessageRejected, check_bounded,
                                    check_joint_values)
from .base import DynamicsNode, main_for
from .diagnostics import Extra
from .errors import topic_guard

BEHIND_WARNING = 0.5            # s of wall clock behind schedule before the pace is reset
CONNECT_TIMEOUT = 30.0          # s: lockstep waits this long for its controller to connect
CONTROLLER_READS_TIMEOUT = 15.0  # s: ... and this long for the controller to read joint_states
PROBE_PERIOD = 0.25             # s: lockstep publishes the initial state again this often ...
DRAIN_QUIET = 0.5               # s: ... and lets late answers to it through until this quiet


class EffortInput:
    """One wired effort input: its latest torques (model order) and when they arrived."""

    def __init__(self, topic: str):
        self.topic = topic
        self.effort: np.ndarray | None = None
        self.received = -np.inf         # simulated time of the latest message
        self.count = 0                  # messages so far (lockstep waits for it to grow)
        self.stale = True
        self.said_missing = False
        self.subscription = None        # its rclpy subscription (lockstep counts its publishers)


class DynamicsSimulatorNode(DynamicsNode):
    """Forward-dynamics simulation of the robot (see the module docstring)."""

    PARAMETER_TABLES = ("common", "simulator")

    def __init__(self, node_name: str = "dynamics_simulator", **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        if self.dynamics is None:
            raise ValueError("robot_description: the simulator needs its robot at start-up (a "
                             "shipped name, a YAML or URDF path or URDF text), not one that may "
                             "arrive later on /robot_description")
        values = self.params.values()
        n = self.dynamics.model.n
        rate, publish_rate = values["rate"], values["publish_rate"]
        self.real_time_factor = values["real_time_factor"]
        self.publish_clock = values["publish_clock"]
        integrator = values["integrator"]
        self._compiled = "auto" if values["compiled"] else False
        q0 = values["initial_position"] or [0.0] * n
        qd0 = values["initial_velocity"] or [0.0] * n
        self.command_timeout = values["command_timeout"]
        topics, state_topic = values["effort_command_topics"], values["effort_state_topic"]
        self.lockstep, self.hold = values["lockstep"], values["hold_until_command"]
        noise = [values[f"noise.{f}"] for f in ("position", "velocity", "effort")]
        seed = values["noise.seed"]
        if self.real_time_factor == 0.0 and not self.publish_clock:
            raise ValueError("real_time_factor: 0 (as fast as possible) needs publish_clock: "
                             "true, or the other nodes' clock would not follow the simulation")
        self.steps_per_publish = max(1, round(rate / publish_rate))
        self.noise = MeasurementNoise(n, *noise, seed=None if seed < 0 else seed)
        self._model_order = np.empty(n, dtype=int)
        self._model_order[self.output_index] = np.arange(n)     # output vector -> model order
        try:
            # (loads the compiled kernels, if not yet loaded: before the loop starts)
            self.sim = Simulator(self.dynamics.model, self._to_model(q0, "initial_position"),
                                 self._to_model(qd0, "initial_velocity"), 1.0 / rate, integrator,
                                 compiled=self._compiled)
        except InputError as exc:
            raise ValueError(str(exc)) from None
        self._sim_model = self.dynamics.model
        self._lock = threading.Lock()            # guards self.sim (payload changes rebuild it)
        self._new_command = threading.Condition()
        self.inputs = [EffortInput(t) for t in topics if t]
        for effort_input in self.inputs:
            watch = self.watch_input(effort_input.topic)
            effort_input.subscription = self.subscribe(
                Float64MultiArray, effort_input.topic, self._array_callback(effort_input, watch))
        if state_topic:
            effort_input = EffortInput(state_topic)
            self.inputs.append(effort_input)
            watch = self.watch_input(state_topic)
            effort_input.subscription = self.subscribe(
                JointState, state_topic, self._state_callback(effort_input, watch))
        self.tool_frame = values["tool_frame"] or self.tip_link or "tool"
        self.world_frame = values["world_frame"] or self.root_link or "world"
        self._wrench = None                     # (F [f; m] at the tool point, axes)
        self.diverged = ""                      # why the state is held (diverged), or ""
        self.divergences = 0                    # periods that diverged so far
        self._joint_torque = None               # model order
        self.subscribe(WrenchStamped, "applied_wrench",
                       lambda msg: self._on_applied_wrench(msg))
        self.subscribe(JointState, "applied_joint_torque",
                       lambda msg: self._on_applied_torque(msg))
        self.joint_states = self.advertise(JointState, "joint_states")
        self.published = 0              # joint_states messages so far (the demo drains by it)
        self.clock_publisher = None
        if self.publish_clock:
            from rclpy.qos import QoSProfile, ReliabilityPolicy
            from rosgraph_msgs.msg import Clock
            self._clock_type = Clock
            self.clock_publisher = self.create_publisher(
                Clock, "/clock", QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
        self.epoch_ns = 0 if self.publish_clock else self.get_clock().now().nanoseconds
        self.params.add_hook(self._payload_changed)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dynamics_simulator", daemon=True)
        self._thread.start()
        self.get_logger().info(
            f"simulating '{self.dynamics.model.name}' at {rate:g} Hz ({integrator}), joint_states "
            f"at {rate / self.steps_per_publish:g} Hz, "
            + ("as fast as possible" if self.real_time_factor == 0.0
               else f"{self.real_time_factor:g} x real time")
            + (", /clock" if self.publish_clock else "") + (", lockstep" if self.lockstep else "")
            + f"; effort from {[i.topic for i in self.inputs]}; forward dynamics "
            + self.sim.dynamics.how)
        if self._compiled == "auto" and not self.sim.dynamics.compiled:
            self.get_logger().warning("forward dynamics run as plain Python, about 5x slower "
                                      f"per step: {self.sim.dynamics.how}")

    # -- parameters ----------------------------------------------------------------------------
    def _to_model(self, values, name: str) -> np.ndarray:
        """Return a joint_names-order parameter vector in the model's order."""
        values = np.asarray(values, dtype=float)
        if values.shape != (len(self.joint_names),):
            raise ValueError(f"{name}: expected {len(self.joint_names)} values (one per joint in "
                             f"{list(self.joint_names)}), got {values.size}")
        return values[self._model_order]

    def _payload_changed(self, values: dict):
        timeout = float(values["command_timeout"])

        def apply():
            self.command_timeout = timeout
            model = self.dynamics.model
            if model is not self._sim_model:          # the payload changed: same state, new robot
                # build the new robot's constants first, while the loop runs on: the Simulator
                # below finds them in the model's cache
                ForwardDynamics(model, compiled=self._compiled)
                with self._lock:
                    old = self.sim
                    self.sim = self._rebuilt(model, old, (old.q, old.qd, old.t, old.last_applied))
                    self._sim_model = model
        return apply

    def _rebuilt(self, model, old: Simulator, state: tuple) -> Simulator:
        """Return a Simulator of ``model`` in ``state`` (q, qd, t, applied), ``old``'s counts."""
        q, qd, t, applied = state
        new = Simulator(model, q, qd, old.dt, old.integrator, t0=t, compiled=self._compiled)
        new.saturation_counts += old.saturation_counts
        new.limit_stop_counts += old.limit_stop_counts
        new.last_applied = applied
        return new

    # -- inputs --------------------------------------------------------------------------------
    def _array_callback(self, effort_input: EffortInput, watch):
        n = len(self.joint_names)

        @topic_guard
        def callback(node, msg: Float64MultiArray):
            started = time.monotonic()
            data = np.asarray(msg.data, dtype=float)
            if data.shape != (n,):
                raise MessageRejected("length", f"{effort_input.topic}: expected {n} efforts "
                                                f"(one per joint in "
                                                f"{list(self.joint_names)[:8]}), "
                                                f"got {data.size}")
            self._accept(effort_input, data[self._model_order], watch, started)
        return lambda msg: callback(self, msg)

    def _state_callback(self, effort_input: EffortInput, watch):
        @topic_guard
        def callback(node, msg: JointState):
            started = time.monotonic()
            index = self.input_order.indices(msg.name, effort_input.topic)
            if len(msg.effort) != len(msg.name):
                raise MessageRejected("length", f"{effort_input.topic}: {len(msg.name)} names but "
                                                f"{len(msg.effort)} efforts")
            self._accept(effort_input, np.asarray(msg.effort, dtype=float)[index], watch, started)
        return lambda msg: callback(self, msg)

    def _accept(self, effort_input: EffortInput, effort: np.ndarray, watch, started: float):
        # the bound of every node's input (model order here: the model's names)
        check_joint_values(effort, "effort", self.dynamics.model.joint_names, effort_input.topic)
        with self._new_command:
            effort_input.effort, effort_input.received = effort, self.sim.t
            effort_input.count += 1
            self._new_command.notify_all()
        self.input_accepted(watch, started)

    @topic_guard
    def _on_applied_wrench(self, msg: WrenchStamped):
        frame = msg.header.frame_id
        if frame not in ("", self.tool_frame, self.world_frame):
            raise MessageRejected("frame", f"applied_wrench: frame_id '{frame}' is neither the "
                                           f"tool frame '{self.tool_frame}' (or '') nor the "
                                           f"world frame '{self.world_frame}'")
        f, m = msg.wrench.force, msg.wrench.torque
        wrench = np.array([f.x, f.y, f.z, m.x, m.y, m.z])
        # the bounds of every node's input (INPUT_BOUNDS): 1e308 N is no force (issue 31, S1)
        check_bounded(wrench[:3], "force", "xyz", "applied_wrench", "force")
        check_bounded(wrench[3:], "torque", "xyz", "applied_wrench", "moment")
        # the simulated time of the stamp, on the clock the joint states are stamped with
        start = (msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
                 - self.epoch_ns) * 1e-9
        self._wrench = None if not wrench.any() else \
            (wrench, "world" if frame == self.world_frame and frame else "local", start)
        self.get_logger().info(f"applied wrench at the tool: {wrench.tolist()} "
                               f"({self._wrench[1] if self._wrench else 'none'} axes)",
                               throttle_duration_sec=1.0)

    @topic_guard
    def _on_applied_torque(self, msg: JointState):
        index = self.input_order.indices(msg.name, "applied_joint_torque")
        if len(msg.effort) != len(msg.name):
            raise MessageRejected("length", f"applied_joint_torque: {len(msg.name)} names but "
                                            f"{len(msg.effort)} efforts")
        torque = check_joint_values(np.asarray(msg.effort, dtype=float)[index], "effort",
                                    self.dynamics.model.joint_names, "applied_joint_torque")
        self._joint_torque = torque if torque.any() else None
        self.get_logger().info(f"applied joint torque: {torque.tolist()}",
                               throttle_duration_sec=1.0)

    def _external(self, sim):
        """Return the external joint torque of the next step (model order), or None."""
        wrench, torque = self._wrench, self._joint_torque
        if wrench is None or sim.t < wrench[2]:       # (none, or scheduled for later)
            return torque
        caused = joint_torques_of_wrench(sim.model, sim.q, wrench[0], wrench[1])
        return caused if torque is None else caused + torque

    def _applied_command(self, now: float) -> np.ndarray:
        """Return the sum of the fresh inputs at simulated time ``now`` (model order)."""
        total = np.zeros(self.sim.model.n)
        for effort_input in self.inputs:
            fresh = effort_input.effort is not None and \
                now - effort_input.received <= self.command_timeout
            if fresh:
                total += effort_input.effort
                if effort_input.stale:
                    effort_input.stale = False
                    if effort_input.said_missing:
                        self.get_logger().info(f"'{effort_input.topic}': applying its efforts")
            elif not effort_input.stale or not effort_input.said_missing:
                effort_input.stale, effort_input.said_missing = True, True
                what = "no message yet" if effort_input.effort is None else \
                    f"no message for more than command_timeout = {self.command_timeout:g} s"
                self.get_logger().warning(f"'{effort_input.topic}': {what}: applying zero "
                                          "torque from it")
        return total

    # -- the simulation loop -------------------------------------------------------------------
    def _run(self):
        try:
            self._loop()
        except Exception as exc:  # noqa: BLE001 -- say why the simulation stopped, then stop
            if not self._stop.is_set() and self.context.ok():      # (not a shutdown)
                self.get_logger().error(f"simulation stopped: {type(exc).__name__}: {exc}")

    def _loop(self):
        answered = False                # the state about to be stepped from has its commands
        if self.lockstep:
            self._wait_for_controller()
        if self.hold or self.lockstep:
            answered = self._hold() and self.lockstep
        wall_start, sim_start = time.monotonic(), self.sim.t
        saturated = 0
        while not self._stop.is_set():
            if not answered:
                counts = [i.count for i in self.inputs]
                self._publish()
                if self.lockstep:
                    self._wait_for_commands(counts)
            answered = False
            with self._lock:
                self._advance()
                sim = self.sim
                total = int(sim.saturation_counts.sum())
            if total > saturated:
                self.get_logger().warning(
                    "torques clipped to the effort limits so far (steps per joint): "
                    f"{dict(zip(sim.model.joint_names, sim.saturation_counts.tolist()))}",
                    throttle_duration_sec=2.0)
                saturated = total
            if self.diverged:               # held: publish it at the pace of the hold
                self._stop.wait(self.steps_per_publish * sim.dt / max(self.real_time_factor, 1.0))
                wall_start, sim_start = time.monotonic(), sim.t
            elif self.real_time_factor > 0.0:
                due = wall_start + (sim.t - sim_start) / self.real_time_factor
                delay = due - time.monotonic()
                if delay > 0.0:
                    self._stop.wait(delay)
                elif delay < -BEHIND_WARNING:
                    self.get_logger().warning(
                        f"simulation {-delay:.2f} s behind real time x {self.real_time_factor:g}"
                        ": continuing from now", throttle_duration_sec=5.0)
                    wall_start, sim_start = time.monotonic(), sim.t

    def _advance(self):
        """
        Take one period's steps; if the state diverges, put it back and hold it (docstring).

        Under ``self._lock``.  The state at the period's start is the one last published.
        """
        sim = self.sim
        start = (sim.q, sim.qd, sim.t, sim.last_applied)
        try:
            for _ in range(self.steps_per_publish):
                sim.step(self._applied_command(sim.t), external=self._external(sim))
                if not (max(map(abs, sim.q)) <= MAX_JOINT_VALUE
                        and max(map(abs, sim.qd)) <= MAX_JOINT_VALUE):
                    raise InputError(f"simulation of '{sim.model.name}' diverged at t = "
                                     f"{sim.t:.6g} s: a position or velocity beyond "
                                     f"{MAX_JOINT_VALUE:g}")
        except InputError as exc:
            if sim.t != start[2]:                   # (a failed step changes nothing itself)
                self.sim = self._rebuilt(sim.model, sim, start)
            self.divergences += 1
            if not self.diverged:
                self.get_logger().error(f"{exc}; holding the state of t = {start[2]:.6g} s "
                                        "until the inputs no longer make it diverge")
            self.diverged = str(exc)
            return
        if self.diverged:
            self.diverged = ""
            self.get_logger().info(f"simulation running again from t = {start[2]:.6g} s")

    def diagnostic_extra(self) -> Extra:
        """Add the divergences: ERROR while the state is held after one."""
        errors = [f"diverged, state held: {self.diverged}"] if self.diverged else []
        return Extra([("divergences (periods held)", self.divergences)], [], "", errors)

    def _hold(self) -> bool:
        """
        Publish the initial state until every input has a message (time does not advance).

        ``hold_until_command`` publishes it every period; lockstep alone every PROBE_PERIOD
        (the start handshake of the module docstring); lockstep then lets the answers to the
        repeated state through (:meth:`_drain`).  Return whether every input answered.
        """
        period = self.steps_per_publish * self.sim.dt / max(self.real_time_factor, 1.0)
        if not self.hold:
            period = PROBE_PERIOD
        said = False
        probes = 0
        deadline = time.monotonic() + CONNECT_TIMEOUT
        while not self._stop.is_set() and not all(i.count > 0 for i in self.inputs):
            if not self.hold and time.monotonic() > deadline:
                self.get_logger().warning(f"lockstep: no command answered the initial state "
                                          f"after {CONNECT_TIMEOUT:g} s; starting anyway")
                return False
            if self.hold and not said:
                self.get_logger().info("holding the initial state until every effort input "
                                       f"has sent a message: {[i.topic for i in self.inputs]}")
                said = True
            self._publish()
            probes += 1
            with self._new_command:
                self._new_command.wait_for(
                    lambda: self._stop.is_set() or all(i.count > 0 for i in self.inputs), period)
        if self.lockstep and probes > 1:
            self._drain(probes)
            if not self.hold:       # (the handshake was needed: say so, it costs some time)
                self.get_logger().info(f"lockstep: the initial state was answered after "
                                       f"{probes} publications of it")
        with self._new_command:                 # (arrivals while held count as at t0)
            for effort_input in self.inputs:
                effort_input.received = self.sim.t
        if said and not self._stop.is_set():
            self.get_logger().info("effort commands received: simulation running")
        return not self._stop.is_set()

    def _drain(self, probes: int):
        """
        Let the answers to the ``probes`` repeated initial states arrive before time advances.

        Otherwise a late answer to the initial state would be counted as the answer to the next
        state, and every step after it would use the command of the state before.  Ends when
        every input has answered every probe (nothing more can come), or when no answer came
        for DRAIN_QUIET s (the rest were lost); bounded by command_timeout.
        """
        end = time.monotonic() + max(self.command_timeout, DRAIN_QUIET)
        with self._new_command:
            while not self._stop.is_set():
                counts = [i.count for i in self.inputs]
                if min(counts) >= probes:
                    return
                quiet = min(DRAIN_QUIET, end - time.monotonic())
                if quiet <= 0.0 or not self._new_command.wait_for(
                        lambda: self._stop.is_set()
                        or [i.count for i in self.inputs] != counts, quiet):
                    return

    def _wait_for_controller(self):
        """In lockstep, start once joint_states has a reader and every input a publisher."""
        start = time.monotonic()
        deadline = start + CONNECT_TIMEOUT
        said = False
        while not self._stop.is_set() and time.monotonic() < deadline:
            # matched endpoints, not the graph: the graph lists a node's publisher or reader
            # before the middleware has matched it with ours, and what is sent meanwhile is lost
            missing = [i.topic for i in self.inputs if i.subscription.get_publisher_count() == 0]
            # Any joint_states reader (a recorder, a test) would do for the count, but the first
            # state is lost, and the first step taken without its answer, when the controller's
            # own subscription is not there yet: so wait (a bounded time: a controller may read
            # its states elsewhere) for the nodes that publish the commands to read, matched.
            readers_ok = (self._controllers_read_joint_states()
                          or time.monotonic() > start + CONTROLLER_READS_TIMEOUT)
            if not missing and self.joint_states.get_subscription_count() > 0 and readers_ok:
                self._stop.wait(0.2)           # let the other side finish matching too
                return
            if not said:
                self.get_logger().info(f"lockstep: waiting for publishers on {missing} and a "
                                       "joint_states subscriber")
                said = True
            self._stop.wait(0.05)
        if not self._stop.is_set():
            self.get_logger().warning(f"lockstep: no controller after {CONNECT_TIMEOUT:g} s; "
                                      "starting anyway")

    def _controllers_read_joint_states(self) -> bool:
        """Tell whether every node publishing an effort input reads joint_states, matched."""
        def nodes(infos):
            return {(info.node_namespace, info.node_name) for info in infos}
        readers = self.get_subscriptions_info_by_topic(self.joint_states.topic_name)
        writers = set()
        for effort_input in self.inputs:
            writers |= nodes(self.get_publishers_info_by_topic(
                self.resolve_topic_name(effort_input.topic)))
        return (writers <= nodes(readers)
                and self.joint_states.get_subscription_count() >= len(readers))

    def _wait_for_commands(self, counts: list):
        """Wait (bounded) until every Float64MultiArray input has a message newer than counts."""
        deadline = time.monotonic() + max(self.command_timeout, 0.01)
        with self._new_command:
            while not self._stop.is_set():
                if all(i.count > c for i, c in zip(self.inputs, counts)):
                    return
                remaining = deadline - time.monotonic()
                if remaining <= 0.0:
                    return
                self._new_command.wait(min(remaining, 0.05))

    def _publish(self):
        sim = self.sim
        stamp = self.epoch_ns + round(sim.t * 1e9)
        sec, nanosec = divmod(stamp, 1_000_000_000)
        if self.clock_publisher is not None:
            clock = self._clock_type()
            clock.clock.sec, clock.clock.nanosec = sec, nanosec
            self.clock_publisher.publish(clock)
        q, qd = sim.q, sim.qd
        effort = np.asarray(sim.last_applied) if sim.last_applied is not None else np.zeros(q.size)
        # the effort sensors' offset (robot file friction.offset): measured, never applied
        effort = effort + sim.model.torque_offset
        if self.noise.active:
            q, qd, effort = self.noise.apply(q, qd, effort)
        index = self.output_index
        msg = JointState()
        msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
        msg.name = list(self.joint_names)
        msg.position, msg.velocity, msg.effort = (q[index].tolist(), qd[index].tolist(),
                                                  effort[index].tolist())
        self.joint_states.publish(msg)
        self.published += 1

    def destroy_node(self):
        """Stop the simulation thread (if it was started), then the node."""
        thread = getattr(self, "_thread", None)     # (none after a configuration error)
        if thread is not None:
            self._stop.set()
            with self._new_command:
                self._new_command.notify_all()
            if thread.is_alive() and thread is not threading.current_thread():
                thread.join(timeout=2.0)
        return super().destroy_node()


main = main_for(DynamicsSimulatorNode)

if __name__ == "__main__":
    main()
