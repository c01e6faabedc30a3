"""
The simulator's steps in the core's compiled kernels (core/simulation/dynamics.py).

Oracles: the plain-Python simulator (the core's B and n_v, the straight-line Cholesky, the RK4
stepper of integrators.py and the Coulomb step of friction.py: another algorithm for the same
dynamics, CRBA and RNEA instead of the ABA), Pinocchio's ABA in the same RK4 on the robot it reads
from the package's URDF export (an independent implementation), the checked Cholesky solver (a
mass matrix that is not positive definite is a SingularityError on the compiled path too), and a
process without numba (the fallback runs the Python steps and says why, once).
"""

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from robot_dynamics_ros.core import RobotModel, SingularityError, shipped_robots, simulate
from robot_dynamics_ros.core.algorithms import compiled
from robot_dynamics_ros.core.precompile import counting_compilations
from robot_dynamics_ros.core.model.urdf_export import urdf_text
from robot_dynamics_ros.core.simulation import EffortSaturationWarning, Simulator
from robot_dynamics_ros.core.simulation.dynamics import ForwardDynamics
from robot_dynamics_ros.core.simulation.integrators import stepper
from locations import REPO
from simulated_robots import full_inertia_robot, wheel

pytest.importorskip("numba")         # (a base requirement; without it only the fallback exists)

FREE = {"joint_limits": False, "effort_limits": False}
Q0 = np.array([0.0, 0.6, -1.2, 0.3, 0.6, 0.1])
QD0 = np.array([0.5, -0.4, 0.6, 1.0, -0.8, 1.2])


def _relative(got, expected):
    return np.abs(np.asarray(got) - expected).max() / max(1.0, np.abs(expected).max())


@pytest.mark.parametrize("name", [*shipped_robots(), "full inertias"])
def test_one_compiled_rk4_step_equals_the_python_step_on_the_core_dynamics(name):
    model = full_inertia_robot()[0] if name == "full inertias" else RobotModel.named(name)
    fast, python = ForwardDynamics(model), ForwardDynamics(model, compiled=False)
    assert fast.compiled and not python.compiled and python.rk4_step is None
    rk4 = stepper("rk4", model.n)
    rng = np.random.default_rng(11)
    for _ in range(50):
        q = rng.uniform(-np.pi, np.pi, model.n).tolist()
        qd = rng.uniform(-3.0, 3.0, model.n).tolist()
        tau = (rng.uniform(-1.0, 1.0, model.n) * model.effort_limit).tolist()
        out = fast.rk4_step(q, qd, tau, 1e-3)
        expected = rk4(python, q, qd, tau, 1e-3)
        for row, reference in zip(out[:3], expected[:3]):
            assert _relative(row, reference) < 1e-12, name
        assert _relative(fast.accelerations(q, qd, tau), python(q, qd, tau)) < 1e-12


def test_simulate_as_the_docs_call_it_runs_the_kernels_and_the_python_steps_motion():
    """Moving, and falling until friction holds joints: compiled == plain Python to 1e-12."""
    model = RobotModel.named("puma560")            # rotors, viscous and Coulomb friction
    fast = Simulator(model, Q0, QD0)
    assert fast.dynamics.compiled and fast._fast_rk4 is fast.dynamics.rk4_step is not None
    assert fast._fast_coulomb is fast.dynamics.rk4_coulomb_step is not None
    runs = [simulate(model, Q0, QD0, 0.6), simulate(model, Q0, QD0, 0.6, compiled=False)]
    for field in ("q", "qd", "qdd", "tau"):
        got, expected = getattr(runs[0], field), getattr(runs[1], field)
        assert _relative(got, expected) < 1e-12, field
    held = runs[0].qd == 0.0
    assert held.sum(axis=0).max() > 200                      # a joint held for 0.2 s or more
    np.testing.assert_array_equal(held, runs[1].qd == 0.0)   # the same sticking joints
    assert np.ptp(runs[0].q, axis=0).max() > 1e-2


def test_the_rigid_puma_follows_pinocchio_aba_in_the_same_rk4():
    """Pinocchio reads the package's URDF export; its ABA in the classical RK4 at 1 kHz."""
    pin = pytest.importorskip("pinocchio")
    rigid = RobotModel.named("puma560").rigid()
    pm = pin.buildModelFromXML(urdf_text(rigid))
    pm.gravity.linear = np.asarray(rigid.gravity, dtype=float)
    data, tau = pm.createData(), np.zeros(6)
    q, v, h = Q0.copy(), QD0.copy(), 1e-3
    for _ in range(200):
        a1 = pin.aba(pm, data, q, v, tau).copy()
        v2 = v + 0.5 * h * a1
        a2 = pin.aba(pm, data, q + 0.5 * h * v, v2, tau).copy()
        v3 = v + 0.5 * h * a2
        a3 = pin.aba(pm, data, q + 0.5 * h * v2, v3, tau).copy()
        v4 = v + h * a3
        a4 = pin.aba(pm, data, q + h * v3, v4, tau).copy()
        q, v = (q + h / 6.0 * (v + 2.0 * (v2 + v3) + v4),
                v + h / 6.0 * (a1 + 2.0 * (a2 + a3) + a4))
    run = simulate(rigid, Q0, QD0, 0.2, **FREE)
    assert np.ptp(run.q, axis=0).max() > 0.05
    np.testing.assert_allclose(run.q[-1], q, rtol=0, atol=1e-10)
    np.testing.assert_allclose(run.qd[-1], v, rtol=0, atol=1e-9)


