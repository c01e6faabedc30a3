"""
A coupled drive's quadratic viscous friction and a coupled joint's joint-side friction.

Oracle: the wrist's friction written out by hand (test/support/coupled_wrist.py,
``hand_friction_joint_side``): drive 6's F_v v6 + F_v2 v6|v6| + F_s sgn(v6) on v6 = qd5 + qd6
through K^T, and joint 6's own F_vj qd6 + F_sj sgn(qd6) on joint 6 alone; the power balance
(friction dissipates, finite differences of B) and the uniform scaling's split by powers of c.
"""
import numpy as np
import pytest

from coupled_wrist import (FSJ, FV2, FVJ, hand_friction_joint_side, hand_rotor_matrix, power_sides,
                           wrist, wrist_with_joint_side)
from robot_dynamics_ros.core import (JointTrajectory, RobotModel, gravity_torques, mass_matrix,
                                     rnea, time_optimal_scaling)
from robot_dynamics_ros.core.algorithms.route import select
from robot_dynamics_ros.core.control import holding_torques
from robot_dynamics_ros.core.control.friction import friction_torques
from robot_dynamics_ros.core.errors import InputError, RobotDescriptionError
from robot_dynamics_ros.core.model.urdf_export import urdf_text
from robot_dynamics_ros.core.observer import MomentumObserver, ObserverOptions
from robot_dynamics_ros.core.simulation import Simulator
from robot_dynamics_ros.core.trajectories.uniform import torque_parts

RNG = np.random.default_rng(40)


@pytest.fixture(scope="module")
def model():
    return RobotModel.from_dict(wrist_with_joint_side())


def states(count=20):
    q = RNG.uniform(-2.5, 2.5, (count, 2))
    qd = RNG.uniform(-3.0, 3.0, (count, 2))
    qd[0] = [2.0, -0.5]          # v6 > 0 while qd6 < 0: the joint-side term's own sign
    qd[1] = [0.5, -2.0]          # v6 < 0 while qd5 > 0
    qdd = RNG.uniform(-10.0, 10.0, (count, 2))
    return q, qd, qdd


@pytest.mark.parametrize("prefer", ["compiled", "plain"])
def test_inverse_and_forward_dynamics_take_the_hand_derived_friction(model, prefer):
    q, qd, qdd = states()
    rigid = model.rigid()
    got = select(model, prefer).rnea(q, qd, qdd) - select(rigid, prefer).rnea(q, qd, qdd)
    assert np.allclose(got, qdd @ hand_rotor_matrix() + hand_friction_joint_side(qd),
                       rtol=0, atol=1e-10)
    assert np.allclose(friction_torques(model, qd), hand_friction_joint_side(qd), rtol=0,
                       atol=1e-12)
    tau = select(model, prefer).rnea(q, qd, qdd)
    assert np.allclose(select(model, prefer).forward_dynamics(q, qd, tau), qdd, rtol=1e-9,
                       atol=1e-9)
    g = gravity_torques(model, q)
    assert np.allclose(holding_torques(lambda x: gravity_torques(model, x), model, q, qd),
                       g + hand_friction_joint_side(qd), rtol=0, atol=1e-12)


def test_power_balance_and_dissipation(model):
    q, qd, qdd = states(5)
    for x, v, a in zip(q, qd, qdd):
        friction = hand_friction_joint_side(v)
        assert v @ friction > 0.0           # (F_v2 above its floor: friction dissipates)
        power_in, power_out = power_sides(model, x, v, a, friction)
        assert power_in == pytest.approx(power_out, rel=1e-7, abs=1e-9)


def test_uniform_scaling_splits_by_powers_of_c(model):
    # at qd / c: the quadratic part / c^2 (in tau_s), the viscous part / c, the Coulomb part
    q, qd, qdd = states()
    tau_s, friction, _, coulomb = torque_parts(model, q, qd, qdd)
    quadratic = hand_friction_joint_side(qd) - friction
    v6 = qd[:, 0] + qd[:, 1]
    assert np.allclose(quadratic, FV2 * (v6 * np.abs(v6))[:, None], rtol=0, atol=1e-12)
    for c in (0.5, 3.0):
        assert np.allclose(hand_friction_joint_side(qd / c),
                           quadratic / c ** 2 + (friction - coulomb) / c + coulomb, rtol=0,
                           atol=1e-12)


def test_uncoupled_model_is_bit_for_bit_unchanged():
    plain = RobotModel.from_dict(wrist(coupled=False))
    q, qd, qdd = states()
    assert np.array_equal(friction_torques(plain, qd), plain.viscous * qd
                          + plain.coulomb * np.sign(qd))
    assert np.all(plain.joint_viscous == 0.0) and np.all(plain.joint_coulomb == 0.0)


