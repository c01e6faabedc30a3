"""
The discrete momentum residual against closed forms, exact motion and simulated collisions.

Oracles: a static arm under a constant or stepped external torque (the residual is then
tau_ext (1 - exp(-k_i (t - t_s))) at the sample times, for any sampling: the module docstring's
eq. 3 is exact there); motion integrated by scipy's DOP853 at rtol 1e-12 without contact, where
the residual is bounded by the trapezoidal rule's error h^2 / 12 max |d^2 (tau + beta) / dt^2|
measured on the same motion; the simulator with a step wrench J^T F on the tool during tracking;
60 s of free motion of the shipped Puma with its friction known; the block form against the
sample-by-sample form.
"""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from observer_cases import FREE_MOTION, GENTLE, puma, push_wrench, track
from robot_dynamics_ros.core import InputError, forward_dynamics, gravity_torques, momentum_terms
from robot_dynamics_ros.core.observer import (ContactDetector, MomentumObserver, ObserverOptions,
                                              detection_latency)
from robot_dynamics_ros.core.simulation.dynamics import without_coulomb

GAINS = (50.0, 40.0, 60.0, 80.0, 70.0, 90.0)


def irregular_times(rng, count, low=0.5e-3, high=2e-3):
    return np.concatenate([[0.0], np.cumsum(rng.uniform(low, high, count - 1))])


def static_run(model, options, q, tau_ext, times, step_at=0.0):
    """Feed a static arm whose motors hold g(q) - tau_ext from ``step_at`` on; return r (N, n)."""
    observer = MomentumObserver(model, options)
    g = gravity_torques(model, q)
    zero = [0.0] * model.n
    rows = []
    for t in times:
        tau = g - tau_ext if t > step_at else g          # (interval timing: applied up to t)
        rows.append(observer.update(float(t), q.tolist(), zero, tau.tolist()))
    return np.array(rows)


def test_a_constant_external_torque_on_a_static_arm_is_the_steady_state(rng):
    """Friction not subtracted: r_k = tau_ext (1 - exp(-k_i (t_k - t_0))), irregular stamps."""
    model = puma()
    q = np.array([0.2, 0.5, -0.7, 0.3, 0.4, 0.1])
    tau_ext = np.array([12.0, -30.0, 8.0, 2.5, -1.5, 0.7])
    times = irregular_times(rng, 400)
    options = ObserverOptions(GAINS, effort_timing="interval", friction=False)
    r = static_run(model, options, q, tau_ext, times)
    expected = tau_ext * (1.0 - np.exp(-np.outer(times, GAINS)))
    np.testing.assert_allclose(r, expected, rtol=1e-12, atol=1e-12 * 30.0)
    assert np.abs(r[-1] - tau_ext).max() < 1e-6 * 30.0          # steady state reached


def test_a_step_at_a_sample_instant_gives_the_continuous_response_at_every_sample(rng):
    model = puma()
    q = np.array([-0.4, 0.9, -1.2, 0.0, 0.8, -0.5])
    tau_ext = np.array([-6.0, 14.0, -3.0, 0.8, 1.2, -0.4])
    times = irregular_times(rng, 300, 0.2e-3, 5e-3)
    t_s = float(times[100])
    options = ObserverOptions(GAINS, effort_timing="interval", friction=False)
    r = static_run(model, options, q, tau_ext, times, step_at=t_s)
    elapsed = np.maximum(times - t_s, 0.0)
    expected = tau_ext * (1.0 - np.exp(-np.outer(elapsed, GAINS)))
    np.testing.assert_allclose(r, expected, rtol=1e-12, atol=1e-12 * 14.0)


def test_a_static_arm_hides_external_torques_below_static_friction(rng):
    """At rest Coulomb friction is anywhere in [-F_s, F_s]: the residual is the excess."""
    model = puma()
    q = np.array([0.2, 0.5, -0.7, 0.3, 0.4, 0.1])
    fs = model.coulomb
    tau_ext = np.array([0.5, 1.5, 0.5, 1.5, 0.5, 1.5]) * fs * np.array([1, -1, -1, 1, 1, -1])
    r = static_run(model, ObserverOptions(GAINS, effort_timing="interval"), q, tau_ext,
                   irregular_times(rng, 400))
    excess = np.sign(tau_ext) * np.maximum(np.abs(tau_ext) - fs, 0.0)
    np.testing.assert_allclose(r[-1], excess, rtol=1e-6, atol=1e-9)