def _demo_torques(model, duration):
    """Return (q0, a controller playing the demo trajectory's RNEA torques at each step)."""
    from robot_dynamics_ros.core import rnea
    from robot_dynamics_ros.core.trajectories.demo import demo_trajectory
    traj = demo_trajectory(model, 4.0)
    table = rnea(model, *traj.sample(np.arange(round(duration / 1e-3) + 1) * 1e-3))
    return traj.positions[0], lambda t, q, qd: table[round(t / 1e-3)]


def _stepped(model, q0, qd0, duration, torque, **options):
    """Return the rows (q, qd, qdd, tau) of ``Simulator.step`` called once per step."""
    sim = Simulator(model, q0, qd0, **options)
    rows = [[], [], [], []]
    for k in range(round(duration / 1e-3)):
        tau = torque(k * 1e-3, sim.q, sim.qd) if callable(torque) else torque
        rows[0].append(sim.q)
        rows[1].append(sim.qd)
        applied, qdd = sim.step(tau, True)
        rows[2].append(qdd)
        rows[3].append(applied)
    return [np.array(r) for r in rows], sim


def test_a_run_in_one_kernel_call_is_the_step_by_step_simulator():
    """
    ``simulate``'s whole steps in machine code (``kernels.simulate_steps``) == ``Simulator.step``.

    Moving (the demo's torques from a controller), falling until friction holds joints, at rest
    with friction holding every joint, and pushed into the effort limits and the joint stops:
    the same rows and counts as one ``Simulator.step`` per step (the compiled RK4 step and
    Coulomb step called from Python), to 1e-12.
    """
    puma = RobotModel.named("puma560")
    q_demo, demo = _demo_torques(puma, 0.4)
    from robot_dynamics_ros.core import gravity_torques
    holding = 0.9 * gravity_torques(puma, q_demo)
    cases = {"moving": (q_demo, np.zeros(6), demo), "falling": (Q0, QD0, np.zeros(6)),
             "held": (q_demo, np.zeros(6), holding),
             "pushed": (Q0, QD0, lambda t, q, qd: 300.0 * np.sin(9.0 * t + np.arange(6)))}
    for label, (q0, qd0, torque) in cases.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EffortSaturationWarning)    # ("pushed": counted)
            run = simulate(puma, q0, qd0, 0.4, torque=torque)
        (q, qd, qdd, tau), sim = _stepped(puma, q0, qd0, 0.4, torque)
        for got, expected in zip((run.q, run.qd, run.qdd, run.tau), (q, qd, qdd, tau)):
            assert _relative(got[:-1], expected) < 1e-12, label
        assert _relative(run.q[-1], sim.q) < 1e-12 and _relative(run.qd[-1], sim.qd) < 1e-12
        np.testing.assert_array_equal(run.saturation_counts, sim.saturation_counts)
        np.testing.assert_array_equal(run.limit_stop_counts, sim.limit_stop_counts)
        if label == "held":          # friction holds: exactly still
            assert np.all(run.qd == 0.0) and np.all(run.q == q_demo)
        if label == "pushed":
            assert run.saturation_counts.min() > 0 and run.limit_stop_counts.max() > 0
    falling = simulate(puma, Q0, QD0, 0.4)
    assert (falling.qd == 0.0).sum(axis=0).max() > 50 and np.ptp(falling.q, axis=0).max() > 1e-2


