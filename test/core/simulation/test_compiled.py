"""
The simulator's forward dynamics compiled by numba (core/simulation/compiled.py).

Oracles: the same generated code run by CPython (compiled == Python to 1e-13 on every shipped
robot and a random robot with full inertias), the checked Cholesky solver (a mass matrix that is
not positive definite is a SingularityError on the compiled path too), numba's own cache
statistics (a fresh process loads the machine code instead of compiling), and an import of numba
made to fail (the fallback runs the same numbers and says why, once).
"""

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from robot_dynamics_ros.core import InputError, RobotModel, SingularityError, shipped_robots
from robot_dynamics_ros.core.simulation import Simulator, compiled, simulate
from robot_dynamics_ros.core.simulation.compiled import CompilationWarning
from robot_dynamics_ros.core.simulation.dynamics import without_coulomb
from robot_dynamics_ros.core.simulation.generated_terms import generated_accelerations
from robot_dynamics_ros.core.simulation.integrators import stepper
from locations import REPO
from simulated_robots import full_inertia_robot, terms, wheel

pytest.importorskip("numba")         # (a base requirement; without it only the fallback exists)

FREE = {"joint_limits": False, "effort_limits": False}


@pytest.fixture
def no_numba(monkeypatch):
    """Make ``import numba`` fail (as if it were not installed) and forget earlier warnings."""
    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.setattr(compiled, "_WARNED", set())


def _close(got, expected):
    assert type(got) is tuple and all(type(x) is float for x in got)
    np.testing.assert_allclose(got, expected, rtol=1e-13,
                               atol=1e-13 * max(1.0, np.abs(expected).max()))


@pytest.mark.parametrize("name", [*shipped_robots(), "full inertias"])
def test_compiled_accelerations_and_rk4_step_equal_the_python_ones(name):
    model = full_inertia_robot()[0] if name == "full inertias" else RobotModel.named(name)
    python = generated_accelerations(without_coulomb(model), terms(model))
    machine = compiled.compiled_dynamics(without_coulomb(model), terms(model))
    assert machine is not None and machine.accelerations is not python
    python_rk4 = stepper("rk4", model.n)
    rng = np.random.default_rng(11)
    for _ in range(200):
        q = rng.uniform(-np.pi, np.pi, model.n)
        qd = rng.uniform(-3.0, 3.0, model.n)
        tau = rng.uniform(-1.0, 1.0, model.n) * model.effort_limit
        args = tuple(tuple(v.tolist()) for v in (q, qd, tau))
        _close(machine.accelerations(*args), python(*args))
        # one RK4 step in machine code == the Python stepper on the Python accelerations
        got, expected = machine.rk4_step(*args, 1e-3), python_rk4(python, *args, 1e-3)
        for part, reference in zip(got, expected[:3]):
            _close(part, reference)


def test_the_simulator_compiles_by_default_and_runs_the_same_motion():
    model = RobotModel.named("puma560")            # rotors, viscous and Coulomb friction
    q0 = np.array([0.0, 0.6, -1.2, 0.3, 0.6, 0.1])
    qd0 = np.array([0.5, -0.4, 0.6, 1.0, -0.8, 1.2])
    fast = Simulator(model, q0, qd0, terms=terms(model))
    assert fast.dynamics.compiled and fast._fast_rk4 is fast.dynamics.rk4_step is not None
    assert not Simulator(model, q0, qd0, compiled=False, terms=terms(model)).dynamics.compiled
    runs = [simulate(model, q0, qd0, 0.3, compiled=choice, terms=terms(model))
            for choice in (True, False)]
    for field in ("q", "qd", "qdd", "tau"):
        np.testing.assert_allclose(getattr(runs[0], field), getattr(runs[1], field),
                                   rtol=1e-11, atol=1e-11)
    assert runs[0].q.shape == (301, 6) and np.ptp(runs[0].q, axis=0).min() > 1e-3


