"""Operation counts of the generated model: Renaud's 6R example, a ratchet, the source itself."""

import ast
import json
import os

import numpy as np
import pytest

from generated_checks import check_against_core
from locations import DATA
from robot_dynamics_ros.codegen import generate
from robot_dynamics_ros.core import RobotModel, shipped_robots

COUNTS_FILE = DATA / "codegen_op_counts.json"
GROUPINGS = ("full", "augmented")


# Renaud's table (Renaud 1987, example): per step (multiplications, additions) for his 6R.
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
    # Renaud 1987, example: body 1 on z, 2 on x, 3 on y, ...
    axis = {1: 2, 2: 0, 3: 1, 4: 2, 5: 1, 6: 2}
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