def test_robot_file_and_urdf_keep_the_terms(model):
    again = RobotModel.from_urdf(urdf_text(model))
    assert again.viscous_quadratic[1] == FV2 and again.joint_viscous[1] == FVJ
    assert again.joint_coulomb[1] == FSJ
    q, qd, qdd = states(5)
    assert np.allclose(rnea(again, q, qd, qdd), rnea(model, q, qd, qdd), rtol=1e-12, atol=1e-12)
    again = RobotModel.from_dict(model.to_dict())
    assert np.array_equal(friction_torques(again, qd), friction_torques(model, qd))


@pytest.mark.parametrize("joint, key, message", [
    (0, "joint_coulomb", r"joints\[0\] \(joint5\)\.friction\.joint_coulomb: joint-side friction "
                         r"is for a joint whose drive the coupling moves"),
    (1, "coulomb_load", r"joints\[1\] \(joint6\)\.friction\.coulomb_load: is not supported"),
    (1, "joint_viscous", r"joints\[1\] \(joint6\)\.friction\.joint_viscous: must be >= 0")])
def test_bad_terms_are_refused_naming_the_field(joint, key, message):
    spec = wrist()
    spec["joints"][joint]["friction"][key] = -0.1 if key == "joint_viscous" else 0.1
    with pytest.raises(RobotDescriptionError, match=message):
        RobotModel.from_dict(spec)
    spec = wrist(coupled=False)
    spec["joints"][1]["friction"]["joint_coulomb"] = 0.1      # no coupling: the drive's own
    with pytest.raises(RobotDescriptionError, match="joint-side friction"):
        RobotModel.from_dict(spec)


def test_per_joint_friction_users_refuse_the_terms():
    spec = wrist(coulomb=False)
    spec["joints"][1]["friction"] = {"viscous": 0.0, "coulomb": 0.0, "joint_viscous": FVJ}
    model = RobotModel.from_dict(spec)
    MomentumObserver(model, ObserverOptions(5.0))       # (smooth: in beta)
    spec["joints"][1]["friction"]["joint_coulomb"] = FSJ
    with pytest.raises(RobotDescriptionError, match=r"\['joint6'\] move with other joints"):
        MomentumObserver(RobotModel.from_dict(spec), ObserverOptions(5.0))
    path = JointTrajectory(model.joint_names, np.array([0.0, 1.0]),
                           np.array([[0.0, 0.0], [0.5, -0.5]]), np.zeros((2, 2)))
    with pytest.raises(RobotDescriptionError, match="time-optimal scaling applies friction"):
        time_optimal_scaling(model, path)
    with pytest.raises(InputError, match="Coulomb friction: the simulator's stick-slip"):
        Simulator(RobotModel.from_dict(spec), np.zeros(2))


def test_momentum_and_observer_take_the_coupling():
    """
    The momentum B qd includes the coupling; the observer of exact free motion stays quiet.

    Oracles: ``mass_matrix`` (which adds K^T D K - D) times qd; motion integrated by scipy's
    DOP853 at rtol 1e-12 under a smooth torque, no contact: the residual stays at the
    trapezoidal rule's error (1.5e-5 N m measured here).
    """
    from scipy.integrate import solve_ivp
    from robot_dynamics_ros.core import forward_dynamics, momentum_terms
    from robot_dynamics_ros.core.algorithms.momentum import momentum_values
    model = RobotModel.from_dict(wrist_with_joint_side(coulomb=False))
    q, qd, _ = states(5)
    p = momentum_terms(model, q, qd)[0]
    assert np.allclose(p, np.einsum("kij,kj->ki", mass_matrix(model, q), qd), rtol=1e-12,
                       atol=1e-12)
    assert np.allclose(momentum_values(model, q[0].tolist(), qd[0].tolist())[0], p[0],
                       rtol=1e-13, atol=1e-13)

    def torque(t):
        return np.array([2.0, 1.0]) * np.sin(np.array([3.0, 5.0]) * np.asarray(t)[..., None])

    def rhs(t, y):
        return np.concatenate([y[2:], forward_dynamics(model, y[:2], y[2:], torque(t))])

    sol = solve_ivp(rhs, (0.0, 1.0), [0.3, -0.2, 0.0, 0.0], method="DOP853", rtol=1e-12,
                    atol=1e-12, dense_output=True)
    times = np.linspace(0.0, 1.0, 1001)
    x = sol.sol(times).T
    observer = MomentumObserver(model, ObserverOptions(50.0, effort_timing="sample"))
    r, accepted = observer.update_many(times, x[:, :2], x[:, 2:], torque(times))
    assert accepted.all() and np.abs(r).max() < 1e-3
