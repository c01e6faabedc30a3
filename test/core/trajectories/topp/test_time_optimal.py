"""
Time-optimal time law (beyond Siciliano et al. 2009).

Limits between grid points, optimality, consistency.

Oracles: inverse dynamics recomputed with the full model (rotors, friction) on a resampling at 10x
the output density, both of the trajectory as the controller interpolates it and of the exact
piecewise-constant-sdd law; the same solver on a 10x finer grid (a converged optimum); the uniform
scaling (a feasible law, so never faster); a 1-joint closed form (bang-bang: the minimum time of
a rest-to-rest move of an inertia under a torque limit is 2 sqrt(J d / tau)).
"""

import numpy as np
import pytest
from scipy.spatial import cKDTree

from locations import EX72, PUMA_PATH
from robot_dynamics_ros.core import (InputError, JointPath, JointTrajectory, Limits, RobotModel,
                                     ScalingError, rnea, time_optimal_scaling, uniform_scaling)
from robot_dynamics_ros.core.algorithms.route import select
from topp_cases import CASES, excess


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
    messages.ros.trajectory_to_msg does): the output is already on that grid, so the round trip
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


def quintic_rest_to_rest(model, q_start, q_end, duration, points):
    """Return the quintic rest-to-rest motion q_start -> q_end sampled at ``points`` times."""
    t = np.linspace(0.0, duration, points)
    r = t / duration
    u = r ** 3 * (10.0 - 15.0 * r + 6.0 * r ** 2)
    du = 30.0 * r ** 2 * (1.0 - r) ** 2 / duration
    ddu = 60.0 * r * (1.0 - r) * (1.0 - 2.0 * r) / duration ** 2
    d = q_end - q_start
    return JointTrajectory(model.joint_names, t, q_start + u[:, None] * d, du[:, None] * d,
                           ddu[:, None] * d)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_same_path_sampled_more_densely_scales_the_same(seed):
    """
    Found by fuzzing (issue 22): a quintic Q -> P1 over 10 s, as 1,000 to 10,000 points.

    It scaled to 0.30 s from 1,000 or 2,000 points but raised ScalingError ("no admissible speed
    near t = 9.999 s") from 5,000 or 10,000: the grid followed the waypoints, and near the ends,
    where the quintic is flat, its steps took nanoseconds.  Now the grid of a densely sampled
    path does not depend on the sampling: every density scales time-optimally, to the same
    duration within the method's accuracy (0.5 %), within the limits as the controller
    interpolates, with an output whose size does not follow the input's.
    """
    model = RobotModel.named("puma560")
    span = model.upper - model.lower
    q_start = np.clip(np.zeros(model.n), model.lower + 0.1 * span, model.upper - 0.1 * span)
    q_end = model.lower + span * np.random.default_rng(seed).uniform(0.2, 0.8, model.n)
    dynamics = select(model)
    results = {}
    for points in (1000, 2000, 5000, 10_000):
        traj = quintic_rest_to_rest(model, q_start, q_end, 10.0, points)
        result = results[points] = time_optimal_scaling(model, traj, dynamics=dynamics)
        assert result.method == "time_optimal"
        out = result.for_controller()
        assert out.num_points < 4000
        t = np.linspace(out.times[0], out.times[-1], 10 * out.num_points)
        q, qd, qdd = out.sample(t)
        assert excess(rnea(model, q, qd, qdd), result.limits).max() <= 1e-3
        assert (np.abs(qd) <= result.limits.velocity * 1.001).all()
    durations = np.array([r.duration for r in results.values()])
    assert np.ptp(durations) <= 5e-3 * durations.min()
    # 100 points: the grid holds every knot, a different grid, the same optimum within 0.5 %
    few = time_optimal_scaling(model, quintic_rest_to_rest(model, q_start, q_end, 10.0, 100),
                               dynamics=dynamics)
    assert abs(few.duration / durations.min() - 1.0) <= 5e-3


def test_further_friction_terms_hold_the_limits_as_rnea_computes_them():
    """
    Time-optimal scaling of a Puma with strong F_v2 and F_l: limits hold under rnea, some used.

    F_v2 q'|q'| sd^2 joins the sd^2 coefficient and F_l |g(q)| the Coulomb level per point;
    the output's efforts are the inverse dynamics (the law included) of its states.
    """
    from further_friction import with_further_friction
    model = with_further_friction(RobotModel.named("puma560"), 3.0, 0.3)
    traj = JointTrajectory.from_yaml(PUMA_PATH)
    result = time_optimal_scaling(model, traj)
    out = result.for_controller()
    t = np.linspace(out.times[0], out.times[-1], 10 * out.num_points)
    q, qd, qdd = out.sample(t)
    tau = rnea(model, q, qd, qdd)
    assert excess(tau, result.limits).max() <= 0.005
    assert excess(tau, result.limits).max() >= -0.005 or \
        (np.abs(qd) >= model.velocity_limit * 0.995).any()
    full = result.trajectory
    np.testing.assert_allclose(full.effort, rnea(model, full.positions, full.velocities,
                                                 full.accelerations), atol=1e-9)
