"""Joint trajectories (sampled as joint_trajectory_controller does), re-timed within limits."""
from ..lazy import exports

# (imported at first use: the time-optimal scaling's path pulls in scipy.interpolate, which a
# uniform scaling or a trajectory alone does not need)
__getattr__, __dir__, __all__ = exports(__name__, {
    ".limits": ("Limits", "ScalingError"), ".reference": ("Reference", "ReferenceSample"),
    ".result": ("ScaledTrajectory",), ".topp": ("JointPath", "TimeLaw", "time_optimal_scaling"),
    ".trajectory": ("JointTrajectory",), ".uniform": ("uniform_scaling",)})
