"""Robots of the identification tests (shipped, rigid and random) and a numerical rank."""

import numpy as np

from random_robots import random_robot_dict
from robot_dynamics_ros.core import RobotModel, shipped_robots


def random_models():
    """Return six random 5-joint robots: prismatic joints, motors, friction, a payload."""
    rng = np.random.default_rng(7)
    out = []
    for k, convention in enumerate(["standard", "modified"] * 3):
        out.append(RobotModel.from_dict(random_robot_dict(
            5, rng, convention=convention, prismatic_prob=0.4, with_motors=k % 3 != 2,
            with_friction=k % 2 == 0, with_payload=k == 3,
            offsets=convention == "modified")))      # (the general joint offsets: model.Chain)
    return out


def column_rank(W):
    """Return the numerical rank of W with its columns scaled to unit norm (threshold 1e-9)."""
    s = np.linalg.svd(W / np.maximum(np.linalg.norm(W, axis=0), 1e-300), compute_uv=False)
    return int(np.sum(s > 1e-9 * s[0]))


MODELS = [RobotModel.named(name) for name in shipped_robots()]
ALL = MODELS + [m.rigid() for m in MODELS] + random_models()
