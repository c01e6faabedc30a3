"""inverse_dynamics_node: reference trajectory -> feedforward (or computed-torque) joint torques.

Subscriptions
  ``reference_trajectory`` (trajectory_msgs/JointTrajectory): the reference, replaced by each new
      message.  It is sampled at the node clock's current time (sim time with use_sim_time) as
      joint_trajectory_controller's ``Trajectory::sample`` does, with a joint_states message as
      JTC's control cycle:
      * a zero header stamp means "start at the first sample" (the first joint_states after
        receipt), a non-zero stamp is the start time; a reference that ends before the node's
        current time is rejected ("ends in the past") and the old one kept;
      * before the first point is due, the reference moves from the state measured at the first
        sample (position, and velocity if both it and the point have one: cubic, else linear)
        to the first point, as JTC's ``set_point_before_trajectory_msg`` segment does;
      * between points, JTC's interpolation (``core.trajectory``: linear / cubic / quintic by the
        fields given); after the end, the last point as given (``core.trajectory``, as JTC);
      * a clock that goes back before the first sample (sim reset) gives no output (JTC: no valid
        sample) until a new reference arrives.
      A message without points clears the reference.
  ``joint_states`` (sensor_msgs/JointState): the measured state; each valid message triggers one
      output (so outputs follow the robot's state rate and carry its stamp).

Outputs (every valid joint_states message while a reference is active)
  ``feedforward_effort`` (sensor_msgs/JointState): names, effort = tau; position/velocity carry
      the sampled reference q_ref, qd_ref; header.stamp = the joint_states stamp.
  ``effort_command`` (std_msgs/Float64MultiArray): tau in the ``joint_names`` order, as
      effort_controllers/JointGroupEffortController expects.

``mode`` (run-time):
  ``feedforward``       tau = RNEA(q_ref, qd_ref, qdd_ref): the "nominal torques" of a planned
                        trajectory (seed 000:122; RNEA seed 002, 7.107-7.114)
  ``computed_torque``   tau = B(q) (qdd_ref + Kd (qd_ref - qd) + Kp (q_ref - q)) + n(q, qd), with
                        n = C qd + friction + g (seed 002, 7.116); evaluated as RNEA(q, qd, a) with a
                        the bracket, which is the same quantity (B(q) a + n(q, qd)) in one O(n)
                        recursion.  Needs velocities in joint_states.
``kp``, ``kd`` (run-time): per-joint gains [1/s^2], [1/s] in the ``joint_names`` order, >= 0.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from ..core import JointTrajectory
from ..ros_messages import MessageRejected, joint_state_arrays, trajectory_from_msg
from .common import DynamicsNode, parameter_descriptor, guarded, main_for

MODES = ("feedforward", "computed_torque")
DEFAULT_KP, DEFAULT_KD = 100.0, 20.0      # critically damped: kd = 2 sqrt(kp)


@dataclass
class Reference:
    """The active reference and JTC's per-trajectory sampling state (set at the first sample)."""
    traj: JointTrajectory             # model order
    start: int                        # ns of time_from_start = 0; 0: the first sample's time
    first_sample: int | None = None   # ns: JTC's time_before_traj_msg_
    approach: JointTrajectory | None = None   # measured state at first_sample -> first point

    def sample(self, now: int, q, qd):
        """(q_ref, qd_ref, qdd_ref) at node time ``now`` [ns], with the measured (q, qd)."""
        traj = self.traj
        if self.first_sample is None:
            self.first_sample = now
            if self.start == 0:
                self.start = now
            lead = (self.start - now) * 1e-9 + traj.times[0]      # s until the first point is due
            if lead > 0.0:
                both = qd is not None and traj.velocities is not None
                self.approach = JointTrajectory(
                    traj.joint_names, [0.0, lead], [q, traj.positions[0]],
                    [qd, traj.velocities[0]] if both else None)
        if now < self.first_sample:
            raise MessageRejected("clock", "joint_states: the clock went back before the reference was first "
                                           "sampled (sim reset?); nothing published until a new reference")
        t = (now - self.start) * 1e-9
        if self.approach is not None and t < traj.times[0]:
            return self.approach.sample((now - self.first_sample) * 1e-9)
        return traj.sample(t)


