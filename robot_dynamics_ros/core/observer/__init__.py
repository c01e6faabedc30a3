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
import importlib

# (imported at first use, PEP 562: the wrench's task space pulls in scipy, which the command line's
# `bag` parser, reading EFFORT_TIMINGS, does not need)
_MODULE_OF = {"ContactDetector": ".contact", "detection_latency": ".contact",
              "EFFORT_TIMINGS": ".momentum_observer", "MomentumObserver": ".momentum_observer",
              "ObserverOptions": ".momentum_observer", "joint_torques_of_wrench": ".wrench",
              "wrench_from_residual": ".wrench"}
__all__ = ["MomentumObserver", "ObserverOptions", "EFFORT_TIMINGS", "ContactDetector",
           "detection_latency", "wrench_from_residual", "joint_torques_of_wrench"]


def __getattr__(name: str):
    """Import ``name`` from its module at its first use (then it is a global)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_MODULE_OF))
