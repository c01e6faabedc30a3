"""
gravity_compensation_node: joint_states -> g(q) (+ optional friction compensation).

Subscribes ``joint_states`` (sensor_msgs/JointState, matched by name; best-effort QoS, so
reliable and sensor-data publishers both reach it; taken serialized, see ``nodes.base``) and
publishes, for every valid message, the holding torques

    tau = g(q)                                   (seed 002, 7.39)
        + F_v qd + F_s sgn(qd)   if friction_compensation  (seed 002, 7.114 friction terms)

on ``gravity_effort`` (sensor_msgs/JointState: names + effort, stamped with the input's stamp) and
``gravity_effort_command`` (std_msgs/Float64MultiArray in the ``joint_names`` order, for
effort_controllers/JointGroupEffortController; remap it to ``/<controller>/commands``).

Parameters (besides those of ``nodes.base``): ``friction_compensation`` (bool, run-time).
"""
from __future__ import annotations

import time

from sensor_msgs.msg import JointState

from .base import DynamicsNode, main_for
from .errors import topic_guard


class GravityCompensationNode(DynamicsNode):
    """Holding torques g(q) (+ friction) for every joint_states message."""

    def __init__(self, node_name: str = "gravity_compensation", **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        self.friction_compensation = False
        self.params.declare("friction_compensation", False, "add the robot file's viscous + "
                            "Coulomb friction at the measured velocity")
        self.params.add_hook(self._parameters_changed)
        self.outputs = self.create_effort_outputs("gravity_effort", "gravity_effort_command")
        self.joint_states_watch = self.watch_input("joint_states")
        self.subscribe_joint_states(self.on_joint_states)
        self.get_logger().info(f"gravity compensation for {self.robot_label} ready")

    def _parameters_changed(self, values: dict):
        friction = bool(values["friction_compensation"])

        def apply():
            self.friction_compensation = friction
        return apply

    @topic_guard
    def on_joint_states(self, msg: JointState | bytes):
        if self.waiting_for_model():
            return
        started = time.monotonic()
        friction = self.friction_compensation
        state = self.joint_state_reader.read(msg, need_velocity=friction)
        tau = self.dynamics.holding_values(state.q, state.qd if friction else None)
        self.outputs.publish(state.stamp, tau)
        self.input_accepted(self.joint_states_watch, started)


main = main_for(GravityCompensationNode)

if __name__ == "__main__":
    main()