class InverseDynamicsNode(DynamicsNode):
    def __init__(self, node_name: str = "inverse_dynamics", **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        n = self.dynamics.model.n
        self.declare_parameter("mode", "feedforward", parameter_descriptor(f"one of {list(MODES)}"))
        self.declare_parameter("kp", [DEFAULT_KP] * n, parameter_descriptor("position gains [1/s^2], joint_names order"))
        self.declare_parameter("kd", [DEFAULT_KD] * n, parameter_descriptor("velocity gains [1/s], joint_names order"))
        self.add_parameter_hook(self._parameters_changed)
        self.reference: Reference | None = None
        self._said_waiting = False
        self.outputs = self.create_effort_outputs("feedforward_effort", "effort_command")
        self.joint_states_watch = self.watch_input("joint_states")
        self.create_subscription(JointTrajectoryMsg, "reference_trajectory", self.on_reference, self.qos())
        self.create_subscription(JointState, "joint_states", self.on_joint_states, self.qos())
        self.get_logger().info(f"inverse dynamics for '{self.dynamics.model.name}' ready, mode {self.mode}")

    def _gains(self, values: dict, name: str) -> np.ndarray:
        g = np.asarray(values[name], dtype=float)
        n = len(self.joint_names)
        if g.shape != (n,):
            raise ValueError(f"{name}: expected {n} gains (one per joint in {list(self.joint_names)}), "
                             f"got {g.size}")
        if not np.isfinite(g).all() or (g < 0.0).any():
            raise ValueError(f"{name}: gains must be finite and >= 0, got {g.tolist()}")
        model_order = np.empty(n)
        model_order[self.output_index] = g
        return model_order

    def _parameters_changed(self, values: dict):
        mode = values["mode"]
        if mode not in MODES:
            raise ValueError(f"mode: '{mode}' is not one of {list(MODES)}")
        kp, kd = self._gains(values, "kp"), self._gains(values, "kd")

        def apply():
            if getattr(self, "mode", mode) != mode:
                self.get_logger().info(f"mode now {mode}")
            self.mode, self.kp, self.kd = mode, kp, kd
        return apply

    @guarded
    def on_reference(self, msg: JointTrajectoryMsg):
        if len(msg.points) == 0:
            self.reference = None
            self.get_logger().info("empty reference_trajectory: reference cleared, outputs stop")
            return
        traj = trajectory_from_msg(msg, self.input_order)
        stamp = msg.header.stamp
        start = stamp.sec * 1_000_000_000 + stamp.nanosec
        now = self.get_clock().now().nanoseconds
        if start != 0 and start + round(traj.duration * 1e9) < now:      # as JTC's validation
            raise MessageRejected("past", f"reference_trajectory: starts at {start * 1e-9:.3f} s and ends "
                                          f"{traj.duration:g} s later, before now ({now * 1e-9:.3f} s): "
                                          "ends in the past; the old reference is kept")
        self.reference = Reference(traj, start)
        self._said_waiting = False
        self.get_logger().info(f"new reference: {traj.num_points} points, {traj.duration:g} s, "
                               f"{traj.interpolation} interpolation")

    @guarded
    def on_joint_states(self, msg: JointState):
        mode = self.mode
        q, qd = joint_state_arrays(msg, self.input_order, need_velocity=(mode == "computed_torque"))
        self.input_received(self.joint_states_watch)
        reference = self.reference
        if reference is None:
            if not self._said_waiting:
                self._said_waiting = True
                self.get_logger().info("waiting for a reference_trajectory: nothing published until then")
            return
        now = self.get_clock().now().nanoseconds
        q_ref, qd_ref, qdd_ref = reference.sample(now, q, qd)
        t = (now - reference.start) * 1e-9
        dyn = self.dynamics
        if mode == "feedforward":
            tau = dyn.rnea(q_ref, qd_ref, qdd_ref)
        else:
            a = qdd_ref + self.kd * (qd_ref - qd) + self.kp * (q_ref - q)
            tau = dyn.rnea(q, qd, a)
        if not np.isfinite(tau).all():
            raise MessageRejected("non-finite-output", f"joint_states at t = {t:.3f} s: torque not finite")
        self.outputs.publish(msg.header.stamp, tau, q_ref, qd_ref)


main = main_for(InverseDynamicsNode)

if __name__ == "__main__":
    main()
