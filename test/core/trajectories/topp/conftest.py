"""Fixtures of the time-optimal scaling tests."""

import pytest

from robot_dynamics_ros.core import JointTrajectory, RobotModel, time_optimal_scaling
from topp_cases import CASES


@pytest.fixture(scope="module")
def solved():
    """Return {robot: (model, trajectory, time-optimal result)} of the shipped paths."""
    out = {}
    for robot, path in CASES:
        model, traj = RobotModel.named(robot), JointTrajectory.from_yaml(path)
        out[robot] = (model, traj, time_optimal_scaling(model, traj))
    return out
