"""The integrators: RK4 in its textbook form, convergence orders, solve_ivp as the reference."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from robot_dynamics_ros.core import forward_dynamics, simulate
from robot_dynamics_ros.core.simulation.integrators import rk4_step, stepper
from simulated_robots import full_inertia_robot

FREE = {"joint_limits": False, "effort_limits": False}


def reference_run(model, q0, qd0, duration, tau=None):
    """Integrate with DOP853 at rtol 1e-12 on the core's forward_dynamics (no friction)."""
    n = model.n
    tau = np.zeros(n) if tau is None else tau

    def rhs(t, x):
        return np.concatenate([x[n:], forward_dynamics(model, x[:n], x[n:], tau)])
    sol = solve_ivp(rhs, (0.0, duration), np.concatenate([q0, qd0]), method="DOP853",
                    rtol=1e-12, atol=1e-12)
    assert sol.success
    return sol.y[:n, -1], sol.y[n:, -1]


def test_straight_line_rk4_equals_the_textbook_form():
    def f(q, qd, tau):
        return [-math.sin(q[0]) * qd[1] + tau[0], q[0] * q[1] - qd[0] ** 2 + tau[1],
                -q[2] - 0.1 * qd[2]]
    q, qd, tau = [0.3, -0.2, 1.0], [0.5, 0.1, -2.0], [0.7, -0.4, 0.0]
    for h in (1e-3, 0.05):
        fast, textbook = stepper("rk4", 3)(f, q, qd, tau, h), rk4_step(f, q, qd, tau, h)
        for a, b in zip(fast[:3], textbook[:3]):
            np.testing.assert_allclose(a, b, rtol=1e-15, atol=1e-15)


# --------------------------------------------------------------------------------- accuracy
def test_rk4_agrees_with_dop853_to_1e_6_after_one_second_on_full_inertias():
    model, q0, qd0 = full_inertia_robot()
    q_ref, qd_ref = reference_run(model, q0, qd0, 1.0)
    run = simulate(model, q0, qd0, 1.0, dt=1e-3, **FREE)
    assert run.t[-1] == pytest.approx(1.0)
    assert np.abs(run.q[-1] - q_ref).max() < 1e-6
    assert np.abs(run.qd[-1] - qd_ref).max() < 1e-5


def test_convergence_orders_rk4_four_semi_implicit_euler_one():
    model, q0, qd0 = full_inertia_robot()
    q_ref, _ = reference_run(model, q0, qd0, 0.5)
    errors = {}
    for integrator in ("rk4", "semi_implicit_euler"):
        errors[integrator] = [
            np.abs(simulate(model, q0, qd0, 0.5, dt, integrator=integrator, **FREE).q[-1]
                   - q_ref).max() for dt in (1e-2, 5e-3)]
    assert 12.0 < errors["rk4"][0] / errors["rk4"][1] < 20.0           # 2^4 = 16
    assert 1.6 < errors["semi_implicit_euler"][0] / errors["semi_implicit_euler"][1] < 2.4


def test_solve_ivp_integrator_is_the_reference():
    model, q0, qd0 = full_inertia_robot()
    q_ref, qd_ref = reference_run(model, q0, qd0, 0.02)
    run = simulate(model, q0, qd0, 0.02, dt=1e-3, integrator="solve_ivp", **FREE)
    np.testing.assert_allclose(run.q[-1], q_ref, atol=1e-11)
    np.testing.assert_allclose(run.qd[-1], qd_ref, atol=1e-9)
