"""
The tool wrench from a residual: J^T F = r solved, damped only near singularities.

Oracles: r made by the core's statics (``joint_torques_for_wrench``, tau = J^T F, Asada & Slotine
1986, eq. 4-7) from a known F gives F back wherever J has full rank (Puma: square, Panda: seven
joints, the least-squares solution is exact as r is in J^T's range); the two-joint planar arm gives
the minimum-norm F (J^T F = r, F in J's range); near the Puma's wrist singularity the damped result
equals the normal-equations form (J J^T + lambda^2 I)^-1 J r with lambda from the stated rule; the
tool-axes result is the world-axes one rotated; a batch gives the single results.
"""

import numpy as np
import pytest

from robot_dynamics_ros.core import InputError, RobotModel, jacobian, tool_pose
from robot_dynamics_ros.core.observer import joint_torques_of_wrench, wrench_from_residual
from robot_dynamics_ros.core.observer.wrench import wrench_values
from robot_dynamics_ros.core.task_space.statics import joint_torques_for_wrench


@pytest.mark.parametrize("name", ["puma560", "panda", "stanford"])
def test_the_wrench_that_caused_a_residual_is_recovered(name, rng):
    model = RobotModel.named(name)
    checked = 0
    for _ in range(10):
        q = rng.uniform(np.maximum(model.lower, -2.0), np.minimum(model.upper, 2.0))
        if np.linalg.svd(jacobian(model, q), compute_uv=False)[-1] < 0.15:
            continue                                   # (not near a singularity here)
        checked += 1
        F = rng.normal(size=6) * [30, 30, 30, 3, 3, 3]
        r = joint_torques_for_wrench(model, q, F)
        np.testing.assert_allclose(wrench_from_residual(model, q, r, reference="world"), F,
                                   rtol=1e-9, atol=1e-9 * 30)
        R = tool_pose(model, q)[:3, :3]
        local = wrench_from_residual(model, q, r)
        np.testing.assert_allclose(local, np.concatenate([R.T @ F[:3], R.T @ F[3:]]),
                                   rtol=1e-9, atol=1e-9 * 30)
    assert checked >= 3


def test_fewer_than_six_joints_give_the_minimum_norm_wrench(rng):
    model = RobotModel.named("planar2")
    q = np.array([0.4, 1.1])
    r = np.array([3.0, -2.0])
    F = wrench_from_residual(model, q, r, reference="world")
    J = jacobian(model, q)
    np.testing.assert_allclose(J.T @ F, r, rtol=1e-12, atol=1e-12)
    x = np.linalg.lstsq(J, F, rcond=None)[0]
    np.testing.assert_allclose(J @ x, F, atol=1e-12)          # F lies in J's range


def test_near_a_singularity_the_damped_least_squares_solution_is_returned():
    model = RobotModel.named("puma560")
    q = np.array([0.3, 0.5, -0.8, 0.4, 1e-3, 0.2])                # wrist nearly aligned
    J = jacobian(model, q)
    sigma = np.linalg.svd(J, compute_uv=False)[-1]
    damping, epsilon = 0.05, 0.1
    assert sigma < epsilon
    lam2 = (1.0 - (sigma / epsilon) ** 2) * damping ** 2
    r = np.array([4.0, -8.0, 3.0, 0.5, 0.3, -0.2])
    expected = np.linalg.solve(J @ J.T + lam2 * np.eye(6), J @ r)
    F = wrench_from_residual(model, q, r, damping, epsilon, reference="world")
    np.testing.assert_allclose(F, expected, rtol=1e-9, atol=1e-9)
    undamped = np.linalg.solve(J.T, r)
    assert np.abs(F).max() < 0.1 * np.abs(undamped).max()        # bounded, not amplified


def test_a_batch_gives_the_single_results(rng):
    model = RobotModel.named("puma560")
    q = rng.uniform(-1.5, 1.5, (5, 6))
    r = rng.normal(size=(5, 6))
    batch = wrench_from_residual(model, q, r)
    for k in range(5):
        np.testing.assert_allclose(batch[k], wrench_from_residual(model, q[k], r[k]),
                                   rtol=1e-12, atol=1e-12)


def test_bad_arguments_are_named():
    model = RobotModel.named("puma560")
    with pytest.raises(InputError, match="residual"):
        wrench_from_residual(model, np.zeros(6), np.zeros(5))
    with pytest.raises(InputError, match="damping"):
        wrench_from_residual(model, np.zeros(6), np.zeros(6), damping=-1.0)
    with pytest.raises(InputError, match="singular_value"):
        wrench_from_residual(model, np.zeros(6), np.zeros(6), singular_value=0.0)
    with pytest.raises(InputError, match="reference"):
        wrench_from_residual(model, np.zeros(6), np.zeros(6), reference="tool")


def test_joint_torques_of_a_tool_wrench_in_either_axes_are_the_statics(rng):
    """J^T F equals the core statics' torques (world axes; tool axes rotated first)."""
    model = RobotModel.named("panda")
    q = rng.uniform(-1.0, 1.0, (3, 7))
    F = rng.normal(size=(3, 6))
    np.testing.assert_allclose(joint_torques_of_wrench(model, q, F, "world"),
                               joint_torques_for_wrench(model, q, F), rtol=1e-12, atol=1e-12)
    R = tool_pose(model, q)[:, :3, :3]
    world = np.concatenate([np.einsum("kij,kj->ki", R, F[:, :3]),
                            np.einsum("kij,kj->ki", R, F[:, 3:])], axis=1)
    np.testing.assert_allclose(joint_torques_of_wrench(model, q, F),
                               joint_torques_for_wrench(model, q, world), rtol=1e-12, atol=1e-12)
    with pytest.raises(InputError, match="wrench"):
        joint_torques_of_wrench(model, q[0], F[0, :5])


@pytest.mark.parametrize("name", ["puma560", "panda", "planar2"])
def test_the_per_message_path_gives_the_array_result(name, rng):
    model = RobotModel.named(name)
    for _ in range(4):
        q = rng.uniform(-1.5, 1.5, model.n)
        r = rng.normal(size=model.n) * 5.0
        np.testing.assert_allclose(wrench_values(model, q.tolist(), r.tolist()),
                                   wrench_from_residual(model, q, r), rtol=1e-10, atol=1e-10)
