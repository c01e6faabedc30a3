"""
Physical properties and cross-checks of the dynamics core on random robots.

The robots have mixed revolute and prismatic joints, full inertia tensors, both DH conventions,
motors and friction.
"""

import numpy as np
import pytest

from dynamics_cases import CASES, make, potential_energy
from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.core import (RobotModel, coriolis_matrix, forward_dynamics,
                                     forward_kinematics, gravity_torques, jacobian, mass_matrix,
                                     nonlinear_effects, rnea, tool_pose)


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_rnea_splits_into_b_c_g_and_friction(n, convention, seed):
    model, rng = make(n, convention, seed)
    q, qd, qdd = random_state(model, rng)
    friction = model.viscous * qd + model.coulomb * np.sign(qd)
    B, C, g = mass_matrix(model, q), coriolis_matrix(model, q, qd), gravity_torques(model, q)
    np.testing.assert_allclose(rnea(model, q, qd, qdd), B @ qdd + C @ qd + g + friction,
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(nonlinear_effects(model, q, qd), C @ qd + g + friction,
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_gravity_is_the_gradient_of_potential_energy(n, convention, seed):
    model, rng = make(n, convention, seed, with_payload=True)
    q, _, _ = random_state(model, rng)
    eps = 1e-6
    grad = [(potential_energy(model, q + eps * e) - potential_energy(model, q - eps * e))
            / (2 * eps) for e in np.eye(n)]
    np.testing.assert_allclose(gravity_torques(model, q), grad, atol=1e-6)


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_end_effector_wrench_maps_through_the_jacobian_transpose(n, convention, seed):
    model, rng = make(n, convention, seed)
    q, qd, qdd = random_state(model, rng)
    h = rng.normal(size=6) * [20, 20, 20, 3, 3, 3]
    difference = rnea(model, q, qd, qdd, f_ext=h) - rnea(model, q, qd, qdd)
    np.testing.assert_allclose(difference, jacobian(model, q).T @ h, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_batches_equal_one_by_one_results(n, convention, seed):
    model, rng = make(n, convention, seed)
    Q, QD, QDD = random_state(model, rng, batch=7)
    H = rng.normal(size=(7, 6))
    one_by_one = {
        "rnea": [rnea(model, *x, f_ext=h) for *x, h in zip(Q, QD, QDD, H)],
        "gravity": [gravity_torques(model, x) for x in Q],
        "nle": [nonlinear_effects(model, x, y) for x, y in zip(Q, QD)],
        "mass": [mass_matrix(model, x) for x in Q],
        "coriolis": [coriolis_matrix(model, x, y) for x, y in zip(Q, QD)],
        "fd": [forward_dynamics(model, x, y, z) for x, y, z in zip(Q, QD, QDD)],
        "fk": [forward_kinematics(model, x) for x in Q],
        "jac": [jacobian(model, x) for x in Q],
        "tool": [tool_pose(model, x) for x in Q],
        "fd_wrench": [forward_dynamics(model, x, y, z, f_ext=h)
                      for x, y, z, h in zip(Q, QD, QDD, H)],
    }
    batched = {
        "rnea": rnea(model, Q, QD, QDD, f_ext=H), "gravity": gravity_torques(model, Q),
        "nle": nonlinear_effects(model, Q, QD), "mass": mass_matrix(model, Q),
        "coriolis": coriolis_matrix(model, Q, QD), "fd": forward_dynamics(model, Q, QD, QDD),
        "fk": forward_kinematics(model, Q), "jac": jacobian(model, Q), "tool": tool_pose(model, Q),
        "fd_wrench": forward_dynamics(model, Q, QD, QDD, f_ext=H),
    }
    for key, expected in one_by_one.items():
        assert batched[key].shape == (7,) + np.shape(expected[0]), key
        np.testing.assert_allclose(batched[key], expected, rtol=1e-12, atol=1e-12, err_msg=key)


def _as_modified(data):
    """
    Rewrite a standard-DH robot as the same robot in modified DH.

    By hand, independently of the package: row i takes (a, alpha) of row i-1, link frames move to
    the joint axes, and the last (a_n, alpha_n) become part of the tool transform.
    """
    from scipy.spatial.transform import Rotation
    joints = data["joints"]
    out = []
    for i, j in enumerate(joints):
        a, alpha = j["dh"]["a"], j["dh"]["alpha"]
        R = Rotation.from_euler("x", alpha).as_matrix()   # standard frame i -> modified frame i
        p = np.array([a, 0.0, 0.0])
        inertia = np.array([[j["link"]["inertia"][k] for k in row] for row in
                            (("ixx", "ixy", "ixz"), ("ixy", "iyy", "iyz"), ("ixz", "iyz", "izz"))])
        Im = R @ inertia @ R.T
        com = R @ np.array(j["link"]["com"]) + p
        prev = joints[i - 1]["dh"] if i else {"a": 0.0, "alpha": 0.0}
        k = dict(j, dh={"a": prev["a"], "alpha": prev["alpha"], "d": j["dh"]["d"],
                        "theta": j["dh"]["theta"]},
                 link={"mass": j["link"]["mass"], "com": com.tolist(),
                       "inertia": {"ixx": Im[0, 0], "iyy": Im[1, 1], "izz": Im[2, 2],
                                   "ixy": Im[0, 1], "ixz": Im[0, 2], "iyz": Im[1, 2]}})
        out.append(k)
    last = joints[-1]["dh"]
    T_last = np.eye(4)
    T_last[:3, :3] = Rotation.from_euler("x", last["alpha"]).as_matrix()
    T_last[:3, 3] = [last["a"], 0, 0]
    tool = np.eye(4)
    tool[:3, :3] = Rotation.from_euler("xyz", data["tool"]["rpy"]).as_matrix()
    tool[:3, 3] = data["tool"]["xyz"]
    T = T_last @ tool
    rpy = Rotation.from_matrix(T[:3, :3]).as_euler("xyz")
    return dict(data, dh_convention="modified", joints=out,
                tool={"xyz": T[:3, 3].tolist(), "rpy": rpy.tolist()})


@pytest.mark.parametrize("seed", range(4))
def test_standard_and_modified_descriptions_of_one_robot_agree(seed):
    rng = np.random.default_rng(100 + seed)
    data = random_robot_dict(5, rng, convention="standard", with_motors=True, with_friction=True)
    standard, modified = RobotModel.from_dict(data), RobotModel.from_dict(_as_modified(data))
    q, qd, qdd = random_state(standard, rng)
    h = rng.normal(size=6)
    np.testing.assert_allclose(rnea(standard, q, qd, qdd, f_ext=h),
                               rnea(modified, q, qd, qdd, f_ext=h), atol=1e-10)
    np.testing.assert_allclose(mass_matrix(standard, q), mass_matrix(modified, q), atol=1e-12)
    np.testing.assert_allclose(tool_pose(standard, q), tool_pose(modified, q), atol=1e-12)
    np.testing.assert_allclose(jacobian(standard, q), jacobian(modified, q), atol=1e-12)


@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_payload_equals_the_wrench_it_exerts(convention):
    """
    A payload held still weighs on the tool like an external wrench.

    Its gravity torques equal those of the bare robot with f_ext = [-m g; r x (-m g)] (force the
    tool exerts on the payload).
    """
    rng = np.random.default_rng(7)
    model = RobotModel.from_dict(random_robot_dict(6, rng, convention=convention))
    m, com = 2.5, np.array([0.02, -0.03, 0.08])
    loaded = model.with_payload(m, com, {"ixx": 0.01, "iyy": 0.02, "izz": 0.015})
    q, _, _ = random_state(model, rng)
    T = tool_pose(model, q)
    r = T[:3, :3] @ com                                          # tool point -> payload CoM, world
    force = -m * model.gravity
    wrench = np.concatenate([force, np.cross(r, force)])
    np.testing.assert_allclose(gravity_torques(loaded, q),
                               rnea(model, q, np.zeros(6), np.zeros(6), f_ext=wrench), atol=1e-10)


@pytest.mark.parametrize("bad, match", [
    (np.zeros(5), r"q: expected shape \(6,\)"),
    (np.zeros((2, 7)), r"q: expected shape"),
    (np.array([0, 0, np.nan, 0, 0, 0]), "q: non-finite value for joint 'joint3'"),
])
def test_bad_joint_arrays_are_rejected(bad, match):
    model = RobotModel.named("puma560")
    with pytest.raises(ValueError, match=match):
        rnea(model, bad, np.zeros(6), np.zeros(6))
    with pytest.raises(ValueError, match=match):
        mass_matrix(model, bad)


def test_mismatched_batch_and_wrench_are_rejected():
    model = RobotModel.named("puma560")
    with pytest.raises(ValueError, match="qd: shape"):
        rnea(model, np.zeros((3, 6)), np.zeros((2, 6)), np.zeros((3, 6)))
    with pytest.raises(ValueError, match="f_ext"):
        rnea(model, np.zeros(6), np.zeros(6), np.zeros(6), f_ext=np.zeros(5))
    with pytest.raises(ValueError, match="gravity"):
        rnea(model, np.zeros(6), np.zeros(6), np.zeros(6), gravity=[0, 0, np.inf])


def test_batches_of_constant_torques_and_empty_batches():
    """
    Massless prismatic links in zero gravity: every torque is the same for all samples.

    It is the same constant (here 0 plus the Coulomb term), which must still give an (N, n)
    result; N = 0 gives (0, ...).
    """
    joint = {"type": "prismatic", "dh": {"a": 0.1, "alpha": 0.3, "d": 0.0, "theta": 0.2},
             "limits": {"lower": -1, "upper": 1, "velocity": 1, "effort": 10},
             "link": {"mass": 0.0, "com": [0, 0, 0], "inertia": {"ixx": 0, "iyy": 0, "izz": 0}}}
    model = RobotModel.from_dict({"name": "massless", "dh_convention": "standard",
                                  "gravity": [0, 0, 0],
                                  "joints": [dict(joint, name=f"j{i}") for i in range(2)]})
    Q = np.zeros((4, 2))
    np.testing.assert_array_equal(rnea(model, Q, Q, Q), np.zeros((4, 2)))
    np.testing.assert_array_equal(gravity_torques(model, Q), np.zeros((4, 2)))
    puma = RobotModel.named("puma560")
    empty = np.zeros((0, 6))
    assert rnea(puma, empty, empty, empty).shape == (0, 6)
    assert mass_matrix(puma, empty).shape == (0, 6, 6)
    assert forward_dynamics(puma, empty, empty, empty).shape == (0, 6)


def test_payload_inertia_on_a_massless_link_adds_jw_i_jw():
    """
    A payload with rotational inertia only (on a massless last link) adds J_w^T R I R^T J_w to B.

    Its kinetic energy is 1/2 w^T I w (Siciliano et al. 2009, eq. 7.13); it used to be dropped.
    """
    rng = np.random.default_rng(11)
    data = random_robot_dict(4, rng, convention="modified", prismatic_prob=0.0)
    data["joints"][-1]["link"]["mass"] = 0.0
    model = RobotModel.from_dict(data)
    inertia = np.array([[0.02, 0.001, 0.0], [0.001, 0.03, 0.002], [0.0, 0.002, 0.04]])
    loaded = model.with_payload(0.0, [0.0, 0.0, 0.0], inertia)
    q, _, _ = random_state(model, rng)
    R = tool_pose(model, q)[:3, :3]
    Jw = jacobian(model, q)[3:]
    np.testing.assert_allclose(mass_matrix(loaded, q) - mass_matrix(model, q),
                               Jw.T @ R @ inertia @ R.T @ Jw, atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    ({"q": np.full(6, 1j)}, "q: expected real numbers"),
    ({"qd": ["a"] * 6}, "qd: expected an array of numbers"),
    ({"gravity": "down"}, "gravity: expected an array of numbers"),
    ({"f_ext": ["x"] * 6}, "f_ext: expected an array of numbers"),
])
def test_arguments_that_are_not_real_numbers_are_named(kwargs, match):
    args = dict(q=np.zeros(6), qd=np.zeros(6), qdd=np.zeros(6))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        rnea(RobotModel.named("puma560"), **args)


@pytest.mark.parametrize("name", ["puma560", "panda", "stanford", "renaud6r", "planar2"])
def test_batches_equal_one_by_one_on_shipped_robots(name):
    """
    The batch path skips work on structural zeros, which the shipped robots have.

    Structural zeros: fixed base, zero CoM components, diagonal inertias; the random robots above
    do not have them.
    """
    model = RobotModel.named(name)
    rng = np.random.default_rng(5)
    Q, QD, QDD = random_state(model, rng, batch=3000)      # > one chunk of the batch path
    batched = rnea(model, Q, QD, QDD)
    one_by_one = np.array([rnea(model, *x) for x in zip(Q[::97], QD[::97], QDD[::97])])
    np.testing.assert_allclose(batched[::97], one_by_one, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gravity_torques(model, Q[:50]),
                               [gravity_torques(model, x) for x in Q[:50]], rtol=1e-12, atol=1e-12)
