"""Redundancy resolution: Asada & Slotine's pseudo-inverse example, null space, singularities."""

import numpy as np
import pytest

from random_robots import random_state
from task_cases import planar
from robot_dynamics_ros.core import InputError, RobotModel, SingularityError, jacobian
from robot_dynamics_ros.core.task_space import (joint_velocities, kinematic_null_space_projector,
                                                weighted_pseudo_inverse)


# ------------------------------------------------------------------------------- redundancy
def test_pseudo_inverse_and_weighted_solution_of_the_seed_example():
    """
    Check Asada & Slotine 1986, Sect. 3.2.3, evaluated independently.

    L = (1, 0.8, 0.5), q = (0.2, 0.5, -0.4), pd = (0.3, -0.1).
    """
    model = planar([1.0, 0.8, 0.5], "planar3")
    q, pd = [0.2, 0.5, -0.4], [0.3, -0.1]
    qd = joint_velocities(model, q, pd, task=(0, 1))
    np.testing.assert_allclose(qd, [0.4447334212, -1.1273209050, 0.4351123791], atol=1e-10)
    W = np.diag([1.0, 2.0, 4.0])
    qd_w = joint_velocities(model, q, pd, weights=[1.0, 2.0, 4.0], task=(0, 1))
    np.testing.assert_allclose(qd_w, [0.5318618597, -1.1865284395, 0.1926581879], atol=1e-10)
    assert qd_w @ W @ qd_w == pytest.approx(3.2470452228, rel=1e-9)
    # independent: the KKT system of min qd^T W qd subject to J qd = pd (3-44 - 3-46)
    J = jacobian(model, q)[:2]
    kkt = np.block([[2 * W, -J.T], [J, np.zeros((2, 2))]])
    np.testing.assert_allclose(np.linalg.solve(kkt, np.r_[np.zeros(3), pd])[:3], qd_w,
                               atol=1e-12)


def test_null_space_motion_keeps_the_task_velocity():
    model = RobotModel.named("panda")
    rng = np.random.default_rng(4)
    q, _, _ = random_state(model, rng)
    J = jacobian(model, q)
    pd, qd0 = rng.normal(size=6), rng.normal(size=7)
    for weights in (None, rng.uniform(0.5, 2.0, 7)):
        qd = joint_velocities(model, q, pd, weights=weights, null_velocity=qd0)
        np.testing.assert_allclose(J @ qd, pd, atol=1e-12)                          # (3-42)
        P = kinematic_null_space_projector(J, weights)
        np.testing.assert_allclose(J @ P, 0.0, atol=1e-12)
        np.testing.assert_allclose(P @ P, P, atol=1e-12)
    np.testing.assert_allclose(weighted_pseudo_inverse(J), np.linalg.pinv(J), atol=1e-12)


def test_redundancy_at_a_singularity():
    model = planar([1.0, 0.8, 0.5], "planar3")
    stretched = [0.3, 0.0, 0.0]
    with pytest.raises(SingularityError, match=r"planar3: J W\^-1 J\^T is singular"):
        joint_velocities(model, stretched, [0.1, 0.1], task=(0, 1))
    qd = joint_velocities(model, stretched, [0.1, 0.1], task=(0, 1), damping=0.05)
    assert np.isfinite(qd).all()
    with pytest.raises(InputError, match="positive definite"):
        joint_velocities(model, [0.2, 0.5, -0.4], [0.1, 0.1], weights=[1.0, -1.0, 1.0],
                         task=(0, 1))
