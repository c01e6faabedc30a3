"""
The source texts' formulations (robot_dynamics_ros.core.formulations) against independent oracles.

* cross-formulation agreement: every formulation against the package's rnea on random mixed
  revolute/prismatic chains, both DH conventions, with payload, random base/tool, random gravity
  and an end-effector wrench (rnea is a different code path: scalar recursion on the internal
  modified-DH chain; the formulations use standard-DH frames, base frames, 4x4 matrices, ...);
* a golden value computed independently of this package (Renaud's 6R geometry, made-up numbers);
* Lagrange-Euler's D, h_ikm and c against mass_matrix (composite rigid bodies), coriolis_matrix
  (Christoffel, spatial algebra), gravity_torques, and finite differences of D;
* Renaud's augmented parameters against the table of Renaud 1987 (example);
* the growth of the operation counts with n (Milićević et al., Table 3: N-E linear, G-D cubic, L-E
  quartic).
"""
from __future__ import annotations

import numpy as np
import pytest

from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.core import (RobotModel, coriolis_matrix, gravity_torques, mass_matrix,
                                     rnea)
from robot_dynamics_ros.core.formulations import (FORMULATIONS, count_operations, dalembert,
                                                  lagrange_euler, renaud)
from robot_dynamics_ros.core.formulations.opcount import Counted, counted_array, counting

CONVENTIONS = ("standard", "modified")
RTOL = 1e-10


def relative_error(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(b).max(), 1e-12))


def random_models(convention: str, seed: int, revolute_only: bool = False):
    """Yield a few random robots (n = 1..6), with motors, friction and payload in the file."""
    rng = np.random.default_rng(seed)
    for n in (1, 2, 3, 5, 6):
        d = random_robot_dict(n, rng, convention, prismatic_prob=0.0 if revolute_only else 0.4,
                              with_motors=True, with_friction=True, with_payload=True,
                              offsets=convention == "modified")      # (model.Chain's e)
        yield RobotModel.from_dict(d), rng


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("name", sorted(FORMULATIONS))
def test_formulation_agrees_with_rnea_with_wrench(name, convention):
    module = FORMULATIONS[name]
    seed = 10 * sorted(FORMULATIONS).index(name) + CONVENTIONS.index(convention)
    for model, rng in random_models(convention, seed, revolute_only=name == "dalembert"):
        q, qd, qdd = random_state(model, rng)
        f_ext = rng.normal(size=6) * [20, 20, 20, 5, 5, 5]
        expected = rnea(model.rigid(), q, qd, qdd, f_ext=f_ext)
        tau = module.inverse_dynamics(model, q, qd, qdd, f_ext=f_ext)
        assert relative_error(tau, expected) < RTOL, f"{name} on {model} ({model.joint_types})"


@pytest.mark.parametrize("name", sorted(FORMULATIONS))
def test_formulation_gravity_argument_and_statics(name):
    """A world gravity vector passed explicitly; at rest the torque is the gravity torque."""
    rng = np.random.default_rng(11)
    model = RobotModel.from_dict(random_robot_dict(
        4, rng, "modified", prismatic_prob=0.0 if name == "dalembert" else 0.5))
    q, _, _ = random_state(model, rng)
    zero = np.zeros(model.n)
    g = np.array([1.0, -2.0, -9.0])
    tau = FORMULATIONS[name].inverse_dynamics(model, q, zero, zero, gravity=g)
    assert relative_error(tau, gravity_torques(model.rigid(), q, gravity=g)) < RTOL


@pytest.mark.parametrize("name", sorted(FORMULATIONS))
def test_golden_renaud_6r_example(name):
    """
    Tau for Renaud's 6R geometry (Renaud 1987, example) with made-up numbers.

    The expected values were computed independently of this package (a Jacobian/Christoffel
    reference) when the test was written; the paper itself is symbolic.
    """
    model = RobotModel.named("renaud6r")
    q = [0.1, -0.5, 0.8, 0.3, -0.7, 0.2]
    qd = [0.5, -0.3, 0.4, 1.0, -0.8, 0.6]
    qdd = [0.2, 0.1, -0.3, 0.5, 0.4, -0.6]
    golden = [0.111000612, 37.9012732663, 1.4519418524, -0.0037620195, 0.049700865, -0.0002361528]
    np.testing.assert_allclose(FORMULATIONS[name].inverse_dynamics(model, q, qd, qdd), golden,
                               rtol=0, atol=1e-8)


