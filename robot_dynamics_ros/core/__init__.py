"""ROS-free dynamics core: robot models from YAML and the algorithms on them."""
from .joint_space import coriolis_matrix, forward_dynamics, mass_matrix
from .kinematics import forward_kinematics, jacobian, tool_pose
from .model import RobotModel, resolve_robot_path, shipped_robots
from .rnea import gravity_torques, nonlinear_effects, rnea
from .robot_file import RobotDescriptionError

__all__ = ["RobotModel", "RobotDescriptionError", "resolve_robot_path", "shipped_robots",
           "forward_kinematics", "tool_pose", "jacobian", "rnea", "gravity_torques",
           "nonlinear_effects", "mass_matrix", "coriolis_matrix", "forward_dynamics"]
