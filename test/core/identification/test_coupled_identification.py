"""Identification of a coupled wrist from motor-side data: rotor inertia and friction per drive."""
import numpy as np
import pytest

from coupled_wrist import FSJ, FV2, FVJ, IM6, wrist, wrist_with_joint_side
from identification_data import multisine
from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core.identification.drives import gains_from_constants
from robot_dynamics_ros.core.identification.identify import identify
from robot_dynamics_ros.core.identification.parameters import parameter_vector, predicted_effort
from robot_dynamics_ros.core.identification.pipeline import (IdentificationOptions, Recording,
                                                             identify_recordings)
from robot_dynamics_ros.core.identification.regressor import regressor

KINDS = ("viscous", "coulomb")
TORQUE_CONSTANT = 0.1       # N m / A, motor side (made up)
NOISE = 0.002               # A, on every motor current


def true_wrist() -> RobotModel:
    """Return the "real" wrist behind the file: rotor 6 and both drives' friction differ."""
    spec = wrist()
    spec["joints"][1]["motor"]["rotor_inertia"] = 1.6 * IM6
    spec["joints"][0]["friction"] = {"viscous": 1.5, "coulomb": 0.7}
    spec["joints"][1]["friction"] = {"viscous": 1.1, "coulomb": 0.35}
    return RobotModel.from_dict(spec, "wrist (true)")


@pytest.fixture(scope="module")
def recording():
    """Motion, and the currents the motors draw: i = (K^T diag(gain))^{-1} tau, plus noise."""
    model, true = RobotModel.from_dict(wrist()), true_wrist()
    rng = np.random.default_rng(3)
    q, qd, qdd = multisine(model, np.arange(0.0, 10.0, 2e-3), rng)
    gains = gains_from_constants(model, [TORQUE_CONSTANT])
    currents = np.linalg.solve(model.coupling.T, rnea(true, q, qd, qdd).T).T / gains.gains
    currents += rng.normal(scale=NOISE, size=currents.shape)
    return model, true, q, qd, qdd, currents


def test_regressor_reproduces_the_coupled_dynamics():
    model = true_wrist()
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.normal(size=(3, 40, 2))
    Y = regressor(model, q, qd, qdd)
    assert np.allclose(Y @ parameter_vector(model), predicted_effort(model, q, qd, qdd),
                       rtol=0, atol=1e-12)


def test_motor_side_data_give_the_coupled_rotor_and_drive_friction(recording):
    model, true, q, qd, qdd, currents = recording
    gains = gains_from_constants(model, [TORQUE_CONSTANT])
    assert gains.coupling is not None           # motor 6's torque acts on joints 5 and 6
    tau = gains.torques(currents)
    result = identify(model, q, qd, qdd, tau, friction=KINDS)
    truth = result.base.combination @ parameter_vector(true, KINDS)
    names = list(result.names)
    for name in ("Im[joint6]", "Fv[joint5]", "Fc[joint5]", "Fv[joint6]", "Fc[joint6]"):
        k = names.index(name)                   # each a base parameter of its own
        # within 4 standard deviations of the truth, and the truth well resolved (1 %)
        assert abs(result.estimates[k] - truth[k]) < 4 * result.std[k], name
        assert result.std[k] < 0.01 * abs(truth[k]), name
    assert result.model is not None
    assert result.model.has_coupling
    assert result.model.rotor_inertia[1] == pytest.approx(1.6 * IM6, rel=0.01)


@pytest.mark.filterwarnings("ignore::robot_dynamics_ros.core.identification.identify."
                            "InconsistentParametersWarning")    # (the uncoupled fit's: wrong)
