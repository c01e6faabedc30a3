"""
ROS-free dynamics core: robot models and the algorithms on them.

Layout (see README.md, "Where things are"): ``model/`` the constant model and how it is built,
``algorithms/`` one file per algorithm, ``observer/`` external-torque observation (the momentum
residual, contact, the external wrench), ``trajectories/`` sampling and re-timing of trajectories,
``formulations/`` the source texts' formulations side by side, ``simulation/`` forward-dynamics
simulation, ``task_space/`` inverse kinematics and task-space dynamics; ``errors.py`` the error
hierarchy.
"""
from .algorithms import (coriolis_matrix, end_effector_twist, forward_dynamics, forward_kinematics,
                         frame_names, frame_pose, gravity_torques, jacobian, jacobian_dot_qd,
                         mass_matrix, momentum_terms, nonlinear_effects, rnea, tool_pose)
from .errors import (InfeasibleError, InputError, RobotDescriptionError, RobotDynamicsError,
                     SingularityError, TrajectoryError)
from .joint_names import joint_index
from .model import RobotModel, resolve_robot_path, shipped_robots
from .simulation import SimulationResult, Simulator, simulate
from .trajectories import Reference, ReferenceSample
from .trajectories import (JointTrajectory, Limits, ScaledTrajectory, ScalingError,
                           time_optimal_scaling, uniform_scaling)
from .trajectories import JointPath, TimeLaw

__all__ = ["RobotModel", "resolve_robot_path", "shipped_robots",
           "forward_kinematics", "tool_pose", "jacobian", "rnea", "gravity_torques",
           "frame_pose", "frame_names", "jacobian_dot_qd", "end_effector_twist",
           "nonlinear_effects", "mass_matrix", "coriolis_matrix", "momentum_terms",
           "forward_dynamics",
           "JointTrajectory", "Limits", "ScaledTrajectory", "ScalingError", "uniform_scaling",
           "time_optimal_scaling", "simulate", "SimulationResult", "Simulator",
           "RobotDynamicsError", "RobotDescriptionError", "TrajectoryError", "InputError",
           "InfeasibleError", "SingularityError"]
__all__ += ["joint_index", "Reference", "ReferenceSample"]
__all__ += ["JointPath", "TimeLaw"]
from .errors import BagError  # noqa: E402
__all__ += ["BagError"]
