"""
Generated dynamics code (robot_dynamics_ros.codegen, `robot-dynamics codegen`).

Oracles: the core's link-frame RNEA and mass matrix (an independent implementation), columns of
the core RNEA (strobing: columns of B are torques of unit accelerations), Renaud's
augmented-parameter table and per-step operation counts for his 6R (Renaud 1987, example), an
operation count taken from the generated source's syntax tree (independent of the DAG's own
counter), and the committed op-count record (counts may only go down).
"""

import math

import numpy as np
import pytest

from coupled_wrist import (hand_friction, hand_friction_joint_side, hand_rotor_matrix, wrist,
                           wrist_with_joint_side)
from generated_checks import assert_agree, check_against_core
from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.codegen import CodegenError, generate, generated_model
from robot_dynamics_ros.core import (RobotModel, forward_dynamics, gravity_torques, mass_matrix,
                                     nonlinear_effects, rnea, shipped_robots)

GROUPINGS = ("full", "augmented")


# -- agreement with the core ----------------------------------------------------------------------
@pytest.mark.parametrize("grouping", GROUPINGS)
@pytest.mark.parametrize("robot", shipped_robots())
def test_shipped_robots_agree_with_core(robot, grouping):
    model = RobotModel.named(robot)
    rng = np.random.default_rng(1)
    check_against_core(model, grouping, rng)
    check_against_core(model.rigid(), grouping, rng, states=1)
    check_against_core(model.with_payload(1.3, [0.01, -0.02, 0.05], np.diag([1e-3, 2e-3, 1.5e-3])),
                       grouping, rng, states=1)


def special_robot_dict(types: str, rng) -> dict:
    """
    Return a random robot whose twists and offsets are multiples of pi/2.

    Its centres of mass lie on frame axes and some links have diagonal inertias: the cases where
    the generator folds 0/+-1.
    """
    robot = random_robot_dict(len(types), rng,
                              convention=str(rng.choice(["standard", "modified"])),
                              with_motors=True, with_friction=True,
                              with_payload=bool(rng.uniform() < 0.3))
    quarter = [0.0, "pi/2", "-pi/2", "pi"]
    for joint, kind in zip(robot["joints"], types):
        joint["type"] = "prismatic" if kind == "P" else "revolute"
        if kind == "P":
            joint["limits"].update(lower=-0.5, upper=0.5)
        joint["dh"]["alpha"] = quarter[rng.integers(4)]
        joint["dh"]["theta"] = quarter[rng.integers(4)] if rng.uniform() < 0.8 else 0.3
        for key in ("a", "d"):
            if rng.uniform() < 0.5:
                joint["dh"][key] = 0.0
        link = joint["link"]
        link["com"] = [c if rng.uniform() < 0.4 else 0.0 for c in link["com"]]
        if rng.uniform() < 0.5:
            s = link["mass"] * rng.uniform(0.001, 0.02, size=3)
            link["inertia"] = {"ixx": float(s[1] + s[2]), "iyy": float(s[0] + s[2]),
                               "izz": float(s[0] + s[1])}
    if rng.uniform() < 0.5:
        robot["gravity"] = [0.0, 0.0, -9.81]
        robot.pop("base")
    return robot


@pytest.mark.parametrize("seed", range(6))
def test_random_robots_agree_with_core(seed):
    rng = np.random.default_rng(100 + seed)
    generic = RobotModel.from_dict(random_robot_dict(
        1 + seed, rng, convention=("standard", "modified")[seed % 2], prismatic_prob=0.4,
        with_motors=seed % 3 != 0, with_friction=seed % 2 == 0, with_payload=seed % 3 == 1,
        offsets=seed % 2 == 1))         # the general joint offsets of model.Chain
    types = ["R", "P", "RP", "PPR", "RRPR", "RPPRRR", "RRRRRRP"][seed] if seed < 6 else "RRR"
    special = RobotModel.from_dict(special_robot_dict(types, rng))
    special2 = RobotModel.from_dict(special_robot_dict(["RRRRRR", "RRPRRR"][seed % 2], rng))
    for model in (generic, special, special2):
        for grouping in GROUPINGS:
            check_against_core(model, grouping, rng, states=2)


