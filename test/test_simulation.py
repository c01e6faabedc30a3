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
from scipy.integrate import solve_ivp

from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.core import (InputError, RobotModel, SingularityError, forward_dynamics,
                                     gravity_torques, mass_matrix, nonlinear_effects,
                                     shipped_robots, simulate)
from robot_dynamics_ros.core.simulation import (EffortSaturationWarning, MeasurementNoise,
                                                Simulator, kinetic_energy, measured,
                                                mechanical_energy)
from robot_dynamics_ros.core.simulation.dynamics import without_coulomb
from robot_dynamics_ros.core.simulation.integrators import rk4_step, stepper
from robot_dynamics_ros.core.simulation.linear_solve import dynamics_solver

FREE = {"joint_limits": False, "effort_limits": False}


def full_inertia_robot(seed=3):
    """Make a random 6-joint arm with full (rotated) inertia tensors, rotors, mixed joints."""
    rng = np.random.default_rng(seed)
    model = RobotModel.from_dict(random_robot_dict(6, rng, convention="modified",
                                                   with_motors=True))
    q0, qd0, _ = random_state(model, rng)
    return model, q0, qd0


def wheel(coulomb=2.0, viscous=0.0, inertia=0.5, effort=100.0, lower=-100.0, upper=100.0):
    """One revolute joint about the vertical axis (gravity along it: no gravity torque)."""
    return RobotModel.from_dict({
        "name": "wheel", "dh_convention": "standard", "gravity": [0.0, 0.0, -9.81],
        "joints": [{"name": "spin", "type": "revolute",
                    "dh": {"a": 0.0, "alpha": 0.0, "d": 0.0, "theta": 0.0},
                    "limits": {"lower": lower, "upper": upper, "velocity": 10.0, "effort": effort},
                    "link": {"mass": 1.0, "com": [0.0, 0.0, 0.0],
                             "inertia": {"ixx": inertia, "iyy": inertia, "izz": inertia}},
                    "friction": {"viscous": viscous, "coulomb": coulomb}}]})


def reference_run(model, q0, qd0, duration, tau=None):
    """Integrate with DOP853 at rtol 1e-12 on the core's forward_dynamics (no friction)."""
    n = model.n
    tau = np.zeros(n) if tau is None else tau

    def rhs(t, x):
        return np.concatenate([x[n:], forward_dynamics(model, x[:n], x[n:], tau)])
    sol = solve_ivp(rhs, (0.0, duration), np.concatenate([q0, qd0]), method="DOP853",
                    rtol=1e-12, atol=1e-12)
    assert sol.success
    return sol.y[:n, -1], sol.y[n:, -1]


# --------------------------------------------------------------------------------- building blocks
def test_dynamics_solver_solves_the_system():
    rng = np.random.default_rng(0)
    for n in (1, 2, 6, 7):
        A = rng.normal(size=(n, n))
        B = A @ A.T + n * np.eye(n)
        h, tau = rng.normal(size=(2, n))
        terms = tuple(tuple(B[i, :i + 1]) for i in range(n)) + (tuple(h),)     # lower rows
        x = dynamics_solver(n)(terms, tau.tolist())
        np.testing.assert_allclose(x, np.linalg.solve(B, tau - h), rtol=1e-12, atol=1e-12)
    with pytest.raises(SingularityError, match="not positive definite"):
        dynamics_solver(2)(((1.0,), (1.0, 1.0), (0.0, 0.0)), [1.0, 1.0])
    with pytest.raises(SingularityError, match="not positive definite"):
        dynamics_solver(2)(((1.0,), (2.0, 1.0), (0.0, 0.0)), [1.0, 1.0])


@pytest.mark.parametrize("seed", range(6))
def test_the_coulomb_step_satisfies_the_set_valued_friction_law(seed):
    """Optimality of the implicit step: B (v - v*) / dt = -F_s s, s in Sgn(v) (KKT)."""
    rng = np.random.default_rng(seed)
    model, _, _ = full_inertia_robot(seed)
    spec = model.to_dict()
    for joint in spec["joints"]:
        joint["friction"] = {"viscous": 0.0, "coulomb": float(rng.uniform(0.5, 5.0))}
    model = RobotModel.from_dict(spec)
    sim = Simulator(model, np.zeros(6), joint_limits=False)
    q = rng.uniform(-1.0, 1.0, 6)
    B = mass_matrix(model, q)
    terms = tuple(tuple(B[i, :i + 1]) for i in range(6)) + ((0.0,) * 6,)
    dt = 0.01
    # velocities of every size: some joints stick, some slide, some would reverse
    target = rng.normal(size=6) * dt * model.coulomb / np.diag(B) * rng.choice([0.3, 3.0], 6)
    v = np.array(sim.coulomb(terms, target.tolist(), dt))
    force = B @ (v - target) / dt
    moving = v != 0.0
    np.testing.assert_allclose(force[moving], -model.coulomb[moving] * np.sign(v[moving]),
                               rtol=1e-9, atol=1e-9)
    assert np.all(np.abs(force[~moving]) <= model.coulomb[~moving] * (1 + 1e-9))
    if seed == 0:                                   # all sliding the same way: the fast path
        big = np.full(6, 10.0)
        v = np.array(sim.coulomb(terms, big.tolist(), dt))
        np.testing.assert_allclose(v, big - dt * np.linalg.solve(B, model.coulomb), rtol=1e-12)


