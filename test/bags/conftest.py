"""Fixtures of the bag tests."""

import pytest

from robot_dynamics_ros.core import RobotModel


@pytest.fixture(scope="session")
def puma():
    """Return the shipped Puma 560, the robot of most bag tests."""
    return RobotModel.named("puma560")
