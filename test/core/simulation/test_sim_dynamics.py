"""
The simulator's accelerations equal the core's forward dynamics.

A mass matrix that is not positive definite is reported.
"""

import numpy as np
import pytest

from random_robots import random_state
from robot_dynamics_ros.core import (RobotModel, SingularityError, forward_dynamics, mass_matrix,
                                     nonlinear_effects, shipped_robots, simulate)
from robot_dynamics_ros.core.simulation import Simulator
from simulated_robots import full_inertia_robot, wheel


@pytest.mark.parametrize("name", shipped_robots())
def test_forward_dynamics_of_the_simulator_agree_with_the_core(name):
    model = RobotModel.named(name)
    rng = np.random.default_rng(1)
    q, qd, _ = random_state(model, rng)
    tau = rng.uniform(-1, 1, model.n) * model.effort_limit
    sims = [Simulator(model, q, qd, compiled=choice) for choice in ("auto", False)]
    # oracle: the core's B and n of the frictionless model, viscous friction added by hand
    rhs = tau - nonlinear_effects(model.without_friction(), q, qd) - model.viscous * qd
    expected = np.linalg.solve(mass_matrix(model, q), rhs)
    for sim in sims:
        np.testing.assert_allclose(sim.dynamics(q.tolist(), qd.tolist(), tau.tolist()), expected,
                                   rtol=1e-9, atol=1e-9 * max(1.0, np.abs(expected).max()))
        # with Coulomb friction F_s sgn(qd): the core's forward dynamics (Siciliano et al. 2009,
        # eq. 7.115)
        np.testing.assert_allclose(sim.acceleration(np.clip(tau, -model.effort_limit,
                                                            model.effort_limit)),
                                   forward_dynamics(model, q, qd, tau), rtol=1e-9,
                                   atol=1e-9 * max(1.0, np.abs(expected).max()))


def test_the_compiled_accelerations_equal_the_terms_then_the_solve():
    """The kernels' accelerations are solve(terms(q, qd), tau) to rounding, on every robot."""
    rng = np.random.default_rng(5)
    models = [RobotModel.named(name) for name in shipped_robots()]
    models += [full_inertia_robot()[0], wheel()]
    for model in models:
        dynamics = Simulator(model, np.zeros(model.n), joint_limits=False).dynamics
        assert dynamics.accelerations is not None
        for _ in range(20):
            q, qd, tau = (rng.uniform(-2.0, 2.0, (3, model.n))).tolist()
            expected = np.array(dynamics(q, qd, tau))
            np.testing.assert_allclose(dynamics.accelerations(q, qd, tau), expected, rtol=0,
                                       atol=1e-12 * max(1.0, np.abs(expected).max()))
    python = Simulator(RobotModel.named("puma560"), np.zeros(6), compiled=False)
    assert python.dynamics.accelerations is None


def test_a_mass_matrix_that_is_not_positive_definite_is_reported_by_the_simulator():
    model = wheel(coulomb=0.0, inertia=0.0)          # the joint moves no inertia: B = 0
    for integrator in ("rk4", "semi_implicit_euler"):
        with pytest.raises(SingularityError, match="not positive definite"):
            simulate(model, [0.0], [1.0], 0.01, integrator=integrator)
