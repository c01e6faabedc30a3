"""robot_dynamics_ros: manipulator dynamics for ROS 2 (see README.md)."""
__version__ = "0.1.0"