def test_massless_links_and_single_joints_agree_with_core():
    """
    Links of zero mass and inertia fold to nothing but must not break the recursion.

    Such links are a wrist's intermediate frames or a bare flange; one-joint robots of either type
    give (1,) and (1, 1) arrays.
    """
    rng = np.random.default_rng(12)
    spec = RobotModel.named("puma560").to_dict()
    for i in (3, 5):
        spec["joints"][i]["link"] = {"mass": 0.0, "com": [0.0, 0.0, 0.0],
                                     "inertia": {"ixx": 0.0, "iyy": 0.0, "izz": 0.0}}
    massless = RobotModel.from_dict(spec)
    for grouping in GROUPINGS:
        check_against_core(massless, grouping, rng)
    for kind in ("revolute", "prismatic"):
        one = RobotModel.from_dict(random_robot_dict(1, rng, "standard",
                                                     prismatic_prob=float(kind == "prismatic"),
                                                     with_motors=True, with_friction=True))
        assert one.joint_types == (kind,)
        check_against_core(one, "full", rng)
        assert generated_model(one).module.mass_matrix([0.1]).shape == (1, 1)


def test_mass_matrix_is_rnea_columns_symmetric_positive_definite():
    rng = np.random.default_rng(7)
    for robot in ("panda", "stanford"):
        model = RobotModel.named(robot)
        q = random_state(model, rng)[0]
        M = generated_model(model).mass_matrix(q)
        columns = np.array([rnea(model, q, np.zeros(model.n), e, gravity=np.zeros(3))
                            for e in np.eye(model.n)]).T
        assert_agree(M, columns)
        np.testing.assert_array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0


def test_model_api_is_a_drop_in_for_the_core():
    """generated_model(model) functions take one configuration or a batch, like the core's."""
    model = RobotModel.named("puma560")
    dyn = generated_model(model)
    rng = np.random.default_rng(3)
    for batch in (None, 4):
        q, qd, qdd = random_state(model, rng, batch=batch)
        tau = rnea(model, q, qd, qdd)
        assert_agree(dyn.rnea(q, qd, qdd), tau)
        assert_agree(dyn.nonlinear_effects(q, qd), nonlinear_effects(model, q, qd))
        assert_agree(dyn.gravity_torques(q), gravity_torques(model, q))
        assert_agree(dyn.mass_matrix(q), mass_matrix(model, q))
        np.testing.assert_allclose(dyn.forward_dynamics(q, qd, tau), qdd, atol=1e-9)
        np.testing.assert_allclose(dyn.forward_dynamics(q, qd, tau),
                                   forward_dynamics(model, q, qd, tau), atol=1e-9)
    with pytest.raises(ValueError, match="qd"):
        dyn.rnea(np.zeros(6), np.zeros(5), np.zeros(6))
    with pytest.raises(ValueError, match="non-finite"):
        dyn.gravity_torques([0, 0, np.nan, 0, 0, 0])
    assert generated_model(RobotModel.named("puma560")) is dyn  # cached by description


def test_generate_refuses_what_is_not_a_model():
    with pytest.raises(CodegenError, match="not a RobotModel"):
        generate({"name": "x"})
    with pytest.raises(CodegenError, match="grouping"):
        generate(RobotModel.named("planar2"), "none")


def test_gravity_is_baked_in_from_the_model():
    model = RobotModel.named("puma560")
    spec = model.to_dict()
    spec["gravity"] = [3.0, -4.0, -8.0]
    tilted = RobotModel.from_dict(spec)
    q = random_state(model, np.random.default_rng(5))[0]
    assert_agree(generated_model(tilted).gravity_torques(q),
                 gravity_torques(model, q, gravity=[3.0, -4.0, -8.0]))
    assert_agree(generated_model(tilted).module.gravity_torques(q), gravity_torques(tilted, q))
    assert not np.allclose(generated_model(tilted).gravity_torques(q),
                           generated_model(model).gravity_torques(q))
    assert math.isclose(generated_model(tilted).module.GRAVITY[0], 3.0)


