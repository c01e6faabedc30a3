"""Inverse dynamics of path data, received from outside the core: equal to the textbook RNEA."""

import numpy as np
import pytest

from robot_dynamics_ros.core import InputError, JointTrajectory, RobotModel, rnea
from robot_dynamics_ros.core import time_optimal_scaling
from robot_dynamics_ros.core.trajectories.topp import collocation, path as paths
from robot_dynamics_ros.core.trajectories.topp.torques import torque_functions
from robot_dynamics_ros.core.algorithms.route import select
from topp_cases import PUMA_PATH, puma_level


def test_bisected_grid_data_equal_fresh_inverse_dynamics():
    """
    Path data reused on a bisected grid equal fresh inverse dynamics.

    The reused path data of a bisected grid (old grid points and midpoints) are those of the
    trajectory and rnea evaluated afresh at the new grid's points (an independent recomputation:
    sampling per point, gravity, no subtraction), and the path's end conditions are unchanged.
    """
    model, traj, points, grid = puma_level()
    fresh = paths.Grid(grid.path, points.s)
    for name in ("corner", "flat"):
        np.testing.assert_array_equal(getattr(grid, name), getattr(fresh, name))
    assert (grid.free_start, grid.free_end) == (fresh.free_start, fresh.free_end)
    col = points.collocation(grid)
    s = np.concatenate([points.s[:-1], points.mid_s, points.s[1:]])
    q, dq, ddq = traj.sample(s)
    q[-grid.N:], dq[-grid.N:], ddq[-grid.N:] = traj.sample(points.s[1:], side="left")
    zeros = np.zeros_like(q)
    g0 = np.zeros(3)
    c = rnea(model, q, zeros, zeros)
    a = rnea(model, q, zeros, dq, gravity=g0)
    b = rnea(model, q, dq, ddq, gravity=g0) - (model.viscous * dq + model.coulomb * np.sign(dq))
    scale = np.abs(c).max()
    got = col.points
    for mine, want in ((got.q, q), (got.dq, dq), (got.ddq, ddq),
                       (got.c, c), (got.a, a), (got.b, b)):
        np.testing.assert_allclose(mine.reshape(-1, model.n), want,
                                   rtol=0, atol=1e-12 * max(scale, 1.0))
    # The refined collocation (9 points per step) from the grid's data plus its inner points.
    steps = np.flatnonzero(grid.near_flat())
    assert steps.size
    points.add_midpoints(points.refined_parts(grid, steps))
    reused = points.refined(grid, steps)
    direct = collocation.Collocation(model, grid, steps, collocation.REFINED)
    for name in collocation.PathPoints._fields:
        np.testing.assert_allclose(getattr(reused.points, name), getattr(
            direct.points, name), rtol=0, atol=1e-12 * max(scale, 1.0))


@pytest.mark.parametrize("robot", ["puma560", "panda", "planar2"])
def test_batch_inverse_dynamics_equals_the_textbook_rnea(robot):
    """
    The batches of path data and re-checks equal the core's RNEA, friction and rotors included.

    The torques the scaling receives from ``route.select`` (the compiled kernels, friction's
    further terms added apart) against the textbook recursion (Siciliano et al.
    2009, 7.107-7.114): random states, some joints at rest (Coulomb friction's sign 0) and some
    with zero acceleration.
    """
    model = RobotModel.named(robot)
    functions = torque_functions(model, select(model))
    rng = np.random.default_rng(7)
    q = rng.uniform(model.lower, model.upper, (300, model.n))
    qd, qdd = rng.normal(0, 1.5, (2, 300, model.n))
    qd[::3, 0] = 0.0
    qdd[1::4] = 0.0
    want = rnea(model, q, qd, qdd)
    got = functions.rnea(q, qd, qdd)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10 * np.abs(want).max())
    assert functions.rnea(q[:0], qd[:0], qdd[:0]).shape == (0, model.n)
    gravity = rnea(model, q, np.zeros_like(q), np.zeros_like(q))
    np.testing.assert_allclose(functions.gravity(q), gravity, rtol=0,
                               atol=1e-10 * np.abs(gravity).max())


def test_batch_inverse_dynamics_falls_back_to_the_core(monkeypatch):
    """A model the code generator refuses gets the core's RNEA, the same torques."""
    import robot_dynamics_ros.codegen as codegen

    def refuse(model, grouping="full"):
        raise codegen.CodegenError("refused for the test")
    monkeypatch.setattr(codegen, "generated_model", refuse)
    model = RobotModel.named("puma560")          # a fresh model: nothing cached
    functions = torque_functions(model, select(model))
    rng = np.random.default_rng(8)
    q, qd, qdd = rng.normal(0, 1, (3, 50, model.n))
    np.testing.assert_array_equal(functions.rnea(q, qd, qdd), rnea(model, q, qd, qdd))
    zeros = np.zeros_like(q)
    np.testing.assert_array_equal(functions.gravity(q), rnea(model, q, zeros, zeros))
    # without a choice from outside: the core's own
    core = torque_functions(model)
    np.testing.assert_array_equal(core.rnea(q, qd, qdd), rnea(model, q, qd, qdd))


def test_the_dynamics_of_another_model_are_refused():
    """Torques of another robot (or another payload) would be wrong: InputError naming both."""
    model, other = RobotModel.named("puma560"), RobotModel.named("panda")
    with pytest.raises(InputError, match="'panda', not the model being scaled \\('puma560'\\)"):
        torque_functions(model, select(other))
    with pytest.raises(InputError, match="dynamics: "):
        time_optimal_scaling(model, JointTrajectory.from_yaml(PUMA_PATH), dynamics=select(other))
