"""The dynamics core against closed forms and published numbers (doc/references.md)."""
import math

import numpy as np
import pytest

from robot_dynamics_ros.core import (RobotModel, coriolis_matrix, gravity_torques, mass_matrix,
                                     rnea)

# Siciliano et al. 2009, Example 7.2: a1 = a2 = 1, l1 = l2 = 0.5, m_l = 50, I_l = 10, k_r = 100,
# m_m = 5, I_m = 0.01; y vertical, g = 9.81.
A1, A2, L1, L2, ML, IL, KR, MM, IM, G = 1.0, 1.0, 0.5, 0.5, 50.0, 10.0, 100.0, 5.0, 0.01, 9.81


def planar_closed_form(q, qd, qdd):
    """B, C, g, tau of the two-link planar arm: Siciliano et al. 2009, eq. 7.82, Example 7.2."""
    c1, c2, s2, c12 = math.cos(q[0]), math.cos(q[1]), math.sin(q[1]), math.cos(q[0] + q[1])
    b11 = (IL + ML * L1**2 + KR**2 * IM + IL + ML * (A1**2 + L2**2 + 2 * A1 * L2 * c2) + IM
           + MM * A1**2)
    b12 = IL + ML * (L2**2 + A1 * L2 * c2) + KR * IM
    b22 = IL + ML * L2**2 + KR**2 * IM
    h = -ML * A1 * L2 * s2
    B = np.array([[b11, b12], [b12, b22]])
    C = np.array([[h * qd[1], h * (qd[0] + qd[1])], [-h * qd[0], 0.0]])
    g = np.array([(ML * L1 + MM * A1 + ML * A1) * G * c1 + ML * L2 * G * c12, ML * L2 * G * c12])
    return B, C, g, B @ qdd + C @ qd + g


