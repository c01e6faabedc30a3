"""
Statics and stiffness, redundancy, payload capacity.

Asada & Slotine 1986, ch. 4 and Sect. 3.2.

Oracles: Asada & Slotine 1986's examples evaluated independently (4-1, 4-2, the compliance of 4-26
and the pseudo-inverse example of Sect. 3.2.3), the RNEA's tip-wrench term (an independent code
path for J^T F), virtual work, an independent KKT solve for the weighted minimum-norm solution, and
bisection on the joint torques of the model with the payload attached (RobotModel.with_payload).
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from random_robots import random_state
from task_cases import planar
from robot_dynamics_ros.core import (InputError, RobotModel, gravity_torques, jacobian, rnea,
                                     tool_pose)
from robot_dynamics_ros.core.task_space import (end_point_compliance, joint_torques_for_wrench,
                                                transform_wrench, wrench_transform)


# ---------------------------------------------------------------------------------- statics
def test_equivalent_joint_torques_example_4_1():
    """
    Check Example 4-1 of Asada & Slotine 1986, evaluated independently.

    l = (1, 0.8), theta = (0.3, 0.6), F = (1, 2): tau = J^T F.
    """
    model = planar([1.0, 0.8])
    tau = joint_torques_for_wrench(model, [0.3, 0.6], [1.0, 2.0], task=(0, 1))
    np.testing.assert_allclose(tau, [1.9830671931, 0.3679144215], atol=1e-10)


@pytest.mark.parametrize("name", ["puma560", "panda", "stanford", "asada_5r1p"])
def test_wrench_torques_are_the_rnea_tip_wrench_term_and_do_virtual_work(name):
    model = RobotModel.named(name)
    rng = np.random.default_rng(1)
    q, _, _ = random_state(model, rng)
    F = rng.normal(size=6) * [10, 10, 10, 1, 1, 1]
    tau = joint_torques_for_wrench(model, q, F)
    zero = np.zeros(model.n)
    tip_term = rnea(model, q, zero, zero, f_ext=F) - gravity_torques(model, q)
    np.testing.assert_allclose(tau, tip_term, atol=1e-9)
    # virtual work (4-9, 4-10): tau^T dq = F^T dp for a small motion dq, dp from the poses
    dq = rng.normal(size=model.n) * 1e-6
    T0, T1 = tool_pose(model, q - dq / 2), tool_pose(model, q + dq / 2)
    dR = T1[:3, :3] @ T0[:3, :3].T
    dphi = 0.5 * np.array([dR[2, 1] - dR[1, 2], dR[0, 2] - dR[2, 0], dR[1, 0] - dR[0, 1]])
    dp = np.r_[T1[:3, 3] - T0[:3, 3], dphi]
    assert tau @ dq == pytest.approx(F @ dp, rel=1e-6, abs=1e-15)


def test_wrench_transform_example_4_2_and_power():
    """
    Check Example 4-2 (Asada & Slotine 1986, evaluated independently) and power invariance.

    r = (0.1, -0.2, 0.3), P = (1, 2, 3, 0.4, 0.5, 0.6) give Q = (1, 2, 3, -0.8, 0.5, 1.0) (4-17,
    parallel frames).
    """
    pose = np.eye(4)
    pose[:3, 3] = [0.1, -0.2, 0.3]
    np.testing.assert_allclose(transform_wrench([1, 2, 3, 0.4, 0.5, 0.6], pose),
                               [1, 2, 3, -0.8, 0.5, 1.0], atol=1e-15)
    # With a rotation: power is frame-independent.  A twist [v; w] of frame a, seen in frame b:
    # w_b = R^T w_a, v_b = R^T (v_a + w_a x r) (the velocity of b's origin).
    rng = np.random.default_rng(2)
    pose[:3, :3] = Rotation.random(random_state=rng).as_matrix()
    R, r = pose[:3, :3], pose[:3, 3]
    v, w, F_b = rng.normal(size=3), rng.normal(size=3), rng.normal(size=6)
    twist_b = np.r_[R.T @ (v + np.cross(w, r)), R.T @ w]
    assert transform_wrench(F_b, pose) @ np.r_[v, w] == pytest.approx(F_b @ twist_b, rel=1e-12)
    np.testing.assert_allclose(transform_wrench(np.array([F_b, F_b]), pose)[1],
                               wrench_transform(pose) @ F_b)
    with pytest.raises(InputError, match="not a proper rotation"):
        transform_wrench(F_b, np.diag([1.0, 1.0, -1.0, 1.0]))


def test_compliance_of_the_two_link_arm_and_its_principal_axes():
    """Check (4-24), (4-26) corrected, (4-32)-(4-34): l = (1, 0.8), k = (100, 50)."""
    model = planar([1.0, 0.8])
    c = end_point_compliance(model, [0.3, 0.6], [100.0, 50.0], task=(0, 1))
    np.testing.assert_allclose(c.matrix, [[0.0163582849, -0.0196284623],
                                          [-0.0196284623, 0.0260470849]], atol=1e-10)
    np.testing.assert_allclose(c.principal_compliances, [0.0414201216, 0.0009852483], atol=1e-10)
    np.testing.assert_allclose(c.stiffness, [[638.2665275732, 480.9824408041],
                                             [480.9824408041, 400.8489143211]], rtol=1e-9)
    np.testing.assert_allclose(np.abs(c.principal_axes), [[0.6165975403, 0.7872785234],
                                                          [0.7872785234, 0.6165975403]], atol=1e-9)
    E = c.principal_axes
    np.testing.assert_allclose(E.T @ c.matrix @ E, np.diag(c.principal_compliances), atol=1e-12)
    for k in range(2):      # a force along a principal axis deflects the end point along it
        np.testing.assert_allclose(c.matrix @ E[:, k], c.principal_compliances[k] * E[:, k],
                                   atol=1e-12)


def test_compliance_is_joint_deflection_under_the_balancing_torques():
    model = RobotModel.named("puma560")
    rng = np.random.default_rng(3)
    q, _, _ = random_state(model, rng)
    k = rng.uniform(100, 1000, model.n)
    F = rng.normal(size=6)
    c = end_point_compliance(model, q, k)
    dq = joint_torques_for_wrench(model, q, F) / k             # tau = J^T F, tau = K dq (4-18)
    np.testing.assert_allclose(c.matrix @ F, jacobian(model, q) @ dq, atol=1e-14)
    singular = end_point_compliance(model, [0.0, 0.5, 0.0, 0.0, 0.0, 0.0], k)   # wrist: q5 = 0
    assert singular.stiffness is None and np.isfinite(singular.matrix).all()
    with pytest.raises(InputError, match="joint_stiffness"):
        end_point_compliance(model, q, [1.0] * 5)
