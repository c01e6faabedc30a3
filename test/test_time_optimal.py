"""
Time-optimal time law (beyond seed 002): limits between grid points, optimality, consistency.

Oracles: inverse dynamics recomputed with the full model (rotors, friction) on a resampling at 10x
the output density, both of the trajectory as the controller interpolates it and of the exact
piecewise-constant-sdd law; the same solver on a 10x finer grid (a converged optimum); the uniform
scaling (a feasible law, so never faster); a 1-joint closed form (bang-bang: the minimum time of
a rest-to-rest move of an inertia under a torque limit is 2 sqrt(J d / tau)).
"""
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial import cKDTree

from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core import InfeasibleError, InputError, Limits, ScalingError
from robot_dynamics_ros.core import uniform_scaling
from robot_dynamics_ros.core import JointPath, TrajectoryError
from robot_dynamics_ros.core import time_optimal_scaling
from robot_dynamics_ros.core import JointTrajectory
from robot_dynamics_ros.core.trajectories.topp import collocation, constraints, reachability
from robot_dynamics_ros.core.trajectories.topp import path as paths
from robot_dynamics_ros.core.trajectories.topp.verify import verify

CONFIG = Path(__file__).resolve().parents[1] / "config"
EX72 = CONFIG / "trajectories" / "planar2_example72_trajectory1.yaml"
PUMA_PATH = CONFIG / "trajectories" / "puma560_path.yaml"
CASES = [("planar2", EX72), ("puma560", PUMA_PATH)]


@pytest.fixture(scope="module")
def solved():
    out = {}
    for robot, path in CASES:
        model, traj = RobotModel.named(robot), JointTrajectory.from_yaml(path)
        out[robot] = (model, traj, time_optimal_scaling(model, traj))
    return out


def excess(tau, limits):
    return np.maximum((tau - limits.effort_upper) / np.abs(limits.effort_upper),
                      (limits.effort_lower - tau) / np.abs(limits.effort_lower))


@pytest.mark.parametrize("robot", [c[0] for c in CASES])
def test_limits_hold_between_points_as_the_controller_interpolates(solved, robot):
    model, _, result = solved[robot]
    out = result.for_controller()
    assert out.accelerations is None and out.effort is not None
    t = np.linspace(out.times[0], out.times[-1], 10 * out.num_points)
    q, qd, qdd = out.sample(t)
    assert excess(rnea(model, q, qd, qdd), result.limits).max() <= 0.005
    assert (np.abs(qd) <= model.velocity_limit * 1.005).all()
    assert excess(rnea(model, q, qd, qdd), result.limits).max() >= -0.005   # some limit is used


@pytest.mark.parametrize("robot", [c[0] for c in CASES])
def test_same_path_and_consistent_effort(solved, robot):
    """
    Every returned point is on the path, moving forward, with consistent effort.

    Every returned point lies on the original path, moving forward along it, and its effort is
    the inverse dynamics of its state.
    """
    model, traj, result = solved[robot]
    out = result.trajectory
    s = np.linspace(traj.times[0], traj.times[-1], 20001)
    q_path, dq_path, _ = traj.sample(s)
    dist, nearest = cKDTree(q_path).query(out.positions)
    assert dist.max() < 1e-3
    assert np.all(np.diff(nearest) >= 0)                              # monotone along the path
    sd = np.einsum("kj,kj->k", out.velocities, dq_path[nearest])      # qd = q'(s) sd, sd >= 0
    assert (sd >= -1e-9).all()
    np.testing.assert_allclose(out.effort, rnea(model, out.positions, out.velocities,
                                                out.accelerations), atol=1e-9)