def test_moving_and_held_runs_agree_with_pinocchio():
    """
    Moving: the rigid Puma under the demo's torques follows Pinocchio's ABA in the same RK4.

    Held: the full Puma at rest under 0.9 g(q) stays exactly still, as it must where Pinocchio's
    gravity torques leave every joint a load within its static friction (|0.1 g_i| <= F_s,i).
    """
    pin = pytest.importorskip("pinocchio")
    puma = RobotModel.named("puma560")
    rigid = puma.rigid()
    q0, demo = _demo_torques(rigid, 0.3)
    pm = pin.buildModelFromXML(urdf_text(rigid))
    pm.gravity.linear = np.asarray(rigid.gravity, dtype=float)
    data, h = pm.createData(), 1e-3
    q, v = np.array(q0, dtype=float), np.zeros(6)
    for k in range(300):
        tau = demo(k * h, q, v)

        def aba(x, w):
            return pin.aba(pm, data, x, w, tau).copy()
        a1 = aba(q, v)
        v2 = v + 0.5 * h * a1
        a2 = aba(q + 0.5 * h * v, v2)
        v3 = v + 0.5 * h * a2
        a3 = aba(q + 0.5 * h * v2, v3)
        v4 = v + h * a3
        a4 = aba(q + h * v3, v4)
        q, v = (q + h / 6.0 * (v + 2.0 * (v2 + v3) + v4),
                v + h / 6.0 * (a1 + 2.0 * (a2 + a3) + a4))
    run = simulate(rigid, q0, np.zeros(6), 0.3, torque=demo, **FREE)
    assert np.ptp(run.q, axis=0).max() > 0.05
    np.testing.assert_allclose(run.q[-1], q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(run.qd[-1], v, rtol=0, atol=1e-8)
    gravity = pin.computeGeneralizedGravity(pm, data, np.array(q0, dtype=float))
    assert np.all(np.abs(0.1 * gravity) <= puma.coulomb)
    held = simulate(puma, q0, np.zeros(6), 0.3, torque=0.9 * gravity)
    assert np.all(held.qd == 0.0) and np.all(held.q == np.asarray(q0))


def test_a_run_stops_at_a_singular_mass_matrix_or_a_bad_torque_with_the_cause():
    """The steps the kernel does not take are the Python step's, which names the cause."""
    with pytest.raises(SingularityError, match=r"mass matrix \(1 x 1\) is not positive"):
        simulate(wheel(coulomb=0.0, viscous=0.1, inertia=0.0), [0.0], [1.0], 0.01)
    from robot_dynamics_ros.core import InputError
    model = RobotModel.named("planar2")
    with pytest.raises(InputError, match=r"tau at t = 0.005 s: non-finite torque nan for "
                                         r"joint '.*'"):
        simulate(model, [0.1, 0.2], None, 0.01,
                 torque=lambda t, q, qd: np.array([np.nan if t > 0.0045 else 0.0, 0.0]))


def test_a_new_robot_compiles_nothing():
    """The kernels are generic over the model: every robot runs the same machine code."""
    compiled.kernels()      # (the extension compiled ahead of time, or numba's kernels)
    simulate(RobotModel.named("planar2"), [0.1, 0.2], None, 0.01)
    with counting_compilations() as compilations:
        for seed in (21, 22):
            model, q0, qd0 = full_inertia_robot(seed)
            simulate(model, q0, qd0, 0.01, **FREE)
            simulate(model, q0, qd0, 0.01, torque=lambda t, q, qd: -qd)
    assert compilations == []
    assert not [m for m in sys.modules if m.startswith("robot_dynamics_ros_generated_")]


def test_a_mass_matrix_that_is_not_positive_definite_is_a_singularity_error_when_compiled():
    model = wheel(coulomb=0.0, viscous=0.1, inertia=0.0)      # moves no inertia: B = 0
    assert ForwardDynamics(model).rk4_step([0.0], [1.0], [0.0], 1e-3) is None   # (refused)
    for integrator in ("rk4", "semi_implicit_euler"):
        sim = Simulator(model, [0.0], [1.0], integrator=integrator)
        assert sim.dynamics.compiled
        with pytest.raises(SingularityError, match=r"mass matrix \(1 x 1\) is not positive"):
            sim.step([0.0])
        assert sim.steps == 0 and sim.q.tolist() == [0.0]      # nothing half-done


NO_NUMBA = """
import json, warnings
import numpy as np
from robot_dynamics_ros.core import RobotModel, simulate
from robot_dynamics_ros.core.simulation import EffortSaturationWarning, Simulator
model = RobotModel.named("puma560")
q0, qd0 = [0.0, 0.6, -1.2, 0.3, 0.6, 0.1], [0.5, -0.4, 0.6, 1.0, -0.8, 1.2]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    run = simulate(model, q0, qd0, 0.05)
    Simulator(RobotModel.named("planar2"), [0.1, 0.2])
try:
    Simulator(model, q0, compiled=True)
    refused = ""
except Exception as exc:
    refused = str(exc)
print(json.dumps({"q": run.q[-1].tolist(), "warnings": [str(w.message) for w in caught],
                  "refused": refused}))
"""


def test_without_numba_the_simulator_runs_the_python_steps_and_says_why_once():
    env = dict(os.environ, ROBOT_DYNAMICS_ROS_NO_NUMBA="1")
    done = subprocess.run([sys.executable, "-c", NO_NUMBA], env=env, cwd=REPO, timeout=120,
                          capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    said = [w for w in result["warnings"] if "plain Python" in w]
    assert len(said) == 1 and "ROBOT_DYNAMICS_ROS_NO_NUMBA" in said[0]
    assert "compiled: True, but numba disabled" in result["refused"]
    expected = simulate(RobotModel.named("puma560"), Q0, QD0, 0.05, compiled=False)
    np.testing.assert_allclose(result["q"], expected.q[-1], rtol=0, atol=1e-14)


@pytest.mark.parametrize("compiled_choice", ["yes", 1, None])
def test_a_bad_compiled_choice_is_refused(compiled_choice):
    from robot_dynamics_ros.core import InputError
    with pytest.raises(InputError, match=r"compiled: .* is not one of \['auto', True, False\]"):
        Simulator(RobotModel.named("planar2"), [0.1, 0.2], compiled=compiled_choice)
