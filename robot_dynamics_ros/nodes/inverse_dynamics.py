"""
inverse_dynamics_node: reference trajectory -> feedforward (or computed-torque) joint torques.

A managed (lifecycle) torque node (``nodes/torque_node.py``): it loads its robot when configured
and publishes only while active; a reference sent while it is not active is refused (said once,
counted), and deactivating drops the reference (as joint_trajectory_controller does: after
activating again, send a new one).

Subscriptions::

  ``reference_trajectory`` (trajectory_msgs/JointTrajectory): the reference, replaced by each new
      message and sampled at each joint state's header stamp as joint_trajectory_controller
      samples its trajectory at the time of the update whose state it read (``core.Reference``):
      a zero header stamp starts it at the first sample, a non-zero stamp is its start time;
      before the first point it moves from the measured state to that point; after the end it
      holds the last point as given; a reference that ends before the node's clock (sim time with
      use_sim_time) is rejected and the old one kept.  A message without points clears the
      reference.  Sampling at the stamp, not at the clock when the message is handled, makes the
      outputs a function of the messages alone: a node handling a joint state late on a loaded
      machine, after /clock has moved on, publishes what it would have published in time (a
      bag played into the node once differed from ``bag process`` that way).  A joint state
      stamped zero (a publisher that does not stamp) is sampled at the node clock's time.
  ``joint_states`` (sensor_msgs/JointState, best-effort QoS): the measured state; each valid
      message triggers one output (so outputs follow the robot's state rate and carry its stamp).

Outputs (every valid joint_states message while active and a reference is active, within the
effort limits of ``effort_limit_policy``)::

  ``feedforward_effort`` (sensor_msgs/JointState): names, effort = tau; position/velocity carry
      the sampled reference q_ref, qd_ref; header.stamp = the joint_states stamp.
  ``effort_command`` (std_msgs/Float64MultiArray): tau in the ``joint_names`` order, as
      effort_controllers/JointGroupEffortController expects.

``mode`` (run-time; the laws are ``core.control.TorqueLaw``'s)::

  ``feedforward``       tau = RNEA(q_ref, qd_ref, qdd_ref): the nominal torques of the planned
                        trajectory
  ``computed_torque``   tau = B(q) (qdd_ref + Kd (qd_ref - qd) + Kp (q_ref - q)) + n(q, qd),
                        evaluated as one RNEA.  Needs velocities in joint_states.

``kp``, ``kd`` (run-time): per-joint gains [1/s^2], [1/s] in the ``joint_names`` order, or one
gain for every joint (the default, 100 and 20).  A robot (at configure, or a new one from
``/robot_description``) is refused if the gains do not fit it; a new one clears the reference.
Parameters: tables ``common``, ``managed``, ``torque_outputs``, ``inverse_dynamics``
(doc/parameters.md).
"""
from __future__ import annotations

import time

import numpy as np
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from ..core import Reference
from ..core.control import Gains, TorqueLaw
from ..messages.conversions import MAX_TRAJECTORY_POINTS, trajectory_from_msg
from .base import main_for
from .errors import topic_guard
from .torque_node import TorqueNode