@pytest.mark.parametrize("seed", range(5))
def test_planar_arm_example_7_2(seed):
    rng = np.random.default_rng(seed)
    model = RobotModel.named("planar2")
    q, qd, qdd = rng.uniform(-3, 3, 2), rng.uniform(-3, 3, 2), rng.uniform(-20, 20, 2)
    B, C, g, tau = planar_closed_form(q, qd, qdd)
    np.testing.assert_allclose(mass_matrix(model, q), B, rtol=1e-12)
    np.testing.assert_allclose(coriolis_matrix(model, q, qd), C, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gravity_torques(model, q), g, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(rnea(model, q, qd, qdd), tau, rtol=1e-12)


def test_planar_arm_numeric_mass_matrix_from_the_closed_form():
    # Derived by hand from eq. 7.82 with Example 7.2's data (the book prints no numbers): B(q2 = 0)
    # = [[250.01, 48.5], [48.5, 122.5]], B(pi) = [[150.01, -1.5], [-1.5, 122.5]]
    model = RobotModel.named("planar2")
    np.testing.assert_allclose(mass_matrix(model, [0.3, 0.0]), [[250.01, 48.5], [48.5, 122.5]],
                               rtol=1e-12)
    np.testing.assert_allclose(mass_matrix(model, [0.3, math.pi]), [[150.01, -1.5], [-1.5, 122.5]],
                               rtol=1e-12)


def cartesian_arm(ml1=7.0, ml2=4.0, mm2=1.5, kr1=30.0, kr2=20.0, im1=2e-4, im2=3e-4):
    """
    Return the two-link Cartesian arm of Siciliano et al. 2009, Sect. 7.3.1.

    Two prismatic joints, joint 1 vertical along z0, joint 2 along x0.

    Link 1 carries motor 2 (its mass is lumped, as the chapter's NE convention does).
    """
    inertia = {"ixx": 0.1, "iyy": 0.1, "izz": 0.1}
    limits = {"lower": -1.0, "upper": 1.0, "velocity": 1.0, "effort": 1000.0}
    return RobotModel.from_dict({
        "name": "cartesian2", "dh_convention": "standard", "gravity": [0, 0, -G],
        "joints": [
            {"name": "d1", "type": "prismatic",
             "dh": {"a": 0, "alpha": "pi/2", "d": 0, "theta": "pi/2"}, "limits": limits,
             "link": {"mass": ml1 + mm2, "com": [0.1, 0.2, 0.0], "inertia": inertia},
             "motor": {"rotor_inertia": im1, "gear_ratio": kr1}},
            {"name": "d2", "type": "prismatic", "dh": {"a": 0, "alpha": 0, "d": 0, "theta": 0},
             "limits": limits, "link": {"mass": ml2, "com": [0.0, 0.05, -0.1], "inertia": inertia},
             "motor": {"rotor_inertia": im2, "gear_ratio": kr2}},
        ]}), (ml1, ml2, mm2, kr1, kr2, im1, im2)


def test_two_link_cartesian_arm():
    model, (ml1, ml2, mm2, kr1, kr2, im1, im2) = cartesian_arm()
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-1, 1, 2), rng.uniform(-1, 1, 2), rng.uniform(-5, 5, 2)
    # B = diag(m_l1 + m_m2 + k_r1^2 I_m1 + m_l2, m_l2 + k_r2^2 I_m2);
    # g = [(m_l1 + m_m2 + m_l2) g, 0]
    B = np.diag([ml1 + mm2 + kr1**2 * im1 + ml2, ml2 + kr2**2 * im2])
    g = np.array([(ml1 + mm2 + ml2) * G, 0.0])
    np.testing.assert_allclose(mass_matrix(model, q), B, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gravity_torques(model, q), g, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(coriolis_matrix(model, q, qd), np.zeros((2, 2)), atol=1e-12)
    np.testing.assert_allclose(rnea(model, q, qd, qdd), B @ qdd + g, rtol=1e-12, atol=1e-12)


def test_puma560_gravity_at_zero():
    # Classic value (Corke's toolbox, g = 9.81): 37.4837 and 0.2489 N m on joints 2 and 3.
    tau = gravity_torques(RobotModel.named("puma560"), np.zeros(6))
    np.testing.assert_allclose(tau, [0, 37.4837, 0.2489, 0, 0, 0], atol=5e-5)


def test_renaud_6r_regression_example():
    # Renaud's geometry (Renaud 1987, example) with made-up numbers; the expected torques were
    # computed independently of this package (a Jacobian/Christoffel reference).
    model = RobotModel.named("renaud6r")
    q = [0.1, -0.5, 0.8, 0.3, -0.7, 0.2]
    qd = [0.5, -0.3, 0.4, 1.0, -0.8, 0.6]
    qdd = [0.2, 0.1, -0.3, 0.5, 0.4, -0.6]
    np.testing.assert_allclose(
        rnea(model, q, qd, qdd),
        [0.111000612, 37.9012732663, 1.4519418524, -0.0037620195, 0.049700865, -0.0002361528],
        atol=1e-9)
    np.testing.assert_allclose(
        gravity_torques(model, q),
        [0, 38.0668734802, 1.5784929782, -0.0066204727, 0.047012508, 0], atol=1e-9)
    M = np.array([
        [1.5006165519, 0.0007850324, 0.0003469233, -0.0109480305, 0.0008221916, -0.0002737674],
        [0.0007850324, 2.291296476, 0.4637924077, -0.0011056638, 0.0010596435, -0.0000571138],
        [0.0003469233, 0.4637924077, 0.3122883393, -0.0004501289, 0.0014212186, -0.0000571138],
        [-0.0109480305, -0.0011056638, -0.0004501289, 0.0082960394, 0.0, 0.0002294527],
        [0.0008221916, 0.0010596435, 0.0014212186, 0.0, 0.0047, 0.0],
        [-0.0002737674, -0.0000571138, -0.0000571138, 0.0002294527, 0.0, 0.0003]])
    np.testing.assert_allclose(mass_matrix(model, q), M, atol=1e-9)


def test_pendulum_with_geared_motor_example_7_1():
    # Siciliano et al. 2009, Example 7.1: (I + I_m k_r^2) thdd + (F + F_m k_r^2) thd + m g l sin th
    # = tau, th = 0 hanging down (gravity along +x0).  Siciliano et al.'s I about the axis is I_c +
    # m l^2 here.
    m, l, I, Im, kr, F = 2.0, 0.4, 0.05, 1e-4, 50.0, 0.3
    model = RobotModel.from_dict({
        "name": "pendulum", "dh_convention": "standard", "gravity": [G, 0, 0],
        "joints": [{"name": "j", "type": "revolute",
                    "dh": {"a": l, "alpha": 0, "d": 0, "theta": 0},
                    "limits": {"lower": -4, "upper": 4, "velocity": 5, "effort": 50},
                    "link": {"mass": m, "com": [0, 0, 0],
                             "inertia": {"ixx": 0.01, "iyy": I, "izz": I}},
                    "motor": {"rotor_inertia": Im, "gear_ratio": kr},
                    "friction": {"viscous": F}}]})
    th, thd, thdd = 0.7, -1.3, 2.1
    expected = (I + m * l**2 + Im * kr**2) * thdd + F * thd + m * G * l * math.sin(th)
    assert rnea(model, [th], [thd], [thdd])[0] == pytest.approx(expected, rel=1e-12)
