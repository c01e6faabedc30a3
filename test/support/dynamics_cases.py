"""Random robots of the core's property tests, and the potential energy checked against them."""

import numpy as np

from random_robots import random_robot_dict
from robot_dynamics_ros.core import RobotModel, forward_kinematics

# (joints, DH convention, seed): mixed joints, full inertias, motors, friction; the modified-DH
# robots have general joint offsets too (model.Chain's e, as URDFs with almost parallel axes).
CASES = [(n, conv, seed) for seed, (n, conv) in enumerate(
    [(1, "standard"), (2, "modified"), (3, "standard"), (4, "modified"), (5, "standard"),
     (6, "modified"), (6, "standard"), (7, "modified")])]


def make(n, convention, seed, **kw):
    """Return the random robot of a case (motors and friction unless told) and its generator."""
    rng = np.random.default_rng(seed)
    kw.setdefault("with_motors", True)
    kw.setdefault("with_friction", True)
    kw.setdefault("offsets", convention == "modified")
    return RobotModel.from_dict(random_robot_dict(n, rng, convention=convention, **kw)), rng


def potential_energy(model, q):
    """
    Return U(q) = -sum m_i g . c_i (Siciliano et al., Robotics, eq. 7.36).

    The world centres of mass c_i come from forward kinematics.
    """
    frames = forward_kinematics(model, q)[1:]
    com = np.einsum("nij,nj->ni", frames[:, :3, :3], model.com) + frames[:, :3, 3]
    return -np.sum(model.mass * (com @ model.gravity))
