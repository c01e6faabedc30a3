"""Joint trajectories (sampled as joint_trajectory_controller does), re-timed within limits."""
from .limits import Limits, ScalingError
from .reference import Reference, ReferenceSample
from .result import ScaledTrajectory
from .topp import JointPath, TimeLaw, time_optimal_scaling
from .trajectory import JointTrajectory
from .uniform import uniform_scaling

__all__ = ["JointTrajectory", "JointPath", "Limits", "ScaledTrajectory", "ScalingError", "TimeLaw",
           "uniform_scaling", "time_optimal_scaling", "Reference", "ReferenceSample"]
