"""
Orientation representations: Euler and RPY angles.

Oracles: scipy and the book's matrices, round trips, named singularities, finite differences of
the rate maps.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from random_robots import random_state
from robot_dynamics_ros.core import InputError, RobotModel, SingularityError, jacobian, tool_pose
from robot_dynamics_ros.core.task_space import analytic_jacobian, task_jacobian
from robot_dynamics_ros.core.task_space.orientation import (analytic_jacobian_transform,
                                                            angles_from_matrix,
                                                            angular_velocity_map,
                                                            angular_velocity_map_derivative,
                                                            rotation_matrix)
from robot_dynamics_ros.core.transforms import rpy_matrix
from task_cases import H


# ------------------------------------------------------------------------------ orientation
def test_euler_and_rpy_matrices_match_scipy_and_an_independent_value():
    rng = np.random.default_rng(0)
    angles = rng.uniform(-np.pi, np.pi, (20, 3))
    np.testing.assert_allclose(rotation_matrix("zyz", angles),
                               Rotation.from_euler("ZYZ", angles).as_matrix(), atol=1e-14)
    # R = Rz(yaw) Ry(pitch) Rx(roll): scipy's intrinsic ZYX of (yaw, pitch, roll); URDF's rpy.
    np.testing.assert_allclose(rotation_matrix("rpy", angles),
                               Rotation.from_euler("ZYX", angles[:, ::-1]).as_matrix(), atol=1e-14)
    np.testing.assert_allclose(rotation_matrix("rpy", angles[0]), rpy_matrix(angles[0]),
                               atol=1e-15)
    # Rz(0.1) Ry(0.2) Rx(0.3), computed independently
    expected = np.array([[0.9751703272, -0.0369570135, 0.2183506631],
                         [0.0978433950, 0.9564250858, -0.2750958473],
                         [-0.1986693308, 0.2896294776, 0.9362933636]])
    np.testing.assert_allclose(rotation_matrix("rpy", [0.3, 0.2, 0.1]), expected, atol=1e-10)


@pytest.mark.parametrize("representation", ["zyz", "rpy"])
def test_angles_round_trip_on_both_branches(representation):
    R = Rotation.random(30, random_state=np.random.default_rng(1)).as_matrix()
    for branch in (1, -1):
        angles = angles_from_matrix(representation, R, branch)
        np.testing.assert_allclose(rotation_matrix(representation, angles), R, atol=1e-13)
        middle = angles[:, 1]
        if representation == "zyz":
            assert np.all(branch * middle > 0)
        else:
            assert np.all((np.abs(middle) < np.pi / 2) == (branch == 1))


def test_representation_singularities_are_named():
    with pytest.raises(SingularityError, match="ZYZ Euler angles are singular at theta = 0"):
        angles_from_matrix("zyz", rotation_matrix("zyz", [0.3, 0.0, 0.2]))
    with pytest.raises(SingularityError, match=r"roll-pitch-yaw .* pitch = 1.5708"):
        angles_from_matrix("rpy", rotation_matrix("rpy", [0.3, np.pi / 2, 0.2]))
    model = RobotModel.named("puma560")
    # Puma at q = 0: the tool's z axis is the world z axis, theta = 0 in ZYZ.
    with pytest.raises(SingularityError, match="ZYZ"):
        analytic_jacobian(model, np.zeros(6), "zyz")
    with pytest.raises(InputError, match="representation"):
        analytic_jacobian(model, np.zeros(6), "xyz")


@pytest.mark.parametrize("representation", ["zyz", "rpy"])
def test_angle_rate_map_and_its_derivative_match_finite_differences(representation):
    rng = np.random.default_rng(2)
    for _ in range(5):
        phi, rate = rng.uniform(-1.2, 1.2, 3), rng.normal(size=3)
        Rp = rotation_matrix(representation, phi + H * rate)
        Rm = rotation_matrix(representation, phi - H * rate)
        W = (Rp - Rm) / (2 * H) @ rotation_matrix(representation, phi).T
        np.testing.assert_allclose(angular_velocity_map(representation, phi) @ rate,
                                   [W[2, 1], W[0, 2], W[1, 0]], atol=1e-8)
        Td = (angular_velocity_map(representation, phi + H * rate)
              - angular_velocity_map(representation, phi - H * rate)) / (2 * H)
        np.testing.assert_allclose(angular_velocity_map_derivative(representation, phi, rate), Td,
                                   atol=1e-8)


@pytest.mark.parametrize("representation", ["zyz", "rpy"])
def test_analytic_jacobian_differentiates_the_pose_angles(representation):
    model = RobotModel.named("asada_5r1p")
    q, qd, _ = random_state(model, np.random.default_rng(3))

    def pose(q):
        T = tool_pose(model, q)
        return np.r_[T[:3, 3], angles_from_matrix(representation, T)]

    J_A = analytic_jacobian(model, q, representation)
    fd = np.column_stack([(pose(q + H * e) - pose(q - H * e)) / (2 * H) for e in np.eye(6)])
    np.testing.assert_allclose(J_A, fd, atol=1e-7)
    # J = T_A J_A (Siciliano 3.66) and d/dt (J_A qd) = J_A qdd + Jdot_A qd
    T_A = analytic_jacobian_transform(representation, pose(q)[3:])
    np.testing.assert_allclose(T_A @ J_A, jacobian(model, q), atol=1e-12)
    tj = task_jacobian(model, q, qd, representation=representation)
    J_plus = analytic_jacobian(model, q + H * qd, representation)
    J_minus = analytic_jacobian(model, q - H * qd, representation)
    np.testing.assert_allclose(tj.Jdot_qd, (J_plus - J_minus) / (2 * H) @ qd, atol=1e-7)