def test_the_residual_of_exact_motion_without_contact_is_within_the_quadrature_error(rng):
    """
    DOP853 motion (no Coulomb friction: smooth), torque sampled at irregular stamps.

    The bound: the trapezoidal rule's h^2 / 12 max |(tau + beta)''| (unit static gain: the
    residual is a weighted mean of the intervals' errors), plus the integrator's tolerance.
    """
    model = without_coulomb(puma())
    q0 = np.array([0.1, 0.4, -0.8, 0.2, 0.6, 0.0])
    hold = gravity_torques(model, q0)
    amplitude = np.array([20.0, 25.0, 10.0, 2.0, 2.0, 1.0])
    omega = np.array([3.0, 2.0, 4.0, 5.0, 6.0, 7.0])

    def torque(t):
        return hold + amplitude * np.sin(omega * np.asarray(t)[..., None])

    def rhs(t, y):
        return np.concatenate([y[6:], forward_dynamics(model, y[:6], y[6:], torque(t))])

    duration = 0.6
    sol = solve_ivp(rhs, (0.0, duration), np.concatenate([q0, np.zeros(6)]), method="DOP853",
                    rtol=1e-12, atol=1e-12, dense_output=True)
    times = irregular_times(rng, 800, 0.3e-3, 1.2e-3)
    times = times[times <= duration]
    states = sol.sol(times).T
    observer = MomentumObserver(model, ObserverOptions(GAINS, effort_timing="sample"))
    r, accepted = observer.update_many(times, states[:, :6], states[:, 6:], torque(times))
    assert accepted.all()
    # (tau + beta)'' on a fine grid, by second differences
    fine = np.linspace(0.0, duration, 6001)
    x = sol.sol(fine).T
    p, ctq = momentum_terms(model, x[:, :6], x[:, 6:])
    total = torque(fine) + ctq - gravity_torques(model, x[:, :6]) - model.viscous * x[:, 6:]
    step = fine[1] - fine[0]
    curvature = np.abs(np.diff(total, 2, axis=0)).max(axis=0) / step ** 2
    h = np.diff(times).max()
    bound = h ** 2 / 12.0 * curvature + 1e-9 * (1.0 + np.abs(p).max()) / np.diff(times).min()
    assert np.all(np.abs(r).max(axis=0) <= 1.05 * bound)
    assert np.abs(r).max() < 1e-3             # (what the bound is here: ~1e-4 N m)


def test_a_block_equals_sample_by_sample_with_refused_stamps_and_a_gap(rng):
    model = puma()
    options = ObserverOptions(GAINS, static_velocity=0.01, max_interval=0.05)
    run = track(model, FREE_MOTION, 0.3)
    times = run.t.copy()
    times[40] = times[39]                       # not after the previous one: refused
    times[100:] += 0.1                          # a gap longer than max_interval: a restart
    block = MomentumObserver(model, options)
    r_block, accepted = block.update_many(times, run.q, run.qd, run.tau)
    single = MomentumObserver(model, options)
    for k, t in enumerate(times):
        if not accepted[k]:
            with pytest.raises(InputError, match="not after"):
                single.update(float(t), run.q[k].tolist(), run.qd[k].tolist(),
                              run.tau[k].tolist())
            assert np.isnan(r_block[k]).all()
            continue
        r = single.update(float(t), run.q[k].tolist(), run.qd[k].tolist(), run.tau[k].tolist())
        np.testing.assert_allclose(r_block[k], r, rtol=1e-12, atol=1e-12)
    assert accepted.sum() == len(times) - 1
    assert block.restarts == single.restarts == 1
    assert not np.any(r_block[100])             # restarted: r = 0 at the sample after the gap


def test_options_are_checked():
    model = puma()
    for bad, match in ((ObserverOptions((1.0,) * 5), "gains"),
                       (ObserverOptions((1.0, 1.0, 1.0, 1.0, 1.0, -1.0)), "gains"),
                       (ObserverOptions(50.0, effort_timing="held"), "effort_timing"),
                       (ObserverOptions(50.0, static_velocity=-1.0), "static_velocity"),
                       (ObserverOptions(50.0, max_interval=0.0), "max_interval")):
        with pytest.raises(InputError, match=match):
            MomentumObserver(model, bad)
    assert MomentumObserver(model, ObserverOptions(50.0)).options.gains == (50.0,) * 6


# ------------------------------------------------------------------ simulated collisions
K = 50.0
WRENCH_ON = 0.5


