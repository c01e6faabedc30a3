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
from .contact import ContactDetector, detection_latency
from .momentum_observer import EFFORT_TIMINGS, MomentumObserver, ObserverOptions
from .wrench import joint_torques_of_wrench, wrench_from_residual

__all__ = ["MomentumObserver", "ObserverOptions", "EFFORT_TIMINGS", "ContactDetector",
           "detection_latency", "wrench_from_residual", "joint_torques_of_wrench"]
