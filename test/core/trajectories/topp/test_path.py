"""Geometric paths: the C2 spline through waypoints, its grid limits, bad or infeasible paths."""

import numpy as np
import pytest
from scipy.spatial import cKDTree

from robot_dynamics_ros.core import (InfeasibleError, JointPath, JointTrajectory, Limits,
                                     RobotModel, TrajectoryError, rnea, time_optimal_scaling)
from robot_dynamics_ros.core.trajectories.topp import collocation
from topp_cases import excess


def test_geometric_path_input_is_the_c2_spline_through_the_waypoints():
    """
    A JointPath is the C2 cubic spline through its waypoints, timed within limits.

    A JointPath is scipy's CubicSpline through its waypoints (C2: q'' continuous at the knots;
    default s: cumulative chord length), and time_optimal_scaling times it: the output starts at
    0, passes through every waypoint in order and keeps every limit as the controller
    interpolates it (torque, velocity and an acceleration limit from the API).
    """
    model = RobotModel.named("panda")
    via = np.array([[0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8], [0.8, -0.2, 0.3, -1.6, 0.4, 1.9, 0.2],
                    [0.4, 0.3, -0.3, -1.2, -0.3, 2.2, -0.4], [-0.5, 0.1, -0.6, -1.8, 0.2, 1.7,
                                                              0.5]])
    path = JointPath(model.joint_names, via, boundary="clamped")
    chord = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(via, axis=0), axis=1))])
    np.testing.assert_allclose(path.knots, chord)
    q, dq, ddq = path.sample(path.knots)
    np.testing.assert_allclose(q, via, atol=1e-12)
    np.testing.assert_allclose(dq[[0, -1]], 0.0, atol=1e-12)            # clamped ends
    h = 1e-7
    jump = path.sample(path.knots[1:-1] + h)[2] - path.sample(path.knots[1:-1] - h)[2]
    assert np.abs(jump).max() < 1e-4                                     # C2 at the knots
    limits = Limits.from_model(model, acceleration=4.0)
    result = time_optimal_scaling(model, path, limits)
    out = result.for_controller()
    assert out.times[0] == 0.0 and np.isnan(result.scale_factor)
    t = np.linspace(0.0, out.duration, 10 * out.num_points)
    q, qd, qdd = out.sample(t)
    assert excess(rnea(model, q, qd, qdd), limits).max() <= 1e-3
    assert (np.abs(qd) <= limits.velocity * 1.001).all() and (np.abs(qdd) <= 4.0 * 1.001).all()
    nearest = cKDTree(q).query(via)[1]
    assert np.all(np.diff(nearest) > 0) and cKDTree(q).query(via)[0].max() < 1e-3
    # the same path given as a timed trajectory sampled from the spline takes the same time
    s = np.linspace(path.knots[0], path.knots[-1], 400)
    timed = JointTrajectory(model.joint_names, s, *path.sample(s))
    assert time_optimal_scaling(model, timed, limits).duration == pytest.approx(result.duration,
                                                                                rel=0.01)


