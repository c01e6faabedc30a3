"""Coupled drives in the dynamics (algorithms/coupled.py): a wrist against its hand derivation."""
import numpy as np
import pytest

from coupled_wrist import D, FS, FV, hand_friction, hand_rotor_matrix, power_sides, wrist
from robot_dynamics_ros.core import (JointTrajectory, RobotModel, forward_dynamics,
                                     gravity_torques, nonlinear_effects, rnea,
                                     time_optimal_scaling)
from robot_dynamics_ros.core.algorithms.forward_dynamics import forward_dynamics_crba
from robot_dynamics_ros.core.algorithms.route import select
from robot_dynamics_ros.core.control import holding_torques
from robot_dynamics_ros.core.control.friction import friction_torques
from robot_dynamics_ros.core.errors import InputError, RobotDescriptionError
from robot_dynamics_ros.core.observer import MomentumObserver, ObserverOptions
from robot_dynamics_ros.core.trajectories.uniform import torque_parts

RNG = np.random.default_rng(28)


@pytest.fixture(scope="module")
def models():
    coupled = RobotModel.from_dict(wrist())
    return coupled, coupled.rigid(), RobotModel.from_dict(wrist(coupled=False))


def states(count=20):
    q = RNG.uniform(-2.5, 2.5, (count, 2))
    qd = RNG.uniform(-3.0, 3.0, (count, 2))
    qd[0] = [1.0, -1.5]          # v6 < 0 while qd6 < 0 ...
    qd[1] = [2.0, -0.5]          # ... and v6 > 0 while qd6 < 0: the coupling's own sign
    qdd = RNG.uniform(-10.0, 10.0, (count, 2))
    return q, qd, qdd


@pytest.mark.parametrize("prefer", ["compiled", "plain"])
def test_mass_matrix_adds_the_hand_derived_rotor_matrix(models, prefer):
    coupled, rigid, _ = models
    q = states()[0]
    got = select(coupled, prefer).mass_matrix(q) - select(rigid, prefer).mass_matrix(q)
    assert np.allclose(got, hand_rotor_matrix(), rtol=0, atol=1e-12)
    assert coupled.has_coupling and coupled.coupled_drives == (1,)


@pytest.mark.parametrize("prefer", ["compiled", "plain"])
def test_inverse_dynamics_adds_rotors_and_drive_friction(models, prefer):
    coupled, rigid, _ = models
    q, qd, qdd = states()
    got = select(coupled, prefer).rnea(q, qd, qdd) - select(rigid, prefer).rnea(q, qd, qdd)
    want = qdd @ hand_rotor_matrix() + hand_friction(qd)
    assert np.allclose(got, want, rtol=0, atol=1e-10)
    # one configuration at a time, the same
    assert np.allclose(rnea(coupled, q[1], qd[1], qdd[1]), select(coupled, prefer).rnea(
        q, qd, qdd)[1], rtol=1e-13, atol=1e-12)
    assert np.allclose(friction_torques(coupled, qd), hand_friction(qd), rtol=0, atol=1e-12)


def test_uncoupled_model_is_unchanged(models):
    # The same file without the coupling: the recursion's diagonal rotors, per-joint friction.
    _, rigid, plain = models
    q, qd, qdd = states()
    got = rnea(plain, q, qd, qdd) - rnea(rigid, q, qd, qdd)
    want = qdd @ D + FV * qd + FS * np.sign(qd)
    assert np.allclose(got, want, rtol=0, atol=1e-10)
    assert not plain.has_coupling and np.array_equal(plain.coupling, np.eye(2))
    assert "coupling" not in plain.to_dict()


