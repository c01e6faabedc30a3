"""
Jacobians of any frame and point, Jdot qd, the twist, and the orientation representations.

Oracles: central finite differences of the forward kinematics (independent of the Jacobian
code), Pinocchio's frame Jacobians and classical accelerations (pin, a reference library),
scipy's Rotation for the Euler angles, values computed independently of this package, and the
books' closed form of the 5R-1P Jacobian determinant d3^2 sin(theta2) sin(theta5).
"""

import importlib.util

import numpy as np
import pytest

from locations import REPO
from random_robots import random_state
from robot_dynamics_ros.core import (InputError, RobotModel, end_effector_twist,
                                     forward_kinematics, frame_names, frame_pose, jacobian,
                                     jacobian_dot_qd, shipped_robots, tool_pose)
from robot_dynamics_ros.core.algorithms.kinematics import resolve_frame
from robot_dynamics_ros.core.task_space import task_jacobian
from task_cases import H, random_models

BENCH = REPO / "bench"


def _point_world(model, q, frame, point):
    T = frame_pose(model, q, frame)
    return T[:3, :3] @ point + T[:3, 3], T[:3, :3]


def _fd_jacobian(model, q, frame, point, reference):
    """Return the columns [v; w] from central differences of the frame pose (w from dR R^T)."""
    J = np.zeros((6, model.n))
    _, R0 = _point_world(model, q, frame, point)
    for i in range(model.n):
        dq = np.zeros(model.n)
        dq[i] = H
        pp, Rp = _point_world(model, q + dq, frame, point)
        pm, Rm = _point_world(model, q - dq, frame, point)
        W = (Rp - Rm) / (2 * H) @ R0.T
        v, w = (pp - pm) / (2 * H), np.array([W[2, 1], W[0, 2], W[1, 0]])
        if reference == "local":
            v, w = R0.T @ v, R0.T @ w
        J[:, i] = np.r_[v, w]
    return J


