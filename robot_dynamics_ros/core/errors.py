"""
The package's one error hierarchy.

Every error the core raises on purpose is a :class:`RobotDynamicsError`, and each kind says whose
fault it is, so callers (the nodes' services, the command line) can answer with the right words
without parsing messages (``robot_dynamics_ros.nodes.errors`` maps them in one table):

* :class:`RobotDescriptionError` -- a robot file, URDF or description dict is invalid (the message
  names the file, the joint or link and the field);
* :class:`TrajectoryError` -- a trajectory or path (file, message or object) is invalid (the
  message names the point, the field and the joint);
* :class:`InputError` -- an argument of an algorithm is invalid: wrong shape, NaN, an unknown
  joint, an option out of range, too few points to work on;
* :class:`InfeasibleError` -- the request is valid but has no solution within the limits (e.g.
  gravity alone exceeds an effort limit); carries the joint and time where that is known;
* :class:`SingularityError` -- the request is valid but the model is singular there (a singular
  mass matrix or Jacobian where a regular one is needed);
* :class:`BagError` -- a rosbag2 bag cannot be used (missing or corrupt, unknown message types,
  required topics absent, joint names that do not match the robot, an output that exists).

All of them are ``ValueError`` subclasses, so code written against plain ``ValueError`` keeps
working.
"""
from __future__ import annotations


class RobotDynamicsError(ValueError):
    """Base of every error the package raises on purpose."""


class RobotDescriptionError(RobotDynamicsError):
    """
    A robot description (YAML, URDF or dict) is invalid.

    The message names file, joint and field.
    """


class TrajectoryError(RobotDynamicsError):
    """A trajectory or path is invalid; the message names the point, field and joint."""


class InputError(RobotDynamicsError):
    """An argument of an algorithm is invalid (shape, non-finite value, unknown joint, option)."""


class InfeasibleError(RobotDynamicsError):
    """A valid request without a solution within the limits; ``joint`` and ``time`` where known."""

    def __init__(self, message: str, joint: str | None = None, time: float | None = None):
        super().__init__(message)
        self.joint, self.time = joint, time


class SingularityError(RobotDynamicsError):
    """The model is singular at the requested configuration (mass matrix, Jacobian)."""


class BagError(RobotDynamicsError):
    """A rosbag2 bag cannot be used: missing, corrupt, unknown types, topics or joints absent."""


# What each kind of error is, in words (the command line and the nodes' services use this table).
ERROR_SUMMARIES = {
    RobotDescriptionError: "invalid robot description",
    TrajectoryError: "invalid trajectory",
    InputError: "invalid input",
    InfeasibleError: "infeasible within the limits",
    SingularityError: "singular configuration",
    BagError: "unusable bag",
}


def error_summary(exc: BaseException) -> str:
    """Return a few words saying what kind of problem ``exc`` is (its ERROR_SUMMARIES entry)."""
    for cls in type(exc).__mro__:
        if cls in ERROR_SUMMARIES:
            return ERROR_SUMMARIES[cls]
    return "error"
