"""
The core's recursion on the expression graph (codegen/graph_dynamics.py, codegen.expr.Node).

Renaud's customised model (augmented bodies, and their regrouping) is a generator option; here
it is checked against the plain bodies run through the same recursion (its classical iteration)
on the same graph: the same functions to 1e-12, and, regrouped, never more operations on the
shipped arms.  (Not a law for the augmented bodies alone: with the graph's sharing, the classical
iteration is cheaper on the Puma's rnea, 249 against 254 multiplications, and on a short random
chain with prismatic joints the on-line step (0) can cost more than it saves.)  The step labels
follow Renaud's numbering.
"""

import numpy as np
import pytest

from generated_checks import assert_agree
from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.codegen import generate, generated_model
from robot_dynamics_ros.codegen.expr import Graph
from robot_dynamics_ros.core import RobotModel


def robots():
    rng = np.random.default_rng(12)
    for name in ("puma560", "stanford", "panda"):
        yield RobotModel.named(name), rng, True
    for n in (2, 5):
        yield RobotModel.from_dict(random_robot_dict(
            n, rng, "standard", prismatic_prob=0.4, with_motors=True,
            with_friction=True)), rng, False


@pytest.mark.parametrize("grouping", ["augmented", "full"])
def test_renauds_customised_model_against_the_plain_bodies(grouping):
    for model, rng, shipped in robots():
        plain = generated_model(model, "plain").module
        custom = generated_model(model, grouping).module
        for _ in range(2):
            q, qd, qdd = random_state(model, rng)
            assert_agree(custom.rnea(q, qd, qdd), plain.rnea(q, qd, qdd))
            assert_agree(custom.mass_matrix(q), plain.mass_matrix(q))
            assert_agree(custom.gravity_torques(q), plain.gravity_torques(q))
        if shipped and grouping == "full":
            counts = generate(model, grouping).counts
            for name, count in generate(model, "plain").counts.items():
                assert (counts[name].multiplications <= count.multiplications
                        and counts[name].additions <= count.additions), (model.name, name)


def test_nodes_fold_and_share_like_the_graph():
    g = Graph()
    x, y = g.node(g.var("x")), g.node(g.var("y"))
    assert (x * 0.0).index == g.zero and (1.0 * x).index == x.index and (x + 0.0) is not None
    assert (x * y).index == (y * x).index and (x - y).index == (-(y - x)).index
    assert (np.float64(2.0) * x).index == (x * 2.0).index          # numpy scalars defer
    expr = x * y + 2.5 * x - y
    assert g.evaluate([expr.index], {"x": 2.0, "y": 3.0}) == [2.0 * 3.0 + 5.0 - 3.0]


def test_renaud_steps_label_the_generated_rnea():
    code = generate(RobotModel.named("renaud6r"), "augmented")
    assert set(code.rnea_steps) >= {"1", "2", "3", "4", "6", "7", "9", "trig"}
    assert code.rnea_steps["4"].multiplications == 0        # b_i: 15 additions per link
