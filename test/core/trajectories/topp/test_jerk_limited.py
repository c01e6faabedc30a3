"""The jerk-limited law: continuous acceleration, every limit kept as the controller samples it."""

import numpy as np
import pytest

from locations import PUMA_PATH
from robot_dynamics_ros.core import (InputError, JointPath, JointTrajectory, Limits, RobotModel,
                                     rnea, time_optimal_scaling)
from robot_dynamics_ros.core.trajectories.limits import with_jerk
from robot_dynamics_ros.core.trajectories.topp.constraint_set import (
    JointAccelerationConstraint, JointJerkConstraint, JointTorqueConstraint,
    JointVelocityConstraint)
from robot_dynamics_ros.core.trajectories.topp.from_parameters import constraint_list
from robot_dynamics_ros.core.trajectories.topp.jerk_limited import jerk_limited_scaling
from robot_dynamics_ros.core.trajectories.topp.tool_speed import ToolSpeedConstraint


@pytest.fixture(scope="module")
def puma():
    model, traj = RobotModel.named("puma560"), JointTrajectory.from_yaml(PUMA_PATH)
    path = JointPath(traj.joint_names, traj.positions, traj.times)
    limits = Limits.from_model(model, acceleration=40.0)
    optimal = time_optimal_scaling(model, path, limits)
    # jerk limits that bind: each joint's peak acceleration reached in a twentieth of the motion
    jerk = np.abs(optimal.trajectory.accelerations).max(axis=0) / (optimal.duration / 20)
    return model, path, with_jerk(limits, jerk), optimal


def test_all_limits_hold_as_the_controller_interpolates(puma):
    model, path, limits, optimal = puma
    result = jerk_limited_scaling(model, path, [JointTorqueConstraint(),
                                                JointVelocityConstraint(),
                                                JointAccelerationConstraint(40.0),
                                                JointJerkConstraint(limits.jerk)],
                                  optimal=optimal)
    out = result.for_controller()
    assert result.method == "jerk_limited" and out.interpolation == "quintic"
    assert optimal.duration < result.duration < 1.5 * optimal.duration
    assert result.scale_factor == pytest.approx(result.duration / optimal.duration)
    # the feedforward (taken from the re-check's parts, slowed in closed form) is the inverse
    # dynamics at the output's points
    own = result.trajectory
    inverse = rnea(model, own.positions, own.velocities, own.accelerations)
    np.testing.assert_allclose(own.effort, inverse, rtol=0, atol=1e-9 * limits.effort_upper.max())
    t = np.linspace(out.times[0], out.times[-1], 50 * out.num_points)
    q, qd, qdd = out.sample(t)
    tau = rnea(model, q, qd, qdd)
    assert np.all(np.abs(tau) <= limits.effort_upper * 1.001)
    assert np.all(np.abs(qd) <= limits.velocity * 1.001)
    assert np.all(np.abs(qdd) <= limits.acceleration * 1.001)
    # jerk by differences of the sampled acceleration (not the polynomials' own derivative)
    jerk = np.abs(np.diff(qdd, axis=0)) / np.diff(t)[:, None]
    assert np.all(jerk <= limits.jerk * 1.001)
    assert (jerk / limits.jerk).max() > 0.9 or (np.abs(tau) / limits.effort_upper).max() > 0.999
    # acceleration continuous at the points: across 2 ns it changes by at most 2 ns of jerk
    inner = out.times[1:-1]
    left, right = out.sample(inner - 1e-9)[2], out.sample(inner + 1e-9)[2]
    assert np.all(np.abs(left - right) <= 2e-9 * limits.jerk * 1.01 + 1e-12)
    # starts and ends at rest, on the same path
    np.testing.assert_allclose(out.positions[[0, -1]], path.waypoints[[0, -1]], atol=1e-9)
    assert np.abs(out.velocities[[0, -1]]).max() == 0.0


def test_needs_a_jerk_limit_for_every_joint(puma):
    model, path, limits, optimal = puma
    with pytest.raises(InputError, match="jerk"):
        jerk_limited_scaling(model, path, Limits.from_model(model), optimal=optimal)


def dense_usage(model, out, limits, constraints=()):
    """Largest use of each limit on ``out`` sampled at 50 points per interval (1.0: at it)."""
    t = np.linspace(out.times[0], out.times[-1], 50 * out.num_points)
    q, qd, qdd = out.sample(t)
    tau = rnea(model, q, qd, qdd)            # the full model: friction and rotors
    effort = np.where(tau >= 0, tau / limits.effort_upper, tau / limits.effort_lower)
    jerk = np.abs(np.diff(qdd, axis=0)) / np.diff(t)[:, None]   # differences, not the code's
    usage = {"torque": effort.max(), "velocity": (np.abs(qd) / limits.velocity).max(),
             "jerk": (jerk / limits.jerk).max()}
    if np.isfinite(limits.acceleration).all():
        usage["acceleration"] = (np.abs(qdd) / limits.acceleration).max()
    for c in constraints:
        usage[c.name] = c.usage(model, q, qd, qdd).max()
    return usage


def assert_smooth_rest_to_rest(out, jerk):
    """Acceleration continuous at every point; velocity and acceleration zero at both ends."""
    inner = out.times[1:-1]
    left, right = out.sample(inner - 1e-9)[2], out.sample(inner + 1e-9)[2]
    assert np.all(np.abs(left - right) <= 2e-9 * jerk * 1.01 + 1e-12)
    assert np.abs(out.velocities[[0, -1]]).max() == 0.0
    assert np.abs(out.accelerations[[0, -1]]).max() == 0.0


