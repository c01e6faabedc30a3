"""
gravity_compensation_node: joint_states -> g(q) (+ optional friction compensation).

A managed (lifecycle) torque node (``nodes/torque_node.py``): it loads its robot when
configured and publishes only while active.  Subscribes ``joint_states`` (sensor_msgs/JointState,
matched by name; best-effort QoS, so reliable and sensor-data publishers both reach it; taken
serialized, see ``nodes.base``) and publishes, for every valid message while active, the holding
torques (``core.control.holding_torques``)

    tau = g(q)                                   (Siciliano et al., eq. 7.39)
        + F_v qd + F_s sgn(qd)   if friction_compensation  (eq. 7.42)

within the effort limits (``effort_limit_policy``) on ``gravity_effort`` (sensor_msgs/JointState:
names + effort, stamped with the input's stamp) and ``gravity_effort_command``
(std_msgs/Float64MultiArray in the ``joint_names`` order, for
effort_controllers/JointGroupEffortController; remap it to ``/<controller>/commands``).

Parameters: tables ``common``, ``managed``, ``torque_outputs``, ``gravity_compensation``
(doc/parameters.md).
"""
from __future__ import annotations

import time

from sensor_msgs.msg import JointState

from .base import main_for
from .errors import topic_guard
from .torque_node import TorqueNode


class GravityCompensationNode(TorqueNode):
    """Holding torques g(q) (+ friction) for every joint_states message."""

    PARAMETER_TABLES = TorqueNode.PARAMETER_TABLES + ("gravity_compensation",)

    def __init__(self, node_name: str = "gravity_compensation", **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        self.friction_compensation = False
        self.params.add_hook(self._parameters_changed)
        self.outputs = self.create_effort_outputs("gravity_effort", "gravity_effort_command")
        self.joint_states_watch = self.watch_input("joint_states")
        self.subscribe_joint_states(self.on_joint_states)

    def _parameters_changed(self, values: dict):
        friction = bool(values["friction_compensation"])

        def apply():
            self.friction_compensation = friction
        return apply

    @topic_guard
    def on_joint_states(self, msg: JointState | bytes):
        if not self.accepts_input("joint_states"):
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
