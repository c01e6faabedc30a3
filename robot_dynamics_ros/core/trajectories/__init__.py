"""Joint trajectories (sampled as joint_trajectory_controller does) and their re-timing within limits."""
from .reference import Reference, ReferenceSample
from .topp.time_optimal import time_optimal_scaling
from .trajectory import JointTrajectory
from .uniform import Limits, ScaledTrajectory, ScalingError, uniform_scaling

__all__ = ["JointTrajectory", "Limits", "ScaledTrajectory", "ScalingError", "uniform_scaling",
           "time_optimal_scaling"]
__all__ += ["Reference", "ReferenceSample"]
