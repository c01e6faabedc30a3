"""Stick-slip Coulomb friction: the set-valued law, stopping and breakaway, no chatter."""

import numpy as np
import pytest

from robot_dynamics_ros.core import RobotModel, gravity_torques, mass_matrix, simulate
from robot_dynamics_ros.core.simulation import Simulator
from simulated_robots import full_inertia_robot, wheel


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


@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_coulomb_step_satisfies_the_law_and_equals_the_python_one(seed):
    """
    algorithms/stick_slip.py (compiled by numba in the core's kernels) against friction.py.

    The same optimality conditions of the set-valued law as above, on random full mass matrices
    and velocities where some joints stick, some slide and some would reverse; the same
    velocities and the same sticking joints as the plain-Python step, from the same warm start.
    """
    pytest.importorskip("numba")
    from robot_dynamics_ros.core.algorithms import compiled
    from robot_dynamics_ros.core.algorithms.stick_slip import (N_FRICTION_INDEX_ROWS,
                                                               N_FRICTION_ROWS)
    rng = np.random.default_rng(100 + seed)
    model, _, _ = full_inertia_robot(seed)
    spec = model.to_dict()
    for joint in spec["joints"]:
        joint["friction"] = {"viscous": 0.0, "coulomb": float(rng.uniform(0.5, 5.0))}
    spec["joints"][seed % 6]["friction"]["coulomb"] = 0.0       # one joint without friction
    model = RobotModel.from_dict(spec)
    kernels = compiled.jit_kernels()     # (coulomb_velocity: not an entry point)
    python = Simulator(model, np.zeros(6), joint_limits=False, compiled=False).coulomb
    dt = 0.01
    for trial in range(20):
        B = mass_matrix(model, rng.uniform(-1.0, 1.0, 6))
        terms = tuple(tuple(B[i, :i + 1]) for i in range(6)) + ((0.0,) * 6,)
        target = rng.normal(size=6) * dt * np.maximum(model.coulomb, 1.0) / np.diag(B) * \
            rng.choice([0.3, 3.0], 6)
        target[rng.uniform(size=6) < 0.2] = 0.0                  # some joints start at rest
        stuck = python._stuck.copy()
        v = kernels.coulomb_velocity(B, target, dt * model.coulomb, stuck,
                                     np.full((6 + N_FRICTION_ROWS, 6), np.nan),
                                     np.zeros((N_FRICTION_INDEX_ROWS, 6), dtype=np.int64))
        want = np.array(python(terms, target.tolist(), dt))
        np.testing.assert_allclose(v, want, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(stuck, python._stuck)
        force = B @ (v - target) / dt
        moving = v != 0.0
        np.testing.assert_allclose(force[moving], -model.coulomb[moving] * np.sign(v[moving]),
                                   rtol=1e-9, atol=1e-9)
        assert np.all(np.abs(force[~moving]) <= model.coulomb[~moving] * (1 + 1e-9))
