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


# -- the friction law's further terms (core/control/friction.py) -----------------------------

def _further(quadratic, load, viscous, coulomb):
    from further_friction import with_further_friction
    return with_further_friction(RobotModel.named("puma560"), quadratic, load, viscous, coulomb)


def _run(model, q0, qd0, steps, compiled=False, tau=None, dt=1e-3):
    sim = Simulator(model, q0, qd0, dt=dt, compiled=compiled, joint_limits=False,
                    effort_limits=False)
    states = [(sim.q, sim.qd)]
    for _ in range(steps):
        sim.step(np.zeros(model.n) if tau is None else tau)
        states.append((sim.q, sim.qd))
    return states


def test_quadratic_viscous_friction_dissipates_what_the_energy_balance_says():
    """
    Unforced, F_v qd + F_v2 qd|qd| only: E(0) - E(T) = integral of qd . tau_f dt >= 0.

    The integral by the trapezoidal rule over the 1 ms steps of RK4 (its error O(dt^2) of the
    dissipated energy, far below the 1e-4 relative tolerance); the compiled simulator gives the
    same run as the plain-Python one.
    """
    from robot_dynamics_ros.core.simulation.energy import mechanical_energy
    model = _further(quadratic=0.8, load=0.0, viscous=0.5, coulomb=0.0)
    q0, qd0 = np.array([0.0, -0.5, 0.3, 0.0, 0.4, 0.0]), np.array([1.5, -1.0, 2.0, 1.0, -2, 3])
    states = _run(model, q0, qd0, 600)
    qd = np.array([v for _, v in states])
    power = np.sum(qd * (model.viscous * qd + model.viscous_quadratic * qd * np.abs(qd)), axis=1)
    assert np.all(power >= 0.0)
    dissipated = float(np.sum(0.5 * (power[1:] + power[:-1])) * 1e-3)
    energy = [float(mechanical_energy(model, q, v)) for q, v in states]
    lost = energy[0] - energy[-1]
    assert lost > 0.0 and abs(lost - dissipated) < 1e-4 * dissipated
    assert np.all(np.diff(energy) <= 1e-9 * abs(energy[0]))
    other = _run(model, q0, qd0, 600, "auto")
    np.testing.assert_allclose(other[-1][1], states[-1][1], rtol=0, atol=1e-9)


def test_load_dependent_coulomb_friction_holds_below_its_level_at_the_position():
    """
    F_s = 0, F_l = 0.3: at rest, g(q) + 0.2 |g(q)| on a loaded joint sticks, + 0.4 |g| slides.

    The level F_l |g(q)| is set at each step's position (the implicit step of
    ``simulation/friction.py``), in all three simulator paths.
    """
    model = _further(quadratic=0.0, load=0.3, viscous=0.0, coulomb=0.0)
    q0 = np.array([0.0, -0.6, 0.4, 0.0, 0.5, 0.0])
    g = gravity_torques(model, q0)
    assert abs(g[1]) > 1.0
    for compiled in (False, "auto"):
        for share, moves in ((0.2, False), (0.4, True)):
            tau = g.copy()
            tau[1] += share * abs(g[1])
            final = _run(model, q0, np.zeros(6), 50, compiled, tau)[-1]
            assert bool(abs(final[1][1]) > 1e-6) is moves, (compiled, share)
            if not moves:
                assert final[0][1] == q0[1]
