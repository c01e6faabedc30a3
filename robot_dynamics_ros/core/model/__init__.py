"""The constant robot model and how it is built (YAML robot files; payload folding)."""
from .model import Chain, RobotModel, resolve_robot_path, shipped_robots

__all__ = ["Chain", "RobotModel", "resolve_robot_path", "shipped_robots"]