@pytest.fixture(scope="module")
def collision():
    """GENTLE tracking with the push from WRENCH_ON; the residual and contact of every step."""
    model = puma()
    assert np.all(GENTLE.sample(WRENCH_ON)[1] > 0.0)
    run = track(model, GENTLE, WRENCH_ON + 0.3, wrench=push_wrench(model, WRENCH_ON),
                wrench_on=WRENCH_ON)
    observer = MomentumObserver(model, ObserverOptions((K,) * 6, effort_timing="interval",
                                                       static_velocity=0.01))
    observer.update(run.t0, run.q0.tolist(), run.qd0.tolist(), [0.0] * 6)
    r, accepted = observer.update_many(run.t, run.q, run.qd, run.tau)
    assert accepted.all()
    detector = ContactDetector(0.05 * model.effort_limit)
    return model, run, r, detector.update_many(r), detector


def test_a_step_wrench_during_tracking_is_estimated_within_2_percent_after_5_over_k(collision):
    model, run, r, _, _ = collision
    assert not (run.qd[run.t > WRENCH_ON] == 0.0).any()        # every joint slid throughout
    k = np.searchsorted(run.t, WRENCH_ON + 5.0 / K - 1e-9)
    applied = run.external[k]
    assert np.abs(r[k] - applied).max() <= 0.02 * np.abs(applied).max()
    # and the residual is the first-order filter of the applied torque (eq. 1) to 1e-5
    a = math.exp(-K * 1e-3)
    ideal, filtered = np.zeros(6), []
    for external in run.external:
        ideal = a * ideal + (1.0 - a) * external
        filtered.append(ideal)
    assert np.abs(r - np.array(filtered)).max() <= 1e-5 * np.abs(applied).max()


def test_contact_rises_within_the_stated_latency_and_not_before(collision):
    model, run, r, contact, detector = collision
    assert not contact[run.t <= WRENCH_ON].any()
    first = run.t[np.argmax(contact)]
    step = np.abs(run.external[np.searchsorted(run.t, WRENCH_ON, side="right")])
    latency = min(detection_latency(s, h, K, 1e-3) for s, h in zip(step, detector.thresholds))
    assert first - WRENCH_ON <= latency + 1e-9
    assert latency < 0.02                            # (ln 2 / K + 1 ms: steps of 2x threshold)
    assert contact[run.t >= first].all()             # held while the wrench lasts


def test_no_contact_in_60_s_of_free_motion_with_the_friction_known():
    """FREE_MOTION: joints reverse, stick and break away; thresholds 5 % of the effort limits."""
    model = puma()
    run = track(model, FREE_MOTION, 60.0)
    stuck = (run.qd == 0.0).sum(axis=0)
    assert (stuck > 0).sum() >= 4             # the motion did stick (the band was exercised)
    observer = MomentumObserver(model, ObserverOptions((K,) * 6, effort_timing="interval",
                                                       static_velocity=0.01))
    observer.update(run.t0, run.q0.tolist(), run.qd0.tolist(), [0.0] * 6)
    r, _ = observer.update_many(run.t, run.q, run.qd, run.tau)
    detector = ContactDetector(0.05 * model.effort_limit)
    assert not detector.update_many(r).any()
    # far below the thresholds: what is left is O(h) of the simulator's friction step while a
    # joint sticks (0.03 N m at 1 kHz), O(h^2) of the quadrature otherwise
    assert np.all(np.abs(r).max(axis=0) < 0.1 * np.array(detector.thresholds))


def test_no_contact_in_free_motion_with_the_further_friction_terms_known():
    """
    A Puma with F_v2 qd|qd| and F_l |g(q)| sgn(qd) too: its residual stays small as before.

    The observer subtracts the whole law (F_v2 in beta, F_l |g| in the Coulomb level); one
    that took the robot without the further terms would see them as external torques.
    """
    from further_friction import with_further_friction
    model = with_further_friction(puma(), 2.0, 0.1)
    run = track(model, FREE_MOTION, 10.0)
    thresholds = 0.05 * model.effort_limit
    residuals = []
    for known in (model, puma()):
        observer = MomentumObserver(known, ObserverOptions((K,) * 6, effort_timing="interval",
                                                           static_velocity=0.01))
        observer.update(run.t0, run.q0.tolist(), run.qd0.tolist(), [0.0] * 6)
        residuals.append(np.abs(observer.update_many(run.t, run.q, run.qd, run.tau)[0]))
    assert np.all(residuals[0].max(axis=0) < 0.1 * thresholds)
    assert np.any(residuals[1].max(axis=0) > 0.5 * thresholds)