MODELS = random_models() + [RobotModel.named("panda"), RobotModel.named("stanford")]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_jacobian_of_frames_and_points_matches_finite_differences(model):
    rng = np.random.default_rng(11)
    q, qd, _ = random_state(model, rng)
    for frame in (None, "base", 1, model.n // 2, model.n, model.joint_names[1]):
        for reference in ("world", "local"):
            point = rng.uniform(-0.3, 0.3, 3)
            J = jacobian(model, q, frame, point, reference)
            np.testing.assert_allclose(J, _fd_jacobian(model, q, frame, point, reference),
                                       atol=2e-8)
            J_plus = jacobian(model, q + H * qd, frame, point, reference)
            J_minus = jacobian(model, q - H * qd, frame, point, reference)
            np.testing.assert_allclose(jacobian_dot_qd(model, q, qd, frame, point, reference),
                                       (J_plus - J_minus) / (2 * H) @ qd, atol=2e-7)


def test_default_jacobian_is_the_tool_point_in_world_axes():
    model = random_models()[1]
    q = np.random.default_rng(2).uniform(-1, 1, model.n)
    J = jacobian(model, q)
    np.testing.assert_array_equal(J, jacobian(model, q, "tool", None, "world"))
    # The tool frame is link n's frame times the file's tool transform: the same point.
    np.testing.assert_allclose(J, jacobian(model, q, frame=model.n, point=model.tool[:3, 3]),
                               atol=1e-14)
    np.testing.assert_allclose(J, _fd_jacobian(model, q, None, np.zeros(3), "world"), atol=2e-8)


def test_link_frames_are_the_forward_kinematics_frames_and_joint_names():
    model = RobotModel.named("puma560")
    q = np.random.default_rng(4).uniform(model.lower, model.upper)
    T = forward_kinematics(model, q)
    for i in range(model.n + 1):
        np.testing.assert_allclose(frame_pose(model, q, i), T[i], atol=1e-14)
    for i, name in enumerate(model.joint_names):
        np.testing.assert_array_equal(frame_pose(model, q, name), T[i + 1])
    np.testing.assert_allclose(frame_pose(model, q), tool_pose(model, q), atol=1e-15)
    assert set(frame_names(model)) == {"tool", "base", *model.joint_names}
    # A frame does not move with the joints after it.
    J = jacobian(model, q, frame=3)
    assert np.all(J[:, 3:] == 0.0) and np.all(np.abs(J[:, :3]).sum(axis=0) > 0)


def test_frame_and_argument_errors_name_what_is_wrong():
    model = RobotModel.named("panda")
    q = np.zeros(7)
    with pytest.raises(InputError, match="unknown frame 'wrist'.*panda_joint1"):
        jacobian(model, q, frame="wrist")
    with pytest.raises(InputError, match="index 8 out of range 0..7"):
        jacobian(model, q, frame=8)
    with pytest.raises(InputError, match="point"):
        jacobian(model, q, point=[0.0, np.nan, 0.0])
    with pytest.raises(InputError, match="reference"):
        jacobian(model, q, reference="body")


def test_batches_equal_single_calls_and_twist_is_j_qd():
    model = random_models()[2]
    rng = np.random.default_rng(5)
    Q, QD, _ = random_state(model, rng, batch=4)
    point = [0.1, -0.2, 0.05]
    JB = jacobian(model, Q, 3, point, "local")
    DB = jacobian_dot_qd(model, Q, QD, None, point)
    VB = end_effector_twist(model, Q, QD, "joint2")
    for k in range(4):
        np.testing.assert_array_equal(JB[k], jacobian(model, Q[k], 3, point, "local"))
        np.testing.assert_allclose(DB[k], jacobian_dot_qd(model, Q[k], QD[k], None, point),
                                   atol=1e-15)
        np.testing.assert_allclose(VB[k], jacobian(model, Q[k], "joint2") @ QD[k], atol=1e-15)
    for reference in ("world", "local"):     # the base does not move
        assert np.all(jacobian_dot_qd(model, Q, QD, "base", None, reference) == np.zeros((4, 6)))


def _pinocchio_with_frames(model):
    pin = pytest.importorskip("pinocchio")
    spec = importlib.util.spec_from_file_location("reference_models",
                                                  BENCH / "reference_models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pm = module.pinocchio_model(model)
    ids = {}
    for frame in [None] + list(range(1, model.n + 1)):
        link, offset, name = resolve_frame(model, frame)
        placement = pin.SE3(offset[:3, :3].copy(), offset[:3, 3].copy())
        ids[frame] = pm.addFrame(pin.Frame(f"f_{name}", link, placement, pin.FrameType.OP_FRAME))
    return pin, pm, ids


@pytest.mark.parametrize("name", ["panda", "puma560", "stanford"])
def test_frame_jacobians_and_classical_accelerations_match_pinocchio(name):
    model = RobotModel.named(name)
    pin, pm, ids = _pinocchio_with_frames(model)
    data = pm.createData()
    rng = np.random.default_rng(8)
    worst = 0.0
    for _ in range(5):
        q, qd, _ = random_state(model, rng)
        pin.forwardKinematics(pm, data, q, qd, np.zeros(model.n))
        pin.computeJointJacobians(pm, data, q)
        pin.updateFramePlacements(pm, data)
        for frame, fid in ids.items():
            for reference, pin_reference in (("world", pin.LOCAL_WORLD_ALIGNED),
                                             ("local", pin.LOCAL)):
                J_pin = pin.getFrameJacobian(pm, data, fid, pin_reference)   # rows [v; w] too
                J = jacobian(model, q, frame, None, reference)
                worst = max(worst, np.abs(J - J_pin).max())
            # the classical acceleration with qdd = 0 is Jdot qd of the world-axes Jacobian
            a = pin.getFrameClassicalAcceleration(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)
            Jd = jacobian_dot_qd(model, q, qd, frame)
            worst = max(worst, np.abs(Jd - np.r_[a.linear, a.angular]).max())
    assert worst < 1e-12


@pytest.mark.parametrize("representation", [None, "rpy"])
def test_task_jacobian_of_one_configuration_equals_the_batch_path(representation):
    model = random_models(10)[1]
    Q, QD, _ = random_state(model, np.random.default_rng(12), batch=3)
    point = [0.05, -0.1, 0.2]
    batch = task_jacobian(model, Q, QD, "pose", 4, point, representation)
    for k in range(3):
        single = task_jacobian(model, Q[k], QD[k], "pose", 4, point, representation)
        np.testing.assert_allclose(single.J, batch.J[k], atol=1e-13)
        np.testing.assert_allclose(single.Jdot_qd, batch.Jdot_qd[k], atol=1e-13)
        np.testing.assert_allclose(single.pose, batch.pose[k], atol=1e-14)


def test_5r1p_jacobian_matches_the_seed_and_its_determinant_closed_form():
    """
    Check the Jacobian of Asada & Slotine 1986's 5R-1P arm against independent values.

    J at q = (0.3, 0.7, 0.8, 0.4, 0.6, -0.5); det J = d3^2 s2 s5.
    """
    model = RobotModel.named("asada_5r1p")
    q = np.array([0.3, 0.7, 0.8, 0.4, 0.6, -0.5])
    expected = np.array([
        [-0.3447846892, 0.6411419571, 0.6154446636, -0.0628710165, 0.0225932373, 0],
        [0.6273986115, 0.1983284485, 0.1903793441, 0.0894285697, 0.0742742734, 0],
        [0, -0.7012676294, 0.7648421873, 0.0283303922, -0.1843173295, 0],
        [0, -0.2955202067, 0, 0.6154446636, -0.5567329722, 0.8229745066],
        [0, 0.9553364891, 0, 0.1903793441, 0.7919043809, 0.4847378254],
        [1, 0, 0, 0.7648421873, 0.2508701839, 0.2962131027]])
    np.testing.assert_allclose(jacobian(model, q), expected, atol=1e-10)
    rng = np.random.default_rng(0)
    Q = rng.uniform(model.lower, model.upper, (50, 6))
    det = np.linalg.det(jacobian(model, Q))
    np.testing.assert_allclose(det, Q[:, 2] ** 2 * np.sin(Q[:, 1]) * np.sin(Q[:, 4]), atol=1e-12)


def test_every_shipped_robot_has_finite_frame_jacobians():
    for name in shipped_robots():
        model = RobotModel.named(name)
        q = 0.5 * (np.clip(model.lower, -3, 3) + np.clip(model.upper, -3, 3))
        for frame in frame_names(model):
            assert np.isfinite(jacobian(model, q, frame, [0.1, 0.0, 0.0], "local")).all()
