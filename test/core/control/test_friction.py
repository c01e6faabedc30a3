"""The friction law: what the Newton-Euler recursion adds for the robot file's friction."""

import numpy as np
import pytest

from dynamics_cases import CASES, make
from random_robots import random_state
from robot_dynamics_ros.core import RobotModel, rnea
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
