"""
The effort outputs of a node: a sensor_msgs/JointState and a std_msgs/Float64MultiArray.

Efforts come in the model's joint order and go out in the configured ``joint_names`` order: the
JointState (names, effort, optionally the reference position and velocity, stamped with the
input's stamp) for people and bags, the Float64MultiArray for
effort_controllers/JointGroupEffortController (``/<controller>/commands``).
"""
from __future__ import annotations

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..ros_messages import MessageRejected


class EffortOutputs:
    """The JointState + Float64MultiArray publishers of a node and the output joint order."""

    def __init__(self, state_publisher, command_publisher, joint_names, output_index: np.ndarray):
        self.state = state_publisher
        self.command = command_publisher
        self.joint_names = list(joint_names)
        self.output_index = output_index          # model vector[output_index] = output order

    def publish(self, stamp, effort, position=None, velocity=None):
        """
        Publish ``effort`` (model order) in the configured order; the JointState gets ``stamp``.

        A torque that is not finite (e.g. friction of a huge but finite velocity) is never sent:
        MessageRejected, so the callback's input is reported and nothing is published.
        """
        index = self.output_index
        effort = effort[index]
        if not np.isfinite(effort).all():
            j = int(np.flatnonzero(~np.isfinite(effort))[0])
            raise MessageRejected("non-finite output", f"torque of joint '{self.joint_names[j]}' "
                                                       f"computed from this input is {effort[j]}")
        values = effort.tolist()
        state = JointState()
        state.header.stamp = stamp
        state.name = self.joint_names
        state.effort = values
        if position is not None:
            state.position = position[index].tolist()
        if velocity is not None:
            state.velocity = velocity[index].tolist()
        self.state.publish(state)
        command = Float64MultiArray()
        command.data = values
        self.command.publish(command)
