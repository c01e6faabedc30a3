"""Uniform scaling and the demo trajectory with continuous joints from a URDF."""

import numpy as np

from robot_dynamics_ros.core.trajectories.demo import demo_trajectory
from robot_dynamics_ros.core import JointTrajectory, RobotModel, uniform_scaling
from urdf_samples import random_urdf


def test_uniform_scaling_with_continuous_joints():
    sample = random_urdf(np.random.default_rng(10), n=3, types=("continuous",), branches=False)
    model = RobotModel.from_urdf(sample.text, tip_link="tool")
    # Several turns: no position limit stops it, the torque limits do.
    q = np.array([[0.0, 0.0, 0.0], [12.0, -9.0, 20.0]])
    traj = JointTrajectory(model.joint_names, [0.0, 0.05], q, np.zeros((2, 3)), np.zeros((2, 3)))
    result = uniform_scaling(model, traj)
    assert result.scale_factor > 1.0 and np.isfinite(result.duration)


def test_demo_trajectory_with_continuous_joints():
    sample = random_urdf(np.random.default_rng(12), n=3, types=("continuous", "revolute"))
    model = RobotModel.from_urdf(sample.text, tip_link="tool")
    trajectory = demo_trajectory(model, 2.0)
    assert np.all(np.isfinite(trajectory.positions))
    assert np.all(trajectory.positions >= np.maximum(model.lower, -np.pi))