def test_a_mass_matrix_that_is_not_positive_definite_is_a_singularity_error_when_compiled():
    model = wheel(coulomb=0.0, viscous=0.1, inertia=0.0)      # moves no inertia: B = 0
    machine = compiled.compiled_dynamics(model, terms(model))
    # numba: sqrt of a zero or negative pivot is no exception, the result is not finite
    assert not np.isfinite(machine.accelerations((0.0,), (1.0,), (0.0,))).all()
    assert not np.isfinite(machine.rk4_step((0.0,), (1.0,), (0.0,), 1e-3)[1]).all()
    for integrator in ("rk4", "semi_implicit_euler"):
        sim = Simulator(model, [0.0], [1.0], integrator=integrator, terms=terms(model))
        assert sim.dynamics.compiled
        with pytest.raises(SingularityError, match=r"mass matrix \(1 x 1\) is not positive"):
            sim.step([0.0])
        assert sim.steps == 0 and sim.q.tolist() == [0.0]      # nothing half-done


def test_without_numba_the_simulator_runs_as_python_and_says_why_once(no_numba):
    model, q0, qd0 = full_inertia_robot(seed=4)     # (a model no other test compiled)
    with pytest.warns(CompilationWarning, match=r"plain Python.*numba is not importable"):
        sim = Simulator(model, q0, qd0, terms=terms(model), **FREE)
    assert not sim.dynamics.compiled
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompilationWarning)      # said once only
        other_model = full_inertia_robot(seed=5)[0]
        other = Simulator(other_model, q0, qd0, terms=terms(other_model), **FREE)
    assert not other.dynamics.compiled
    for _ in range(50):
        sim.step()
    # the same numbers as the Python path chosen on purpose
    expected = simulate(model, q0, qd0, 0.05, compiled=False, terms=terms(model), **FREE)
    np.testing.assert_array_equal(sim.q, expected.q[-1])
    np.testing.assert_array_equal(sim.qd, expected.qd[-1])
    with pytest.raises(InputError, match="compiled: True, but numba is not importable"):
        third = full_inertia_robot(seed=6)[0]
        Simulator(third, q0, qd0, compiled=True, terms=terms(third), **FREE)


def test_a_failed_compilation_falls_back_with_a_warning_naming_the_robot(monkeypatch):
    import numba

    def broken(*args, **kwargs):
        raise RuntimeError("LLVM is unhappy")
    monkeypatch.setattr(numba, "njit", broken)
    model, q0, qd0 = full_inertia_robot(seed=7)
    with pytest.warns(CompilationWarning, match=rf"'{model.name}'.*LLVM is unhappy"):
        sim = Simulator(model, q0, qd0, terms=terms(model), **FREE)
    assert not sim.dynamics.compiled
    sim.step()
    assert np.isfinite(sim.q).all()


@pytest.mark.parametrize("compiled_choice", ["yes", 1, None])
def test_a_bad_compiled_choice_is_refused(compiled_choice):
    with pytest.raises(InputError, match=r"compiled: .* is not one of \['auto', True, False\]"):
        Simulator(RobotModel.named("planar2"), [0.1, 0.2], compiled=compiled_choice)


LOADER = """
import json, sys
from robot_dynamics_ros.core import RobotModel
from robot_dynamics_ros.core.simulation import Simulator
from robot_dynamics_ros.implementations import simulation_terms
model = RobotModel.named(sys.argv[1])
sim = Simulator(model, [0.1] * model.n, terms=simulation_terms(model))
stats = sim.dynamics.accelerations.stats
print(json.dumps({"compiled": sim.dynamics.compiled, "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}))
"""


