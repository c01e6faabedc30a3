"""Algorithms on a model, one per file: plain functions of (model, q, ...) that never change it."""
from .coriolis import coriolis_matrix
from .crba import mass_matrix
from .forward_dynamics import forward_dynamics
from .kinematics import forward_kinematics, jacobian, tool_pose
from .rnea import gravity_torques, nonlinear_effects, rnea

__all__ = ["coriolis_matrix", "mass_matrix", "forward_dynamics", "forward_kinematics", "jacobian",
           "tool_pose", "rnea", "gravity_torques", "nonlinear_effects"]
