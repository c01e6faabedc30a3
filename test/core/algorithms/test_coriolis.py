"""The Coriolis matrix: Christoffel symbols of the mass matrix, and Bdot - 2C skew-symmetric."""

import numpy as np
import pytest

from dynamics_cases import CASES, make
from random_robots import random_state
from robot_dynamics_ros.core import coriolis_matrix, mass_matrix


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_coriolis_is_the_christoffel_matrix(n, convention, seed):
    """
    C_ij = sum_k c_ijk qd_k, c_ijk = 1/2 (dB_ij/dq_k + dB_ik/dq_j - dB_jk/dq_i).

    Siciliano et al. 2009, eq. 7.45.

    With dB/dq by central finite differences.
    """
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng)
    eps = 1e-6
    dB = np.array([(mass_matrix(model, q + eps * e) - mass_matrix(model, q - eps * e)) / (2 * eps)
                   for e in np.eye(n)])                       # dB[k, i, j] = dB_ij / dq_k
    christoffel = 0.5 * (np.einsum("kij->ijk", dB) + np.einsum("jik->ijk", dB)
                         - np.einsum("ijk->ijk", dB))
    expected = np.einsum("ijk,k->ij", christoffel, qd)
    scale = max(1.0, np.abs(expected).max())
    np.testing.assert_allclose(coriolis_matrix(model, q, qd), expected, atol=2e-6 * scale)


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_bdot_minus_2c_is_skew_symmetric(n, convention, seed):
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng)
    eps = 1e-6
    Bdot = (mass_matrix(model, q + eps * qd) - mass_matrix(model, q - eps * qd)) / (2 * eps)
    N = Bdot - 2 * coriolis_matrix(model, q, qd)
    assert np.abs(N + N.T).max() < 1e-6 * max(1.0, np.abs(N).max())
    x = rng.normal(size=n)
    assert abs(x @ N @ x) < 1e-6 * max(1.0, np.abs(N).max()) * (x @ x)
