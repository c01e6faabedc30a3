"""
Time-optimal path parameterization (reachability) under torque, velocity, acceleration limits.

Split as toppra splits it: ``path`` (the path and its grid), ``collocation`` (path and torque
coefficients at collocation points), ``constraints`` (limits as rows in (sdd, sd^2)),
``reachability`` (the passes; a :class:`TimeLaw`), ``law`` (law -> trajectory points), ``verify``
(the output re-checked as the controller interpolates it), ``torques`` (their batched inverse
dynamics); ``time_optimal`` drives them.
"""
from ...lazy import exports

# (imported at first use: the path's spline is scipy.interpolate, 0.4-0.9 s of a command's start,
# which a uniform `robot-dynamics scale` reading the constraint set does not need)
__getattr__, __dir__, __all__ = exports(__name__, {
    ".path": ("JointPath",), ".reachability": ("TimeLaw",),
    ".time_optimal": ("time_optimal_scaling",)})
