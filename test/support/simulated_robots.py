"""Robots of the simulator tests: a random arm with full inertias, and a one-joint wheel."""

import numpy as np

from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.core import RobotModel


def full_inertia_robot(seed=3):
    """Make a random 6-joint arm with full (rotated) inertia tensors, rotors, mixed joints."""
    rng = np.random.default_rng(seed)
    model = RobotModel.from_dict(random_robot_dict(6, rng, convention="modified",
                                                   with_motors=True))
    q0, qd0, _ = random_state(model, rng)
    return model, q0, qd0


def wheel(coulomb=2.0, viscous=0.0, inertia=0.5, effort=100.0, lower=-100.0, upper=100.0):
    """One revolute joint about the vertical axis (gravity along it: no gravity torque)."""
    return RobotModel.from_dict({
        "name": "wheel", "dh_convention": "standard", "gravity": [0.0, 0.0, -9.81],
        "joints": [{"name": "spin", "type": "revolute",
                    "dh": {"a": 0.0, "alpha": 0.0, "d": 0.0, "theta": 0.0},
                    "limits": {"lower": lower, "upper": upper, "velocity": 10.0, "effort": effort},
                    "link": {"mass": 1.0, "com": [0.0, 0.0, 0.0],
                             "inertia": {"ixx": inertia, "iyy": inertia, "izz": inertia}},
                    "friction": {"viscous": viscous, "coulomb": coulomb}}]})
