"""
The one route to a model's dynamics (robot_dynamics_ros/core/algorithms/route.py).

Both implementations (the compiled kernels, the plain-Python texts) give the core's numbers (to
1e-12) for single calls and batches of every size, check arguments as the core does, and the
route falls back to plain Python with a reason where numba cannot serve.  A process that has not
loaded the kernels runs plain Python until it has spent the budget, then the kernels.
"""

import numpy as np
import pytest

from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.core import (InputError, RobotModel, forward_dynamics, gravity_torques,
                                     jacobian, mass_matrix, nonlinear_effects, rnea)
from robot_dynamics_ros.core.algorithms import compiled
from robot_dynamics_ros.core.algorithms import route
from robot_dynamics_ros.core.algorithms.route import IMPLEMENTATIONS, select

TOL = 1e-12


def expected(model, q, qd, x):
    return {"rnea": rnea(model, q, qd, x), "gravity_torques": gravity_torques(model, q),
            "nonlinear_effects": nonlinear_effects(model, q, qd),
            "mass_matrix": mass_matrix(model, q), "forward_dynamics": forward_dynamics(
                model, q, qd, x), "jacobian": jacobian(model, q)}


def results(kernel, q, qd, x):
    return {"rnea": kernel.rnea(q, qd, x), "gravity_torques": kernel.gravity_torques(q),
            "nonlinear_effects": kernel.nonlinear_effects(q, qd),
            "mass_matrix": kernel.mass_matrix(q),
            "forward_dynamics": kernel.forward_dynamics(q, qd, x),
            "jacobian": kernel.jacobian(q)}


@pytest.mark.parametrize("prefer", IMPLEMENTATIONS)
def test_every_implementation_gives_the_cores_numbers(prefer):
    rng = np.random.default_rng(3)
    models = [RobotModel.named("puma560"), RobotModel.named("stanford"),
              RobotModel.from_dict(random_robot_dict(4, rng, "modified", with_motors=True,
                                                     with_friction=True, offsets=True))]
    for model in models:
        kernel = select(model, prefer)
        assert kernel.model is model
        if prefer == "compiled" and compiled.kernels() is None:
            assert kernel.implementation != "compiled" and kernel.reason
            continue
        assert kernel.implementation == prefer and kernel.reason == ""
        for batch in (None, 1, 9, 40):
            q, qd, x = random_state(model, rng, batch)
            want = expected(model, q, qd, x)
            for name, got in results(kernel, q, qd, x).items():
                scale = max(1.0, float(np.abs(want[name]).max()))
                assert np.shape(got) == np.shape(want[name]), (prefer, name, batch)
                np.testing.assert_allclose(got, want[name], rtol=0, atol=TOL * scale,
                                           err_msg=f"{prefer} {name} batch {batch}")


@pytest.mark.parametrize("prefer", IMPLEMENTATIONS)
def test_every_implementation_checks_its_arguments(prefer):
    kernel = select(RobotModel.named("puma560"), prefer)
    with pytest.raises(InputError, match="q: expected shape"):
        kernel.rnea(np.zeros(5), np.zeros(5), np.zeros(5))
    with pytest.raises(InputError, match="non-finite"):
        kernel.mass_matrix(np.full(6, np.nan))


def test_fastest_is_compiled_where_numba_works_and_falls_back_with_a_reason(monkeypatch):
    model = RobotModel.named("panda")
    kernel = select(model, "compiled")          # (loads the kernels: "fastest" takes them)
    assert kernel is route.bound(model) is select(model)
    assert kernel.implementation == ("compiled" if compiled.kernels() is not None else "plain")
    monkeypatch.setattr(route, "kernels", lambda: None)
    monkeypatch.setattr(route, "status", lambda: "numba is not importable (test)")
    fallback = route._bind(model)
    assert fallback.implementation == "plain" and "numba is not importable" in fallback.reason
    q = np.linspace(-1.0, 1.0, model.n)
    np.testing.assert_allclose(fallback.gravity_torques(q), kernel.gravity_torques(q),
                               rtol=0, atol=1e-12 * np.abs(kernel.gravity_torques(q)).max())
    with pytest.raises(ValueError, match="unknown dynamics implementation"):
        select(model, "generated")


def test_a_process_runs_plain_python_first_then_the_kernels(monkeypatch):
    """Before the kernels are loaded: plain (same numbers), timed; past the budget: compiled."""
    rng = np.random.default_rng(5)
    model = RobotModel.from_dict(random_robot_dict(5, rng, "modified", with_motors=True,
                                                   with_friction=True, offsets=True))
    q, qd, x = random_state(model, rng, 7)
    want = results(select(model, "compiled"), q, qd, x)
    monkeypatch.setattr(compiled, "_STATE", {})             # a process that has not loaded them
    monkeypatch.setattr(compiled, "_PLAIN_SPENT", [0.0])
    monkeypatch.setattr(route, "_LAST", [None, None])
    monkeypatch.setattr(compiled, "_numba_imported", lambda: False)   # (this one has numba)
    monkeypatch.setattr(compiled, "ahead", lambda: None)    # nor their extension (test_ahead)
    first = route.bound(model)
    assert first.implementation == "plain" and first.reason == route.FIRST_REASON
    assert first is select(model)
    for name, got in results(first, q, qd, x).items():
        np.testing.assert_allclose(got, want[name], rtol=0,
                                   atol=TOL * max(1.0, float(np.abs(want[name]).max())))
    assert not compiled.loaded() and 0.0 < compiled._PLAIN_SPENT[0] < compiled.PLAIN_BUDGET
    with pytest.raises(InputError, match="q: expected shape"):     # checked as the core checks
        first.rnea(np.zeros(2), np.zeros(2), np.zeros(2))
    compiled._PLAIN_SPENT[0] = compiled.PLAIN_BUDGET         # the budget spent: the kernels
    got = first.gravity_torques(q)
    assert compiled.loaded()
    np.testing.assert_allclose(got, want["gravity_torques"], rtol=0,
                               atol=TOL * max(1.0, float(np.abs(got).max())))
    assert route.bound(model) is select(model, "compiled")
    assert route.bound(model).implementation == ("compiled" if compiled.kernels() is not None
                                                 else "plain")
