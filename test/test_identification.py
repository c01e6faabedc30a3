"""
Identification: regressor, base parameters, least squares, filtering, payload, excitation.

Oracles: the core's rnea (Y pi must equal it, for the model's own pi and for other parameter sets
turned into models), seed 002's closed-form regressor of Example 7.2 (7.84), hand counts of base
parameters (Example 7.2) and the literature's (Puma 560: 36 rigid-body base parameters, Gautier and
Khalil 1990), exact data from analytic trajectories with known noise for the estimators' claims
(recovery, standard errors checked over many seeds, held-out prediction), and the robot-file
validator for physical consistency.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from identification_data import multisine, perturbed
from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.core import InputError, RobotModel, rnea, shipped_robots
from robot_dynamics_ros.core.identification import (
    InconsistentParametersWarning,
    base_parameters,
    consistency_problems,
    derivatives,
    design_excitation,
    identification_data,
    identify,
    identify_payload,
    model_with_parameters,
    parameter_names,
    parameter_vector,
    regressor)
from robot_dynamics_ros.core.identification.base_parameters import sample_states
from robot_dynamics_ros.core.identification.parameters import parameter_layout


def _random_models():
    rng = np.random.default_rng(7)
    out = []
    for k, convention in enumerate(["standard", "modified"] * 3):
        out.append(RobotModel.from_dict(random_robot_dict(
            5, rng, convention=convention, prismatic_prob=0.4, with_motors=k % 3 != 2,
            with_friction=k % 2 == 0, with_payload=k == 3)))
    return out


MODELS = [RobotModel.named(name) for name in shipped_robots()]
ALL = MODELS + [m.rigid() for m in MODELS] + _random_models()


# -- regressor ---------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ALL,
                         ids=lambda m: f"{m.name}-{m.n}-{m.has_motors}-{m.has_friction}")
def test_regressor_times_parameters_is_rnea(model):
    rng = np.random.default_rng(1)
    q, qd, qdd = random_state(model, rng, batch=40)
    Y = regressor(model, q, qd, qdd)
    assert Y.shape == (40, model.n, len(parameter_names(model)))
    tau = rnea(model, q, qd, qdd)
    assert np.abs(Y @ parameter_vector(model) - tau).max() <= 1e-10 * max(1.0, np.abs(tau).max())
    # one configuration gives the (n, p) matrix of the batch's first row
    assert np.allclose(regressor(model, q[0], qd[0], qdd[0]), Y[0], rtol=0, atol=1e-12)
    # block upper-triangular (seed 002, 7.80): tau_i does not depend on the links before i
    layout = parameter_layout(model)
    for i in range(1, model.n):
        assert np.all(Y[:, i, :layout.block_start[i]] == 0.0)


@pytest.mark.parametrize("model", _random_models()[:3], ids=lambda m: m.name)
def test_regressor_is_linear_in_other_parameter_sets(model):
    """
    Check Y pi' against rnea of the model built from other parameters.

    Y pi' = rnea of the model built from pi' (other masses, CoMs, inertias, rotors, friction).
    """
    rng = np.random.default_rng(2)
    other = RobotModel.from_dict(
        random_robot_dict(
            model.n,
            rng,
            with_motors=True,
            with_friction=True))
    spec = model.to_dict()
    for joint, source in zip(spec["joints"], other.to_dict()["joints"]):
        joint["link"] = source["link"]
        if "motor" in joint and joint["motor"]["gear_ratio"] != 1.0:
            joint["motor"]["rotor_inertia"] = source["motor"]["rotor_inertia"]
        if model.has_friction:
            joint["friction"] = source["friction"]
    changed = RobotModel.from_dict(spec)
    q, qd, qdd = random_state(model, rng, batch=30)
    tau = rnea(changed, q, qd, qdd)
    assert np.abs(regressor(model, q, qd, qdd) @ parameter_vector(changed) -
                  tau).max() <= 1e-10 * np.abs(tau).max()


@pytest.mark.parametrize("model", [RobotModel.named("puma560"),
                         _random_models()[3]], ids=lambda m: m.name)
def test_model_with_parameters_round_trip(model):
    pi = parameter_vector(model)
    rebuilt = model_with_parameters(model, pi)
    assert np.allclose(parameter_vector(rebuilt), pi, rtol=0, atol=1e-12)
    assert rebuilt.joint_names == model.joint_names and np.array_equal(
        rebuilt.effort_limit, model.effort_limit)
    q, qd, qdd = random_state(model, np.random.default_rng(3), batch=5)
    assert np.allclose(rnea(rebuilt, q, qd, qdd), rnea(model, q, qd, qdd), rtol=1e-12, atol=1e-10)
    assert consistency_problems(model, pi) == []
    assert len(set(parameter_names(model))) == len(parameter_names(model))


# -- base parameters -----------------------------------------------------------------------------
def seed_regressor_7_84(q, qd, qdd, a1=1.0, a2=1.0, kr1=100.0, kr2=100.0, g=9.81):
    """
    Seed 002, eq.

    7.84: the planar arm's 2 x 8 regressor for pi (7.83), samples (N, 2).
    """
    c1, c2, s2, c12 = np.cos(q[:, 0]), np.cos(q[:, 1]), np.sin(q[:, 1]), np.cos(q.sum(axis=1))
    d1, d2 = qd.T
    a_1, a_2 = qdd.T
    Y = np.zeros((q.shape[0], 2, 8))
    Y[:, 0, 0] = a1 ** 2 * a_1 + a1 * g * c1
    Y[:, 0, 1] = 2 * a1 * a_1 + g * c1
    Y[:, 0, 2] = a_1
    Y[:, 0, 3] = kr1 ** 2 * a_1
    Y[:, 0, 4] = ((a1 ** 2 + 2 * a1 * a2 * c2 + a2 ** 2) * a_1 + (a1 * a2 * c2 + a2 ** 2) * a_2
                  - 2 * a1 * a2 * s2 * d1 * d2 - a1 * a2 * s2 * d2 ** 2
                  + a1 * g * c1 + a2 * g * c12)
    Y[:, 0, 5] = ((2 * a1 * c2 + 2 * a2) * a_1 + (a1 * c2 + 2 * a2) * a_2 - 2 * a1 * s2 * d1 * d2
                  - a1 * s2 * d2 ** 2 + g * c12)
    Y[:, 0, 6] = a_1 + a_2
    Y[:, 0, 7] = kr2 * a_2
    Y[:, 1, 4] = (a1 * a2 * c2 + a2 ** 2) * a_1 + a2 ** 2 * \
        a_2 + a1 * a2 * s2 * d1 ** 2 + a2 * g * c12
    Y[:, 1, 5] = (a1 * c2 + 2 * a2) * a_1 + 2 * a2 * a_2 + a1 * s2 * d1 ** 2 + g * c12
    Y[:, 1, 6] = a_1 + a_2
    Y[:, 1, 7] = kr2 * a_1 + kr2 ** 2 * a_2
    return Y


def _rank(W):
    s = np.linalg.svd(W / np.maximum(np.linalg.norm(W, axis=0), 1e-300), compute_uv=False)
    return int(np.sum(s > 1e-9 * s[0]))


def test_planar_arm_counts_by_hand_example_7_2():
    """
    Seed 002, Example 7.2.

    By hand from (7.84): without motors (columns 4 and 8 dropped) the columns obey col1 = a1^2
    col3 + a1 [g c1; 0], col2 = 2 a1 col3 + [g c1; 0] and col5 - a2 col6 = col1 - a2^2 col7, so
    6 - 2 = 4 are independent; with motors col4 = kr1^2 col3 and col8 is new: 5 (the seed's
    footnote 6).  Our pi also has the first moments across the link (m l_Cy), which the seed's
    (7.83) leaves out because its CoMs lie on the links: 2 more.
    """
    model = RobotModel.named("planar2")
    rng = np.random.default_rng(4)
    q, qd, qdd = random_state(model, rng, batch=200)
    Ys = seed_regressor_7_84(q, qd, qdd)
    pi_seed = np.array([55.0, -25.0, 22.51, 0.01, 50.0, -25.0, 22.5, 0.01])    # notes E4
    assert np.allclose(Ys @ pi_seed, rnea(model, q, qd, qdd), rtol=1e-12, atol=1e-9)
    rigid_cols = [0, 1, 2, 4, 5, 6]
    assert _rank(Ys[..., rigid_cols].reshape(-1, 6)) == 4
    assert _rank(Ys.reshape(-1, 8)) == 5
    assert base_parameters(model.rigid()).count == 6 and base_parameters(model).count == 7
    # our columns of the seed's parameters (m, mx, Izz per link) span exactly the seed's space
    Y = regressor(model.rigid(), q, qd, qdd).reshape(-1, 20)
    names = parameter_names(model.rigid())
    ours = Y[:, [names.index(f"{k}[joint{i}]") for i in (1, 2) for k in ("m", "mx", "Izz")]]
    assert _rank(ours) == 4
    assert _rank(np.hstack([ours, Ys[..., rigid_cols].reshape(-1, 6)])) == 4
    # and the seed's grouping: m2 folds into link 1's moments with a1 and a1^2 (a1 = 1 m)
    expressions = base_parameters(model.rigid()).expressions()
    assert "Izz[joint1]R = Izz[joint1] + m[joint2]" in expressions
    assert "mx[joint1]R = mx[joint1] + m[joint2]" in expressions


def test_puma560_counts_against_the_literature():
    """
    Check the Puma 560's counts against the literature.

    36 rigid-body base parameters (Gautier and Khalil 1990; the same structure, a 6R arm whose
    first axis is vertical, has 36 in FIGAROH's UR10 study).  With rotors: 40 (Im1 folds into
    Izz1, and Im2 into Izz2 because axis 2 is perpendicular to axis 1, as in Khalil and
    Dombre's RX-90 example); with friction 12 more.
    """
    puma = RobotModel.named("puma560")
    assert base_parameters(puma.rigid()).count == 36
    assert base_parameters(puma.without_friction()).count == 40
    assert base_parameters(puma).count == 52
    expressions = base_parameters(puma).expressions()
    # a hand check of Khalil's grouping at joint 1 (vertical axis): ZZ1R = ZZ1 + kr1^2 Im1 + YY2
    # + YY3 + (a2^2 + d3^2) M3 + 2 d3 MZ3 + ..., with kr1 = -62.6111, a2 = 0.4318, d3 = 0.15005
    zz1 = next(e for e in expressions if e.startswith("Izz[joint1]R"))
    assert f"{62.6111 ** 2:.6g} Im[joint1]" in zz1
    assert "+ Iyy[joint2] +" in zz1 and "+ Iyy[joint3] +" in zz1
    assert f"{0.4318 ** 2 + 0.15005 ** 2:.6g} m[joint3]" in zz1
    assert f"{2 * 0.15005:.6g} mz[joint3]" in zz1


@pytest.mark.parametrize("model", ALL[::2], ids=lambda m: m.name)
def test_base_parameters_reproduce_every_torque(model):
    """
    Check that the base parameters reproduce every torque.

    tau = Y pi = W_b (K pi) for other parameter vectors and fresh samples; the kept columns are
    independent there.
    """
    base = base_parameters(model)
    rng = np.random.default_rng(5)
    q, qd, qdd = random_state(model, rng, batch=100)
    Y = regressor(model, q, qd, qdd)
    for _ in range(3):
        pi = rng.normal(size=Y.shape[-1])
        assert np.allclose(base.columns(Y) @ base.values(pi), Y @ pi,
                           rtol=0, atol=1e-9 * np.abs(Y @ pi).max())
    assert _rank(base.columns(Y).reshape(-1, base.count)) == base.count
    assert base.rank_gap > 1e6
    assert len(base.expressions()) == base.count


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
    with pytest.raises(InputError, match=r"do not excite.*joint6"):
        identify(PUMA, still, qd6, qdd6, rnea(PUMA, still, qd6, qdd6))
    with pytest.raises(InputError, match="weights"):
        identify(PUMA, q, qd, qdd, tau, weights=[1, 2])


# -- filtering -----------------------------------------------------------------------------------
def test_derivatives_from_noisy_positions():
    fs, t = 1000.0, np.arange(0.0, 20.0, 1e-3)
    q, qd, qdd = multisine(PUMA, t, np.random.default_rng(8))
    noisy = q + np.random.default_rng(9).normal(size=q.shape) * 1e-4
    inner = slice(2000, -2000)
    for method in ("butterworth", "savgol"):
        d = derivatives(t, noisy, method=method)
        # the motion's highest harmonic is 0.5 Hz; the cut-off lies above it and far below fs/2
        assert 0.5 < d.cutoff < 5.0 and d.sample_rate == pytest.approx(fs)
        assert np.abs(d.qd[inner] - qd[inner]).max() < 0.01 * np.abs(qd).max()
        assert np.abs(d.qdd[inner] - qdd[inner]).max() < 0.02 * np.abs(qdd).max()
    with pytest.raises(InputError, match="not increasing"):
        derivatives(t[::-1], q)


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


# -- payload -------------------------------------------------------------------------------------
PAYLOAD = dict(mass=2.0, com=[0.01, -0.02, 0.05],
               inertia={"ixx": 4e-3, "iyy": 5e-3, "izz": 3e-3, "ixy": 1e-4})


@pytest.mark.parametrize("with_reference", [False, True])
def test_payload_recovered_at_realistic_noise(with_reference):
    loaded = PUMA.with_payload(**PAYLOAD)
    t = np.linspace(0.0, 30.0, 3000)
    rng = np.random.default_rng(12)
    sigma = 0.005 * PUMA.effort_limit
    q, qd, qdd = multisine(PUMA, t, rng, amplitude=0.8)
    tau = rnea(loaded, q, qd, qdd) + rng.normal(size=q.shape) * sigma
    reference = None
    if with_reference:
        q0, qd0, qdd0 = multisine(PUMA, t, rng, amplitude=0.8)
        reference = (q0, qd0, qdd0, rnea(PUMA, q0, qd0, qdd0) + rng.normal(size=q.shape) * sigma)
    result = identify_payload(PUMA, q, qd, qdd, tau, reference=reference)
    assert abs(result.mass - 2.0) < 0.01 * 2.0
    assert np.abs(result.com - PAYLOAD["com"]).max() < 1e-3
    # written as the robot file's payload, it reproduces the loaded robot's torques
    rebuilt = PUMA.with_payload(**result.as_dict())
    assert np.allclose(parameter_vector(rebuilt)[parameter_layout(PUMA).link[-1]] -
                       parameter_vector(PUMA)[parameter_layout(PUMA).link[-1]],
                       result.parameters, atol=1e-12)
    assert np.all(result.residual_rms < 1.2 * sigma)


# -- excitation ----------------------------------------------------------------------------------
def test_excitation_within_limits_and_better_conditioned():
    model = RobotModel.named("planar2")
    iterations = []
    excitation = design_excitation(
        model,
        period=4.0,
        harmonics=3,
        maxiter=15,
        acceleration_limit=20.0,
        on_iteration=lambda: iterations.append(1))
    assert 1 <= len(iterations) <= 15          # once per optimiser iteration, at most maxiter
    assert excitation.condition_number < 0.1 * excitation.initial_condition_number
    traj = excitation.trajectory
    t = np.linspace(0.0, traj.period, 4001)
    q, qd, qdd = traj.evaluate(t)
    assert np.allclose(qd[0], 0.0, atol=1e-12) and np.allclose(qdd[0], 0.0, atol=1e-12)
    assert np.allclose(q[0], q[-1]) and np.allclose(qd[-1], 0.0, atol=1e-9)
    assert np.all(q >= model.lower) and np.all(q <= model.upper)
    assert np.all(np.abs(qd) <= 0.8 * model.velocity_limit * (1 + 1e-3))
    assert np.all(np.abs(qdd) <= 20.0 * (1 + 1e-3))
    assert np.all(np.abs(rnea(model, q, qd, qdd)) <= 0.8 * model.effort_limit * (1 + 1e-3))
    # velocities and accelerations are the derivatives of the positions (central differences)
    h = t[1] - t[0]
    assert np.allclose((q[2:] - q[:-2]) / (2 * h), qd[1:-1], atol=1e-4 * np.abs(qd).max())
    # the trajectory file samples the same motion for a controller
    jt = traj.to_trajectory(model.joint_names, periods=2, rate=50.0)
    assert jt.duration == pytest.approx(2 * traj.period)
    sample = jt.sample(np.array([0.37, 5.1]))
    assert np.allclose(sample[0], traj.evaluate(np.array([0.37, 5.1 - traj.period]))[0], atol=1e-5)


# -- URDF robots, and Pinocchio's regressor as an independent oracle -----------------------------
@pytest.mark.parametrize("seed", range(3))
def test_urdf_robots_regressor_and_pinocchio_span(seed):
    """
    Check URDF robots, and our columns against Pinocchio's regressor.

    On random URDF chains (odd axes, rotated inertial frames, prismatic joints, branches): Y pi
    equals rnea, the identified-parameter model round-trips, and our columns span exactly the
    space of Pinocchio's joint-torque regressor (computeJointTorqueRegressor), so the base
    parameter count equals the rank of Pinocchio's regressor.
    """
    import pinocchio as pin
    from urdf_samples import PinocchioChain, random_urdf
    rng = np.random.default_rng(40 + seed)
    sample = random_urdf(rng, n=4 + seed, branches=seed != 1)
    model = RobotModel.from_urdf(sample.text, tip_link=sample.tip)
    q, qd, qdd = sample_states(model, 60, rng)      # continuous joints: within one turn
    Y = regressor(model, q, qd, qdd)
    tau = rnea(model, q, qd, qdd)
    assert np.abs(Y @ parameter_vector(model) - tau).max() <= 1e-10 * max(1.0, np.abs(tau).max())
    rebuilt = model_with_parameters(model, parameter_vector(model))
    assert np.allclose(rnea(rebuilt, q, qd, qdd), tau, rtol=1e-10, atol=1e-10)
    chain = PinocchioChain(sample.text, sample.chain, sample.tip)
    rows = []
    for k in range(q.shape[0]):
        Yp = pin.computeJointTorqueRegressor(chain.model, chain.data, chain.q(q[k]),
                                             chain.v(qd[k]), chain.v(qdd[k]))
        rows.append(Yp[chain.v_index])
    Yp = np.concatenate(rows)
    Yp = Yp[:, np.linalg.norm(Yp, axis=0) > 0]
    rigid = model.rigid()                  # Pinocchio's regressor has no rotors or friction
    ours = regressor(rigid, q, qd, qdd).reshape(-1, parameter_layout(rigid).size)
    ours = ours[:, np.linalg.norm(ours, axis=0) > 0]
    assert _rank(np.hstack([ours, Yp])) == _rank(ours) == _rank(Yp) == base_parameters(rigid).count