class InverseDynamicsNode(TorqueNode):
    """Feedforward / computed torque from a reference trajectory, one output per joint_states."""

    PARAMETER_TABLES = TorqueNode.PARAMETER_TABLES + ("inverse_dynamics",)

    def __init__(self, node_name: str = "inverse_dynamics", **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        self.mode = self.law = None
        self.params.add_hook(self._parameters_changed)
        self.reference: Reference | None = None
        self._said_waiting = False
        self.outputs = self.create_effort_outputs("feedforward_effort", "effort_command")
        self.joint_states_watch = self.watch_input("joint_states")
        self.subscribe_trajectory("reference_trajectory", self.on_reference,
                                  MAX_TRAJECTORY_POINTS)
        self.subscribe_joint_states(self.on_joint_states)

    def _gains(self, values: dict, name: str, joint_names=None, output_index=None) -> np.ndarray:
        """Gains of parameter ``name`` (joint_names order) in the model's order (one: for all)."""
        if joint_names is None:
            joint_names, output_index = self.joint_names, self.output_index
        n = len(joint_names)
        g = np.asarray(values[name], dtype=float)
        if n == 0:
            return g                # no model yet: checked against the model when it comes
        if g.size == 1:
            g = np.full(n, g[0])
        if g.shape != (n,):
            raise ValueError(f"{name}: expected {n} gains (one per joint in "
                             f"{list(joint_names)}), got {g.size}")
        model_order = np.empty(n)
        model_order[output_index] = g
        return model_order

    def check_model(self, model, joint_names, output_index):
        """Refuse a new model the gains do not fit; applying it clears the reference."""
        values = self.params.values()
        law = TorqueLaw(values["mode"],
                        Gains(self._gains(values, "kp", joint_names, output_index),
                              self._gains(values, "kd", joint_names, output_index)))
        apply_limits = super().check_model(model, joint_names, output_index)

        def apply():
            apply_limits()
            self.law = law
            self.clear_reference("the robot model changed")
        return apply

    def _parameters_changed(self, values: dict):
        mode = values["mode"]
        law = None
        if self.base_model is not None:       # (without a robot: checked at configure)
            law = TorqueLaw(mode, Gains(self._gains(values, "kp"), self._gains(values, "kd")))

        def apply():
            if self.mode not in (None, mode):
                self.get_logger().info(f"mode now {mode}")
            self.mode = mode
            if law is not None:
                self.law = law
        return apply

    def clear_reference(self, why: str):
        """Drop the reference (saying why), e.g. when deactivated or when the robot changes."""
        if self.reference is not None:
            self.reference = None
            self.get_logger().info(f"reference cleared: {why}")

    def deactivating(self):
        """Publish the stop command and drop the reference (joint_trajectory_controller's way)."""
        super().deactivating()
        self.clear_reference("deactivated; send a new one after activating")

    def forget_model(self):
        """Drop the reference and the law with the robot."""
        super().forget_model()
        self.clear_reference("the robot was released")
        self.law = None

    def _now_ns(self) -> int:
        """
        Return the node clock's time [ns] (ROS time): simulated time when it is active.

        Otherwise ROS time is the system time (rcl's ``rcl_get_ros_time`` reads
        ``rcutils_system_time_now``: CLOCK_REALTIME, as ``time.time_ns``); read directly, it
        costs 0.1 us instead of 7 us for ``Clock.now()`` on the per-message path (the sampling
        instant of a joint state stamped zero).
        """
        clock = self.get_clock()
        if clock.ros_time_is_active:
            return clock.now().nanoseconds
        return time.time_ns()

    @topic_guard
    def on_reference(self, msg: JointTrajectoryMsg):
        if not self.accepts_input("reference_trajectory", refused=True):
            return
        if len(msg.points) == 0:
            self.reference = None
            self.get_logger().info("empty reference_trajectory: reference cleared, outputs stop")
            return
        traj = trajectory_from_msg(msg, self.input_order)
        stamp = msg.header.stamp
        self.reference = Reference(traj, stamp.sec * 1_000_000_000 + stamp.nanosec,
                                   self.get_clock().now().nanoseconds)
        self._said_waiting = False
        self.get_logger().info(f"new reference: {traj.num_points} points, {traj.duration:g} s, "
                               f"{traj.interpolation} interpolation")

    @topic_guard
    def on_joint_states(self, msg: JointState | bytes):
        if not self.accepts_input("joint_states"):
            return
        started = time.monotonic()
        law = self.law
        state = self.joint_state_reader.read(msg, need_velocity=law.needs_velocity)
        q, qd = state.q, state.qd
        reference = self.reference
        if reference is None:
            self.input_accepted(self.joint_states_watch, started)
            if not self._said_waiting:
                self._said_waiting = True
                self.get_logger().info("waiting for a reference_trajectory: nothing published "
                                       "until then")
            return
        sec, nanosec = state.stamp
        at = sec * 1_000_000_000 + nanosec or self._now_ns()     # (stamped zero: on receipt)
        q_ref, qd_ref, qdd_ref = reference.sample_values(at, q, qd)
        tau = self.dynamics.rnea_values(*law.rnea_values(q, qd, q_ref, qd_ref, qdd_ref))
        self.outputs.publish(state.stamp, tau, q_ref, qd_ref)
        self.input_accepted(self.joint_states_watch, started)


main = main_for(InverseDynamicsNode)

if __name__ == "__main__":
    main()
