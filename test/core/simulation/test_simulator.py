"""
The simulator's external joint torque: held over the step, added after the effort saturation.

Oracle for a wrench F applied to the robot at the tool: the initial acceleration of an arm held
by g(q) is the one the RNEA with the end-effector wrench -F gives back g(q) for (the h_e of
Siciliano et al. 2009, eq. 7.42, is the wrench the robot exerts, here -F): a path through the
RNEA's terminal condition, not through the Jacobian used to make J^T F.
"""

import numpy as np
import pytest

from robot_dynamics_ros.core import InputError, RobotModel, gravity_torques, jacobian, rnea
from robot_dynamics_ros.core.simulation import Simulator


def test_an_external_torque_acts_like_a_torque_that_is_not_saturated_nor_reported():
    model = RobotModel.named("puma560")
    q0, qd0 = np.array([0.1, 0.4, -0.6, 0.2, 0.3, 0.1]), np.array([0.5, -0.3, 0.2, 0.1, 0, 0.4])
    limit = model.effort_limit
    tau = np.array([2.0, -2.0, 0.5, 0.0, 3.0, -0.2]) * limit        # some above the limits
    external = np.array([15.0, -40.0, 20.0, -3.0, 2.0, 1.0])
    with_external = Simulator(model, q0, qd0)
    summed = Simulator(model, q0, qd0, effort_limits=False)
    for _ in range(50):
        applied, _ = with_external.step(tau, external=external)
        summed.step(np.clip(tau, -limit, limit) + external)
        np.testing.assert_array_equal(applied, np.clip(tau, -limit, limit))
    np.testing.assert_allclose(with_external.q, summed.q, rtol=0, atol=1e-15)
    np.testing.assert_allclose(with_external.qd, summed.qd, rtol=0, atol=1e-13)
    assert with_external.last_applied == list(np.clip(tau, -limit, limit))


@pytest.mark.parametrize("name", ["puma560", "panda"])
def test_a_tool_wrench_accelerates_a_held_arm_as_the_rnea_says(name):
    model = RobotModel.named(name).without_friction()
    q = np.linspace(-0.5, 0.7, model.n)
    F = np.array([10.0, -20.0, 15.0, 1.0, -2.0, 0.5])        # on the robot, world axes
    sim = Simulator(model, q, joint_limits=False)
    g = gravity_torques(model, q)
    _, qdd = sim.step(g, acceleration=True, external=jacobian(model, q).T @ F)
    np.testing.assert_allclose(rnea(model, q, np.zeros(model.n), qdd, f_ext=-F), g,
                               rtol=1e-9, atol=1e-9 * np.abs(g).max())


def test_a_bad_external_torque_is_named():
    sim = Simulator(RobotModel.named("puma560"), np.zeros(6), joint_limits=False)
    with pytest.raises(InputError, match="external"):
        sim.step(None, external=[1.0] * 5)
    with pytest.raises(InputError, match="external"):
        sim.step(None, external=[np.nan] * 6)
    assert sim.steps == 0
