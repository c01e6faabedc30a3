"""
Tests of the ROS-free simulator (core/simulation).

Accuracy against independent oracles (scipy's DOP853 on the core's forward dynamics, energy
conservation, convergence orders, closed forms of a one-joint rotor with Coulomb friction), the
documented friction, stop and saturation behaviour, and its input checks.
"""

import math
import warnings

import numpy as np
import pytest

from robot_dynamics_ros.core import (InputError, RobotModel, forward_dynamics, gravity_torques,
                                     simulate)
from robot_dynamics_ros.core.simulation import EffortSaturationWarning
from robot_dynamics_ros.core.simulation.dynamics import without_coulomb
from simulated_robots import wheel


def test_result_rows_are_state_torque_and_acceleration_at_each_step():
    model = RobotModel.named("puma560")
    q0 = np.array([0.1, 0.4, -0.6, 0.2, 0.3, -0.1])
    calls = []

    def controller(t, q, qd):
        calls.append((t, q.copy()))
        return 5.0 * np.sin(t) * np.ones(6) + gravity_torques(model, q)
    run = simulate(model, q0, np.zeros(6), 0.05, dt=0.01, torque=controller)
    assert run.q.shape == run.qd.shape == run.qdd.shape == run.tau.shape == (6, 6)
    np.testing.assert_allclose(run.t, np.arange(6) * 0.01, atol=1e-15)
    assert len(calls) == 6 and all(np.array_equal(q, run.q[k]) for k, (_, q) in enumerate(calls))
    for k in range(6):
        np.testing.assert_allclose(run.tau[k], controller(run.t[k], run.q[k], run.qd[k]),
                                   atol=1e-12)
        expected = forward_dynamics(model, run.q[k], run.qd[k], run.tau[k])
        np.testing.assert_allclose(run.qdd[k], expected, atol=1e-8)
    # torque held over each step: a constant torque equals a controller returning it
    tau = np.array([1.0, 20.0, 5.0, 0.5, 0.2, 0.1])
    a = simulate(model, q0, np.zeros(6), 0.05, torque=tau)
    b = simulate(model, q0, np.zeros(6), 0.05, torque=lambda t, q, qd: tau)
    np.testing.assert_array_equal(a.q, b.q)


def test_gravity_compensation_holds_the_puma_still():
    model = RobotModel.named("puma560")
    q0 = np.array([0.3, 0.6, -1.0, 0.4, 0.8, 0.2])
    run = simulate(model, q0, np.zeros(6), 2.0, torque=lambda t, q, qd: gravity_torques(model, q))
    assert np.abs(run.qd).max() < 1e-6
    assert np.abs(run.q - q0).max() < 1e-6
    # and without it the arm falls
    assert np.abs(simulate(model, q0, np.zeros(6), 0.2).q[-1] - q0).max() > 1e-2


# ------------------------------------------------------------------------- limits, saturation
def test_joint_limit_is_an_inelastic_stop_the_joint_can_leave():
    model = wheel(coulomb=0.0, lower=-0.5, upper=0.5)
    run = simulate(model, [0.0], [0.0], 1.5, torque=lambda t, q, qd: [1.0 if t < 1.0 else -1.0])
    q, qd = run.q[:, 0], run.qd[:, 0]
    assert q.max() <= 0.5
    at_stop = (run.t > 0.8) & (run.t < 1.0)
    assert np.all(q[at_stop] == 0.5) and np.all(qd[at_stop] == 0.0)   # held, no bounce
    assert run.limit_stop_counts[0] > 0
    assert qd[-1] < 0.0 and q[-1] < 0.5                               # pulled away, it leaves
    # reaching the stop: t = sqrt(2 * 0.5 / (1 / I)) with I = 0.5
    first = run.t[np.argmax(q == 0.5)]
    assert first == pytest.approx(math.sqrt(2 * 0.5 * 0.5), abs=2e-3)


