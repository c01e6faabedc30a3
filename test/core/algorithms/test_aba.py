"""
Forward dynamics by the articulated-body algorithm (core/algorithms/aba.py).

Oracles: the composite-rigid-body route qdd = B^-1 (tau - n) with a Cholesky factorisation
(``forward_dynamics_crba``, an O(n^3) algorithm sharing no pass with the ABA), Pinocchio's
``aba`` on the same robot read from URDF text by Pinocchio's own parser, and the inverse
dynamics it must invert.  Tolerances: the solve magnifies the rounding of B and tau - n by the
condition number of B (``bound``), so that is the tolerance of every comparison.
"""

import numpy as np
import pytest

from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.core import (RobotModel, SingularityError, forward_dynamics, mass_matrix,
                                     rnea)
from robot_dynamics_ros.core.algorithms import plain
from robot_dynamics_ros.core.algorithms.forward_dynamics import forward_dynamics_crba
from urdf_samples import PinocchioChain, random_urdf, relative_error

EPS = 1e-15


def bound(B) -> float:
    """Return the relative accuracy of a solve with B: a hundred roundings times cond(B)."""
    return 100 * EPS * float(np.max(np.linalg.cond(B)))


def robots(seed, count=12):
    """Yield random robots of 1-8 joints: mixed types, rotors, friction, payloads."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        yield RobotModel.from_dict(random_robot_dict(
            1 + k % 8, rng, ("standard", "modified")[k % 2], prismatic_prob=0.4,
            with_motors=k % 3 != 1, with_friction=k % 2 == 0, with_payload=k % 4 == 0)), rng


def test_aba_equals_the_composite_rigid_body_route():
    for model, rng in robots(1):
        q, qd, _ = random_state(model, rng)
        tau = rng.normal(size=model.n) * 10
        B = mass_matrix(model, q)
        assert relative_error(forward_dynamics(model, q, qd, tau),
                              forward_dynamics_crba(model, q, qd, tau)) <= bound(B)


def test_aba_batches_and_the_external_wrench():
    for model, rng in robots(2, count=8):
        q, qd, _ = random_state(model, rng, batch=6)
        tau = rng.normal(size=q.shape) * 10
        wrench = rng.normal(size=(6, 6)) * [20, 20, 20, 5, 5, 5]
        B = mass_matrix(model, q)
        expected = forward_dynamics_crba(model, q, qd, tau, f_ext=wrench)
        assert relative_error(forward_dynamics(model, q, qd, tau, f_ext=wrench),
                              expected) <= bound(B)
        expected = forward_dynamics_crba(model, q, qd, tau)
        assert relative_error(forward_dynamics(model, q, qd, tau), expected) <= bound(B)


def test_plain_python_and_compiled_aba_agree():
    for model, rng in robots(3, count=8):
        q, qd, _ = random_state(model, rng, batch=3)
        tau = rng.normal(size=q.shape)
        g, wrench = model.chain.gravity_base, np.zeros((1, 6))
        columns, ok = plain.forward_dynamics(model, q, qd, tau, g, wrench)
        single, ok_single = plain.forward_dynamics(model, q[0], qd[0], tau[0], g, wrench)
        assert ok and ok_single
        compiled = forward_dynamics(model, q, qd, tau)
        assert relative_error(columns, compiled) <= bound(mass_matrix(model, q))
        assert relative_error(single, compiled[0]) <= bound(mass_matrix(model, q[0]))


@pytest.mark.parametrize("n", [7, 24, 48])
def test_aba_agrees_with_pinocchio_on_long_chains_read_by_pinocchio(n):
    """Pinocchio reads the URDF text itself; its ABA and ours on the rigid chain."""
    sample = random_urdf(np.random.default_rng(0), n)      # (B well conditioned: < 1e5)
    oracle = PinocchioChain(sample.text, sample.chain, sample.tip)
    model = RobotModel.from_urdf(sample.text, tip_link=sample.tip).rigid()
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, qd = rng.uniform(-1, 1, model.n), rng.uniform(-1, 1, model.n)
        tau = rng.normal(size=model.n)
        B = oracle.mass_matrix(q)
        assert relative_error(forward_dynamics(model, q, qd, tau),
                              oracle.forward_dynamics(q, qd, tau)) <= bound(B)


def test_aba_inverts_rnea_with_rotors_and_friction():
    for model, rng in robots(4):
        q, qd, qdd = random_state(model, rng, batch=4)
        tau = rnea(model, q, qd, qdd)
        scale = np.abs(qdd).max()
        assert relative_error(forward_dynamics(model, q, qd, tau) / scale,
                              qdd / scale) <= bound(mass_matrix(model, q))


def test_a_joint_that_moves_nothing_is_a_singular_mass_matrix():
    spec = RobotModel.named("planar2").to_dict()
    link = spec["joints"][-1]["link"]
    link["mass"], link["com"] = 0.0, [0.0, 0.0, 0.0]
    link["inertia"] = {"ixx": 0.0, "iyy": 0.0, "izz": 0.0}
    model = RobotModel.from_dict(spec).rigid()              # (no rotor on the joint either)
    zeros = np.zeros(model.n)
    for args in ((zeros, zeros, zeros), (zeros[None], zeros[None], zeros[None])):
        with pytest.raises(SingularityError, match="singular"):
            forward_dynamics(model, *args)
        with pytest.raises(SingularityError, match="singular"):
            forward_dynamics(model, *args, f_ext=np.zeros(6))
        _, ok = plain.forward_dynamics(model, *args, model.chain.gravity_base,
                                       np.zeros((1, 6)))
        assert not ok
