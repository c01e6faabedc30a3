"""
ROS-free dynamics core: robot models and the algorithms on them.

Layout (see README.md, "Where things are"): ``model/`` the constant model and how it is built,
``algorithms/`` one file per algorithm, ``observer/`` external-torque observation (the momentum
residual, contact, the external wrench), ``trajectories/`` sampling and re-timing of trajectories,
``formulations/`` the source texts' formulations side by side, ``simulation/`` forward-dynamics
simulation, ``task_space/`` inverse kinematics and task-space dynamics; ``errors.py`` the error
hierarchy.

The names below are imported when first used (PEP 562 ``__getattr__``): importing one part of the
core (``core.errors``, ``core.model``) does not import the others (the simulator's scipy.integrate,
identification's scipy.signal), so a command starts in what it needs.
"""
from .lazy import exports

_WHERE = {
    ".algorithms": ("coriolis_matrix", "end_effector_twist", "forward_dynamics",
                    "forward_kinematics", "frame_names", "frame_pose", "gravity_torques",
                    "jacobian", "jacobian_dot_qd", "mass_matrix", "momentum_terms",
                    "nonlinear_effects", "rnea", "tool_pose"),
    ".errors": ("BagError", "InfeasibleError", "InputError", "RobotDescriptionError",
                "RobotDynamicsError", "SingularityError", "TrajectoryError"),
    ".joint_names": ("joint_index",),
    ".model": ("RobotModel", "resolve_robot_path", "shipped_robots"),
    ".simulation": ("SimulationResult", "Simulator", "simulate"),
    ".trajectories": ("Reference", "ReferenceSample", "JointTrajectory", "Limits",
                      "ScaledTrajectory", "ScalingError", "time_optimal_scaling",
                      "uniform_scaling", "JointPath", "TimeLaw"),
}
__getattr__, __dir__, __all__ = exports(__name__, _WHERE)
