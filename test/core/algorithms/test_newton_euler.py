"""
The one Newton-Euler recursion (core/algorithms/newton_euler.py) on every number type it serves.

The same text runs on Python floats, numpy columns, the code generator's expression graph,
counting scalars and compiled by numba; the torques must be the same whatever runs it (to the
rounding of a few hundred operations in a different order: the graph folds constants).  Its
three sets of constants (plain bodies: the classical iteration; Renaud's augmented bodies; the
grouped ones) give the same torques, and a pass at rest (``moving=False``) the same torques as a
moving pass with zero velocities.  Independent oracles of the recursion itself (Pinocchio, the
seeds' formulations, the Lagrangian) are in test_rnea.py and the formulations' tests.
"""

import math

import numpy as np
import pytest

from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.codegen.expr import Graph
from robot_dynamics_ros.codegen.graph_dynamics import torques as graph_torques
from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core.algorithms import newton_euler as ne
from robot_dynamics_ros.core.algorithms import plain
from robot_dynamics_ros.core.formulations.opcount import Counted, counting, value_of
from robot_dynamics_ros.core.model.bodies import FORMS, gravity_in_base

TOL = 1e-13          # a few hundred roundings, relative to the largest torque (or 1)


def models():
    """Yield random robots: mixed joints, both DH conventions, motors, friction, payload."""
    rng = np.random.default_rng(2024)
    for n in (1, 2, 4, 6, 7):
        yield RobotModel.from_dict(random_robot_dict(
            n, rng, ("standard", "modified")[n % 2], prismatic_prob=0.4, with_motors=True,
            with_friction=True, with_payload=n % 2 == 0)), rng


def relative(a, b) -> float:
    b = np.asarray(b, dtype=float)
    return float(np.abs(np.asarray(a, dtype=float) - b).max() / max(1.0, np.abs(b).max()))


def on_scalars(model, q, qd, qdd, form="full", wrap=float, moving=True):
    """Run the recursion on scalars made by ``wrap`` (floats or counting scalars)."""
    rows = ne.joint_rows(model, form)
    theta = [r[ne.THETA0] + (0.0 if r[ne.PRISMATIC] else x) for r, x in zip(rows, q)]
    ct = [wrap(math.cos(t)) for t in theta]
    st = [wrap(math.sin(t)) for t in theta]
    sg = [float(np.sign(x)) for x in qd]
    ws = [[0.0] * ne.N_WORKSPACE for _ in rows]
    tau = [0.0] * model.n
    args = [[wrap(x) for x in v] for v in (q, qd, qdd)]
    gravity = model.chain.gravity_base.tolist()
    ne.forward_pass(rows, *args, ct, st, gravity, ws, moving)
    ne.backward_pass(rows, *args, sg, (0.0,) * 6, ws, tau, moving)
    return tau


def on_graph(model, q, qd, qdd) -> list:
    """Build the torques on the expression graph and evaluate it (Graph.evaluate)."""
    g = Graph()
    names = {f"{p}{i}": v for p, vec in (("q", q), ("qd", qd), ("qdd", qdd))
             for i, v in enumerate(vec)}
    variables = [[g.var(f"{p}{i}") for i in range(model.n)] for p in ("q", "qd", "qdd")]
    tau = graph_torques(g, ne.joint_rows(model, "full"), gravity_in_base(model), *variables)
    return g.evaluate(tau, names)


def test_floats_columns_graph_counting_and_compiled_agree():
    for model, rng in models():
        q, qd, qdd = random_state(model, rng, batch=5)
        qd[0, 0] = 0.0                                   # sgn(0) = 0: Coulomb friction idle
        expected = rnea(model, q, qd, qdd)               # compiled by numba
        columns = plain.rnea(model, q, qd, qdd, model.chain.gravity_base, np.zeros((1, 6)))
        assert relative(columns, expected) <= TOL
        for k in range(q.shape[0]):
            floats = on_scalars(model, q[k], qd[k], qdd[k])
            assert relative(floats, expected[k]) <= TOL
            assert relative(on_graph(model, q[k], qd[k], qdd[k]), expected[k]) <= TOL
            with counting() as tally:
                counted = on_scalars(model, q[k], qd[k], qdd[k], wrap=Counted)
            assert relative(value_of(counted), expected[k]) <= TOL
            assert tally.mul > 0 and tally.add > 0


@pytest.mark.parametrize("form", FORMS)
def test_plain_augmented_and_grouped_bodies_give_the_same_torques(form):
    for model, rng in models():
        q, qd, qdd = random_state(model, rng)
        assert relative(on_scalars(model, q, qd, qdd, form), rnea(model, q, qd, qdd)) <= TOL


def test_pass_at_rest_equals_the_moving_pass_with_zero_velocities():
    for model, rng in models():
        q, _, _ = random_state(model, rng)
        zeros = np.zeros(model.n)
        at_rest = on_scalars(model, q, zeros, zeros, moving=False)
        assert relative(at_rest, on_scalars(model, q, zeros, zeros)) <= TOL


def test_workspace_holds_the_link_wrenches_of_the_backward_pass():
    """The workspace keeps n_i (Pinocchio's data.f): for one revolute joint, tau = Z . n_1."""
    model = RobotModel.from_dict(random_robot_dict(1, np.random.default_rng(5), "modified",
                                                   prismatic_prob=0.0))
    q, qd, qdd = [0.3], [0.7], [-1.1]
    rows = ne.joint_rows(model.rigid(), "plain")
    ws = [[0.0] * ne.N_WORKSPACE]
    tau = [0.0]
    ne.forward_pass(rows, q, qd, qdd, [math.cos(rows[0][ne.THETA0] + 0.3)],
                    [math.sin(rows[0][ne.THETA0] + 0.3)], model.chain.gravity_base.tolist(), ws)
    ne.backward_pass(rows, q, qd, qdd, [1.0], (0.0,) * 6, ws, tau)
    assert ws[0][ne.W_NZ] == tau[0]
    assert relative(tau, rnea(model.rigid(), q, qd, qdd)) <= TOL
