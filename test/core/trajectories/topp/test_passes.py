"""The reachability passes compiled by numba (passes.py) against the numpy passes."""

import numpy as np
import pytest

from locations import EX72, PUMA_PATH
from robot_dynamics_ros.core import JointPath, JointTrajectory, Limits, RobotModel
from robot_dynamics_ros.core.trajectories.topp import passes, reachability
from robot_dynamics_ros.core.trajectories.topp import time_optimal as module

pytest.importorskip("numba")


def _random_panda_path(seed, vias=12):
    model = RobotModel.named("panda")
    rng = np.random.default_rng(seed)
    mid, half = 0.5 * (model.lower + model.upper), 0.5 * (model.upper - model.lower)
    waypoints = mid + 0.6 * half * rng.uniform(-1.0, 1.0, (vias, model.n))
    return model, JointPath(model.joint_names, waypoints, np.linspace(0.0, 1.0, vias))


@pytest.mark.parametrize("case", ["puma560", "planar2", "panda-1", "panda-2"])
def test_the_compiled_passes_give_the_numpy_law(monkeypatch, case):
    """
    Every grid the scaling solves gets the same law from both implementations.

    Regular and refined groups, viscous friction, tightened limits after failed checks: the
    same arithmetic on the same rows (the compiled loop visits every row, the numpy passes only
    the rows that can bind, whose minimum is the same).
    """
    assert passes.compiled() is not None
    if case.startswith("panda"):
        model, path = _random_panda_path(int(case[-1]))
        limits = Limits.from_model(model, 0.55)
    else:
        model = RobotModel.named(case)
        path = JointTrajectory.from_yaml(PUMA_PATH if case == "puma560" else EX72)
        limits = None
    laws = []
    solve = reachability.solve_law

    def both(grid, groups):
        law = solve(grid, groups)
        numpy_law = reachability.reachable_law(grid, [
            (steps, reachability.step_sets(rows, grid.delta[steps])) for steps, rows in groups])
        laws.append((law, numpy_law))
        return law
    monkeypatch.setattr(module, "solve_law", both)
    module.time_optimal_scaling(model, path, limits)
    assert len(laws) >= 2
    for law, numpy_law in laws:
        scale = max(1.0, float(np.abs(numpy_law.x).max()))
        np.testing.assert_allclose(law.x, numpy_law.x, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(law.u, numpy_law.u, rtol=1e-12,
                                   atol=1e-12 * max(1.0, float(np.abs(numpy_law.u).max())))


def test_without_numba_the_numpy_passes_run(monkeypatch):
    """No numba (or a failed compilation): the numpy passes, the same law."""
    model, traj = RobotModel.named("planar2"), JointTrajectory.from_yaml(EX72)
    fast = module.time_optimal_scaling(model, traj)
    monkeypatch.setattr(passes, "compiled", lambda: None)
    slow = module.time_optimal_scaling(model, traj)
    assert slow.duration == pytest.approx(fast.duration, rel=1e-12)
    np.testing.assert_allclose(slow.trajectory.positions, fast.trajectory.positions,
                               rtol=0, atol=1e-12)