def test_panda_path_with_friction_keeps_every_limit():
    """A Panda path (the bench's 6 via points) on the full model: torque with friction binds."""
    model = RobotModel.named("panda")
    rng = np.random.default_rng(1)
    mid, half = 0.5 * (model.lower + model.upper), 0.5 * (model.upper - model.lower)
    path = JointPath(model.joint_names, mid + 0.6 * half * rng.uniform(-1, 1, (6, model.n)),
                     np.linspace(0.0, 1.0, 6))
    limits = Limits.from_model(model, 0.6, acceleration=8.0)
    optimal = time_optimal_scaling(model, path, limits)
    jerk = np.abs(optimal.trajectory.accelerations).max(axis=0) / (optimal.duration / 20)
    limits = with_jerk(limits, jerk)
    result = jerk_limited_scaling(model, path, limits, optimal=optimal)
    out = result.for_controller()
    usage = dense_usage(model, out, limits)
    assert max(usage.values()) <= 1.001, usage
    assert max(usage["torque"], usage["jerk"], usage["velocity"]) > 0.98, usage    # one binds
    assert result.duration >= optimal.duration * (1 - 1e-9)     # the optimum is a lower bound
    assert_smooth_rest_to_rest(out, limits.jerk)
    np.testing.assert_allclose(out.positions[[0, -1]], path.waypoints[[0, -1]], atol=1e-9)
    # on the path: every output point is the spline at some s (its nearest sample)
    from scipy.spatial import cKDTree
    q, dq, _ = path.sample(np.linspace(0.0, 1.0, 200_001))
    gap, _ = cKDTree(q).query(out.positions)
    # a point of the curve is within half a sample spacing (in s) of a sample
    assert gap.max() <= 0.5 * np.linalg.norm(dq, axis=1).max() / 200_000 * 1.01


def test_straight_line_matches_ruckig():
    """
    Kinematic limits only on a straight line: a 1-D problem whose optimum ruckig computes.

    The third-order pass is within a few percent of ruckig's time-optimal jerk-limited profile
    (Berscheid & Kroger 2021) and never faster (ruckig is optimal for it).
    """
    ruckig = pytest.importorskip("ruckig")
    model = RobotModel.named("puma560")
    q0, q1 = np.zeros(6), np.array([1.0, -0.5, 0.7, 0.3, -0.6, 1.2])
    path = JointPath(model.joint_names, np.array([q0, 0.5 * (q0 + q1), q1]), [0.0, 0.5, 1.0])
    v, a, j = np.full(6, 2.0), np.full(6, 5.0), np.full(6, 40.0)
    result = jerk_limited_scaling(model, path, [JointVelocityConstraint(v),
                                                JointAccelerationConstraint(a),
                                                JointJerkConstraint(j)])
    scale = np.abs(q1 - q0)              # s in [0, 1] moves joint k by scale[k] s
    otg, inp = ruckig.Ruckig(1), ruckig.InputParameter(1)
    inp.current_position, inp.target_position = [0.0], [1.0]
    inp.max_velocity = [float((v / scale).min())]
    inp.max_acceleration = [float((a / scale).min())]
    inp.max_jerk = [float((j / scale).min())]
    trajectory = ruckig.Trajectory(1)
    assert otg.calculate(inp, trajectory) == ruckig.Result.Working
    reference = trajectory.duration
    assert reference * (1 - 1e-3) <= result.duration <= reference * 1.05     # (+3.6 %)
    out = result.for_controller()
    usage = dense_usage(model, out, Limits(np.full(6, -1e300), np.full(6, 1e300), v, a, j))
    assert max(usage.values()) <= 1.001, usage


def test_trajectory_stopping_midway_and_tool_speed():
    """
    A quintic trajectory that stops at a waypoint (flat there), with a tool speed limit.

    The law rests at the flat waypoint (the time-optimal law stops there); the tool speed, a
    path constraint, is kept with the joint limits.
    """
    model = RobotModel.named("puma560")
    t = np.array([0.0, 1.0, 2.0])
    q = np.array([np.zeros(6), np.full(6, 0.4), np.array([0.8, 0.0, 0.6, 0.2, 0.8, 0.1])])
    traj = JointTrajectory(model.joint_names, t, q, np.zeros_like(q), np.zeros_like(q))
    base = Limits.from_model(model, acceleration=20.0)
    constraints = constraint_list(base, tool_speed=0.8, jerk=np.full(6, 60.0))
    result = jerk_limited_scaling(model, traj, constraints)
    out = result.for_controller()
    limits = with_jerk(base, np.full(6, 60.0))
    tool = [c for c in constraints if isinstance(c, ToolSpeedConstraint)]
    usage = dense_usage(model, out, limits, tool)
    assert max(usage.values()) <= 1.001, usage
    assert_smooth_rest_to_rest(out, limits.jerk)
    stop = np.argmin(np.linalg.norm(out.positions - q[1], axis=1))
    np.testing.assert_allclose(out.positions[stop], q[1], atol=1e-9)
    assert np.abs(out.velocities[stop]).max() < 1e-12
    assert np.abs(out.accelerations[stop]).max() < 1e-9


def test_linear_programs_print_nothing():
    """
    The banner of HiGHS stays off the C stdout of a fresh process (a command's output, a log).

    Without a file descriptor redirected: the first solver of the process is made silent.
    """
    import subprocess
    import sys
    code = ("import numpy as np\n"
            "from scipy import sparse\n"
            "from robot_dynamics_ros.core.trajectories.topp.third_order import _Program\n"
            "p = _Program(np.array([-1.0]), np.array([[0.0, 2.0]]),\n"
            "             sparse.csr_matrix((0, 1)), np.zeros(0))\n"
            "print('solution', p.run())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout == "solution [2.]\n", out.stdout
    assert "HiGHS" not in out.stderr, out.stderr
