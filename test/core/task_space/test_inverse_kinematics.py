"""
Inverse kinematics: the closed form of Asada & Slotine 1986's 5R-1P arm and the numeric solver.

Oracles: the four closed-form solutions (computed independently) at q = (0.3, 0.7, 0.8, 0.4, 0.6,
-0.5); round trips through the forward kinematics (an independent code path) on every shipped
robot; the rotation error against scipy's rotation vectors.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ik_checks import pose_errors
from robot_dynamics_ros.core import InputError, RobotModel, frame_pose, shipped_robots, tool_pose
from robot_dynamics_ros.core.model.urdf_export import urdf_text
from robot_dynamics_ros.core.task_space import inverse_kinematics
from robot_dynamics_ros.core.task_space.inverse_kinematics import rotation_error


# ---------------------------------------------------------------------------------- numeric
def test_rotation_error_is_the_rotation_vector():
    rng = np.random.default_rng(1)
    R1, R2 = Rotation.random(200, random_state=rng), Rotation.random(200, random_state=rng)
    np.testing.assert_allclose(rotation_error(R1.as_matrix(), R2.as_matrix()),
                               (R1 * R2.inv()).as_rotvec(), atol=1e-9)
    # near and at pi (the axis from the symmetric part)
    axis = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    for angle in (np.pi - 1e-3, np.pi - 1e-9, np.pi):
        R = Rotation.from_rotvec(angle * axis).as_matrix()
        e = rotation_error(R, np.eye(3))
        assert np.linalg.norm(e) == pytest.approx(angle, abs=1e-7)
        np.testing.assert_allclose(Rotation.from_rotvec(e).as_matrix(), R, atol=1e-7)


def _random_configurations(model, count, seed):
    lower, upper = np.clip(model.lower, -np.pi, np.pi), np.clip(model.upper, -np.pi, np.pi)
    return np.random.default_rng(seed).uniform(lower, upper, (count, model.n))


@pytest.mark.parametrize("name", shipped_robots())
def test_numeric_ik_round_trips_on_every_shipped_robot(name):
    model = RobotModel.named(name)
    position_only = model.n < 6
    targets = tool_pose(model, _random_configurations(model, 20, seed=2))
    results = [inverse_kinematics(model, T, position_only=position_only) for T in targets]
    assert np.mean([r.success for r in results]) >= 0.95
    for r, T in zip(results, targets):
        assert np.all(r.q >= model.lower) and np.all(r.q <= model.upper)
        assert np.isfinite(r.residual)
        p_err, o_err = pose_errors(model, r.q, T)
        assert p_err == pytest.approx(r.position_error, abs=1e-12)
        if r.success:
            assert p_err <= 1e-6 and (position_only or o_err <= 1e-6)
    # the batch solves the same targets
    _assert_batch_reaches(model, targets, position_only, 0.95)


def _assert_batch_reaches(model, targets, position_only, rate):
    result = inverse_kinematics(model, targets, position_only=position_only)
    assert result.success.mean() >= rate
    p_err, o_err = pose_errors(model, result.q, targets)
    assert np.all(p_err[result.success] <= 1e-6)
    if not position_only:
        assert np.all(o_err[result.success] <= 1e-6)


@pytest.mark.parametrize("name", shipped_robots())
def test_numeric_ik_round_trips_on_the_shipped_robots_as_urdf(name):
    """Check round trips on each shipped robot written as URDF and read back (from_urdf)."""
    model = RobotModel.from_urdf(urdf_text(RobotModel.named(name)), tip_link="tool0")
    targets = tool_pose(RobotModel.named(name), _random_configurations(model, 10, seed=3))
    _assert_batch_reaches(model, targets, model.n < 6, 0.9)


def test_numeric_ik_with_continuous_joints(recwarn):
    data = RobotModel.named("puma560").to_dict()
    for j in (0, 3, 5):                     # no position limits: -inf / +inf
        limits = data["joints"][j]["limits"]
        data["joints"][j]["type"] = "continuous"
        data["joints"][j]["limits"] = {"velocity": limits["velocity"], "effort": limits["effort"]}
    model = RobotModel.from_dict(data)
    targets = tool_pose(model, _random_configurations(model, 10, seed=4))
    _assert_batch_reaches(model, targets, False, 0.9)
    single = inverse_kinematics(model, targets[0])
    assert single.success and np.isfinite(single.q).all()
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_numeric_ik_position_only_other_frame_and_start():
    model = RobotModel.named("panda")
    q = np.array([0.3, -0.4, 0.2, -1.8, 0.1, 1.5, 0.4])
    target = frame_pose(model, q, "panda_joint4")
    result = inverse_kinematics(model, target, frame="panda_joint4", position_only=True)
    assert result.success and result.orientation_error == 0.0
    reached = frame_pose(model, result.q, "panda_joint4")[:3, 3]
    assert np.linalg.norm(reached - target[:3, 3]) <= 1e-6
    # from a nearby start the solver converges in a few iterations and stays close
    near = inverse_kinematics(model, tool_pose(model, q), q0=q + 0.01)
    assert near.success and near.attempts == 1 and near.iterations <= 10
    assert np.abs(near.q - q).max() < 0.05


def test_unreachable_targets_fail_with_the_closest_configuration_never_nan():
    model = RobotModel.named("puma560")
    target = np.eye(4)
    target[:3, 3] = [3.0, 0.0, 0.5]                  # far beyond the reach
    result = inverse_kinematics(model, target, restarts=2, max_iterations=50)
    assert not result.success and np.isfinite(result.q).all() and result.residual > 1.0
    assert result.attempts == 3
    assert np.all(result.q >= model.lower) and np.all(result.q <= model.upper)
    both = np.stack([target, tool_pose(model, np.zeros(6))])
    batch = inverse_kinematics(model, both, restarts=2)
    assert batch.success.tolist() == [False, True] and np.isfinite(batch.q).all()


def test_bad_arguments_name_what_is_wrong():
    model = RobotModel.named("panda")
    with pytest.raises(InputError, match="target: expected a finite 4x4 pose"):
        inverse_kinematics(model, np.eye(3))
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(InputError, match="not a rotation matrix"):
        inverse_kinematics(model, bad)
    with pytest.raises(InputError, match="restarts"):
        inverse_kinematics(model, np.eye(4), restarts=-1)
    with pytest.raises(InputError, match="position_tolerance"):
        inverse_kinematics(model, np.eye(4), position_tolerance=0.0)
    with pytest.raises(InputError, match="q0: 2 start configurations for 3"):
        inverse_kinematics(model, np.stack([np.eye(4)] * 3), q0=np.zeros((2, 7)))
    with pytest.raises(InputError, match="unknown frame"):
        inverse_kinematics(model, np.eye(4), frame="gripper")
