"""
Time-optimal path parameterization (reachability) under torque, velocity, acceleration limits.

Split as toppra splits it: ``path`` (the path and its grid), ``collocation`` (path and torque
coefficients at collocation points), ``constraints`` (limits as rows in (sdd, sd^2)),
``reachability`` (the passes; a :class:`TimeLaw`), ``law`` (law -> trajectory points), ``verify``
(the output re-checked as the controller interpolates it), ``torques`` (their batched inverse
dynamics); ``time_optimal`` drives them.
"""
from .path import JointPath
from .reachability import TimeLaw
from .time_optimal import time_optimal_scaling

__all__ = ["JointPath", "TimeLaw", "time_optimal_scaling"]
