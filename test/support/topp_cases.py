"""Cases shared by the scaling tests: the shipped paths, the Puma's bisected grid, excess."""

import numpy as np

from locations import EX72, PUMA_PATH
from robot_dynamics_ros.core import JointTrajectory, RobotModel
from robot_dynamics_ros.core.trajectories.topp import collocation, path as paths

CASES = [("planar2", EX72), ("puma560", PUMA_PATH)]


def puma_level(steps_per_segment=1):
    """Return the Puma path's collocation on a grid, bisected once (data partly reused)."""
    model, traj = RobotModel.named("puma560"), JointTrajectory.from_yaml(PUMA_PATH)
    path = paths.TimedPath(traj)
    points = collocation.GridPoints(model, path, paths.initial_grid(path,
                                                                    steps_per_segment)).bisected()
    grid = points.grid()
    points.add_midpoints()
    return model, traj, points, grid


def excess(tau, limits):
    """Return how far the torques tau exceed the effort limits, relative to them (<= 0: within)."""
    return np.maximum((tau - limits.effort_upper) / np.abs(limits.effort_upper),
                      (limits.effort_lower - tau) / np.abs(limits.effort_lower))