def law_samples(traj, law, density):
    """
    Sample the exact time law on the original path.

    The exact time law (x linear in s on each step, x_{k+1} = x_k + 2 Delta_k u_k) at
    ``density`` points per step, on the original path: (q, qd, qdd) = (q, q' sd, q' u + q'' x).
    """
    delta = np.diff(law.s)
    N = delta.size
    step = np.append(np.repeat(np.arange(N), density), N - 1)
    th = np.append(np.tile(np.arange(density) / density, N), 1.0)
    s = law.s[step] + th * delta[step]
    q, dq, ddq = traj.sample(s)
    q[-1], dq[-1], ddq[-1] = traj.sample(s[-1], side="left")
    xs = np.maximum(law.x[step] + 2.0 * th * delta[step] * law.u[step], 0.0)
    return q, dq * np.sqrt(xs)[:, None], dq * law.u[step, None] + ddq * xs[:, None]


def test_law_samples_respect_limits_on_planar2():
    """Directly: resample the exact law the solver returns (not its output), recompute dynamics."""
    model, traj = RobotModel.named("planar2"), JointTrajectory.from_yaml(EX72)
    limits = Limits.from_model(model)
    law = time_optimal_scaling(model, traj, grid_steps=150, max_levels=2).law
    q, qd, qdd = law_samples(traj, law, 10)
    assert excess(rnea(model, q, qd, qdd), limits).max() <= 1e-3
    # the law is consistent: x_{k+1} = x_k + 2 Delta_k u_k
    np.testing.assert_allclose(law.x[1:], np.maximum(
        law.x[:-1] + 2 * np.diff(law.s) * law.u, 0), atol=1e-9)
    assert law.duration == pytest.approx(time_optimal_scaling(model, traj, grid_steps=150,
                                                              max_levels=2).duration, rel=1e-9)


@pytest.mark.parametrize("robot", [c[0] for c in CASES])
def test_near_fine_grid_optimum_and_faster_than_uniform(solved, robot):
    model, traj, result = solved[robot]
    fine = time_optimal_scaling(model, traj, grid_steps=1500)
    assert fine.duration <= result.duration * 1.0005
    assert result.duration <= fine.duration * 1.02
    assert result.duration <= uniform_scaling(model, traj).duration


def test_single_joint_bang_bang_closed_form():
    """
    One joint's rest-to-rest minimum time is bang-bang's 2 sqrt(J d / T).

    One revolute joint, horizontal plane (no gravity torque), no friction: rest-to-rest over
    d rad within |tau| <= T takes 2 sqrt(J d / T) with J the joint inertia (link + rotor).
    """
    spec = {"name": "one",
            "dh_convention": "standard",
            "gravity": [0.0,
                        0.0,
                        -9.81],
            "joints": [{"name": "j",
                        "type": "revolute",
                        "dh": {"a": 0.5,
                               "alpha": 0.0,
                               "d": 0.0,
                               "theta": 0.0},
                        "limits": {"lower": -3.0,
                                   "upper": 3.0,
                                   "velocity": 100.0,
                                   "effort": 10.0},
                        "link": {"mass": 2.0,
                                 "com": [-0.25,
                                         0.0,
                                         0.0],
                                 "inertia": {"ixx": 0.01,
                                             "iyy": 0.05,
                                             "izz": 0.05}}}]}
    model = RobotModel.from_dict(spec)
    J = 0.05 + 2.0 * 0.25**2
    d = 1.0
    # path: a quintic from 0 to d in 1 s (any timing: only the path matters)
    t = np.linspace(0.0, 1.0, 11)
    r = 10 * t**3 - 15 * t**4 + 6 * t**5
    rd, rdd = 30 * t**2 - 60 * t**3 + 30 * t**4, 60 * t - 180 * t**2 + 120 * t**3
    traj = JointTrajectory(("j",), t, d * r[:, None], d * rd[:, None], d * rdd[:, None])
    result = time_optimal_scaling(model, traj, grid_steps=400)
    assert result.duration == pytest.approx(2 * np.sqrt(J * d / 10.0), rel=0.01)


