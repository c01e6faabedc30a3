"""Robot descriptions as dictionaries, for tests that edit a shipped robot."""

from robot_dynamics_ros.core import RobotModel


def planar_dict():
    """Return the shipped planar2 robot as a robot-file dictionary."""
    return RobotModel.named("planar2").to_dict()