def test_without_the_coupling_the_wrist_cannot_be_fitted(recording):
    # the same file and currents with one gear ratio per joint: joint 5 misses motor 6's torque
    model, _, q, qd, qdd, currents = recording
    plain = RobotModel.from_dict(wrist(coupled=False))
    coupled = identify(model, q, qd, qdd, gains_from_constants(model, [TORQUE_CONSTANT])
                       .torques(currents), friction=KINDS)
    uncoupled = identify(plain, q, qd, qdd, gains_from_constants(plain, [TORQUE_CONSTANT])
                         .torques(currents), friction=KINDS)
    g5, g6 = NOISE * TORQUE_CONSTANT * np.array([80.0, 50.0])  # gain x current noise
    expected = np.array([np.hypot(g5, g6), g6])     # K^T: tau5 = g5 i5 + g6 i6, tau6 = g6 i6
    assert np.all(coupled.residual_rms < 1.5 * expected)
    assert uncoupled.residual_rms[0] > 10.0 * coupled.residual_rms[0]


def test_the_defaults_identify_the_coupled_wrist_and_write_its_coupling(recording):
    # identify_recordings as `robot-dynamics identify --torque-constant 0.1` runs it: its
    # defaults (consistent fit, rotors, every friction kind, the cut-off chosen and checked)
    model, true, q, qd, qdd, currents = recording
    rng = np.random.default_rng(4)
    t = np.arange(len(q)) * 2e-3
    gains = gains_from_constants(model, [TORQUE_CONSTANT])
    noisy = q + rng.normal(scale=1e-5, size=q.shape)        # encoder-like noise
    fit = identify_recordings(model, [Recording("wrist", t, noisy, None, gains.torques(currents))],
                              IdentificationOptions(gear_ratios=gains.gear_ratios))
    written = fit.written
    assert written.has_coupling and np.array_equal(written.coupling, model.coupling)
    assert written.rotor_inertia[1] == pytest.approx(true.rotor_inertia[1], rel=0.02)
    assert np.allclose(written.viscous, true.viscous, rtol=0.02)
    assert np.allclose(written.coulomb, true.coulomb, rtol=0.02)
    assert not np.any(written.viscous_quadratic[1:])        # (none in the truth: left out)
    report = fit.holdout
    assert np.all(report.after_rms < 0.1 * report.before_rms)


def test_drive_quadratic_and_joint_side_friction_are_identified():
    # a wrist whose drive 6 has F_v2 on v6 = qd5 + qd6 and whose joint 6 has its own F_vj qd6 +
    # F_sj sgn(qd6) (test/support/coupled_wrist.py): their columns separate them from drive 6's
    # friction (which acts on joint 5 as well), each within 4 standard deviations and 2 %
    kinds = ("viscous", "coulomb", "viscous_quadratic", "joint_viscous", "joint_coulomb")
    model, true = RobotModel.from_dict(wrist()), RobotModel.from_dict(wrist_with_joint_side())
    rng = np.random.default_rng(5)
    q, qd, qdd = multisine(model, np.arange(0.0, 10.0, 2e-3), rng)
    gains = gains_from_constants(model, [TORQUE_CONSTANT])
    currents = np.linalg.solve(model.coupling.T, rnea(true, q, qd, qdd).T).T / gains.gains
    currents += rng.normal(scale=NOISE, size=currents.shape)
    Y = regressor(true, q, qd, qdd, kinds)
    assert np.allclose(Y @ parameter_vector(true, kinds), rnea(true, q, qd, qdd), rtol=0,
                       atol=1e-10)
    result = identify(model, q, qd, qdd, gains.torques(currents), friction=kinds)
    truth = result.base.combination @ parameter_vector(true, kinds)
    names = list(result.names)
    for name, value in (("Fv2[joint6]", FV2), ("Fvj[joint6]", FVJ), ("Fcj[joint6]", FSJ)):
        k = names.index(name)
        assert truth[k] == pytest.approx(value, rel=1e-12)
        assert abs(result.estimates[k] - value) < 4 * result.std[k], name
        assert abs(result.estimates[k] - value) < 0.02 * abs(value), name
    assert "Fvj[joint5]" not in names and "Fcj[joint5]" not in names   # (0 columns: no base)
    written = result.model
    assert written.joint_coulomb[1] == pytest.approx(FSJ, rel=0.02)
    assert written.joint_coulomb[0] == 0.0 and "joint_coulomb" not in \
        written.to_dict()["joints"][0]["friction"]
