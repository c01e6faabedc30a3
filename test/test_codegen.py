"""
Generated dynamics code (robot_dynamics_ros.codegen, `robot-dynamics codegen`).

Oracles: the core's link-frame RNEA and mass matrix (an independent implementation), columns of
the core RNEA (strobing, seed 000/001), Renaud's augmented-parameter table and per-step operation
counts for his 6R (seed 004, 004:407-448), an operation count taken from the generated source's
syntax tree (independent of the DAG's own counter), and the committed op-count record (counts may
only go down).
"""
from __future__ import annotations

import ast
import importlib.util
import json
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from random_robots import random_robot_dict, random_state  # noqa: E402
from robot_dynamics_ros import cli  # noqa: E402
from robot_dynamics_ros.codegen import CodegenError, Graph, generate, generated_model  # noqa: E402
from robot_dynamics_ros.codegen.parameters import link_constants  # noqa: E402
from robot_dynamics_ros.core import (RobotModel, forward_dynamics, gravity_torques,  # noqa: E402
                                     mass_matrix, nonlinear_effects, rnea, shipped_robots)

COUNTS_FILE = Path(__file__).resolve().parent / "data" / "codegen_op_counts.json"
GROUPINGS = ("full", "augmented")
TOL = 1e-12


def assert_agree(actual, expected):
    """Agreement to 1e-12, relative to the size of the torques when they exceed 1."""
    expected = np.asarray(expected)
    scale = max(1.0, float(np.abs(expected).max()))
    assert np.asarray(actual).shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=0, atol=TOL * scale)


def check_against_core(model, grouping, rng, states=3):
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
        with_motors=seed % 3 != 0, with_friction=seed % 2 == 0, with_payload=seed % 3 == 1))
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


# -- Renaud's 6R (seed 004, 004:407-448) ---------------------------------------------------------
def test_augmented_parameters_follow_renauds_table():
    model = RobotModel.named("renaud6r")
    links = link_constants(model, "augmented")
    m, c = model.mass, model.com  # modified DH: file frames are the internal frames
    u = m[:, None] * c
    ms = np.cumsum(m[::-1])[::-1]
    a2, r4 = model.dh_a[2], model.dh_d[3]
    inertia = model.inertia
    k = [inertia[i] + m[i] * ((c[i] @ c[i]) * np.eye(3) - np.outer(c[i], c[i])) for i in range(6)]
    expected_u = [[0, 0, u[0, 2]], [u[1, 0] + ms[2] * a2, 0, 0], [0, u[2, 1] - ms[3] * r4, 0],
                  [0, 0, u[3, 2]], [0, u[4, 1], 0], [0, 0, u[5, 2]]]
    expected_k = [np.diag(k[0]), np.diag(k[1]) + ms[2] * a2 ** 2 * np.array([0, 1, 1]),
                  np.diag(k[2]) + ms[3] * r4 ** 2 * np.array([1, 0, 1])]
    expected_k += [np.diag(k[i]) for i in (3, 4, 5)]
    for i, link in enumerate(links):
        np.testing.assert_allclose(link.u, expected_u[i], atol=1e-15)
        # no products of inertia
        np.testing.assert_allclose(link.k, np.diag(expected_k[i]), atol=1e-15)