def test_dalembert_rejects_prismatic_joints():
    model = RobotModel.named("stanford")
    zero = np.zeros(model.n)
    with pytest.raises(ValueError, match="revolute joints only.*joint3"):
        dalembert.inverse_dynamics(model, zero, zero, zero)
    with pytest.raises(ValueError, match="revolute joints only"):
        dalembert.mass_matrix(model, zero)


def test_formulations_reject_batches_and_bad_shapes():
    model = RobotModel.named("puma560")
    zero = np.zeros(model.n)
    for module in FORMULATIONS.values():
        with pytest.raises(ValueError, match="one configuration"):
            module.inverse_dynamics(model, np.zeros((2, model.n)), np.zeros((2, model.n)),
                                    np.zeros((2, model.n)))
        with pytest.raises(ValueError, match="qd"):
            module.inverse_dynamics(model, zero, np.zeros(3), zero)
        with pytest.raises(ValueError, match="f_ext"):
            module.inverse_dynamics(model, zero, zero, zero, f_ext=np.zeros(5))


# -- Lagrange-Euler's coefficients (Milićević et al., eqs. 2.11-2.15)
# ------------------------------------------
@pytest.mark.parametrize("convention", CONVENTIONS)
def test_lagrange_euler_coefficients_match_core(convention):
    for model, rng in random_models(convention, seed=5):
        rigid = model.rigid()
        q, qd, _ = random_state(model, rng)
        D = lagrange_euler.mass_matrix(model, q)
        np.testing.assert_allclose(D, mass_matrix(rigid, q), rtol=RTOL,
                                   atol=RTOL * np.abs(D).max())
        np.testing.assert_allclose(D, D.T, atol=1e-12)                       # eq. 2.13
        assert np.linalg.eigvalsh(D).min() > 0
        H = lagrange_euler.christoffel(model, q)
        scale = max(np.abs(H).max(), np.abs(D).max())   # h_ikm is D per radian
        for m in range(model.n):                       # coriolis_matrix(q, e_m)[i, k] = h_ikm
            e = np.zeros(model.n)
            e[m] = 1.0
            np.testing.assert_allclose(H[:, :, m], coriolis_matrix(rigid, q, e), atol=RTOL * scale)
        np.testing.assert_allclose(H, np.swapaxes(H, 1, 2), atol=1e-12 * scale)   # h_ikm = h_imk
        assert np.abs(np.einsum("iii->i", H)).max() < 1e-12 * scale               # h_iii = 0
        h = lagrange_euler.coriolis_terms(model, q, qd)
        np.testing.assert_allclose(h, coriolis_matrix(rigid, q, qd) @ qd,
                                   atol=RTOL * scale * (qd @ qd))
        c = lagrange_euler.gravity_terms(model, q)
        np.testing.assert_allclose(c, gravity_torques(rigid, q),
                                   atol=RTOL * max(np.abs(c).max(), 1))


def test_lagrange_euler_h_is_christoffel_of_its_own_D():
    """
    h_ikm = 1/2 (dD_ik/dq_m + dD_im/dq_k - dD_km/dq_i) (Christoffel symbols of the first kind).

    The derivatives of D by central differences.
    """
    rng = np.random.default_rng(8)
    model = RobotModel.from_dict(random_robot_dict(4, rng, "standard", prismatic_prob=0.5))
    q, _, _ = random_state(model, rng)
    step = 1e-6
    dD = np.empty((model.n,) * 3)                       # dD[:, :, m] = dD/dq_m
    for m in range(model.n):
        e = np.zeros(model.n)
        e[m] = step
        dD[:, :, m] = (lagrange_euler.mass_matrix(model, q + e)
                       - lagrange_euler.mass_matrix(model, q - e)) / (2 * step)
    christoffel = 0.5 * (dD + np.einsum("imk->ikm", dD) - np.einsum("kmi->ikm", dD))
    np.testing.assert_allclose(lagrange_euler.christoffel(model, q), christoffel, atol=1e-7)


def test_dalembert_inertia_matches_mass_matrix():
    rng = np.random.default_rng(9)
    model = RobotModel.from_dict(random_robot_dict(5, rng, "modified", prismatic_prob=0.0))
    q, _, _ = random_state(model, rng)
    np.testing.assert_allclose(dalembert.mass_matrix(model, q), mass_matrix(model.rigid(), q),
                               rtol=RTOL, atol=1e-12)


