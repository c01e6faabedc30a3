"""
The effort outputs of a node: a sensor_msgs/JointState and a std_msgs/Float64MultiArray.

Efforts come in the model's joint order and go out in the configured ``joint_names`` order: the
JointState (names, effort, optionally the reference position and velocity, stamped with the
input's stamp) for people and bags, the Float64MultiArray for
effort_controllers/JointGroupEffortController (``/<controller>/commands``).

A torque command never leaves above a joint's effort limit unless told: the node's
:class:`~robot_dynamics_ros.core.control.EffortLimiter` (``limiter``, set by
``nodes/torque_node.py``) applies its policy to every command before it is published, on both
messages.

Per message this is on the 1 kHz path: values are lists (no numpy), and both messages are
published serialized, written into templates of their fixed parts (``messages.serialized``: 5 us
per publish instead of 10-15 us for a message object).  Should rclpy not read a template's bytes
back as the message they were written from (checked once per joint order and set of fields),
that output publishes message objects, built once and refilled (rclpy serialises inside
``publish``, so a message can be reused as soon as ``publish`` returns; the outputs of one node
are published from one thread).
"""
from __future__ import annotations

import math

from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..messages.conversions import MessageRejected
from ..messages.serialized import Float64ArrayWriter, JointStateWriter


class EffortOutputs:
    """The JointState + Float64MultiArray publishers of a node and the output joint order."""

    def __init__(self, state_publisher, command_publisher, joint_names, output_index):
        self.state = state_publisher
        self.command = command_publisher
        self._state_msg = JointState()
        self._command_msg = Float64MultiArray()
        self.limiter = None             # core.control.EffortLimiter of the model, or None
        self.commands = 0               # commands published (the torque node resets it)
        self.set_order(joint_names, output_index)

    def set_order(self, joint_names, output_index):
        """Set the output order: ``joint_names``, model vector[output_index] = output order."""
        self.joint_names = list(joint_names)
        self.output_index = output_index
        index = [] if output_index is None else [int(i) for i in output_index]
        # None: the model's order is the output order (nothing to permute)
        self._index = None if index == list(range(len(index))) else index
        self._state_msg.name = self.joint_names
        self._state_writers = {}         # fields given -> JointStateWriter, or None: objects
        self._command_writer = Float64ArrayWriter.create(len(self.joint_names))

    def _state_writer(self, fields: tuple) -> JointStateWriter | None:
        if fields not in self._state_writers:
            self._state_writers[fields] = JointStateWriter.create(self.joint_names, fields)
        return self._state_writers[fields]

    def publish(self, stamp: tuple[int, int], effort: list, position: list | None = None,
                velocity: list | None = None):
        """
        Publish ``effort`` (model order) in the configured order; the JointState gets ``stamp``.

        ``stamp``: (sec, nanosec), the input's header stamp.

        ``effort``, ``position``, ``velocity``: sequences of n floats in the model's order.  A
        torque that is not finite (e.g. friction of a huge but finite velocity) is never sent:
        MessageRejected, so the callback's input is reported and nothing is published.
        """
        if self.limiter is not None:
            effort = self.limiter.apply(effort)
        index = self._index
        if index is not None:
            effort = [effort[i] for i in index]
        if not math.isfinite(sum(effort)):          # an overflowing sum is checked one by one
            for name, value in zip(self.joint_names, effort):
                if not math.isfinite(value):
                    raise MessageRejected("non-finite output", f"torque of joint '{name}' "
                                                               f"computed from this input is "
                                                               f"{value}")
        values = {"effort": effort}
        if position is not None:
            values["position"] = position if index is None else [position[i] for i in index]
        if velocity is not None:
            values["velocity"] = velocity if index is None else [velocity[i] for i in index]
        writer = self._state_writer(tuple(sorted(values)))
        if writer is not None:
            self.state.publish(writer.serialize(stamp, **values))
        else:
            state = self._state_msg
            state.header.stamp.sec, state.header.stamp.nanosec = stamp
            for field, value in values.items():
                setattr(state, field, value)
            self.state.publish(state)
        if self._command_writer is not None:
            self.command.publish(self._command_writer.serialize(effort))
        else:
            command = self._command_msg
            command.data = effort
            self.command.publish(command)
        self.commands += 1

    def publish_zero(self, stamp: tuple[int, int]):
        """Publish one zero command (effort only), e.g. as the node stops commanding."""
        self.publish(stamp, [0.0] * len(self.joint_names))
