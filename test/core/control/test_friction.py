"""The friction law: what the Newton-Euler recursion adds for the robot file's friction."""

import numpy as np
import pytest

from dynamics_cases import CASES, make
from random_robots import random_state
from robot_dynamics_ros.core import RobotModel, gravity_torques, rnea
from robot_dynamics_ros.core.control import friction_torque, friction_torques, sign


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_friction_is_what_rnea_adds_over_the_frictionless_robot(n, convention, seed):
    model, rng = make(n, convention, seed)
    spec = model.to_dict()
    for joint in spec["joints"]:
        joint["friction"] = {"viscous": 0.0, "coulomb": 0.0}
    frictionless = RobotModel.from_dict(spec)
    q, qd, qdd = random_state(model, rng, batch=5)
    np.testing.assert_allclose(friction_torques(model, qd),
                               rnea(model, q, qd, qdd) - rnea(frictionless, q, qd, qdd),
                               rtol=1e-9, atol=1e-9)


def test_sign_of_zero_is_zero_and_floats_stay_floats():
    assert [sign(x) for x in (2.5, -1e-300, 0.0, -0.0)] == [1.0, -1.0, 0.0, 0.0]
    assert type(sign(3.0)) is float
    np.testing.assert_array_equal(sign(np.array([2.5, -1e-300, 0.0])), [1.0, -1.0, 0.0])


def test_per_joint_formula_equals_the_array_formula_bit_for_bit():
    model, rng = make(6, "standard", 3)
    _, qd, _ = random_state(model, rng, batch=20)
    qd[0, :3] = 0.0                                   # at rest: no friction
    arrays = friction_torques(model, qd)
    for row, expected in zip(qd.tolist(), arrays):
        per_joint = list(map(friction_torque, row, model.viscous.tolist(),
                             model.coulomb.tolist()))
        assert per_joint == expected.tolist()
    assert (arrays[0, :3] == 0.0).all()


# -- the further terms: F_v2 qd|qd| + F_l |g(q)| sgn(qd) ------------------------------------------

@pytest.mark.parametrize("name", ["puma560", "panda"])
def test_further_terms_are_what_rnea_adds_for_every_implementation(name):
    """
    The rnea minus the frictionless robot's is the law written out (its own g), one or many.

    For every implementation (compiled, plain) and the core's rnea with a gravity
    given (the checked path): the load term takes the model's own gravity, not the one given.
    """
    from further_friction import law, with_further_friction
    from robot_dynamics_ros.core.algorithms.route import select
    base = RobotModel.named(name)
    model = with_further_friction(base, quadratic=0.7, load=0.08, viscous=1.5, coulomb=2.0)
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.normal(size=(12, model.n)) for _ in range(3))
    rigid = base.without_friction()
    expected = rnea(rigid, q, qd, qdd) + law(model, q, qd)
    tolerance = 1e-12 * np.abs(expected).max()
    np.testing.assert_allclose(rnea(model, q, qd, qdd), expected, rtol=0, atol=tolerance)
    np.testing.assert_allclose(friction_torques(model, qd, q, gravity_torques), law(model, q, qd),
                               rtol=1e-13)
    other = rnea(model, q, qd, qdd, gravity=[0.0, 0.0, -9.81])
    np.testing.assert_allclose(other, expected, rtol=0, atol=tolerance)
    for implementation in ("compiled", "plain"):
        kernel = select(model, implementation)
        np.testing.assert_allclose(kernel.rnea(q, qd, qdd), expected, rtol=0, atol=tolerance)
        np.testing.assert_allclose(kernel.rnea(q[0], qd[0], qdd[0]), expected[0], rtol=0,
                                   atol=tolerance)
        np.testing.assert_allclose(kernel.nonlinear_effects(q, qd),
                                   rnea(model, q, qd, np.zeros_like(q)), rtol=0, atol=tolerance)
        np.testing.assert_allclose(kernel.forward_dynamics(q, qd, expected), qdd, rtol=0,
                                   atol=1e-9 * np.abs(qdd).max())


def test_further_terms_by_finite_differences_of_the_law():
    """The rnea's d tau / d qd_j = the law's slope F_v + 2 F_v2 |qd_j| (away from qd_j = 0)."""
    from further_friction import with_further_friction
    base = RobotModel.named("puma560")
    model = with_further_friction(base, quadratic=0.7, load=0.08)
    rng = np.random.default_rng(5)
    q, qd, qdd = (rng.normal(size=model.n) for _ in range(3))
    qd = np.where(np.abs(qd) < 0.2, 0.5, qd)
    h = 1e-6
    for j in range(model.n):
        step = np.zeros(model.n)
        step[j] = h
        slope = (rnea(model, q, qd + step, qdd) - rnea(model, q, qd - step, qdd)) / (2 * h)
        rigid = (rnea(base, q, qd + step, qdd) - rnea(base, q, qd - step, qdd)) / (2 * h)
        assert abs((slope - rigid)[j] - 2 * 0.7 * abs(qd[j])) < 1e-6 * (1 + abs(slope[j]))


def test_load_dependent_friction_without_positions_is_refused_by_name():
    from further_friction import with_further_friction
    from robot_dynamics_ros.core import InputError
    model = with_further_friction(RobotModel.named("puma560"), quadratic=0.0, load=0.1)
    with pytest.raises(InputError, match="coulomb_load.*positions"):
        friction_torques(model, np.ones(6))
    quadratic_only = with_further_friction(RobotModel.named("puma560"), quadratic=0.2, load=0.0)
    np.testing.assert_allclose(friction_torques(quadratic_only, np.ones(6)),
                               quadratic_only.viscous + quadratic_only.coulomb + 0.2)


def test_per_joint_formula_takes_the_load_it_is_given():
    assert friction_torque(-2.0, 1.0, 3.0, 0.5, 0.1, -40.0) == -2.0 - 2.0 - (3.0 + 4.0)
    assert friction_torque(0.0, 1.0, 3.0, 0.5, 0.1, -40.0) == 0.0


def test_coulomb_level_is_the_law_written_out_on_floats_and_arrays():
    """F_s + F_l |g|, and the scalings' (F_s + F_l |g|) sgn(qd) from it, against the formula."""
    from robot_dynamics_ros.core.control.friction import coulomb_friction, coulomb_level
    from further_friction import with_further_friction
    assert coulomb_level(2.0, 0.1, -40.0) == 2.0 + 0.1 * 40.0
    model = with_further_friction(RobotModel.named("puma560"), quadratic=0.0, load=0.08,
                                  coulomb=2.0)
    rng = np.random.default_rng(5)
    g, qd = rng.normal(size=(2, 3, 7, model.n))
    qd[0, 0, :2] = 0.0
    expected = (model.coulomb + model.coulomb_load * np.abs(g)) * np.sign(qd)
    np.testing.assert_array_equal(coulomb_friction(model, g, qd), expected)
    rigid = model.without_friction()
    np.testing.assert_array_equal(coulomb_friction(rigid, g, qd), np.zeros_like(qd))
