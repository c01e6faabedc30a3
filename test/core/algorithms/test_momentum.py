"""
p = B qd and C^T qd from the O(n) momentum recursion, against independent oracles.

Oracles: the mass matrix (CRBA) times qd, and B qd from the one Newton-Euler recursion (its torque
at qd = 0, qdd = qd, without gravity); the gradient of the kinetic energy T = 1/2 qd^T B qd by
central differences (C^T qd = dT/dq for the Christoffel C); Bdot qd - C qd with Bdot by central
differences along qd and C qd from the RNEA (B' = C + C^T, Siciliano et al. eq. 7.49), neither
of which uses ``coriolis_matrix``; ``coriolis_matrix`` transposed; Pinocchio's ``crba`` and
``computeCoriolisMatrix`` on URDF robots (random trees and the shipped robots exported).
"""

import numpy as np
import pytest

from dynamics_cases import CASES, make
from random_robots import random_state
from robot_dynamics_ros.core import (RobotModel, coriolis_matrix, gravity_torques, mass_matrix,
                                     momentum_terms, nonlinear_effects, rnea)
from robot_dynamics_ros.core.trajectories.uniform import friction_torques
from urdf_samples import PinocchioChain, random_urdf, relative_error

# Central differences with step eps: truncation ~ eps^2 |B'''| and rounding ~ 1e-16 |B| / eps.
EPS = 1e-5
FD_TOLERANCE = 1e-7


def kinetic_energy(model, q, qd):
    return 0.5 * qd @ mass_matrix(model, q) @ qd


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_momentum_is_the_mass_matrix_times_the_velocity(n, convention, seed):
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng)
    p = momentum_terms(model, q, qd).momentum
    expected = mass_matrix(model, q) @ qd
    assert relative_error(p, expected) < 1e-13
    # no velocity: no Coriolis, centrifugal or friction term; zero gravity
    assert relative_error(p, rnea(model, q, np.zeros(n), qd, gravity=np.zeros(3))) < 1e-13


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_coriolis_transpose_product_is_the_gradient_of_the_kinetic_energy(n, convention, seed):
    """(C^T qd)_k = sum_ij c_ijk qd_i qd_j = dT/dq_k (the module docstring's identity)."""
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng)
    gradient = np.array([(kinetic_energy(model, q + EPS * e, qd)
                          - kinetic_energy(model, q - EPS * e, qd)) / (2 * EPS)
                         for e in np.eye(n)])
    assert relative_error(momentum_terms(model, q, qd).coriolis_transpose,
                          gradient) < FD_TOLERANCE


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_coriolis_transpose_product_is_bdot_qd_minus_c_qd(n, convention, seed):
    """C^T qd = B' qd - C qd: B' by differences along qd, C qd = n(q, qd) - g - friction."""
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng)
    Bdot = (mass_matrix(model, q + EPS * qd) - mass_matrix(model, q - EPS * qd)) / (2 * EPS)
    c_qd = nonlinear_effects(model, q, qd) - gravity_torques(model, q) \
        - friction_torques(model, qd)
    assert relative_error(momentum_terms(model, q, qd).coriolis_transpose,
                          Bdot @ qd - c_qd) < FD_TOLERANCE


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_coriolis_transpose_product_equals_the_coriolis_matrix_transposed(n, convention, seed):
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng)
    ctq = momentum_terms(model, q, qd).coriolis_transpose
    assert relative_error(ctq, coriolis_matrix(model, q, qd).T @ qd) < 1e-12


@pytest.mark.parametrize("n, convention, seed", CASES[::2])
def test_a_batch_gives_what_single_calls_give(n, convention, seed):
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng, batch=7)
    p, ctq = momentum_terms(model, q, qd)
    assert p.shape == ctq.shape == (7, n)
    for k in range(7):
        single = momentum_terms(model, q[k], qd[k])
        assert relative_error(p[k], single.momentum) < 1e-14
        assert relative_error(ctq[k], single.coriolis_transpose) < 1e-14
    empty = momentum_terms(model, np.zeros((0, n)), np.zeros((0, n)))
    assert empty.momentum.shape == (0, n)


def test_a_robot_at_rest_has_no_momentum_and_no_coriolis_term(shipped_model):
    model = shipped_model("puma560")
    p, ctq = momentum_terms(model, np.full(6, 0.3), np.zeros(6))
    assert not p.any() and not ctq.any()


@pytest.mark.parametrize("seed", range(4))
def test_random_urdf_trees_agree_with_pinocchio(seed):
    """Pinocchio's crba(q) qd and computeCoriolisMatrix(q, qd)^T qd (rigid bodies, no rotors)."""
    rng = np.random.default_rng(100 + seed)
    sample = random_urdf(rng, n=int(rng.integers(2, 8)))
    model = RobotModel.from_urdf(sample.text, tip_link=sample.tip).rigid()
    oracle = PinocchioChain(sample.text, sample.chain, sample.tip)
    q, qd = rng.uniform(-2.0, 2.0, (2, model.n))
    p, ctq = momentum_terms(model, q, qd)
    assert relative_error(p, oracle.mass_matrix(q) @ qd) < 1e-12
    assert relative_error(ctq, oracle.coriolis(q, qd).T @ qd) < 1e-12