def test_any_robot_or_joint_name_gives_valid_source():
    spec = RobotModel.named("planar2").to_dict()
    spec["name"] = 'odd """ name \\N{x} \' end'
    spec["joints"][0]["name"] = "shoulder ''' \"\"\" \\"
    model = RobotModel.from_dict(spec)
    dyn = generated_model(model)
    assert (dyn.module.ROBOT_NAME == spec["name"]
            and dyn.module.JOINT_NAMES[0] == spec["joints"][0]["name"])
    q, qd, qdd = random_state(model, np.random.default_rng(2))
    assert_agree(dyn.rnea(q, qd, qdd), rnea(model, q, qd, qdd))


def test_generated_functions_carry_the_further_friction_terms():
    """The generated module's rnea and n(q, qd): the core's, F_v2 and F_l |g(q)| included."""
    from further_friction import with_further_friction
    from robot_dynamics_ros.codegen import generated_model
    from robot_dynamics_ros.core import nonlinear_effects, rnea
    model = with_further_friction(RobotModel.named("panda"), 0.4, 0.1, viscous=1.0, coulomb=0.5)
    module = generated_model(model).module
    rng = np.random.default_rng(12)
    for _ in range(5):
        q, qd, qdd = (rng.normal(size=model.n) for _ in range(3))
        expected = rnea(model, q, qd, qdd)
        np.testing.assert_allclose(module.rnea(q, qd, qdd), expected, rtol=1e-12,
                                   atol=1e-12 * np.abs(expected).max())
        np.testing.assert_allclose(module.nonlinear_effects(q, qd),
                                   nonlinear_effects(model, q, qd), rtol=1e-12, atol=1e-11)


@pytest.mark.parametrize("grouping", ["full", "augmented"])
def test_coupled_drives_are_exported(grouping):
    # a wrist whose motor 6 turns with joints 5 and 6 (test/support/coupled_wrist.py): the
    # generated functions carry the coupling's rotor matrix and drive friction as the core does
    model = RobotModel.from_dict(wrist())
    rng = np.random.default_rng(28)
    check_against_core(model, grouping, rng, states=4)
    raw = generated_model(model, grouping).module
    q = np.array([0.4, -1.1])
    rigid = generated_model(model.rigid(), grouping).module
    assert_agree(np.asarray(raw.mass_matrix(q)) - np.asarray(rigid.mass_matrix(q)),
                 hand_rotor_matrix())
    qd = np.array([2.0, -0.5])                  # v6 = 1.5 > 0 while qd6 < 0
    assert_agree(np.asarray(raw.nonlinear_effects(q, qd))
                 - np.asarray(rigid.nonlinear_effects(q, qd)), hand_friction(qd))


def test_coupled_drives_quadratic_and_joint_side_friction_are_exported():
    # drive 6's F_v2 on (qd5 + qd6) and joint 6's joint-side friction on qd6 alone
    model = RobotModel.from_dict(wrist_with_joint_side())
    check_against_core(model, "full", np.random.default_rng(40), states=3)
    raw = generated_model(model, "full").module
    rigid = generated_model(model.rigid(), "full").module
    q, qd = np.array([0.4, -1.1]), np.array([2.0, -0.5])
    assert_agree(np.asarray(raw.nonlinear_effects(q, qd))
                 - np.asarray(rigid.nonlinear_effects(q, qd)), hand_friction_joint_side(qd))


def test_coupled_drives_take_the_ldlt_forward_dynamics():
    # the articulated-body recursion treats one joint at a time: the coupling's rotor matrix
    # (joints 5 and 6 together) is carried by the LDL^T of the generated M alone
    from robot_dynamics_ros.codegen.generate import choose_forward_dynamics, forward_methods
    model = RobotModel.from_dict(wrist())
    assert forward_methods(model) == ("ldlt",)
    assert forward_methods(model.rigid()) == ("aba", "ldlt")
    assert choose_forward_dynamics(model).method == "ldlt"
    with pytest.raises(CodegenError, match="cannot carry coupled drives"):
        choose_forward_dynamics(model, method="aba")