# -- Renaud's augmented bodies (Renaud 1987, definition and example)
# ---------------------------------------------
def test_renaud_augmented_parameters_reproduce_the_6r_table():
    model = RobotModel.named("renaud6r")
    m = model.chain.mass
    m_star = [m[i:].sum() for i in range(6)]
    a2, r4 = 0.4, 0.35
    m_star_out, u_star, k_star = renaud.augmented_parameters(model, np.zeros(6))
    np.testing.assert_allclose(m_star_out, m_star)
    # The bodies' own moments at O_i: u = m d_ii, k = phi - m d^ d^ (Renaud 1987, intrinsic
    # calculation).
    u = m[:, None] * model.chain.com
    k = [phi + mi * (c @ c * np.eye(3) - np.outer(c, c))
         for phi, mi, c in zip(model.chain.inertia, m, model.chain.com)]
    # x*2 = x^2 + m*3 a_2, y*3 = y^3 - m*4 r_4; others equal the body's own first moments.
    np.testing.assert_allclose(u_star[1], u[1] + [m_star[2] * a2, 0, 0])
    np.testing.assert_allclose(u_star[2], u[2] + [0, -m_star[3] * r4, 0])
    for i in (0, 3, 4, 5):
        np.testing.assert_allclose(u_star[i], u[i])
    # b*2 = b^2 + m*3 a_2^2, c*2 = c^2 + m*3 a_2^2; a*3 = a^3 + m*4 r_4^2, c*3 = c^3 + m*4 r_4^2.
    np.testing.assert_allclose(np.diag(k_star[1]) - np.diag(k[1]),
                               [0, m_star[2] * a2**2, m_star[2] * a2**2])
    np.testing.assert_allclose(np.diag(k_star[2]) - np.diag(k[2]),
                               [m_star[3] * r4**2, 0, m_star[3] * r4**2])
    # Renaud's zero pattern: no products of inertia (COMs on one axis each, diagonal tensors).
    for K in k_star:
        np.testing.assert_allclose(K - np.diag(np.diag(K)), 0.0, atol=1e-15)


# -- the operation counter --------------------------------------------------------------------
def test_counted_scalar_counts_and_folds():
    x, y = Counted(2.0), Counted(3.0)
    with counting() as c:
        r = x * y + 2.5 * x - y          # 2 mults, 2 adds
        s = 0.0 * x + 1.0 * y - 0.0      # all folded
        t = -x                           # sign change: free
    assert (c.mul, c.add) == (2, 2)
    assert r.value == pytest.approx(2.0 * 3.0 + 5.0 - 3.0)
    assert s is y and t.value == -2.0
    A = counted_array(np.ones((3, 3)))
    with counting() as c:
        A @ np.array([0.0, 0.0, 1.0])    # multiplying by z0 selects a column: free
    assert (c.mul, c.add) == (0, 0)


def _counts(name, ns, seed=3):
    rng = np.random.default_rng(seed)
    out = []
    for n in ns:
        model = RobotModel.from_dict(random_robot_dict(n, rng, "standard", prismatic_prob=0.0))
        q, qd, qdd = random_state(model, rng)
        tally, tau = count_operations(FORMULATIONS[name], model, q, qd, qdd)
        assert relative_error(tau, rnea(model, q, qd, qdd)) < RTOL     # counted run = float run
        out.append(tally.mul + tally.add)
    return np.array(out)


@pytest.mark.parametrize("name, order", [("newton_euler_link", 1), ("newton_euler_base", 1),
                                         ("modified_newton_euler", 1), ("renaud", 1),
                                         ("dalembert", 3), ("lagrange_euler", 4)])
def test_operation_counts_grow_as_the_seeds_say(name, order):
    """
    Check the growth of Milićević et al., Table 3 and Turney et al. 1980, Table 1.

    N-E variants O(n), G-D O(n^3), L-E O(n^4) (4x4 evaluation).

    On generic chains the count is a polynomial in n of exactly this degree: its order-th
    differences are constant and positive (from n = 3: the first links have structural zeros).
    """
    ns = range(3, 3 + order + 2)
    diff = np.diff(_counts(name, ns), n=order)
    assert np.all(diff == diff[-1]) and diff[-1] > 0, (name, diff)