def test_straight_line_rk4_equals_the_textbook_form():
    def f(q, qd, tau):
        return [-math.sin(q[0]) * qd[1] + tau[0], q[0] * q[1] - qd[0] ** 2 + tau[1],
                -q[2] - 0.1 * qd[2]]
    q, qd, tau = [0.3, -0.2, 1.0], [0.5, 0.1, -2.0], [0.7, -0.4, 0.0]
    for h in (1e-3, 0.05):
        fast, textbook = stepper("rk4", 3)(f, q, qd, tau, h), rk4_step(f, q, qd, tau, h)
        for a, b in zip(fast[:3], textbook[:3]):
            np.testing.assert_allclose(a, b, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("name", shipped_robots())
def test_forward_dynamics_of_the_simulator_agree_with_the_core(name):
    model = RobotModel.named(name)
    rng = np.random.default_rng(1)
    q, qd, _ = random_state(model, rng)
    tau = rng.uniform(-1, 1, model.n) * model.effort_limit
    sims = [Simulator(model, q, qd, implementation=impl) for impl in ("generated", "core")]
    # oracle: the core's B and n of the frictionless model, viscous friction added by hand
    rhs = tau - nonlinear_effects(model.without_friction(), q, qd) - model.viscous * qd
    expected = np.linalg.solve(mass_matrix(model, q), rhs)
    for sim in sims:
        np.testing.assert_allclose(sim.dynamics(q.tolist(), qd.tolist(), tau.tolist()), expected,
                                   rtol=1e-9, atol=1e-9 * max(1.0, np.abs(expected).max()))
        # with Coulomb friction F_s sgn(qd): the core's forward dynamics (seed 002, 7.115)
        np.testing.assert_allclose(sim.acceleration(np.clip(tau, -model.effort_limit,
                                                            model.effort_limit)),
                                   forward_dynamics(model, q, qd, tau), rtol=1e-9,
                                   atol=1e-9 * max(1.0, np.abs(expected).max()))


# --------------------------------------------------------------------------------- accuracy
def test_rk4_agrees_with_dop853_to_1e_6_after_one_second_on_full_inertias():
    model, q0, qd0 = full_inertia_robot()
    q_ref, qd_ref = reference_run(model, q0, qd0, 1.0)
    run = simulate(model, q0, qd0, 1.0, dt=1e-3, **FREE)
    assert run.t[-1] == pytest.approx(1.0)
    assert np.abs(run.q[-1] - q_ref).max() < 1e-6
    assert np.abs(run.qd[-1] - qd_ref).max() < 1e-5


def test_convergence_orders_rk4_four_semi_implicit_euler_one():
    model, q0, qd0 = full_inertia_robot()
    q_ref, _ = reference_run(model, q0, qd0, 0.5)
    errors = {}
    for integrator in ("rk4", "semi_implicit_euler"):
        errors[integrator] = [
            np.abs(simulate(model, q0, qd0, 0.5, dt, integrator=integrator, **FREE).q[-1]
                   - q_ref).max() for dt in (1e-2, 5e-3)]
    assert 12.0 < errors["rk4"][0] / errors["rk4"][1] < 20.0           # 2^4 = 16
    assert 1.6 < errors["semi_implicit_euler"][0] / errors["semi_implicit_euler"][1] < 2.4


def test_solve_ivp_integrator_is_the_reference():
    model, q0, qd0 = full_inertia_robot()
    q_ref, qd_ref = reference_run(model, q0, qd0, 0.02)
    run = simulate(model, q0, qd0, 0.02, dt=1e-3, integrator="solve_ivp",
                   implementation="core", **FREE)
    np.testing.assert_allclose(run.q[-1], q_ref, atol=1e-11)
    np.testing.assert_allclose(run.qd[-1], qd_ref, atol=1e-9)


@pytest.mark.parametrize("name", shipped_robots())
def test_unforced_frictionless_rk4_conserves_energy(name):
    model = RobotModel.named(name).without_friction()
    rng = np.random.default_rng(1)
    q0, qd0 = 0.5 * rng.uniform(model.lower, model.upper), rng.uniform(-1.0, 1.0, model.n)
    run = simulate(model, q0, qd0, 1.0, **FREE)
    energy = mechanical_energy(model, run.q, run.qd)
    scale = max(1.0, kinetic_energy(model, run.q, run.qd).max())
    assert np.ptp(energy) < 1e-6 * scale
    # the motion is not trivial: energy moves between kinetic and potential
    assert np.ptp(kinetic_energy(model, run.q, run.qd)) > 1e-3 * scale


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


# --------------------------------------------------------------------------------- friction
def test_coulomb_friction_stops_a_sliding_joint_where_the_closed_form_says(integrator="rk4"):
    model = wheel(coulomb=2.0, inertia=0.5)
    v0 = 3.0
    for integrator in ("rk4", "semi_implicit_euler"):
        run = simulate(model, [0.0], [v0], 1.5, integrator=integrator)
        qd = run.qd[:, 0]
        assert (qd >= 0.0).all()                                 # never reverses: no chatter
        assert np.all(np.diff(qd) <= 1e-15)                      # slows down monotonically
        # constant deceleration F_s / I = 4 until rest at t = 0.75 s, q = 1.125 rad; then stuck
        stop = run.t >= 0.75 + 1e-3
        assert np.all(qd[stop] == 0.0) and np.all(run.q[stop, 0] == run.q[-1, 0])
        assert run.q[-1, 0] == pytest.approx(0.5 * v0 ** 2 / 4.0, abs=2e-3)
        np.testing.assert_allclose(qd[~stop], np.maximum(v0 - 4.0 * run.t[~stop], 0.0),
                                   atol=5e-3)


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit_euler", "solve_ivp"])
def test_coulomb_friction_sticks_below_breakaway_and_slides_above(integrator):
    model = wheel(coulomb=2.0)
    stuck = simulate(model, [0.0], [0.0], 0.2, torque=[1.9], integrator=integrator)
    assert np.all(stuck.qd == 0.0) and np.all(stuck.q == 0.0)       # no creep at all
    sliding = simulate(model, [0.0], [0.0], 1.0, torque=[3.0], integrator=integrator)
    # (3 - 2) / I = 2 rad/s^2 from rest: q = t^2, qd = 2 t
    assert sliding.q[-1, 0] == pytest.approx(1.0, abs=3e-3)
    assert sliding.qd[-1, 0] == pytest.approx(2.0, abs=1e-9)


def test_puma_with_friction_neither_chatters_nor_blows_up():
    model = RobotModel.named("puma560")
    q0 = np.array([0.0, 0.7, -1.2, 0.0, 0.5, 0.0])
    g0 = gravity_torques(model, q0)
    # holding torque plus a small push below every joint's Coulomb level, then released

    def torque(t, q, qd):
        return gravity_torques(model, q) + 0.3 * model.coulomb * (t < 0.5)
    run = simulate(model, q0, np.full(6, 0.5), 1.0, torque=torque)
    assert np.isfinite(run.q).all() and np.abs(run.qd).max() <= 0.5 + 1e-9
    late = run.qd[run.t > 0.7]
    sign_flips = np.sum(np.diff(np.sign(late), axis=0) != 0, axis=0)
    assert sign_flips.max() <= 1
    assert g0.shape == (6,)
    # released while moving, under gravity compensation: friction stops every joint for good
    assert np.all(run.qd[-100:] == 0.0)


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


# --------------------------------------------------------------------------------- noise
def test_measurement_noise_has_the_requested_statistics_and_is_reproducible():
    model = RobotModel.named("planar2")
    run = simulate(model, [0.1, 0.2], [0.0, 0.0], 5.0)
    noisy = measured(run, position=1e-3, velocity=[1e-2, 2e-2], effort=0.5, seed=7)
    again = measured(run, position=1e-3, velocity=[1e-2, 2e-2], effort=0.5, seed=7)
    np.testing.assert_array_equal(noisy.q, again.q)
    for got, exact, std in ((noisy.q, run.q, [1e-3, 1e-3]), (noisy.qd, run.qd, [1e-2, 2e-2]),
                            (noisy.tau, run.tau, [0.5, 0.5])):
        err = got - exact
        np.testing.assert_allclose(err.std(axis=0), std, rtol=0.05)
        assert np.all(np.abs(err.mean(axis=0)) < 4 * np.array(std) / np.sqrt(len(err)))
    np.testing.assert_array_equal(noisy.qdd, run.qdd)
    with pytest.raises(InputError, match="velocity noise"):
        MeasurementNoise(2, velocity=-1.0)


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
    ({"implementation": "fast"}, "implementation: 'fast' is not one of"),
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


def test_the_one_call_accelerations_equal_the_terms_then_the_solve():
    """The generated accelerations are solve(terms(q, qd), tau), bit for bit, on every robot."""
    rng = np.random.default_rng(5)
    models = [RobotModel.named(name) for name in shipped_robots()]
    models += [full_inertia_robot()[0], wheel()]
    for model in models:
        dynamics = Simulator(model, np.zeros(model.n), joint_limits=False,
                             compiled=False).dynamics
        assert dynamics.accelerations is not None
        for _ in range(20):
            q, qd, tau = (rng.uniform(-2.0, 2.0, (3, model.n))).tolist()
            assert list(dynamics.accelerations(q, qd, tau)) == dynamics(q, qd, tau), model.name
    core = Simulator(RobotModel.named("puma560"), np.zeros(6), implementation="core")
    assert core.dynamics.accelerations is None


def test_a_mass_matrix_that_is_not_positive_definite_is_reported_by_the_simulator():
    model = wheel(coulomb=0.0, inertia=0.0)          # the joint moves no inertia: B = 0
    for integrator in ("rk4", "semi_implicit_euler"):
        with pytest.raises(SingularityError, match="not positive definite"):
            simulate(model, [0.0], [1.0], 0.01, integrator=integrator)
