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
from robot_dynamics_ros.core.trajectories.topp.jerk_limited import jerk_limited_scaling


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