@pytest.mark.parametrize("prefer", ["compiled", "plain"])
def test_forward_dynamics_inverts_inverse_dynamics(models, prefer):
    coupled = models[0]
    q, qd, qdd = states()
    tau = select(coupled, prefer).rnea(q, qd, qdd)
    assert np.allclose(select(coupled, prefer).forward_dynamics(q, qd, tau), qdd,
                       rtol=1e-9, atol=1e-9)
    assert np.allclose(forward_dynamics(coupled, q[2], qd[2], tau[2]), qdd[2], rtol=1e-9,
                       atol=1e-9)
    assert np.allclose(forward_dynamics_crba(coupled, q, qd, tau), qdd, rtol=1e-9, atol=1e-9)
    # with an external wrench too (the checked path): both routes agree
    wrench = np.array([1.0, -2.0, 0.5, 0.1, 0.2, -0.3])
    tau_w = rnea(coupled, q[3], qd[3], qdd[3], f_ext=wrench)
    assert np.allclose(forward_dynamics(coupled, q[3], qd[3], tau_w, f_ext=wrench), qdd[3],
                       rtol=1e-9, atol=1e-9)


def test_power_balance(models):
    # d/dt (1/2 qd^T B qd) + dU/dt = qd^T (tau - friction): with B constant in the rotors' part,
    # checked with the instantaneous power qd^T (B qdd + (Bdot/2) qd + g) = qd^T (tau - f):
    # C(q, qd) qd's power is qd^T (Bdot / 2) qd (skew Bdot - 2C), by finite differences of B.
    coupled = models[0]
    q, qd, qdd = states(5)
    for x, v, a in zip(q, qd, qdd):
        power_in, power_out = power_sides(coupled, x, v, a, hand_friction(v))
        assert power_in == pytest.approx(power_out, rel=1e-7, abs=1e-9)
    assert np.allclose(nonlinear_effects(coupled, q, qd),
                       rnea(coupled, q, qd, np.zeros_like(q)), rtol=0, atol=1e-12)


def test_holding_torques_and_the_node_path_take_the_drives_friction(models):
    coupled = models[0]
    q, qd, _ = states()
    g = gravity_torques(coupled, q)
    assert np.allclose(holding_torques(lambda x: gravity_torques(coupled, x), coupled, q, qd),
                       g + hand_friction(qd), rtol=0, atol=1e-12)


def test_uniform_scaling_splits_the_drives_friction(models):
    # the uniform scaling's premise: friction at qd / c = (friction - its Coulomb part) / c +
    # the Coulomb part, which holds for F_s sgn(K qd) of the coupled drives too
    coupled = models[0]
    q, qd, qdd = states()
    _, friction, _, coulomb = torque_parts(coupled, q, qd, qdd)
    assert np.allclose(friction, hand_friction(qd), rtol=0, atol=1e-12)
    for c in (0.5, 3.0):
        assert np.allclose(hand_friction(qd / c), (friction - coulomb) / c + coulomb, rtol=0,
                           atol=1e-12)


def test_per_joint_friction_users_refuse_a_coupled_drive_with_friction(models):
    coupled = models[0]
    with pytest.raises(RobotDescriptionError, match=r"joint\(s\) \['joint6'\] move with other "
                                                    r"joints .*: the observer"):
        MomentumObserver(coupled, ObserverOptions(5.0))
    MomentumObserver(coupled, ObserverOptions(5.0, friction=False))     # (friction left out)
    path = JointTrajectory(coupled.joint_names, np.array([0.0, 1.0]),
                           np.array([[0.0, 0.0], [0.5, -0.5]]), np.zeros((2, 2)))
    with pytest.raises(RobotDescriptionError, match="time-optimal scaling applies friction"):
        time_optimal_scaling(coupled, path)
    time_optimal_scaling(models[0].without_friction(), path)            # no friction: solved


@pytest.mark.parametrize("bad, message", [
    ({"qd": [float("nan"), 0.0]}, "qd: non-finite value for joint 'joint5'"),
    ({"qd": np.array([float("nan"), 0.0])}, "qd: non-finite value for joint 'joint5'"),
    ({"qd": np.zeros(3)}, "qd: expected shape (2,) or (N, 2)"),
    ({"tau": np.array([0.0, float("inf")])}, "tau: non-finite value for joint 'joint6'")])
def test_coupled_forward_dynamics_names_a_bad_argument(models, bad, message):
    arguments = {"q": np.zeros(2), "qd": np.zeros(2), "tau": np.zeros(2), **bad}
    with pytest.raises(InputError) as error:
        forward_dynamics(models[0], **arguments)
    assert message in str(error.value)
