"""Algorithms on a model, one per file: plain functions of (model, q, ...) that never change it."""
from .coriolis import coriolis_matrix
from .mass import mass_matrix
from .forward_dynamics import forward_dynamics
from .kinematics import (end_effector_twist, forward_kinematics, frame_names, frame_pose, jacobian,
                         jacobian_dot_qd, tool_pose)
from .momentum import MomentumTerms, momentum_terms
from .rnea import gravity_torques, nonlinear_effects, rnea

__all__ = ["coriolis_matrix", "mass_matrix", "forward_dynamics", "forward_kinematics", "jacobian",
           "tool_pose", "frame_pose", "frame_names", "jacobian_dot_qd", "end_effector_twist",
           "rnea", "gravity_torques", "nonlinear_effects", "momentum_terms",
           "MomentumTerms"]