def test_full_grouping_finds_y5_minus_z6():
    """alpha_5 = pi/2 makes z_6 = -y_5: the first moments y^5 and z^6 only appear as y^5 - z^6."""
    model = RobotModel.named("renaud6r")
    links = link_constants(model, "full")
    y5, z6 = model.mass[4] * model.com[4, 1], model.mass[5] * model.com[5, 2]
    np.testing.assert_allclose(links[5].u, [0.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(links[4].u, [0.0, y5 - z6, 0.0], atol=1e-15)


# Renaud's table (004:434-446): per step (multiplications, additions) for his 6R.
RENAUD_STEPS = {"1": (18, 12), "3": (28, 22), "4": (0, 15), "6": (22, 12), "7": (26, 16)}
RENAUD_TOTAL, RENAUD_REGROUPED = (181, 127), (164, 115)


def renaud6r_generic() -> RobotModel:
    """
    Return Renaud's 6R with his geometry and zero pattern but no other coincidence.

    His zero pattern: each centre of mass on one axis, diagonal inertias; all masses, moments and
    principal inertias are distinct.  (The shipped renaud6r has bodies with equal moments,
    I_xx = I_yy, which fold further; his counts are for the symbolic model, where no such
    equality holds.)
    """
    spec = RobotModel.named("renaud6r").to_dict()
    axis = {1: 2, 2: 0, 3: 1, 4: 2, 5: 1, 6: 2}  # 004:430: body 1 on z, 2 on x, 3 on y, ...
    for i, joint in enumerate(spec["joints"], start=1):
        com = [0.0, 0.0, 0.0]
        com[axis[i]] = 0.031 * i + 0.017
        joint["link"] = {"mass": 5.3 - 0.7 * i, "com": com,
                         "inertia": {"ixx": 0.011 * i + 0.003, "iyy": 0.013 * i + 0.001,
                                     "izz": 0.017 * i}}
    spec["joints"][2]["dh"]["a"], spec["joints"][3]["dh"]["d"] = 0.43, 0.37
    return RobotModel.from_dict(spec)


@pytest.mark.parametrize("which", ["shipped", "generic"])
def test_renaud_6r_operation_counts(which):
    """
    At most Renaud's 181/127 (augmented bodies) and 164/115 (regrouped), step by step too.

    The generic parameters are the binding case: equalities of the shipped numbers cannot help.
    """
    model = RobotModel.named("renaud6r") if which == "shipped" else renaud6r_generic()
    assert not model.has_motors and not model.has_friction
    check_against_core(model, "augmented", np.random.default_rng(4), states=1)
    code = generate(model, "augmented")
    count = code.counts["rnea"]
    assert count.multiplications <= RENAUD_TOTAL[0] and count.additions <= RENAUD_TOTAL[1]
    for step, (mults, adds) in RENAUD_STEPS.items():  # the projected steps cost what Renaud counts
        assert (code.rnea_steps[step].multiplications <= mults
                and code.rnea_steps[step].additions <= adds)
    # steps 2 and 9 together: 25 + 62 multiplications, 50 additions in his table
    assert code.rnea_steps["2"].multiplications + code.rnea_steps["9"].multiplications <= 87
    assert code.rnea_steps["9"].additions <= 50
    full = generate(model, "full").counts["rnea"]
    assert full.multiplications <= RENAUD_REGROUPED[0] and full.additions <= RENAUD_REGROUPED[1]


# -- operation counts: regression and honesty ---------------------------------------------------
def counted_models() -> dict:
    """
    Return the robots whose counts are recorded.

    The shipped ones and Renaud's 6R with generic values.
    """
    models = {robot: RobotModel.named(robot) for robot in shipped_robots()}
    models["renaud6r_generic"] = renaud6r_generic()
    return models


def current_counts() -> dict:
    out = {}
    for robot, model in counted_models().items():
        out[robot] = {grouping: {name: [c.multiplications, c.additions]
                                 for name, c in generate(model, grouping).counts.items()}
                      for grouping in GROUPINGS}
    return out


def test_operation_counts_never_go_up():
    recorded = json.loads(COUNTS_FILE.read_text())["counts"]
    now = current_counts()
    worse = [f"{robot}/{grouping}/{fn}: {now[robot][grouping][fn]} > recorded {old}"
             for robot, per in recorded.items() if robot in now
             for grouping, fns in per.items() for fn, old in fns.items()
             if now[robot][grouping][fn][0] > old[0] or now[robot][grouping][fn][1] > old[1]]
    assert not worse, "operation counts went up:\n" + "\n".join(worse)
    # re-record after an improvement (never a regression)
    if os.environ.get("CODEGEN_RECORD_COUNTS") == "1":
        description = json.loads(COUNTS_FILE.read_text())["description"]
        COUNTS_FILE.write_text(json.dumps({"description": description, "counts": now},
                                          indent=1, sort_keys=True) + "\n")
        recorded = now
    assert set(recorded) >= {"renaud6r", "renaud6r_generic", "puma560", "panda", "stanford",
                             "planar2"}


def source_counts(source: str, function: str) -> tuple[int, int]:
    """
    Count the multiplications and additions written in a generated function.

    They are read from its syntax tree.  ``(x > 0) - (x < 0)`` is a sign, not an addition; unary
    minus is free.
    """
    tree = next(node for node in ast.parse(source).body
                if isinstance(node, ast.FunctionDef) and node.name == function)
    mults = adds = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Mult):
                mults += 1
            elif (isinstance(node.op, (ast.Add, ast.Sub))
                  and not isinstance(node.left, ast.Compare)):
                adds += 1
    return mults, adds


def operations_in_source(source: str) -> dict:
    """Per generated function: the written operations that are not honest work, if any."""
    def literal(node):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            node = node.operand
        return isinstance(node, ast.Constant)

    def value(node):
        return -node.operand.value if isinstance(node, ast.UnaryOp) else node.value

    def trivial_values(op):
        return (0.0, 1.0, -1.0) if isinstance(op, ast.Mult) else (0.0,)

    out = {}
    for fn in (n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)):
        ops = [n for n in ast.walk(fn)
               if isinstance(n, ast.BinOp) and not isinstance(n.left, ast.Compare)]
        dumps = [ast.dump(n) for n in ops]
        out[fn.name] = {
            "folded": [d for n, d in zip(ops, dumps) if literal(n.left) and literal(n.right)],
            "trivial": [d for n, d in zip(ops, dumps)
                        if any(literal(x) and value(x) in trivial_values(n.op)
                               for x in (n.left, n.right))],
            "repeated": sorted({d for d in dumps if dumps.count(d) > 1})}
    return out


