"""Forward dynamics: the inverse of RNEA, and energy conservation of the unforced motion."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from dynamics_cases import CASES, make, potential_energy
from random_robots import random_state
from robot_dynamics_ros.core import forward_dynamics, mass_matrix, rnea


@pytest.mark.parametrize("n, convention, seed", CASES[2:6])
def test_energy_is_conserved_without_friction(n, convention, seed):
    model, rng = make(n, convention, seed, with_friction=False)
    q0, qd0, _ = random_state(model, rng)
    zeros = np.zeros(n)

    def energy(x):
        q, qd = x[:n], x[n:]
        return 0.5 * qd @ mass_matrix(model, q) @ qd + potential_energy(model, q)

    sol = solve_ivp(lambda t, x: np.concatenate([x[n:],
                                                 forward_dynamics(model, x[:n], x[n:], zeros)]),
                    (0.0, 1.0), np.concatenate([q0, qd0]), method="DOP853", rtol=1e-10, atol=1e-10)
    assert sol.success
    energies = [energy(x) for x in sol.y.T]
    scale = max(1.0, abs(energies[0]), 0.5 * qd0 @ mass_matrix(model, q0) @ qd0)
    assert np.ptp(energies) < 1e-6 * scale


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_forward_dynamics_inverts_rnea(n, convention, seed):
    model, rng = make(n, convention, seed)
    q, qd, qdd = random_state(model, rng)
    h = rng.normal(size=6)
    tau = rnea(model, q, qd, qdd, f_ext=h)
    np.testing.assert_allclose(forward_dynamics(model, q, qd, tau, f_ext=h), qdd, rtol=1e-9,
                               atol=1e-9)