def test_gravity_infeasible_and_malformed():
    model = RobotModel.named("planar2")
    weak = Limits.from_model(model, effort_margin=0.1)
    stretched = JointTrajectory(("joint1", "joint2"), [0.0, 1.0], [
                                [0.0, 0.0], [0.3, 0.0]], np.zeros((2, 2)))
    with pytest.raises(ScalingError, match="joint 'joint1' at t = 0 s: gravity alone"):
        time_optimal_scaling(model, stretched, weak)
    with pytest.raises(ValueError, match="unknown joint"):
        time_optimal_scaling(model, JointTrajectory(("joint1", "x"), [0, 1], np.zeros((2, 2))))
    with pytest.raises(InputError, match="at least 2 points"):
        time_optimal_scaling(model, JointTrajectory(("joint1", "joint2"), [0], [[0, 0]], [[0, 0]]))
    for name, value in (("grid_steps", 1), ("grid_steps", 2e9), ("verify_density", 0.5),
                        ("max_levels", 100)):
        with pytest.raises(InputError, match=name):
            time_optimal_scaling(model, stretched, **{name: value})
    with pytest.raises(ScalingError, match="joint 'joint2' .* above its upper limit"):
        time_optimal_scaling(model, JointTrajectory(("joint1", "joint2"), [
                             0, 1], [[0, 0], [0, 7.0]], np.zeros((2, 2))))


def test_positions_only_trajectory_is_refused():
    """
    Positions-only trajectories are refused by time_optimal with the reason.

    Linear interpolation jumps in velocity at waypoints (infinite acceleration): no time law
    within torque limits follows it, so time_optimal refuses it and says what to do.
    """
    model = RobotModel.named("planar2")
    traj = JointTrajectory(("joint1", "joint2"), [0.0, 1.0, 2.0], [
                           [0.0, 0.5], [0.5, 0.5], [0.5, 1.0]])
    with pytest.raises(ScalingError, match="needs velocities .*use uniform"):
        time_optimal_scaling(model, traj)


@pytest.mark.parametrize("robot", [c[0] for c in CASES])
def test_limits_hold_after_nanosecond_rounding(solved, robot):
    """
    The limits hold on the output with its times as whole nanoseconds.

    A ROS message carries times as whole nanoseconds (sec + nanosec, rounded as
    ros_messages.trajectory_to_msg does): the output is already on that grid, so the round trip
    changes nothing, and the limits hold on exactly what the controller receives.
    """
    model, _, result = solved[robot]
    out = result.for_controller()
    sec = np.floor(out.times)
    received = sec + 1e-9 * np.minimum(np.round((out.times - sec) * 1e9), 999_999_999)
    np.testing.assert_allclose(received, out.times, rtol=0, atol=1e-15)
    rounded = JointTrajectory(out.joint_names, received, out.positions, out.velocities)
    K = rounded.num_points - 1
    t = (rounded.times[:-1, None] + np.diff(rounded.times)
         [:, None] * np.linspace(1e-6, 1 - 1e-6, 10)).ravel()
    q, qd, qdd = rounded.sample(t)
    assert t.size == 10 * K
    assert excess(rnea(model, q, qd, qdd), result.limits).max() <= 0.005
    assert (np.abs(qd) <= result.limits.velocity * 1.005).all()


