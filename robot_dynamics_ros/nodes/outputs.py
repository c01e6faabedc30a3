"""
The effort outputs of a node: a sensor_msgs/JointState and a std_msgs/Float64MultiArray.

Efforts come in the model's joint order and go out in the configured ``joint_names`` order: the
JointState (names, effort, optionally the reference position and velocity, stamped with the
input's stamp) for people and bags, the Float64MultiArray for
effort_controllers/JointGroupEffortController (``/<controller>/commands``).

Per message this is on the 1 kHz path: values are lists (no numpy), and the two messages are
built once and refilled (rclpy serialises a message inside ``publish``, so a message can be
reused as soon as ``publish`` returns; the outputs of one node are published from one thread).
"""
from __future__ import annotations

import math

from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..ros_messages import MessageRejected


class EffortOutputs:
    """The JointState + Float64MultiArray publishers of a node and the output joint order."""

    def __init__(self, state_publisher, command_publisher, joint_names, output_index):
        self.state = state_publisher
        self.command = command_publisher
        self._state_msg = JointState()
        self._command_msg = Float64MultiArray()
        self.set_order(joint_names, output_index)

    def set_order(self, joint_names, output_index):
        """Set the output order: ``joint_names``, model vector[output_index] = output order."""
        self.joint_names = list(joint_names)
        self.output_index = output_index
        index = [] if output_index is None else [int(i) for i in output_index]
        # None: the model's order is the output order (nothing to permute)
        self._index = None if index == list(range(len(index))) else index
        self._state_msg.name = self.joint_names

    def publish(self, stamp, effort: list, position: list | None = None,
                velocity: list | None = None):
        """
        Publish ``effort`` (model order) in the configured order; the JointState gets ``stamp``.

        ``effort``, ``position``, ``velocity``: sequences of n floats in the model's order.  A
        torque that is not finite (e.g. friction of a huge but finite velocity) is never sent:
        MessageRejected, so the callback's input is reported and nothing is published.
        """
        index = self._index
        if index is not None:
            effort = [effort[i] for i in index]
        if not math.isfinite(sum(effort)):          # an overflowing sum is checked one by one
            for name, value in zip(self.joint_names, effort):
                if not math.isfinite(value):
                    raise MessageRejected("non-finite output", f"torque of joint '{name}' "
                                                               f"computed from this input is "
                                                               f"{value}")
        state = self._state_msg
        state.header.stamp = stamp
        state.effort = effort
        if position is not None:
            state.position = position if index is None else [position[i] for i in index]
        if velocity is not None:
            state.velocity = velocity if index is None else [velocity[i] for i in index]
        self.state.publish(state)
        command = self._command_msg
        command.data = effort
        self.command.publish(command)