@pytest.mark.parametrize("grouping", GROUPINGS)
def test_counts_are_the_operations_in_the_generated_source(grouping):
    """
    The counts the module states (OP_COUNTS) are the operations written in it.

    And what is written is honest work: no operation on two constants (nothing precomputable
    left, so nothing that was precomputed could be hidden in one), none by 0 or +-1, no
    sub-expression computed twice.
    """
    for robot, model in counted_models().items():
        code = generate(model, grouping)
        module = {}
        exec(compile(code.source, robot, "exec"), module)
        for name, count in code.counts.items():
            written = source_counts(code.source, name)
            assert written == (count.multiplications, count.additions), (robot, name)
            stated = module["OP_COUNTS"][name]
            assert (stated["multiplications"], stated["additions"]) == written
        for name, waste in operations_in_source(code.source).items():
            assert waste == {"folded": [], "trivial": [], "repeated": []}, (robot, grouping, name)


# -- the module and the command -------------------------------------------------------------------
def test_cli_writes_a_standalone_module_and_prints_counts(tmp_path, capsys):
    out = tmp_path / "renaud6r_dynamics.py"
    assert cli.main(["codegen", "renaud6r", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    code = generate(RobotModel.named("renaud6r"))
    c = code.counts["rnea"]
    assert f"rnea: {c.multiplications} multiplications, {c.additions} additions" in printed
    assert all(f"{name}:" in printed
               for name in ("gravity_torques", "nonlinear_effects", "mass_matrix"))
    imports = {alias.name for node in ast.walk(ast.parse(out.read_text()))
               if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    assert imports <= {"math", "numpy"}
    spec = importlib.util.spec_from_file_location("renaud6r_dynamics", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (module.ROBOT_NAME == "renaud6r" and module.N_JOINTS == 6
            and module.N_MULTIPLICATIONS == c.multiplications)
    model = RobotModel.named("renaud6r")
    q, qd, qdd = random_state(model, np.random.default_rng(11))
    assert_agree(module.rnea(q, qd, qdd), rnea(model, q, qd, qdd))
    # Renaud's published regression point (notes seed-000-001-004, Sect. 4.4)
    tau = module.rnea([0.1, -0.5, 0.8, 0.3, -0.7, 0.2], [0.5, -0.3, 0.4, 1.0, -0.8, 0.6],
                      [0.2, 0.1, -0.3, 0.5, 0.4, -0.6])
    np.testing.assert_allclose(tau, [0.111000612, 37.9012732663, 1.4519418524, -0.0037620195,
                                     0.049700865, -0.0002361528], atol=1e-9)
    # regenerating over its own output is allowed
    assert cli.main(["codegen", "renaud6r", "-o", str(out), "--grouping", "augmented"]) == 0


def test_cli_refuses_invalid_robot_files(tmp_path, capsys):
    text = (Path(__file__).resolve().parents[1] / "config" / "robots" / "planar2.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("mass:", "mass: -", 1).replace("mass: - ", "mass: -"))
    model_dict = None
    try:
        RobotModel.from_yaml(bad)
    except ValueError:
        model_dict = "rejected"
    assert model_dict == "rejected", "the test file must be invalid"
    out = tmp_path / "out.py"
    assert cli.main(["codegen", str(bad), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and "joints[0]" in err and "link.mass" in err
    assert not out.exists()
    assert cli.main(["codegen", str(tmp_path / "missing.yaml"), "-o", str(out)]) == 1
    assert "missing.yaml" in capsys.readouterr().err and not out.exists()
    for force in ([], ["--force"]):  # an output directory that does not exist is named
        assert cli.main(["codegen", "planar2", "-o", str(tmp_path / "nodir" / "out.py")]
                        + force) == 1
        assert f"directory {tmp_path / 'nodir'} does not exist" in capsys.readouterr().err


def test_cli_does_not_overwrite_other_files(tmp_path, capsys):
    precious = tmp_path / "precious.py"
    precious.write_text("print('hand written')\n")
    assert cli.main(["codegen", "planar2", "-o", str(precious)]) == 1
    assert "not generated by this command" in capsys.readouterr().err
    assert precious.read_text() == "print('hand written')\n"


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