@pytest.mark.parametrize("kwargs, message", [
    (dict(waypoints=[[0.0, 0.0]]), "2 to 100000 waypoints"),
    (dict(waypoints=[[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]), "waypoint 1 repeats waypoint 0"),
    (dict(waypoints=[[0.0, 0.0], [np.nan, 0.0]]), "waypoint 1 joint 'joint1' is not finite"),
    (dict(waypoints=[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]), "expected shape (N, 2)"),
    (dict(s=[0.0, 0.0]), "s: waypoint 1 (0.0) is not after waypoint 0"),
    (dict(s=[0.0, np.inf]), "s: waypoint 1 is not finite"),
    (dict(boundary="periodic"), "boundary: expected one of"),
])
def test_bad_paths_name_what_and_where(kwargs, message):
    args = dict(joint_names=("joint1", "joint2"), waypoints=[[0.0, 0.0], [0.5, 0.3]])
    args.update(kwargs)
    with pytest.raises(TrajectoryError) as info:
        JointPath(**args)
    assert message in str(info.value)


def test_path_file_and_infeasible_path(tmp_path):
    """
    Path files are read; an infeasible path names joint and path parameter.

    The path file format (YAML, read like robot files); a path that gravity alone cannot hold
    is refused naming joint and path parameter.
    """
    model = RobotModel.named("planar2")
    file = tmp_path / "path.yaml"
    file.write_text("joint_names: [joint1, joint2]\nwaypoints:\n  - [0.0, 0.0]\n  - [0.3, 2e-1]\n"
                    "s: [0, 1]\nboundary: natural\n")
    path = JointPath.from_yaml(file)
    assert path.boundary == "natural" and path.waypoints[1, 1] == 0.2
    with pytest.raises(InfeasibleError,
                       match=r"joint 'joint1' at s = 0 \(path parameter\): gravity"):
        time_optimal_scaling(model, path, Limits.from_model(model, effort_margin=0.1))
    file.write_text("joint_names: [joint1, joint2]\nwaypoints:\n  - [0.0, 0.0]\n  - [0.3]\n")
    with pytest.raises(TrajectoryError, match=r"path.yaml: waypoints\[1\]: expected 2 values"):
        JointPath.from_yaml(file)


def test_grid_points_of_a_c2_path_equal_its_left_and_right_limits():
    """
    On a C2 spline a grid point's data is computed once, for both sides.

    The grid data of a JointPath (shared between the step ending and the step starting at a grid
    point) equal the path data computed separately as right limits at s_0..s_{N-1} and left
    limits at s_1..s_N.
    """
    model = RobotModel.named("panda")
    rng = np.random.default_rng(5)
    waypoints = rng.uniform(-1.0, 1.0, (6, model.n))
    path = JointPath(model.joint_names, waypoints)
    s = np.linspace(path.knots[0], path.knots[-1], 41)
    points = collocation.GridPoints(model, path, s)
    right, left = collocation.point_data(model, path, [(s[:-1], "right"), (s[1:], "left")])
    for got, want in ((points.right, right), (points.left, left)):
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * max(np.abs(b).max(), 1.0))


def test_the_grid_of_a_densely_sampled_path_does_not_follow_its_sampling():
    """
    More segments than grid steps: only the ends and the knots the law must see are held.

    A C2 path (a spline) holds its ends only, uniform steps in between, whatever its sampling; a
    cubic trajectory (velocities only) also holds the waypoints where q'' jumps by more than
    KNOT_JUMP of its largest value (the cubic through exact samples of a smooth motion: nowhere
    but at the real jump).
    """
    from robot_dynamics_ros.core.trajectories.topp import path as paths
    names = ("a", "b")
    for points in (1000, 4000):
        s = np.linspace(0.0, 2.0, points)
        q = np.stack([np.sin(s), s ** 2], axis=1)
        spline = JointPath(names, q, s)
        knots, counts = paths.grid_knots(spline, 75, 150)
        np.testing.assert_array_equal(knots, [0.0, 2.0])
        assert counts.tolist() == [75]
        grid = paths.initial_grid(spline, counts, end_steps=4, knots=knots)
        assert 75 <= grid.size - 1 <= 90                       # (graded moving ends)
    # a cubic trajectory through exact samples of a motion whose q'' jumps at t = 1 (2 -> 6)
    t = np.linspace(0.0, 2.0, 801)
    q = np.stack([np.where(t < 1.0, t ** 2, 2.0 * t - 1.0 + 3.0 * (t - 1.0) ** 2),
                  (t - 1.5) ** 3], axis=1)
    qd = np.stack([np.where(t < 1.0, 2.0 * t, 2.0 + 6.0 * (t - 1.0)), 3.0 * (t - 1.5) ** 2],
                  axis=1)
    traj = JointTrajectory(names, t, q, qd)
    knots, counts = paths.grid_knots(paths.TimedPath(traj), 75, 150)
    assert knots[0] == 0.0 and knots[-1] == 2.0
    np.testing.assert_array_equal(knots, [0.0, 1.0, 2.0])     # the jump of q'' held
    assert counts.tolist() == [38, 38]
    # few segments: every knot, as before
    few = JointTrajectory(names, t[::80], q[::80], qd[::80])
    knots, counts = paths.grid_knots(paths.TimedPath(few), 75, 150)
    np.testing.assert_array_equal(knots, few.times)
    assert (counts == 8).all()
