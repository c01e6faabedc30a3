"""Checks of generated and converted models against the core: random states, agreement to 1e-12."""

import numpy as np

from random_robots import random_state
from robot_dynamics_ros.codegen import generated_model
from robot_dynamics_ros.core import (gravity_torques, jacobian, mass_matrix, nonlinear_effects,
                                     rnea, tool_pose)
from urdf_samples import relative_error

TOL = 1e-12         # straight-line code against the recursion: a few hundred roundings
TOLERANCE = 1e-12   # a model converted or exported and read back, against the original


def random_states(model, rng, count=4):
    """Yield ``count`` random (q, qd, qdd) within the position limits (or +-pi without)."""
    low = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    high = np.where(np.isfinite(model.upper), model.upper, np.pi)
    for _ in range(count):
        yield rng.uniform(low, high), rng.uniform(-2, 2, model.n), rng.uniform(-3, 3, model.n)


def assert_agree(actual, expected):
    """Agreement to 1e-12, relative to the size of the torques when they exceed 1."""
    expected = np.asarray(expected)
    scale = max(1.0, float(np.abs(expected).max()))
    assert np.asarray(actual).shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=0, atol=TOL * scale)


def check_against_core(model, grouping, rng, states=3):
    """Check the generated functions of ``model`` against the core on random states."""
    raw = generated_model(model, grouping).module  # the generated functions themselves
    for k in range(states):
        q, qd, qdd = random_state(model, rng)
        if k == 1:  # joints at rest: sgn(0) = 0 in Coulomb friction, as in the core
            qd = np.zeros(model.n)
        args = (q, qd, qdd) if k % 2 == 0 else (q.tolist(), qd.tolist(), tuple(qdd))
        assert_agree(raw.rnea(*args), rnea(model, q, qd, qdd))
        assert_agree(raw.nonlinear_effects(*args[:2]), nonlinear_effects(model, q, qd))
        assert_agree(raw.gravity_torques(args[0]), gravity_torques(model, q))
        assert_agree(raw.mass_matrix(args[0]), mass_matrix(model, q))


def assert_same_robot(model, other, rng=None):
    """Assert the same joints, dynamics (rotors, friction), tool pose and Jacobian to 1e-12."""
    assert other.joint_names == model.joint_names and other.joint_types == model.joint_types
    np.testing.assert_array_equal(other.lower, model.lower)
    np.testing.assert_array_equal(other.effort_limit, model.effort_limit)
    for q, qd, qdd in random_states(model, rng or np.random.default_rng(0)):
        for ours, theirs in ((rnea(other, q, qd, qdd), rnea(model, q, qd, qdd)),
                             (mass_matrix(other, q), mass_matrix(model, q)),
                             (gravity_torques(other, q), gravity_torques(model, q)),
                             (tool_pose(other, q), tool_pose(model, q)),
                             (jacobian(other, q), jacobian(model, q))):
            assert relative_error(ours, theirs) <= TOLERANCE
