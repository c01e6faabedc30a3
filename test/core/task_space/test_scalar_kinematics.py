"""The scalar (per-configuration) kinematics equal the array kinematics."""

import numpy as np

from robot_dynamics_ros.core import RobotModel, frame_pose, jacobian, jacobian_dot_qd
from robot_dynamics_ros.core.algorithms.kinematics import resolve_frame
from robot_dynamics_ros.core.task_space.scalar_kinematics import frame_constants, pose_and_jacobian
from task_cases import random_models


def test_scalar_kinematics_equals_the_array_kinematics():
    """Check the float path (one configuration) against the array path."""
    for model in random_models(9) + [RobotModel.named("panda")]:
        rng = np.random.default_rng(1)
        q, qd = rng.uniform(-1, 1, model.n), rng.uniform(-1, 1, model.n)
        for frame in (None, 2, "base"):
            link, offset, _ = resolve_frame(model, frame)
            constants = frame_constants(model, link, offset)
            R, p, columns, bias = pose_and_jacobian(constants, q.tolist(), True, qd.tolist())
            T = frame_pose(model, q, frame)
            np.testing.assert_allclose(np.reshape(R, (3, 3)), T[:3, :3], atol=1e-14)
            np.testing.assert_allclose(p, T[:3, 3], atol=1e-14)
            np.testing.assert_allclose(np.reshape(columns, (model.n, 6)).T,
                                       jacobian(model, q, frame), atol=1e-14)
            np.testing.assert_allclose(bias, jacobian_dot_qd(model, q, qd, frame), atol=1e-13)
