"""joint_state_effort: a JointState's effort read and checked as its positions are."""

import math

import pytest
from sensor_msgs.msg import JointState

from robot_dynamics_ros.messages.conversions import (MAX_JOINT_VALUE, JointOrder,
                                                     MessageRejected, joint_state_effort)

ORDER = JointOrder(("a", "b", "c"))


def state(names, effort):
    msg = JointState()
    msg.name = list(names)
    msg.position = [0.0] * len(names)
    msg.effort = list(effort)
    return msg


def test_effort_is_matched_by_name_and_extra_joints_ignored():
    assert joint_state_effort(state(["c", "x", "a", "b"], [3.0, 9.0, 1.0, 2.0]), ORDER) == \
        [1.0, 2.0, 3.0]


@pytest.mark.parametrize("names, effort, kind", [
    (["a", "b", "c"], [], "no effort"),
    (["a", "b", "c"], [1.0, 2.0], "length"),
    (["a", "b"], [1.0, 2.0], "joint names"),
    (["a", "b", "c"], [1.0, math.nan, 2.0], "non-finite"),
    (["a", "b", "c"], [1.0, 2.0, 2.0 * MAX_JOINT_VALUE], "out of range")])
def test_bad_effort_is_refused_by_kind(names, effort, kind):
    with pytest.raises(MessageRejected) as info:
        joint_state_effort(state(names, effort), ORDER)
    assert info.value.kind == kind
