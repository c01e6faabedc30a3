"""
Identification: regressor, base parameters, least squares, filtering, payload, excitation.

Oracles: the core's rnea (Y pi must equal it, for the model's own pi and for other parameter sets
turned into models), Siciliano et al. 2009's closed-form regressor of Example 7.2 (7.84), hand
counts of base parameters (Example 7.2) and the literature's (Puma 560: 36 rigid-body base
parameters, Gautier and Khalil 1990), exact data from analytic trajectories with known noise for
the estimators' claims (recovery, standard errors checked over many seeds, held-out prediction),
and the robot-file validator for physical consistency.
"""

import warnings

import numpy as np
import pytest

from identification_data import multisine, perturbed
from random_robots import random_state
from robot_dynamics_ros.core import InputError, RobotModel, rnea
from robot_dynamics_ros.core.identification import (InconsistentParametersWarning, base_parameters,
                                                    consistency_problems, identification_data,
                                                    identify, parameter_vector, regressor)


# -- identification ------------------------------------------------------------------------------
PUMA = RobotModel.named("puma560")
TRUE_PUMA = perturbed(PUMA, [1.0, 1.15, 0.85, 1.2, 0.8, 1.3])


def _puma_data(seed, count=3000, duration=20.0):
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, duration, count)
    q, qd, qdd = multisine(PUMA, t, rng)
    return q, qd, qdd, rnea(TRUE_PUMA, q, qd, qdd)


def test_noise_free_data_recover_the_base_parameters():
    q, qd, qdd, tau = _puma_data(0)
    result = identify(PUMA, q, qd, qdd, tau)
    truth = base_parameters(PUMA).values(parameter_vector(TRUE_PUMA))
    assert np.abs(result.estimates - truth).max() <= 1e-8 * np.abs(truth).max()
    assert np.all(result.residual_rms < 1e-8) and np.all(result.initial_residual_rms > 1e-3)
    # the identified model reproduces the true robot's torques everywhere (held-out states)
    q2, qd2, qdd2 = random_state(PUMA, np.random.default_rng(9), batch=50)
    assert result.model is not None
    assert np.allclose(
        rnea(
            result.model, q2, qd2, qdd2), rnea(
            TRUE_PUMA, q2, qd2, qdd2), atol=1e-7)


def test_estimates_lie_within_their_standard_errors_over_seeds():
    """
    Check the standard errors over many noise draws.

    Torque noise of 1 % of each joint's effort limit: over 12 seeds the standardised errors
    (estimate - truth) / std have unit variance and no outliers, and held-out torques are
    predicted to the noise level.
    """
    sigma = 0.01 * PUMA.effort_limit
    q, qd, qdd, tau = _puma_data(1, count=1500)
    qv, qdv, qddv, tauv = _puma_data(2, count=1500)
    truth = base_parameters(PUMA).values(parameter_vector(TRUE_PUMA))
    z = []
    for seed in range(12):
        rng = np.random.default_rng(100 + seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InconsistentParametersWarning)
            result = identify(
                PUMA,
                q,
                qd,
                qdd,
                tau +
                rng.normal(
                    size=tau.shape) *
                sigma,
                weights="auto")
        z.append((result.estimates - truth) / result.std)
        assert np.allclose(result.noise_std, sigma, rtol=0.1)
        noisy = tauv + rng.normal(size=tauv.shape) * sigma
        predicted = base_parameters(PUMA).columns(
            regressor(PUMA, qv, qdv, qddv)) @ result.estimates
        rms = np.sqrt(np.mean((noisy - predicted) ** 2, axis=0))
        assert np.all(rms < 1.1 * sigma), rms / sigma
    z = np.array(z)
    assert 0.7 < np.mean(z ** 2) < 1.3
    assert np.abs(z).max() < 5.0
    assert np.mean(np.abs(z) < 2.0) > 0.9


def test_weighted_least_squares_uses_the_joint_noise():
    sigma = np.array([0.05, 2.0, 0.05, 0.05, 0.02, 0.02])
    q, qd, qdd, tau = _puma_data(3, count=1500)
    rng = np.random.default_rng(4)
    noisy = tau + rng.normal(size=tau.shape) * sigma
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InconsistentParametersWarning)
        ols = identify(PUMA, q, qd, qdd, noisy)
        wls = identify(PUMA, q, qd, qdd, noisy, weights="auto")
        given = identify(PUMA, q, qd, qdd, noisy, weights=1.0 / sigma)
    assert wls.method == "wls" and ols.method == "ols"
    assert np.allclose(wls.weights * wls.noise_std, 1.0, rtol=0.15)
    assert np.allclose(given.estimates, wls.estimates, rtol=0, atol=5 * given.std.max())
    # the wrist parameters, swamped by joint 2's noise in the ordinary fit, are better weighted
    assert np.median(wls.std / ols.std) < 0.5


def test_consistent_solve_gives_a_real_robot_where_ols_does_not():
    sigma = 0.02 * PUMA.effort_limit
    q, qd, qdd, tau = _puma_data(5, count=1500)
    noisy = tau + np.random.default_rng(6).normal(size=tau.shape) * sigma
    with pytest.warns(InconsistentParametersWarning):
        ols = identify(PUMA, q, qd, qdd, noisy)
    assert ols.model is None and ols.problems
    result = identify(PUMA, q, qd, qdd, noisy, consistent=True)
    assert result.method == "consistent" and result.consistent and result.model is not None
    assert consistency_problems(PUMA, result.parameters) == []
    # the model reproduces the constrained estimates, and fits nearly as well as OLS
    assert np.allclose(
        base_parameters(PUMA).values(
            parameter_vector(
                result.model)),
        result.estimates,
        rtol=1e-6,
        atol=1e-6 *
        np.abs(
            result.estimates).max())
    assert np.all(result.residual_rms < 1.05 * ols.residual_rms)


