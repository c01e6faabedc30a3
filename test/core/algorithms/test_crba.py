"""
The mass matrix (CRBA) on random robots.

Oracles: columns of RNEA with unit accelerations, the Lagrange sum with rotors, symmetry and
positive definiteness.
"""

import numpy as np
import pytest

from dynamics_cases import CASES, make
from random_robots import random_state
from robot_dynamics_ros.core import RobotModel, forward_kinematics, mass_matrix, rnea


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_mass_matrix_columns_are_rnea_with_unit_acceleration(n, convention, seed):
    model, rng = make(n, convention, seed)
    q, _, _ = random_state(model, rng)
    frictionless = model.without_friction()
    columns = [rnea(frictionless, q, np.zeros(n), e, gravity=np.zeros(3)) for e in np.eye(n)]
    np.testing.assert_allclose(mass_matrix(model, q), np.array(columns).T, atol=1e-12, rtol=1e-10)


def lagrange_mass_matrix(model, q):
    """
    Return B(q) by Siciliano et al. 2009, eq. 7.32.

    Built independently of the package's recursions.

    Link Jacobians (7.16-7.19) from the world link frames of forward_kinematics in the file's own
    DH convention, plus the spinning rotors (7.22-7.30): rotor i on link i-1, angular velocity
    w_{i-1} + k_r qd_i z_i, its locked inertia already part of link i-1, so it adds
    I_m [(a + k_r e_i)(a + k_r e_i)^T - a a^T] with a = J_O^(l,i-1)^T z_i.
    """
    n = model.n
    F = forward_kinematics(model, q)                          # base frame, then link frames 1..n
    k = 0 if model.convention == "standard" else 1   # joint i's axis: z_{i-1} (standard) or z_i
    axes, origins = [F[i + k][:3, 2] for i in range(n)], [F[i + k][:3, 3] for i in range(n)]
    B, JO_links = np.zeros((n, n)), []
    for i in range(n):
        R, p = F[i + 1][:3, :3], F[i + 1][:3, 3]
        c = R @ model.com[i] + p
        JP, JO = np.zeros((3, n)), np.zeros((3, n))
        for j in range(i + 1):
            if model.joint_types[j] == "prismatic":
                JP[:, j] = axes[j]
            else:
                JP[:, j], JO[:, j] = np.cross(axes[j], c - origins[j]), axes[j]
        B += model.mass[i] * JP.T @ JP + JO.T @ R @ model.inertia[i] @ R.T @ JO
        JO_links.append(JO)
    for i in range(n):
        a = JO_links[i - 1].T @ axes[i] if i > 0 else np.zeros(n)
        b = a.copy()
        b[i] += model.gear_ratio[i]
        B += model.rotor_inertia[i] * (np.outer(b, b) - np.outer(a, a))
    return B


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_mass_matrix_equals_the_lagrange_sum_with_rotors(n, convention, seed):
    model, rng = make(n, convention, seed, with_payload=True)
    q, _, _ = random_state(model, rng)
    np.testing.assert_allclose(mass_matrix(model, q), lagrange_mass_matrix(model, q), atol=1e-12,
                               rtol=1e-12)


@pytest.mark.parametrize("name", ["puma560", "stanford", "panda"])
def test_shipped_mass_matrices_equal_the_lagrange_sum(name):
    model = RobotModel.named(name)
    q = np.random.default_rng(5).uniform(model.lower, model.upper)
    np.testing.assert_allclose(mass_matrix(model, q), lagrange_mass_matrix(model, q), atol=1e-12,
                               rtol=1e-12)


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_mass_matrix_symmetric_positive_definite(n, convention, seed):
    model, rng = make(n, convention, seed)
    for q in random_state(model, rng, batch=20)[0]:
        B = mass_matrix(model, q)
        np.testing.assert_array_equal(B, B.T)
        assert np.linalg.eigvalsh(B).min() > 0
