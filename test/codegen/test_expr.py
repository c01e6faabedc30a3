"""The code generator's expression graph: constant folding and common subexpressions."""

import pytest

from robot_dynamics_ros.codegen import Graph


# -- the expression DAG ---------------------------------------------------------------------------
def test_dag_folds_constants_and_reuses_subexpressions():
    g = Graph()
    x, y = g.var("x"), g.var("y")
    assert g.mul(x, g.zero) == g.zero and g.mul(g.one, x) == x and g.add(x, g.zero) == x
    assert g.sub(x, x) == g.zero
    assert g.mul(g.const(-1.0), x) == g.neg(x)                       # free negation
    assert g.mul(x, y) == g.mul(y, x) and g.add(x, y) == g.add(y, x)  # hashed, commutative
    assert g.sub(y, x) == g.neg(g.sub(x, y))                          # one node for both signs
    assert g.mul(g.const(2.0), g.mul(g.const(3.0), x)) == g.mul(g.const(6.0), x)
    assert g.add(x, g.neg(y)) == g.sub(x, y)
    expr = g.add(g.mul(x, y), g.mul(g.neg(y), g.neg(x)))    # xy + (-y)(-x) = 2 xy: 1 mul, 1 add
    count = g.count([expr, g.neg(g.mul(x, y))])
    assert (count.multiplications, count.additions) == (1, 1)
    assert g.evaluate([expr], {"x": 2.0, "y": 3.0}) == [12.0]


def test_abs_of_a_node_is_x_times_its_sign_and_the_friction_level_builds_on_it():
    """|x| = x sgn(x) (the graph has no abs); the core's dry-friction level runs on nodes."""
    from robot_dynamics_ros.codegen.expr import Node
    from robot_dynamics_ros.core.control.friction import coulomb_level
    g = Graph()
    x = Node(g, g.var("x"))
    magnitude = abs(x)
    assert magnitude.index == g.mul(x.index, g.sign(x.index))
    level = coulomb_level(0.0, 0.25, x)             # 0 + F_l |x|: the addition of 0 folds away
    count = g.count([level.index])
    assert (count.multiplications, count.additions) == (2, 0)
    for value in (-3.0, 0.0, 2.0):
        assert g.evaluate([magnitude.index, level.index], {"x": value}) == [abs(value),
                                                                            0.25 * abs(value)]


def test_division_folds_constants_pulls_out_signs_and_is_counted_apart():
    g = Graph()
    x, y = g.var("x"), g.var("y")
    assert g.div(x, g.const(4.0)) == g.mul(g.const(0.25), x)          # by a constant: a product
    assert g.div(g.zero, y) == g.zero and g.div(g.neg(x), y) == g.neg(g.div(x, y))
    assert g.div(x, g.neg(y)) == g.neg(g.div(x, y))
    assert g.div(g.const(-2.0), y) == g.neg(g.div(g.const(2.0), y))
    quotient = (1.0 / g.node(y)) * g.node(x) + g.node(x) / g.node(y)   # Node operators
    count = g.count([quotient.index])
    assert (count.multiplications, count.additions, count.divisions) == (1, 1, 2)
    assert g.evaluate([quotient.index], {"x": 3.0, "y": 4.0}) == [1.5]
    with pytest.raises(ZeroDivisionError):
        g.div(x, g.zero)
