"""The constraint list the node, the command and the API build from their parameters."""
from __future__ import annotations

import numpy as np

from ..limits import Limits
from .constraint_set import (JointAccelerationConstraint, JointJerkConstraint,
                             JointTorqueConstraint, JointVelocityConstraint, Payload)
from .tool_speed import ToolSpeedConstraint


def constraint_list(limits: Limits | None = None, tool_speed=None, tool_angular_speed=None,
                    jerk=None, payload: Payload | None = None, frame="tool") -> list:
    """
    Return the list the node and the command build from their parameters.

    ``limits``: the joint limits already built from the robot, a joint_limits file and margins
    (as :class:`Limits`: their torque, velocity, acceleration, jerk); the others: None for none.
    """
    out = []
    if limits is not None:
        out += [JointTorqueConstraint(limits.effort_upper),
                JointVelocityConstraint(limits.velocity),
                JointAccelerationConstraint(limits.acceleration)]
        if jerk is None and np.isfinite(limits.jerk).any():
            jerk = limits.jerk
    if jerk is not None:
        out.append(JointJerkConstraint(jerk))
    if tool_speed is not None or tool_angular_speed is not None:
        out.append(ToolSpeedConstraint(tool_speed, tool_angular_speed, frame))
    if payload is not None:
        out.append(payload)
    return out