def test_bad_data_get_clear_errors():
    q, qd, qdd, tau = _puma_data(7, count=400)
    with pytest.raises(InputError, match="too few samples"):
        identify(PUMA, q[:10], qd[:10], qdd[:10], tau[:10])
    bad = tau.copy()
    bad[3, 2] = np.nan
    with pytest.raises(InputError, match="tau: non-finite value for joint 'joint3'"):
        identify(PUMA, q, qd, qdd, bad)
    with pytest.raises(InputError, match=r"expected shape"):
        identify(PUMA, q[:, :5], qd, qdd, tau)
    still = q.copy()
    still[:, 5], qd6, qdd6 = 0.3, qd.copy(), qdd.copy()
    qd6[:, 5] = 0.0
    qdd6[:, 5] = 0.0
    with pytest.raises(InputError, match="weights"):
        identify(PUMA, q, qd, qdd, tau, weights=[1, 2])


def test_parameters_the_data_do_not_excite_are_held_at_the_files_values_and_named():
    """
    A joint that never moves: its rotor and friction are held at the file's values, not refused.

    Oracle: the true robot's torques (0.1 % noise) with joint 6 locked; the columns of joint 6's
    friction are then zero (its rotor inertia only rides on link 5 with its inertia), so any
    value fits the data and the prior (the file) must decide: the estimates and the file written
    keep the file's friction, the report names them (and the rotor) with an infinite standard
    deviation, and the torques are fitted to the noise.
    """
    q, qd, qdd, _ = _puma_data(7, count=400)
    q[:, 5], qd[:, 5], qdd[:, 5] = 0.3, 0.0, 0.0
    noise = 1e-3 * PUMA.effort_limit
    tau = rnea(TRUE_PUMA, q, qd, qdd) + np.random.default_rng(3).normal(size=q.shape) * noise
    result = identify(PUMA, q, qd, qdd, tau, friction=("viscous", "coulomb"), consistent=True)
    held = set(result.held)
    assert {"Im[joint6]", "Fv[joint6]", "Fc[joint6]"} <= held
    assert not any(name.endswith("[joint5]") for name in held)
    assert np.all(np.isinf(result.std[[result.names.index(name) for name in held]]))
    rows = [result.names.index(name) for name in ("Fv[joint6]", "Fc[joint6]")]   # columns 0
    assert np.allclose(result.estimates[rows], result.prior[rows], rtol=1e-6)
    for field in ("viscous", "coulomb"):
        assert np.isclose(getattr(result.model, field)[5], getattr(PUMA, field)[5], rtol=1e-6)
    assert "held at the starting file's values" in result.report()
    assert "Fc[joint6] = " in result.report()
    assert np.all(result.residual_rms < 1.2 * noise)


def test_identification_from_noisy_positions_and_torques():
    """
    Identify from noisy positions and torques through the filters.

    The whole offline chain: positions with 1e-4 rad noise and torques with 1 % noise at 1 kHz
    -> filtered derivatives -> identify: the identified model predicts held-out torques of the
    true robot to a fraction of the torque noise level, and the estimates lie within their
    standard errors (raw torques keep the errors independent).
    """
    t = np.arange(0.0, 30.0, 1e-3)
    rng = np.random.default_rng(10)
    q, qd, qdd = multisine(PUMA, t, rng)
    sigma = 0.01 * PUMA.effort_limit
    tau = rnea(TRUE_PUMA, q, qd, qdd) + rng.normal(size=q.shape) * sigma
    data = identification_data(t, q + rng.normal(size=q.shape) * 1e-4, tau, decimate=5)
    assert 0.5 < data.cutoff < 5
    result = identify(PUMA, data.q, data.qd, data.qdd, data.tau, consistent=True)
    qv, qdv, qddv = multisine(PUMA, np.linspace(0, 10, 500), np.random.default_rng(11))
    error = rnea(result.model, qv, qdv, qddv) - rnea(TRUE_PUMA, qv, qdv, qddv)
    before = rnea(PUMA, qv, qdv, qddv) - rnea(TRUE_PUMA, qv, qdv, qddv)
    assert np.all(np.sqrt(np.mean(error ** 2, axis=0)) < 0.5 * sigma)
    assert np.sqrt(np.mean(error ** 2)) < 0.1 * np.sqrt(np.mean(before ** 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InconsistentParametersWarning)
        ols = identify(PUMA, data.q, data.qd, data.qdd, data.tau, weights="auto")
    z = (ols.estimates - base_parameters(PUMA).values(parameter_vector(TRUE_PUMA))) / ols.std
    assert np.mean(z ** 2) < 2.0 and np.abs(z).max() < 5.0


def test_a_fit_that_gives_no_robot_says_so_not_that_the_users_file_is_invalid(monkeypatch):
    # the Kinova Gen3 corpus log gave a 7e8 kg link from weakly determined directions: the error
    # is the fit's (and what to do), not "invalid robot description" as if the file were wrong
    from robot_dynamics_ros.core.errors import RobotDescriptionError
    import importlib
    module = importlib.import_module("robot_dynamics_ros.core.identification.identify")

    def absurd(*_, **__):
        raise RobotDescriptionError("joint1: link.mass 7e8 kg out of range")
    monkeypatch.setattr(module, "model_with_parameters", absurd)
    q, qd, qdd, tau = _puma_data(0, count=600)
    with pytest.raises(InputError) as error:
        identify(PUMA, q, qd, qdd, tau)
    text = str(error.value)
    assert "the fit for 'puma560' gives parameters no robot has" in text
    assert "link.mass 7e8 kg" in text and "excite" in text
    assert not isinstance(error.value, RobotDescriptionError)