def test_effort_saturation_is_applied_counted_and_reported():
    model = wheel(coulomb=0.0, effort=5.0)
    with pytest.warns(EffortSaturationWarning, match=r"'spin': 100"):
        run = simulate(model, [0.0], [0.0], 0.1, torque=[12.0])
    assert np.all(run.tau == 5.0) and run.saturation_counts.tolist() == [100]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clipped = simulate(model, [0.0], [0.0], 0.1, torque=[5.0])
    np.testing.assert_array_equal(run.q, clipped.q)
    assert clipped.saturation_counts.tolist() == [0]
    unlimited = simulate(model, [0.0], [0.0], 0.1, torque=[12.0], effort_limits=False)
    assert unlimited.q[-1, 0] > run.q[-1, 0]


# --------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, match", [
    ({"dt": 0.0}, "dt: must be finite and > 0"),
    ({"dt": float("nan")}, "dt: must be finite"),
    ({"duration": -1.0}, "duration: must be finite and >= 0"),
    ({"integrator": "euler"}, "integrator: 'euler' is not one of"),
    ({"q0": [0.0, float("nan")]}, "q0: non-finite value for joint 'joint2'"),
    ({"q0": [0.0]}, r"q0: expected shape \(2,\)"),
    ({"q0": [7.0, 0.0]}, "joint 'joint1' starts at 7, outside its limits"),
    ({"torque": [1.0, 2.0, 3.0]}, r"torque: expected None, 2 values or a callable"),
    ({"torque": lambda t, q, qd: [1.0]}, r"tau at t = 0 s: expected 2 torques"),
    ({"torque": lambda t, q, qd: [1.0, float("inf")]}, "non-finite torque inf for joint 'joint2'"),
    ({"compiled": "fast"}, "compiled: 'fast' is not one of"),
])
def test_bad_arguments_are_refused_with_the_reason(kwargs, match):
    args = {"model": RobotModel.named("planar2"), "q0": [0.1, 0.2], "qd0": [0.0, 0.0],
            "duration": 0.01}
    args.update(kwargs)
    with pytest.raises(InputError, match=match):
        simulate(**args)


def test_a_diverging_run_stops_with_the_time_and_joint():
    model = wheel(coulomb=0.0, viscous=5000.0, inertia=0.5)   # dt F_v / I = 10: steps explode
    message = r"diverged at t = .* \(joint 'spin'\): dt = 0.001 s is too large"
    with pytest.raises(InputError, match=message):
        simulate(model, [0.0], [1.0], 2.0, integrator="semi_implicit_euler", joint_limits=False)


def test_the_model_is_not_changed():
    model = RobotModel.named("puma560")
    before = model.to_dict()
    simulate(model, np.zeros(6), np.ones(6), 0.01)
    assert model.to_dict() == before and without_coulomb(model).coulomb.sum() == 0.0


def test_a_continuous_joint_turns_without_stops():
    model = RobotModel.from_dict({
        "name": "turntable", "dh_convention": "standard", "gravity": [0.0, 0.0, -9.81],
        "joints": [{"name": "spin", "type": "continuous",
                    "dh": {"a": 0.0, "alpha": 0.0, "d": 0.0, "theta": 0.0},
                    "limits": {"velocity": 100.0, "effort": 10.0},
                    "link": {"mass": 1.0, "com": [0.0, 0.0, 0.0],
                             "inertia": {"ixx": 0.5, "iyy": 0.5, "izz": 0.5}},
                    "friction": {"viscous": 0.0, "coulomb": 0.5}}]})
    run = simulate(model, [0.0], [0.0], 2.0, torque=[2.5])
    assert run.limit_stop_counts.tolist() == [0]
    # net torque 2.5 - 0.5 once sliding, I = 0.5: q = (2 / 0.5) t^2 / 2 = 2 t^2 (up to v_s)
    assert run.q[-1, 0] == pytest.approx(8.0, rel=1e-3)
