"""
The control laws the nodes, ``bag process`` and the observer apply: written once, here.

ROS-free.  Each law is a plain function of the dynamics it needs (passed in: the implementation
is chosen outside the core) and of joint vectors.  The per-joint formulas (friction, the servo
acceleration of computed torque, the holding torque) take plain floats *or* numpy arrays, so a
node's 1 kHz path maps them over lists of a handful of joints and ``bag process`` applies the very
same expression to (N, n) arrays of whole chunks.

* :mod:`.friction`: F_v qd + F_s sgn(qd), the joint friction of the robot file;
* :mod:`.laws`: the holding torque g(q) (+ friction), the feedforward torque
  RNEA(q_ref, qd_ref, qdd_ref) and the computed torque RNEA(q, qd, qdd_ref + Kd e_dot + Kp e);
* :mod:`.effort_limits`: what a command may not exceed (``clamp``, ``warn``, ``off``), counted.
"""
from .effort_limits import (CLAMP, OFF, POLICIES, WARN, EffortLimiter, LimitReport,
                            effective_limits, unknown_effort_limits)
from .friction import friction_torque, friction_torques, sign
from .laws import (COMPUTED_TORQUE, DEFAULT_KD, DEFAULT_KP, FEEDFORWARD, MODES, Gains, TorqueLaw,
                   holding_torque, holding_torques, servo_acceleration)

__all__ = ["friction_torque", "friction_torques", "sign", "holding_torque", "holding_torques",
           "servo_acceleration", "DEFAULT_KP", "DEFAULT_KD", "Gains", "TorqueLaw", "MODES",
           "FEEDFORWARD", "COMPUTED_TORQUE", "EffortLimiter", "LimitReport", "POLICIES",
           "unknown_effort_limits", "effective_limits", "CLAMP", "WARN", "OFF"]
