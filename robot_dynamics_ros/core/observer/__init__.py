"""
External-torque observation without ROS: the momentum residual, contact, the external wrench.

    from robot_dynamics_ros.core.observer import MomentumObserver, ObserverOptions
    observer = MomentumObserver(model, ObserverOptions(gains=[50.0] * model.n))
    r = observer.update(t, q, qd, tau)          # the external joint torques, filtered

* ``momentum_observer.py`` -- :class:`MomentumObserver`: the generalized-momentum residual
  (De Luca and Mattone, 2005) in its exact discrete-time form for irregular sampling, the
  robot file's friction subtracted; one sample or a block.
* ``contact.py`` -- :class:`ContactDetector` (per-joint thresholds, hysteresis) and
  :func:`detection_latency`.
* ``wrench.py`` -- :func:`wrench_from_residual`: the tool wrench F with J^T F = r (damped
  least squares); :func:`joint_torques_of_wrench`: J^T F (what the simulator applies).

p = B qd and C^T qd come from ``algorithms/momentum.py`` (one O(n) recursion).
"""
from ..lazy import exports

# (imported at first use: the wrench's task space pulls in scipy, which the command line's `bag`
# parser, reading EFFORT_TIMINGS, does not need)
__getattr__, __dir__, __all__ = exports(__name__, {
    ".contact": ("ContactDetector", "detection_latency"),
    ".momentum_observer": ("MomentumObserver",),
    ".options": ("EFFORT_TIMINGS", "ObserverOptions"),
    ".wrench": ("joint_torques_of_wrench", "wrench_from_residual")})