def random_path(model, K, seed, stop_in_middle=False):
    """
    Return a random wiggly path through random waypoints.

    Random waypoints in the middle 35 % of each joint range, velocities by central differences
    and small accelerations (quintic), at rest at both ends and optionally at the middle point.
    """
    rng = np.random.default_rng(seed)
    mid, half = 0.5 * (model.lower + model.upper), 0.5 * (model.upper - model.lower)
    q = mid + 0.35 * half * rng.uniform(-1, 1, size=(K, model.n))
    t = np.linspace(0.0, 1.0, K)
    v, a = np.zeros_like(q), np.zeros_like(q)
    v[1:-1] = (q[2:] - q[:-2]) / (t[2:] - t[:-2])[:, None]
    a[1:-1] = 0.3 * (q[2:] - 2 * q[1:-1] + q[:-2]) / (t[1] - t[0]) ** 2
    if stop_in_middle:
        v[K // 2] = a[K // 2] = 0.0
    return JointTrajectory(model.joint_names, t, q, v, a)


@pytest.mark.parametrize("robot, seed, stop",
                         [("stanford", 1, False), ("panda", 2, True), ("puma560", 3, False)])
def test_random_paths_hold_limits_and_are_near_optimal(robot, seed, stop):
    """
    Random paths keep the limits and are near-optimal.

    Random wiggly paths (the prismatic Stanford joint, the 7-joint Panda, Puma with friction;
    one stopping in the middle): 10x resampling of the controller's interpolation stays within
    0.5 % of every torque and velocity limit, and the duration is within 2 % of the same path on a
    much finer grid and below the uniform scaling.
    """
    model = RobotModel.named(robot)
    traj = random_path(model, 12, seed, stop)
    result = time_optimal_scaling(model, traj)
    out = result.for_controller()
    t = np.linspace(out.times[0], out.times[-1], 10 * out.num_points)
    q, qd, qdd = out.sample(t)
    assert excess(rnea(model, q, qd, qdd), result.limits).max() <= 0.005
    assert (np.abs(qd) <= model.velocity_limit * 1.005).all()
    fine = time_optimal_scaling(model, traj, grid_steps=2400, max_levels=2)
    assert result.duration <= fine.duration * 1.02
    assert result.duration <= uniform_scaling(model, traj).duration


def test_unverifiable_law_falls_back_to_uniform_never_an_unchecked_trajectory():
    """
    Never an unchecked trajectory when no law passes the verification (here: no rounds).

    A timed trajectory gets its uniform scaling (a feasible law, so a valid answer); a geometric
    path, which has no uniform scaling, gets the error.
    """
    model, traj = RobotModel.named("puma560"), JointTrajectory.from_yaml(PUMA_PATH)
    result = time_optimal_scaling(model, traj, max_rounds=0)
    uniform = uniform_scaling(model, traj)
    assert result.method == "uniform" and result.duration == uniform.duration
    np.testing.assert_array_equal(result.trajectory.times, uniform.trajectory.times)
    path = JointPath(model.joint_names, traj.positions, traj.times)
    with pytest.raises(ScalingError, match="no time law within the limits"):
        time_optimal_scaling(model, path, max_rounds=0)


def dense_feasible(model, traj, points, fields=2):
    """
    Return ``traj`` uniformly scaled (so within the limits, touching them), resampled densely.

    ``points`` waypoints with positions, velocities (and accelerations if ``fields`` is 3), ending
    at rest: long, dense, already feasible paths like a planner's output.
    """
    scaled = uniform_scaling(model, traj).trajectory
    t = np.linspace(0.0, scaled.duration, points)
    q, qd, qdd = scaled.sample(t)
    qd[-1] = qdd[-1] = 0.0
    return JointTrajectory(model.joint_names, t, q, qd, qdd if fields == 3 else None)


@pytest.mark.parametrize("robot, path, points, fields", [
    ("puma560", PUMA_PATH, 1000, 2), ("puma560", PUMA_PATH, 1000, 3), ("panda", None, 800, 2)])
def test_long_dense_feasible_paths_are_never_refused(robot, path, points, fields):
    """
    A long dense trajectory already within the limits is timed, never refused.

    Uniform scaling leaves it as it is (factor 1); time-optimal scaling returns a law at least as
    fast, within the limits as the controller interpolates it.
    """
    model = RobotModel.named(robot)
    original = random_path(model, 12, 2, True) if path is None else JointTrajectory.from_yaml(path)
    dense = dense_feasible(model, original, points, fields)
    uniform = uniform_scaling(model, dense)
    assert uniform.scale_factor == pytest.approx(1.0, abs=1e-3)
    result = time_optimal_scaling(model, dense)
    assert result.duration <= uniform.duration * (1 + 1e-9)
    out = result.for_controller()
    t = np.linspace(out.times[0], out.times[-1], 10 * out.num_points)
    q, qd, qdd = out.sample(t)
    assert excess(rnea(model, q, qd, qdd), result.limits).max() <= 1e-3
    assert (np.abs(qd) <= result.limits.velocity * 1.001).all()


def _puma_level(steps_per_segment=1):
    """Return the Puma path's collocation on a grid, bisected once (data partly reused)."""
    model, traj = RobotModel.named("puma560"), JointTrajectory.from_yaml(PUMA_PATH)
    path = paths.TimedPath(traj)
    points = collocation.GridPoints(model, path, paths.initial_grid(path,
                                                                    steps_per_segment)).bisected()
    grid = points.grid()
    points.add_midpoints()
    return model, traj, points, grid


def test_bisected_grid_data_equal_fresh_inverse_dynamics():
    """
    Path data reused on a bisected grid equal fresh inverse dynamics.

    The reused path data of a bisected grid (old grid points and midpoints) are those of the
    trajectory and rnea evaluated afresh at the new grid's points (an independent recomputation:
    sampling per point, gravity, no subtraction), and the path's end conditions are unchanged.
    """
    model, traj, points, grid = _puma_level()
    fresh = paths.Grid(grid.path, points.s)
    for name in ("corner", "flat"):
        np.testing.assert_array_equal(getattr(grid, name), getattr(fresh, name))
    assert (grid.free_start, grid.free_end) == (fresh.free_start, fresh.free_end)
    col = points.collocation(grid)
    s = np.concatenate([points.s[:-1], points.mid_s, points.s[1:]])
    q, dq, ddq = traj.sample(s)
    q[-grid.N:], dq[-grid.N:], ddq[-grid.N:] = traj.sample(points.s[1:], side="left")
    zeros = np.zeros_like(q)
    g0 = np.zeros(3)
    c = rnea(model, q, zeros, zeros)
    a = rnea(model, q, zeros, dq, gravity=g0)
    b = rnea(model, q, dq, ddq, gravity=g0) - (model.viscous * dq + model.coulomb * np.sign(dq))
    scale = np.abs(c).max()
    got = col.points
    for mine, want in ((got.q, q), (got.dq, dq), (got.ddq, ddq),
                       (got.c, c), (got.a, a), (got.b, b)):
        np.testing.assert_allclose(mine.reshape(-1, model.n), want,
                                   rtol=0, atol=1e-12 * max(scale, 1.0))
    # The refined collocation (9 points per step) from the grid's data plus its inner points.
    steps = np.flatnonzero(grid.near_flat())
    assert steps.size
    points.add_midpoints(points.refined_parts(grid, steps))
    reused = points.refined(grid, steps)
    direct = collocation.Collocation(model, grid, steps, collocation.REFINED)
    for name in collocation.PathPoints._fields:
        np.testing.assert_allclose(getattr(reused.points, name), getattr(
            direct.points, name), rtol=0, atol=1e-12 * max(scale, 1.0))


def test_static_bound_equals_pairwise_elimination():
    """
    Newton's static bound equals pairwise elimination.

    Newton's method on the concave piecewise-linear feasibility function gives the same
    largest x as Fourier-Motzkin over every pair of rows (the closed form), on the Puma's rows
    with and without viscous linearisation, refined collocation, and random rows.
    """
    model, traj, points, grid = _puma_level()
    limits = Limits.from_model(model)
    none = constraints.Tightening.none(grid.N, model.n)
    regular = points.collocation(grid)
    refined = collocation.Collocation(model, grid, np.arange(0, grid.N, 7), collocation.REFINED)
    cases = []
    for col in (regular, refined):
        for xbar in (None, np.full((col.thetas.size, col.steps.size), 0.05)):
            cases.append(constraints.step_rows(col, grid, limits, xbar, none.at(col.steps)))
    rng = np.random.default_rng(4)
    S = 200
    up = constraints.HalfPlanes(rng.uniform(0, 2, (S, 9)) * (rng.uniform(size=(S, 9)) > 0.2),
                                rng.normal(size=(S, 9)), rng.uniform(0, 3, (S, 9)))
    lo = constraints.HalfPlanes(-rng.uniform(0, 2, (S, 7)) * (rng.uniform(size=(S, 7)) > 0.2),
                                rng.normal(size=(S, 7)), rng.uniform(0, 3, (S, 7)))
    cases.append(constraints.StepRows(up, lo))
    for rows in cases:
        got = reachability.static_bound(rows.upper, rows.lower)
        want = reachability.static_bound_pairs(rows.upper, rows.lower)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_envelope_rows_give_the_minimum_of_all_rows():
    """The rows envelope_rows keeps give the same minimum as all rows everywhere in [0, H]."""
    rng = np.random.default_rng(5)
    S, R = 300, 12
    a, b = rng.normal(size=(S, R)), rng.uniform(0, 5, (S, R))
    b[rng.uniform(size=(S, R)) < 0.1] = np.inf
    H = rng.uniform(0, 4, S)
    A, B, start, end = reachability.envelope_rows(a, b, H)
    kept = [list(zip(A[s:e], B[s:e])) for s, e in zip(start.tolist(), end.tolist())]
    for k in range(S):
        h = np.append(rng.uniform(0, H[k], 20), [0.0, H[k]])
        full = (a[k][None] * h[:, None] + b[k][None]).min(axis=1)
        pruned = np.min([[ak * hi + bk for ak, bk in kept[k]] for hi in h], axis=1)
        np.testing.assert_allclose(pruned, full, rtol=1e-14)


def test_verification_samples_are_the_controllers_interpolation(solved):
    """
    The verification samples the output as the controller interpolates it.

    The verification evaluates the output as the controller interpolates it: its states and
    torques equal JointTrajectory.sample and rnea at its check times, D + 1 per interval (the
    last just before the interval's end) plus the end point.
    """
    model, _, result = solved["puma560"]
    out, D = result.for_controller(), 4
    check = verify(model, out, result.limits, D, 1e-3)
    assert check.times.size == (out.num_points - 1) * (D + 1) + 1
    inside = check.times[:-1] - out.times[check.interval[:-1]]
    assert (inside >= 0).all() and (inside < np.diff(out.times)[check.interval[:-1]]).all()
    q, qd, qdd = out.sample(check.times[:-1])
    for got, want in ((check.velocities[:-1], qd), (check.accelerations[:-1], qdd)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * np.abs(want).max())
    tau = rnea(model, q, qd, qdd)
    np.testing.assert_allclose(check.torques[:-1], tau, rtol=0, atol=1e-6 * np.abs(tau).max())
    assert check.passed


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


def test_rechecks_reuse_only_unchanged_intervals(solved):
    """
    A re-check computes again every interval that changed, and only those agree with the last.

    The output with its second half shifted by half a nanosecond (as the rounding to whole
    nanoseconds does after an earlier step changes) and one interval's velocity changed: the
    re-check reusing the first check equals a fresh check of the changed trajectory.
    """
    model, _, result = solved["puma560"]
    out = result.for_controller()
    K, limits = out.num_points, result.limits
    index = np.arange(K, dtype=float)                      # stands for the points' path parameter
    first = verify(model, out, limits, 10, 1e-3)
    times = out.times.copy()
    times[K // 2:] += 0.5e-9
    qd = out.velocities.copy()
    qd[K // 4] *= 1.01
    changed = JointTrajectory(out.joint_names, times, out.positions, qd)
    again = verify(model, changed, limits, 10, 1e-3, s=index, previous=(out, first, index))
    fresh = verify(model, changed, limits, 10, 1e-3)
    scale = np.abs(limits.effort_upper)
    assert np.abs(again.torques - fresh.torques).max(axis=0).max() <= 1e-6 * scale.max()
    np.testing.assert_array_equal(again.velocities, fresh.velocities)
    assert np.abs(again.torques - fresh.torques)[(K // 4 - 1) * 11:(K // 4 + 1) * 11].max() <= 1e-9


def test_work_per_request_is_bounded(monkeypatch):
    """Absurd options are refused before any allocation; grids never grow past MAX_TOTAL_STEPS."""
    from robot_dynamics_ros.core.trajectories.topp import time_optimal as module
    model, traj = RobotModel.named("planar2"), JointTrajectory.from_yaml(EX72)
    for name, value in (("grid_steps", 2e9), ("verify_density", 10**6), ("max_rounds", 10**9)):
        with pytest.raises(InputError, match=name):
            time_optimal_scaling(model, traj, **{name: value})
    monkeypatch.setattr(module, "MAX_TOTAL_STEPS", 40)
    result = time_optimal_scaling(model, traj, grid_steps=16, convergence=1e-9)
    assert result.law.s.size - 1 <= 40 or result.method == "uniform"


def test_output_points_per_step_at_most_halve_from_a_step_to_the_next():
    """
    Dense output is graded down to one point per step.

    The counts per grid step are raised (never lowered) until each is at least half of either
    neighbour's: here from 8 and 4 (worked by hand).
    """
    from robot_dynamics_ros.core.trajectories.topp.time_optimal import _grade
    per_step = np.array([1, 1, 1, 8, 1, 1, 1, 1, 1, 4, 1])
    _grade(per_step)
    np.testing.assert_array_equal(per_step, [1, 2, 4, 8, 4, 2, 1, 1, 2, 4, 2])


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


@pytest.mark.parametrize("robot", ["puma560", "panda", "planar2"])
def test_batch_inverse_dynamics_equals_the_textbook_rnea(robot):
    """
    The batches of path data and re-checks equal the core's RNEA, friction and rotors included.

    ``batch_rnea`` (the generated model, seed 004, on numpy columns, friction added apart)
    against the textbook recursion (seed 002, 7.107-7.114): random states, some joints at rest
    (Coulomb friction's sign 0) and some with zero acceleration.
    """
    from robot_dynamics_ros.core.trajectories.topp.torques import batch_gravity, batch_rnea
    model = RobotModel.named(robot)
    rng = np.random.default_rng(7)
    q = rng.uniform(model.lower, model.upper, (300, model.n))
    qd, qdd = rng.normal(0, 1.5, (2, 300, model.n))
    qd[::3, 0] = 0.0
    qdd[1::4] = 0.0
    want = rnea(model, q, qd, qdd)
    got = batch_rnea(model, q, qd, qdd)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10 * np.abs(want).max())
    assert batch_rnea(model, q[:0], qd[:0], qdd[:0]).shape == (0, model.n)
    gravity = rnea(model, q, np.zeros_like(q), np.zeros_like(q))
    np.testing.assert_allclose(batch_gravity(model, q), gravity, rtol=0,
                               atol=1e-10 * np.abs(gravity).max())


def test_batch_inverse_dynamics_falls_back_to_the_core(monkeypatch):
    """A model the code generator refuses gets the core's RNEA, the same torques."""
    import robot_dynamics_ros.codegen as codegen
    from robot_dynamics_ros.core.trajectories.topp.torques import batch_gravity, batch_rnea

    def refuse(model, grouping="full"):
        raise codegen.CodegenError("refused for the test")
    monkeypatch.setattr(codegen, "generated_model", refuse)
    model = RobotModel.named("puma560")          # a fresh model: nothing cached
    rng = np.random.default_rng(8)
    q, qd, qdd = rng.normal(0, 1, (3, 50, model.n))
    np.testing.assert_array_equal(batch_rnea(model, q, qd, qdd), rnea(model, q, qd, qdd))
    zeros = np.zeros_like(q)
    np.testing.assert_array_equal(batch_gravity(model, q), rnea(model, q, zeros, zeros))


def test_recheck_of_an_unchanged_output_equals_a_fresh_check(solved):
    """
    A re-check of the same output reuses every sample and equals a fresh check to the bit.

    And sampling a subset of segments gives those segments of the full sampling.
    """
    model, _, result = solved["puma560"]
    out, limits = result.for_controller(), result.limits
    index = np.arange(out.num_points, dtype=float)
    first = verify(model, out, limits, 10, 1e-3)
    again = verify(model, out, limits, 10, 1e-3, s=index, previous=(out, first, index))
    for name in ("times", "interval", "torques", "velocities", "accelerations"):
        np.testing.assert_array_equal(getattr(again, name), getattr(first, name))
    fractions = np.array([0.0, 0.3, 1.0])
    some = np.array([0, 5, out.num_points - 2])
    for part, full in zip(out.sample_segments(fractions, some), out.sample_segments(fractions)):
        np.testing.assert_array_equal(part, full[some])


def test_reference_grid_not_solved_when_only_a_reference(monkeypatch):
    """
    On a grid that needs two bisections to reach TRUSTED_STEPS, the middle grid is not solved.

    The Puma path (105 steps first, 99 knot segments): solved on 105 steps (the reference) and on
    420 (converged, verified), not on 210; the duration stays within 0.5 % of the same solver on
    a 4x finer grid (first-order loss, so the reference from two bisections back suffices).
    """
    from robot_dynamics_ros.core.trajectories.topp import time_optimal as module
    model = RobotModel.named("puma560").rigid()
    traj = JointTrajectory.from_yaml(PUMA_PATH)
    path = JointPath(model.joint_names, traj.positions, traj.times)
    solved_steps = []
    solve = module._solve_groups

    def recording(grid, *args):
        solved_steps.append(grid.N)
        return solve(grid, *args)
    monkeypatch.setattr(module, "_solve_groups", recording)
    result = time_optimal_scaling(model, path)
    assert solved_steps == [105, 420]
    monkeypatch.setattr(module, "_solve_groups", solve)
    fine = time_optimal_scaling(model, path, grid_steps=1200, max_levels=2)
    assert 0.0 <= result.duration / fine.duration - 1.0 <= 5e-3


def test_segment_speed_max_is_the_exact_largest_velocity():
    """
    The largest |velocity| per segment of a cubic trajectory, against a closed form and sampling.

    One segment from rest at 0 to rest at 1 in 1 s: qd = 6 t (1 - t), largest 1.5 at t = 1/2;
    random cubic segments: the maximum of 20,001 samples per segment, never above it and within
    the sampling's resolution below it.
    """
    one = JointTrajectory(["j"], [0.0, 1.0], [[0.0], [1.0]], [[0.0], [0.0]])
    np.testing.assert_allclose(one.segment_speed_max(), [[1.5]], rtol=1e-15)
    rng = np.random.default_rng(3)
    K = 30
    traj = JointTrajectory(["a", "b"], np.cumsum(rng.uniform(0.1, 1.0, K)),
                           rng.normal(0, 1, (K, 2)), rng.normal(0, 2, (K, 2)))
    exact = traj.segment_speed_max()
    sampled = np.abs(traj.sample_segments(np.linspace(0.0, 1.0, 20001))[1]).max(axis=1)
    assert (sampled <= exact * (1 + 1e-12)).all()
    np.testing.assert_allclose(exact, sampled, rtol=1e-6)
    with pytest.raises(InputError, match="quintic"):
        JointTrajectory(["j"], [0.0, 1.0], [[0.0], [1.0]], [[0.0], [0.0]],
                        [[0.0], [0.0]]).segment_speed_max()
