"""The torque laws against independent forms: B(q) y + n(q, qd) from CRBA, C from its matrix."""

import numpy as np
import pytest

from dynamics_cases import CASES, make
from random_robots import random_state
from robot_dynamics_ros.core import (InputError, coriolis_matrix, gravity_torques, mass_matrix,
                                     nonlinear_effects, rnea)
from robot_dynamics_ros.core.control import (COMPUTED_TORQUE, FEEDFORWARD, Gains, TorqueLaw,
                                             holding_torques, servo_acceleration)


def _rnea(model):
    return lambda q, qd, qdd: rnea(model, q, qd, qdd)


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_computed_torque_is_b_times_servo_acceleration_plus_n(n, convention, seed):
    """Siciliano et al., Sect. 8.5.2: u = B(q) y + n(q, qd); here built from CRBA and n."""
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng)
    q_ref, qd_ref, qdd_ref = random_state(model, rng)
    kp, kd = rng.uniform(0, 400, n), rng.uniform(0, 40, n)
    law = TorqueLaw(COMPUTED_TORQUE, Gains(kp, kd))
    y = qdd_ref + kd * (qd_ref - qd) + kp * (q_ref - q)
    expected = mass_matrix(model, q) @ y + nonlinear_effects(model, q, qd)
    np.testing.assert_allclose(law.torques(_rnea(model), q, qd, q_ref, qd_ref, qdd_ref),
                               expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


@pytest.mark.parametrize("n, convention, seed", CASES[:4])
def test_feedforward_is_the_inverse_dynamics_of_the_reference(n, convention, seed):
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng)
    q_ref, qd_ref, qdd_ref = random_state(model, rng)
    expected = mass_matrix(model, q_ref) @ qdd_ref + coriolis_matrix(model, q_ref, qd_ref) @ \
        qd_ref + gravity_torques(model, q_ref) + model.viscous * qd_ref + \
        model.coulomb * np.sign(qd_ref)
    tau = TorqueLaw(FEEDFORWARD).torques(_rnea(model), q, qd, q_ref, qd_ref, qdd_ref)
    np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


@pytest.mark.parametrize("n, convention, seed", CASES[2:6])
def test_holding_torque_is_rnea_at_rest_acceleration_minus_coriolis(n, convention, seed):
    """g(q) + F_v qd + F_s sgn(qd) = RNEA(q, qd, 0) - C(q, qd) qd (Siciliano et al., 7.116)."""
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng)
    expected = rnea(model, q, qd, np.zeros(n)) - coriolis_matrix(model, q, qd) @ qd
    tau = holding_torques(lambda x: gravity_torques(model, x), model, q, qd)
    np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
    np.testing.assert_array_equal(
        holding_torques(lambda x: gravity_torques(model, x), model, q), gravity_torques(model, q))


def test_list_path_equals_array_path_bit_for_bit_single_and_batched():
    model, rng = make(6, "modified", 5)
    q, qd, _ = random_state(model, rng, batch=30)
    q_ref, qd_ref, qdd_ref = random_state(model, rng, batch=30)
    law = TorqueLaw(COMPUTED_TORQUE, Gains(rng.uniform(0, 400, 6), rng.uniform(0, 40, 6)))
    arrays = law.rnea_arguments(q, qd, q_ref, qd_ref, qdd_ref)[2]
    for k in range(30):
        lists = law.rnea_values(*(a[k].tolist() for a in (q, qd, q_ref, qd_ref, qdd_ref)))
        assert lists[2] == arrays[k].tolist()
        assert lists[0] == q[k].tolist() and lists[1] == qd[k].tolist()
    feedforward = TorqueLaw(FEEDFORWARD).rnea_values([1.0], [2.0], [3.0], [4.0], [5.0])
    assert feedforward == ([3.0], [4.0], [5.0])


def test_servo_acceleration_with_zero_error_is_the_reference_acceleration():
    assert servo_acceleration(1.5, 2.0, 0.3, 2.0, 0.3, 20.0, 100.0) == 1.5
    assert servo_acceleration(0.0, 0.0, 1.0, 0.0, 0.0, 20.0, 100.0) == 100.0    # Kp e
    assert servo_acceleration(0.0, 1.0, 0.0, 0.0, 0.0, 20.0, 100.0) == 20.0     # Kd e_dot


@pytest.mark.parametrize("args, words", [
    (("sideways",), "mode: 'sideways'"),
    ((COMPUTED_TORQUE,), "needs gains"),
])
def test_bad_law_is_refused_by_name(args, words):
    with pytest.raises(InputError, match=words):
        TorqueLaw(*args)


@pytest.mark.parametrize("kp, kd, words", [
    ([1.0, -2.0], [1.0, 1.0], "kp: gain 1 is -2"),
    ([1.0, 2.0], [np.nan, 1.0], "kd: gain 0 is nan"),
    ([1.0, 2.0], [1.0], "kp, kd: 2 and 1 gains"),
])
def test_bad_gains_are_refused_by_name(kp, kd, words):
    with pytest.raises(InputError, match=words):
        Gains(kp, kd)
