"""Constraints as objects: the joint ones as before, the tool's speed, a payload."""

import numpy as np
import pytest

from locations import EX72, PUMA_PATH
from robot_dynamics_ros.core import InputError, JointTrajectory, Limits, RobotModel, rnea
from robot_dynamics_ros.core import time_optimal_scaling
from robot_dynamics_ros.core.algorithms.kinematics import (jacobian, jacobian_dot_qd,
                                                           tool_pose)
from robot_dynamics_ros.core.trajectories.topp.constraint_set import (
    JointAccelerationConstraint, JointTorqueConstraint, JointVelocityConstraint, Payload,
    resolve)
from robot_dynamics_ros.core.trajectories.topp.from_parameters import constraint_list
from robot_dynamics_ros.core.trajectories.topp.tool_speed import ToolSpeedConstraint
from robot_dynamics_ros.core.algorithms.route import select


@pytest.fixture(scope="module")
def puma():
    model, traj = RobotModel.named("puma560"), JointTrajectory.from_yaml(PUMA_PATH)
    limits = Limits.from_model(model)
    return model, traj, limits, time_optimal_scaling(model, traj, limits,
                                                     dynamics=select(model))


def dense(result, per_point=40):
    out = result.for_controller()
    t = np.linspace(out.times[0], out.times[-1], per_point * out.num_points)
    return (t,) + out.sample(t)


def tool_velocity_fd(model, q_of_t, t, h=1e-6):
    """Tool linear and angular speed by central differences of the tool pose (independent)."""
    before, after = tool_pose(model, q_of_t(t - h)), tool_pose(model, q_of_t(t + h))
    linear = (after[:, :3, 3] - before[:, :3, 3]) / (2 * h)
    dR = (after[:, :3, :3] - before[:, :3, :3]) / (2 * h)
    R = tool_pose(model, q_of_t(t))[:, :3, :3]
    W = dR @ np.swapaxes(R, 1, 2)                                # skew(w) = Rdot R^T
    angular = np.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], axis=1)
    return np.linalg.norm(linear, axis=1), np.linalg.norm(angular, axis=1)


@pytest.mark.parametrize("robot, path", [("planar2", EX72), ("puma560", PUMA_PATH)])
def test_joint_constraints_as_a_list_give_the_old_result(robot, path):
    model, traj = RobotModel.named(robot), JointTrajectory.from_yaml(path)
    limits = Limits.from_model(model, 0.9, 0.8, acceleration=20.0)
    old = time_optimal_scaling(model, traj, limits)
    new = time_optimal_scaling(model, traj, [JointTorqueConstraint(margin=0.9),
                                             JointVelocityConstraint(margin=0.8),
                                             JointAccelerationConstraint(20.0)])
    assert new.duration == pytest.approx(old.duration, rel=1e-12)
    np.testing.assert_array_equal(new.trajectory.positions, old.trajectory.positions)


@pytest.mark.parametrize("which", ["linear", "angular"])
def test_tool_speed_binds_and_holds_when_rechecked_densely(puma, which):
    model, traj, limits, base = puma
    end = base.for_controller()
    t, q, _, _ = dense(base)
    free = tool_velocity_fd(model, lambda s: end.sample(s)[0], t)[which == "angular"].max()
    bound = 0.5 * free
    speeds = {"tool_speed": bound} if which == "linear" else {"tool_angular_speed": bound}
    result = time_optimal_scaling(model, traj, constraint_list(limits, **speeds),
                                  dynamics=select(model))
    assert result.method == "time_optimal"
    assert result.duration > base.duration
    out = result.for_controller()
    t = np.linspace(out.times[0], out.times[-1], 60 * out.num_points)
    speed = tool_velocity_fd(model, lambda s: out.sample(s)[0], t)[which == "angular"]
    assert speed.max() <= bound * 1.001
    assert speed.max() >= bound * 0.999                     # the limit binds somewhere
    # the joint limits still hold
    _, q, qd, qdd = dense(result)
    tau = rnea(model, q, qd, qdd)
    assert np.all(np.abs(tau) <= limits.effort_upper * 1.001)


def test_tool_speed_on_a_trajectory_slower_than_uniform_is_never_worse(puma):
    """A bound that the uniform scaling meets too: the answer is never slower than it."""
    model, traj, limits, _ = puma
    result = time_optimal_scaling(model, traj, constraint_list(limits, tool_speed=0.05))
    t, q, qd, _ = dense(result)
    speed = np.linalg.norm((jacobian(model, q) @ qd[..., None])[:, :3, 0], axis=1)
    assert speed.max() <= 0.05 * 1.001


def test_payload_changes_the_torque_constraint(puma):
    model, traj, limits, base = puma
    payload = Payload(4.0, (0.0, 0.05, 0.1))
    result = time_optimal_scaling(model, traj, constraint_list(limits, payload=payload),
                                  dynamics=select)
    assert result.duration > base.duration
    carried = model.with_payload(4.0, (0.0, 0.05, 0.1))
    t, q, qd, qdd = dense(result)
    tau = rnea(carried, q, qd, qdd)
    assert np.all(np.abs(tau) <= limits.effort_upper * 1.001)
    assert np.abs(tau / limits.effort_upper).max() > 0.99            # torque binds
    # Independent: a point mass m at c adds J_c^T m (a_c - g) to the torque (Newton's law for
    # the payload, its wrench mapped by the Jacobian's transpose, Siciliano et al. eq. 3.111).
    J = jacobian(model, q, point=(0.0, 0.05, 0.1))[:, :3]
    a = (J @ qdd[..., None])[..., 0] + jacobian_dot_qd(model, q, qd, point=(0.0, 0.05, 0.1))[:, :3]
    added = np.einsum("pki,pk->pi", J, 4.0 * (a - model.gravity))
    np.testing.assert_allclose(tau - rnea(model, q, qd, qdd), added, atol=1e-8 * np.abs(tau).max())
    # its effort is the carried model's
    out = result.trajectory
    np.testing.assert_allclose(out.effort, rnea(carried, out.positions, out.velocities,
                                                out.accelerations), atol=1e-6 * np.abs(tau).max())


def test_payload_file_and_bad_constraints(tmp_path):
    good = tmp_path / "payload.yaml"
    good.write_text("payload:\n  mass: 1.5\n  com: [0, 0, 0.1]\n"
                    "  inertia: {ixx: 0.01, iyy: 0.01, izz: 0.01}\n")
    payload = Payload.from_yaml(good)
    assert payload.mass == 1.5 and payload.com == (0, 0, 0.1)
    bad = tmp_path / "bad.yaml"
    bad.write_text("mass: 1.5\nweight: 3\n")
    with pytest.raises(InputError, match="bad.yaml.*weight"):
        Payload.from_yaml(bad)
    negative = tmp_path / "negative.yaml"
    negative.write_text("mass: -1\n")
    model = RobotModel.named("puma560")
    with pytest.raises(InputError, match="payload"):
        resolve(model, [Payload.from_yaml(negative)])
    with pytest.raises(InputError, match="given twice"):
        resolve(model, [JointVelocityConstraint(), JointVelocityConstraint(1.0)])
    with pytest.raises(InputError, match="not a constraint"):
        resolve(model, [JointVelocityConstraint(), "torque"])
    with pytest.raises(InputError, match="tool_speed"):
        ToolSpeedConstraint(-1.0)
    with pytest.raises(InputError, match="frame"):
        time_optimal_scaling(model, JointTrajectory.from_yaml(PUMA_PATH),
                             [JointTorqueConstraint(), ToolSpeedConstraint(1.0, frame="nowhere")])