def _load_in_processes(name, cache, count):
    env = dict(os.environ, ROBOT_DYNAMICS_ROS_CACHE_DIR=str(cache))
    processes = [subprocess.Popen([sys.executable, "-c", LOADER, name], env=env, cwd=REPO,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(count)]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def test_a_second_process_loads_the_machine_code_from_the_disk_cache(tmp_path):
    cache = tmp_path / "cache"
    # two processes compile the same robot into an empty cache at once: both succeed
    first = _load_in_processes("planar2", cache, 2)
    assert all(r["compiled"] and r["misses"] + r["hits"] == 1 for r in first)
    modules = list(cache.glob("accelerations_*.py"))
    assert len(modules) == 1 and "'planar2'" in modules[0].read_text()
    assert list((cache / "__pycache__").glob(f"{modules[0].stem}.accelerations-*.nbi"))
    assert not list(cache.rglob("*.tmp*"))             # nothing half-written left behind
    # a fresh process compiles nothing: numba's cache statistics count a hit, no miss
    assert _load_in_processes("planar2", cache, 1) == [{"compiled": True, "hits": 1,
                                                        "misses": 0}]


def test_the_cache_directory_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ROBOT_DYNAMICS_ROS_CACHE_DIR", str(tmp_path / "mine"))
    assert compiled.cache_directory() == tmp_path / "mine"
    monkeypatch.delenv("ROBOT_DYNAMICS_ROS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compiled.cache_directory() == tmp_path / "xdg" / "robot_dynamics_ros" / "simulation"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert compiled.cache_directory() == (tmp_path / "home" / ".cache" / "robot_dynamics_ros"
                                          / "simulation")


def test_an_unwritable_cache_directory_still_compiles(monkeypatch, tmp_path):
    blocker = tmp_path / "a file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("ROBOT_DYNAMICS_ROS_CACHE_DIR", str(blocker / "cache"))
    model = wheel(coulomb=0.0, viscous=0.1, inertia=0.25)
    function, how = compiled.compilation(model, terms(model))
    assert function is not None and "not cached on disk" in how
    assert function.accelerations((0.0,), (0.0,), (1.0,)) == pytest.approx((1.0 / 0.25,))


def test_when_numba_cannot_use_its_cache_the_dynamics_are_compiled_without_it(monkeypatch):
    njit = compiled._njit

    def no_cache(module, n, cache):
        if cache:
            raise RuntimeError("cannot cache function 'accelerations': no locator available")
        return njit(module, n, cache)
    monkeypatch.setattr(compiled, "_njit", no_cache)
    model = wheel(coulomb=0.0, viscous=0.1, inertia=0.5)
    functions, how = compiled.compilation(model, terms(model))
    assert functions is not None and "numba could not use the cache" in how
    assert functions.accelerations((0.0,), (0.0,), (1.0,)) == pytest.approx((1.0 / 0.5,))


def test_the_compiled_sticking_step_equals_the_python_one():
    """
    While Coulomb friction holds joints, the RK4 step with the Coulomb step runs compiled.

    The Puma falling from a moving state: friction stops and holds some joints (velocities
    exactly 0 for many steps), others slide and stop again; the compiled run (one call per step,
    ``rk4_coulomb_step``) follows the plain-Python one (RK4 on the generated model, then
    friction.py) to rounding, its sticking joints the same.
    """
    model = RobotModel.named("puma560")
    q0 = np.array([0.0, 0.6, -1.2, 0.3, 0.6, 0.1])
    qd0 = np.array([0.5, -0.4, 0.6, 1.0, -0.8, 1.2])
    fast = Simulator(model, q0, qd0, terms=terms(model))
    assert fast._fast_coulomb is fast.dynamics.rk4_coulomb_step is not None
    runs = [simulate(model, q0, qd0, 1.0, compiled=choice, terms=terms(model))
            for choice in (True, False)]
    for field in ("q", "qd", "qdd", "tau"):
        np.testing.assert_allclose(getattr(runs[0], field), getattr(runs[1], field),
                                   rtol=1e-9, atol=1e-9)
    held = runs[0].qd == 0.0
    assert held.sum(axis=0).max() > 300                      # a joint held for 0.3 s or more
    np.testing.assert_array_equal(held, runs[1].qd == 0.0)
