"""
Generate a robot's dynamics module: rnea, gravity_torques and mass_matrix as straight-line code.

Each function gets its own expression DAG (so each has its own operation count):

* ``rnea(q, qd, qdd)``: the core's Newton-Euler recursion (Renaud's steps (0)-(10),
  ``core/algorithms/newton_euler.py``) on the expression graph (``graph_dynamics.py``), with
  rotors and friction, the model's gravity;
* ``nonlinear_effects(q, qd)``: the same with qdd = 0 as constants;
* ``gravity_torques(q)``: the same with qd = qdd = 0 as constants (everything velocity- or
  acceleration-dependent folds away), no friction (sgn(0) = 0);
* ``mass_matrix(q)``: column j is the torque for qdd = e_j with qd = 0 and no gravity (the
  "strobing" identity behind Milićević et al.'s and Turney et al. 1980's tables); only the lower
  triangle is built (rows i >= j only need the backward pass from the tip down to joint j) and
  mirrored.  The unit accelerations are constants, so each column only costs the links from j
  outward.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.algorithms.newton_euler import rows_of
from ..core.model.bodies import FORMS, gravity_in_base, link_constants
from .expr import Graph, OpCount
from .graph_dynamics import torques, with_extra_friction
from .writer import FunctionSpec, function_source

FUNCTIONS = ("rnea", "nonlinear_effects", "gravity_torques", "mass_matrix")
GENERATOR_VERSION = 1


class CodegenError(ValueError):
    """The model cannot be turned into code; the message names the robot and the problem."""


@dataclass
class GeneratedCode:
    robot: str
    joint_names: tuple
    grouping: str
    source: str
    counts: dict = field(default_factory=dict)        # function -> OpCount
    rnea_steps: dict = field(default_factory=dict)    # Renaud step -> OpCount (rnea only)


def check_model(model) -> None:
    """Refuse what is not a valid RobotModel (with the reason) before generating anything."""
    chain = getattr(model, "chain", None)
    name = getattr(model, "name", "<unnamed>")
    if chain is None or not hasattr(model, "n"):
        raise CodegenError(f"{name!s}: not a RobotModel (got {type(model).__name__}); "
                           "load robots with RobotModel.named/from_yaml/from_dict")
    if model.n < 1:
        raise CodegenError(f"{name}: a robot needs at least one joint")
    for fieldname in ("alpha_prev", "p_prev", "theta0", "mass", "com", "inertia",
                      "rotor_inertia", "gear_ratio", "viscous", "coulomb", "gravity_base"):
        values = np.asarray(getattr(chain, fieldname), dtype=float)
        if not np.isfinite(values).all():
            bad = np.argwhere(~np.isfinite(values.reshape(values.shape[0], -1)))[0][0]
            where = ("gravity" if fieldname == "gravity_base"
                     else f"joint '{model.joint_names[bad]}'")
            raise CodegenError(f"{name}: {where}: non-finite {fieldname}")
        if fieldname in ("mass",) and (values < 0).any():
            bad = int(np.argmax(values < 0))
            raise CodegenError(f"{name}: joint '{model.joint_names[bad]}': negative link mass")


def _variables(g: Graph, prefix: str, n: int) -> list[int]:
    return [g.var(f"{prefix}{i + 1}") for i in range(n)]


def _names(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i + 1}" for i in range(n)]


def build_functions(model, grouping: str = "full") -> list[tuple[Graph, FunctionSpec]]:
    """Return the three functions as (graph, spec) pairs; see the module docstring."""
    check_model(model)
    if grouping not in FORMS:
        raise CodegenError(f"{model.name}: grouping must be one of {list(FORMS)}, "
                           f"got {grouping!r}")
    n = model.n
    rows = rows_of(link_constants(model, grouping))
    gravity = gravity_in_base(model)
    out = []

    g = Graph()
    q, qd = _variables(g, "q", n), _variables(g, "qd", n)
    tau = with_extra_friction(g, model, rows, gravity, q, qd, torques(
        g, rows, gravity, q, qd, _variables(g, "qdd", n), label=True))
    out.append((g, FunctionSpec(
        "rnea", {"q": _names("q", n), "qd": _names("qd", n), "qdd": _names("qdd", n)}, tau,
        "Joint torques/forces tau(q, qd, qdd) with the model's gravity, rotors and friction "
        "(sequences of n floats in, array (n,) out).")))

    g = Graph()
    q, qd = _variables(g, "q", n), _variables(g, "qd", n)
    tau = with_extra_friction(g, model, rows, gravity, q, qd,
                              torques(g, rows, gravity, q, qd, [g.zero] * n))
    out.append((g, FunctionSpec(
        "nonlinear_effects", {"q": _names("q", n), "qd": _names("qd", n)}, tau,
        "n(q, qd) = C(q, qd) qd + friction + g(q): the torques at zero acceleration.")))

    g = Graph()
    zeros = [g.zero] * n
    tau = torques(g, rows, gravity, _variables(g, "q", n), zeros, zeros)
    out.append((g, FunctionSpec("gravity_torques", {"q": _names("q", n)}, tau,
                                "g(q): the torques that hold the robot still against gravity.")))

    g = Graph()
    q = _variables(g, "q", n)
    lower = [[None] * n for _ in range(n)]
    for j in range(n):
        unit = [g.one if k == j else g.zero for k in range(n)]
        column = torques(g, rows, (0.0, 0.0, 0.0), q, [g.zero] * n, unit)
        for i in range(j, n):
            lower[i][j] = column[i]
    rows_out = [[lower[max(i, j)][min(i, j)] for j in range(n)] for i in range(n)]
    out.append((g, FunctionSpec("mass_matrix", {"q": _names("q", n)}, rows_out,
                                "M(q): the joint-space inertia matrix, rotors included "
                                "(array (n, n)).")))
    return out


def generate(model, grouping: str = "full", source: str | None = None) -> GeneratedCode:
    """
    Return the source of a module with the functions of FUNCTIONS for ``model``.

    See the module docstring.
    """
    functions = build_functions(model, grouping)
    counts = {spec.name: g.count(spec.flat_outputs) for g, spec in functions}
    g_rnea, spec_rnea = functions[0]
    steps = g_rnea.count_by_label(spec_rnea.flat_outputs)
    header = _header(model, grouping, source, counts, steps)
    body = "\n\n".join(function_source(g, spec) for g, spec in functions)
    return GeneratedCode(model.name, tuple(model.joint_names), grouping, header + "\n\n" + body,
                         counts, steps)


def _header(model, grouping, source, counts: dict[str, OpCount], steps: dict[str, OpCount]) -> str:
    step_lines = "\n".join(f"    step {label:<9} {count}" for label, count in steps.items())
    op_counts = {name: c.as_dict() for name, c in counts.items()}
    world_g = [float(x) for x in model.gravity]
    doc = _docstring(model, grouping, source, counts, step_lines, world_g)
    return f'''"""{doc}"""
import math as _math

import numpy as _np

ROBOT_NAME = {model.name!r}
JOINT_NAMES = {tuple(model.joint_names)!r}
JOINT_TYPES = {tuple(model.joint_types)!r}
N_JOINTS = {model.n}
GRAVITY = {tuple(world_g)!r}
GROUPING = {grouping!r}
GENERATOR_VERSION = {GENERATOR_VERSION}
OP_COUNTS = {op_counts!r}
N_MULTIPLICATIONS = OP_COUNTS["rnea"]["multiplications"]
N_ADDITIONS = OP_COUNTS["rnea"]["additions"]
'''


def _docstring(model, grouping, source, counts, step_lines, world_g) -> str:
    """Return the generated module's docstring, escaped so any robot name or path is safe in it."""
    count_lines = "\n".join(f"    {name:<16} {c}" for name, c in counts.items())
    text = (f"Dynamics of robot {model.name!r}, generated by `robot-dynamics codegen` -- "
            "do not edit.\n\n"
            f"Source: {source or '<in memory>'}; {model.n} joints "
            f"({', '.join(model.joint_types)}), {model.convention} DH.\n"
            "Renaud's quasi-minimal Newton-Euler (Renaud 1987, steps (0)-(10)) with augmented "
            "bodies and\n"
            f"{grouping!r} parameter grouping; inertial parameters, gravity {world_g} m/s^2 "
            "(world frame),\n"
            "rotor inertias and friction are folded into the constants.  Functions take "
            "sequences of\n"
            f"{model.n} floats (lists, tuples or numpy arrays) and return numpy arrays.\n"
            "Operation counts (negations free, sin/cos counted apart):\n"
            f"{count_lines}\n"
            "rnea by step of Renaud's numbering (\"10\": the torques' rotor and friction "
            "terms):\n"
            f"{step_lines}\n")
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
