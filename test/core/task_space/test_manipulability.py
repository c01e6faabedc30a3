"""
The dynamic manipulability ellipsoid (Siciliano et al., Robotics, eq. 7.148).

Oracles: its points are reached with unit torque; closed forms; gravity shifts its centre.
"""

import numpy as np
import pytest

from random_robots import random_state
from robot_dynamics_ros.core import RobotModel, forward_dynamics, gravity_torques, mass_matrix
from robot_dynamics_ros.core.task_space import dynamic_manipulability, projected_ellipse
from task_cases import close


# ------------------------------------------------------------------- manipulability ellipsoid
@pytest.mark.parametrize("name,task", [("planar2", (0, 1)), ("puma560", "pose"),
                                       ("panda", "position"), ("asada_5r1p", "pose")])
@pytest.mark.parametrize("torque_limited", [False, True])
def test_ellipsoid_points_are_reached_with_unit_torque(name, task, torque_limited):
    """
    Check that the points vd of the ellipsoid (7.148) are reached with unit torque.

    vd is the end-effector acceleration from rest of the torque B J^+ vd + g (7.145), whose part
    B J^+ (vd + J B^-1 g) (7.147) has unit norm: checked by forward dynamics.
    """
    model = RobotModel.named(name)
    rng = np.random.default_rng(6)
    q, _, _ = random_state(model, rng)
    e = dynamic_manipulability(model, q, task=task, torque_limited=torque_limited)
    m, n = len(e.rows), model.n
    J, B, g = e.J, mass_matrix(model, q), gravity_torques(model, q)
    J_pinv = J.T @ np.linalg.inv(J @ J.T)
    scale = model.effort_limit if torque_limited else np.ones(n)
    for _ in range(5):
        u = rng.normal(size=m)
        vd = e.centre + e.directions @ (e.semi_axes * u / np.linalg.norm(u))
        w = vd - e.centre
        assert w @ e.matrix @ w == pytest.approx(1.0, rel=1e-9)                    # (7.148)
        tau_dyn = B @ J_pinv @ (vd + J @ np.linalg.solve(B, g))                      # (7.147)
        assert np.linalg.norm(tau_dyn / scale) == pytest.approx(1.0, rel=1e-9)
        tau = B @ J_pinv @ vd + g                                                    # (7.145)
        qdd = forward_dynamics(model, q, np.zeros(n), tau)
        close(J @ qdd, vd)
    # the centre is the free fall of the arm from rest, zero torque
    close(e.centre, J @ forward_dynamics(model, q, np.zeros(n), np.zeros(n)), 1e-9)
    assert np.all(np.diff(e.semi_axes) <= 0)
    np.testing.assert_allclose(e.directions.T @ e.directions, np.eye(m), atol=1e-12)


def test_non_redundant_ellipsoid_core_is_j_b2_jt_inverse():
    """Check (7.149): the core is J^-T B^T B J^-1, i.e. its inverse is J B^-2 J^T."""
    model = RobotModel.named("puma560")
    q, _, _ = random_state(model, np.random.default_rng(7))
    e = dynamic_manipulability(model, q)
    Binv = np.linalg.inv(mass_matrix(model, q))
    close(np.linalg.inv(e.matrix), e.J @ Binv @ Binv @ e.J.T)


def test_gravity_shifts_the_planar_ellipse_downwards():
    """Check Fig. 7.15: with gravity along -y the centre lies below the tip."""
    model = RobotModel.named("planar2")
    for q in ([0.3, 0.8], [-0.4, 1.2], [1.0, -0.6]):
        assert dynamic_manipulability(model, q, task=(0, 1)).centre[1] < 0.0


def test_projected_ellipse_bounds_the_ellipsoid_points():
    model = RobotModel.named("panda")
    rng = np.random.default_rng(8)
    q, _, _ = random_state(model, rng)
    e = dynamic_manipulability(model, q, task="position")
    shape, centre = projected_ellipse(e, (0, 2))
    u = rng.normal(size=(2000, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    points = e.centre + (e.semi_axes * u) @ e.directions.T
    d = points[:, [0, 2]] - centre
    inside = np.einsum("ki,ij,kj->k", d, shape, d)
    assert inside.max() <= 1.0 + 1e-9 and inside.max() > 0.97     # the shadow touches its outline
