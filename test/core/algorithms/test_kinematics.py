"""Forward kinematics and the tool Jacobian: shapes, base frame, finite differences."""

import numpy as np
import pytest

from dynamics_cases import CASES, make
from random_robots import random_state
from robot_dynamics_ros.core import RobotModel, forward_kinematics, jacobian, tool_pose
from robot_dynamics_ros.core.algorithms.kinematics import internal_frames


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_jacobian_matches_finite_differences_of_the_tool_pose(n, convention, seed):
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng)
    eps = 1e-7
    Tp, Tm = tool_pose(model, q + eps * qd), tool_pose(model, q - eps * qd)
    v = (Tp[:3, 3] - Tm[:3, 3]) / (2 * eps)
    Rdot = (Tp[:3, :3] - Tm[:3, :3]) / (2 * eps)
    W = Rdot @ tool_pose(model, q)[:3, :3].T           # [w]x
    w = np.array([W[2, 1], W[0, 2], W[1, 0]])
    np.testing.assert_allclose(jacobian(model, q) @ qd, np.concatenate([v, w]), atol=1e-6)


def test_forward_kinematics_shapes_and_base_frame():
    model = RobotModel.named("panda")
    frames = forward_kinematics(model, np.zeros(7))
    assert frames.shape == (8, 4, 4)
    np.testing.assert_allclose(frames[0], np.eye(4))
    # Panda at q = 0: flange at x = 0.088, z = 0.333 + 0.316 + 0.384 - 0.107 = 0.926 (Franka docs)
    np.testing.assert_allclose(tool_pose(model, np.zeros(7))[:3, 3], [0.088, 0.0, 0.926],
                               atol=1e-12)
    assert internal_frames(model, np.zeros((3, 7))).shape == (3, 7, 4, 4)
