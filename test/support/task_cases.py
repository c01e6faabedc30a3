"""Random robots and comparisons of the task-space tests."""

import numpy as np

from random_robots import random_robot_dict
from robot_dynamics_ros.core import RobotModel

H = 1e-6            # finite-difference step


def planar(lengths, name="planar"):
    """Build a planar arm in the x-y plane with these link lengths (standard DH, alpha = 0)."""
    joints = [{"name": f"joint{i + 1}", "type": "revolute",
               "dh": {"a": a, "alpha": 0.0, "d": 0.0, "theta": 0.0},
               "limits": {"lower": -3.0, "upper": 3.0, "velocity": 2.0, "effort": 100.0},
               "link": {"mass": 1.0, "com": [-a / 2, 0.0, 0.0],
                        "inertia": {"ixx": 0.01, "iyy": 0.1, "izz": 0.1}}}
              for i, a in enumerate(lengths)]
    return RobotModel.from_dict({"name": name, "dh_convention": "standard",
                                 "gravity": [0.0, -9.81, 0.0], "joints": joints})


def random_models(seed=3):
    """Return three random arms (5, 6, 7 joints; both DH conventions, general offsets)."""
    rng = np.random.default_rng(seed)
    return [RobotModel.from_dict(random_robot_dict(n, rng, convention=conv, name=f"r{n}{conv}",
                                                   offsets=conv == "modified"))
            for n, conv in ((5, "standard"), (6, "modified"), (7, "standard"))]


def close(actual, expected, rtol=1e-8):
    """Assert agreement relative to the largest expected value (at least 1)."""
    np.testing.assert_allclose(actual, expected, atol=rtol * (1.0 + np.abs(expected).max()))
