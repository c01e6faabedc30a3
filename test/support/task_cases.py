"""Random robots and comparisons of the task-space tests."""

import numpy as np

from random_robots import random_robot_dict
from robot_dynamics_ros.core import RobotModel

H = 1e-6            # finite-difference step


def random_models(seed=3):
    """Return three random arms (5, 6, 7 joints; both DH conventions, general offsets)."""
    rng = np.random.default_rng(seed)
    return [RobotModel.from_dict(random_robot_dict(n, rng, convention=conv, name=f"r{n}{conv}",
                                                   offsets=conv == "modified"))
            for n, conv in ((5, "standard"), (6, "modified"), (7, "standard"))]


def close(actual, expected, rtol=1e-8):
    """Assert agreement relative to the largest expected value (at least 1)."""
    np.testing.assert_allclose(actual, expected, atol=rtol * (1.0 + np.abs(expected).max()))
