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

The C and C++ headers add the tool Jacobian and ``forward_dynamics(q, qd, tau)``, one graph by
either of two methods (:func:`forward_dynamics_graph`), both with rotors and friction: "aba", the
core's articulated-body algorithm run on the graph (O(n)), and "ldlt", M and n on one graph then
an unrolled LDL^T of M (O(n^3), but M's strobed columns and the small n fold well).
:func:`choose_forward_dynamics` builds both and keeps the cheaper by :func:`cost`, multiplications
+ additions + DIVISION_COST x divisions (sin/cos and signs are the same in both).  The operation
count was kept as the measure because it predicted which method is faster in every case timed
(``bench/bench_codegen_cpp.py``, g++ -O3, min ns per call, 2026-11-29, load 7.5-9.5 on 2 cores;
cost aba/ldlt -> time aba/ldlt): the rigid Puma 560 1124/684 -> 253/200 ns, Panda 1931/1872 ->
551/472, UR5 1069/542 -> 293/197, xArm7 2712/2608 -> 750/623; random arms with rotors and
friction (test/support/random_robots.py, seed n) of 6, 8, 9, 10, 12 joints: cost ratios 1.28,
1.01, 0.80, 0.80, 0.72 -> time ratios 1.44, 1.09, 0.88, 0.91, 0.81.  So the LDL^T is chosen for
every shipped robot and every arm of the corpus (cost ratios 1.02-1.97), the ABA from about 9
joints on.  The timings lean 10-15 % further towards the LDL^T than the counts (the ABA's extra
divisions and longer dependency chain); a division weight above 1 would not change any choice
measured, so DIVISION_COST stays 1.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.algorithms import newton_euler as ne
from ..core.algorithms.newton_euler import rows_of
from ..core.model.bodies import FORMS, gravity_in_base, link_constants
from .expr import Graph, OpCount, index_of
from .graph_dynamics import (articulated_accelerations, joint_trig, ldl_solve, torques,
                             with_coupled_inertia, with_coupling,
                             with_extra_friction)
from .writer import FunctionSpec, function_source

FUNCTIONS = ("rnea", "nonlinear_effects", "gravity_torques", "mass_matrix")
# The C and C++ headers' graphs besides FUNCTIONS: forward dynamics and the tool Jacobian
HEADER_GRAPHS = ("forward_dynamics", "jacobian")
# forward dynamics' two straight lines (forward_dynamics_graph): the articulated-body algorithm
# or an LDL^T of the generated M; "auto" takes the cheaper by CHEAPER's measure
FORWARD_METHODS = ("aba", "ldlt")
DIVISION_COST = 1           # a division's weight in ``cost`` (module docstring)
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
    q, qd, qdd = _variables(g, "q", n), _variables(g, "qd", n), _variables(g, "qdd", n)
    tau = with_coupling(g, model, qd, qdd, with_extra_friction(
        g, model, rows, gravity, q, qd, torques(g, rows, gravity, q, qd, qdd, label=True)))
    out.append((g, FunctionSpec(
        "rnea", {"q": _names("q", n), "qd": _names("qd", n), "qdd": _names("qdd", n)}, tau,
        "Joint torques/forces tau(q, qd, qdd) with the model's gravity, rotors and friction "
        "(sequences of n floats in, array (n,) out).")))

    g = Graph()
    q, qd = _variables(g, "q", n), _variables(g, "qd", n)
    tau = with_coupling(g, model, qd, None, with_extra_friction(
        g, model, rows, gravity, q, qd, torques(g, rows, gravity, q, qd, [g.zero] * n)))
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
    rows_out = with_coupled_inertia(g, model, [[lower[max(i, j)][min(i, j)] for j in range(n)]
                                               for i in range(n)])
    out.append((g, FunctionSpec("mass_matrix", {"q": _names("q", n)}, rows_out,
                                "M(q): the joint-space inertia matrix, rotors included "
                                "(array (n, n)).")))
    return out


def mass_and_effects(model, grouping: str = "full") -> tuple[Graph, FunctionSpec]:
    """
    Return the lower triangle of M(q) by rows, then n(q, qd), on one graph.

    The joint sines and cosines and every shared sub-expression are computed once: the data of
    forward dynamics, qdd = M^-1 (tau - n) (Turney et al. 1980, Sect. 7).  M column by column as
    in :func:`build_functions` (Siciliano et al. 2009, eqs. 7.115-7.116).
    """
    n = model.n
    rows = rows_of(link_constants(model, grouping))
    g = Graph()
    q, qd = _variables(g, "q", n), _variables(g, "qd", n)
    gravity = gravity_in_base(model)
    effects = with_coupling(g, model, qd, None, with_extra_friction(
        g, model, rows, gravity, q, qd, torques(g, rows, gravity, q, qd, [g.zero] * n)))
    columns = []
    for j in range(n):
        unit = [g.one if k == j else g.zero for k in range(n)]
        columns.append(torques(g, rows, (0.0, 0.0, 0.0), q, [g.zero] * n, unit))
    lower = with_coupled_inertia(g, model, [[columns[j][i] for j in range(i + 1)]
                                            for i in range(n)])
    return g, FunctionSpec("mass_and_effects", {"q": _names("q", n), "qd": _names("qd", n)},
                           lower + [effects], "Lower triangle of M(q) by rows, then n(q, qd).")


def forward_dynamics_graph(model, method: str, grouping: str = "full"
                           ) -> tuple[Graph, FunctionSpec]:
    """
    Return qdd(q, qd, tau) as one graph, by ``method`` (FORWARD_METHODS), friction and rotors in.

    "ldlt": M's lower triangle and n(q, qd) as :func:`mass_and_effects` builds them, then M qdd =
    tau - n by an unrolled LDL^T (``graph_dynamics.ldl_solve``); "aba": the core's
    articulated-body algorithm on the graph (``graph_dynamics.articulated_accelerations``), tau
    less the friction law's further terms (as the core's forward dynamics subtracts them).
    """
    n = model.n
    if method == "ldlt":
        g, spec = mass_and_effects(model, grouping)
        q, qd = _variables(g, "q", n), _variables(g, "qd", n)
        effects = spec.outputs[-1]
        b = [g.sub(t, h) for t, h in zip(_variables(g, "tau", n), effects)]
        qdd = ldl_solve(g, spec.outputs[:-1], b)
        how = "M(q) and n(q, qd) on one graph, then an unrolled LDL^T of M"
    elif method == "aba":
        if model.coupled_drives:
            raise CodegenError(f"{model.name}: forward dynamics by the articulated-body "
                               "algorithm cannot carry coupled drives (their rotor matrix "
                               "K^T D K - D couples joints across the recursion): use 'ldlt'")
        rows = rows_of(link_constants(model, grouping))
        g = Graph()
        q, qd = _variables(g, "q", n), _variables(g, "qd", n)
        gravity = gravity_in_base(model)
        extra = with_extra_friction(g, model, rows, gravity, q, qd, [g.zero] * n)
        tau = [g.sub(t, e) for t, e in zip(_variables(g, "tau", n), extra)]
        qdd = articulated_accelerations(g, rows_of(link_constants(model, "plain")), gravity,
                                        q, qd, tau)
        how = "the articulated-body algorithm (Featherstone 2008, Table 7.1), unrolled"
    else:
        raise CodegenError(f"{model.name}: forward dynamics method must be one of "
                           f"{list(FORWARD_METHODS)}, got {method!r}")
    return g, FunctionSpec("forward_dynamics", {"q": _names("q", n), "qd": _names("qd", n),
                                                "tau": _names("tau", n)}, qdd,
                           f"qdd(q, qd, tau) = M(q)^-1 (tau - n(q, qd)) by {how}.")


def _compose(R, p, R_local, p_local):
    """Return the pose (R R_local, p + R p_local): 3x3 and 3 lists of nodes or floats."""
    p_new = [p[r] + sum((R[r][k] * p_local[k] for k in range(3)), 0.0) for r in range(3)]
    R_new = [[sum((R[r][k] * R_local[k][c] for k in range(3)), 0.0) for c in range(3)]
             for r in range(3)]
    return R_new, p_new


def tool_jacobian(model, grouping: str = "full") -> tuple[Graph, FunctionSpec]:
    """
    Return the tool's geometric Jacobian J(q), rows [v; w] in the world frame, as a graph.

    ``core.algorithms.kinematics.jacobian(model, q)``: column i is [z_i x (p - p_i); z_i] for a
    revolute joint, [z_i; 0] for a prismatic one (Siciliano et al. 2009, eqs. 7.18-7.19), p the
    tool point; frames T_{i-1,i} = [Rx(alpha_{i-1}) Rz(theta_i), p_{i-1,i}] (model.Chain).
    """
    n, ch = model.n, model.chain
    rows = rows_of(link_constants(model, grouping))
    g = Graph()
    q = _variables(g, "q", n)
    R = [[float(ch.base[r, c]) for c in range(3)] for r in range(3)]
    p = [float(ch.base[r, 3]) for r in range(3)]
    axes, origins = [], []
    for i, row in enumerate(rows):
        ca, sa = row[ne.COS_ALPHA], row[ne.SIN_ALPHA]
        ct, st = joint_trig(g, row, q[i])
        local = [[ct, -st, 0.0], [ca * st, ca * ct, -sa], [sa * st, sa * ct, ca]]
        slide = g.node(q[i]) if row[ne.PRISMATIC] != 0.0 else 0.0
        offset = [row[ne.PX], row[ne.PY] - sa * slide, row[ne.PZ] + ca * slide]
        R, p = _compose(R, p, local, offset)
        axes.append([R[r][2] for r in range(3)])
        origins.append(p)
    _, tip = _compose(R, p, [[0.0] * 3] * 3, [float(x) for x in ch.flange[:3, 3]])
    columns = []
    for i in range(n):
        z = axes[i]
        if row_prismatic(rows[i]):
            columns.append(list(z) + [0.0, 0.0, 0.0])
            continue
        d = [tip[r] - origins[i][r] for r in range(3)]
        columns.append([z[1] * d[2] - z[2] * d[1], z[2] * d[0] - z[0] * d[2],
                        z[0] * d[1] - z[1] * d[0]] + list(z))
    out = [[index_of(g, columns[i][r]) for i in range(n)] for r in range(6)]
    return g, FunctionSpec("jacobian", {"q": _names("q", n)}, out,
                           "J(q): the tool's geometric Jacobian, rows [v; w], world frame.")


def row_prismatic(row) -> bool:
    return row[ne.PRISMATIC] != 0.0


@dataclass
class ForwardDynamics:
    """Forward dynamics' graphs by each method, their counts, and the cheaper ``method``."""

    method: str
    graphs: dict                # method -> (Graph, FunctionSpec)
    counts: dict                # method -> OpCount


def cost(count: OpCount) -> float:
    """Return the measure by which forward dynamics' method is chosen (module docstring)."""
    return count.multiplications + count.additions + DIVISION_COST * count.divisions


def forward_methods(model) -> tuple[str, ...]:
    """
    Return the FORWARD_METHODS that can carry ``model``: both, or the LDL^T alone.

    A model with coupled drives adds the constant rotor matrix K^T D K - D to M
    (``core/algorithms/coupled.py``), which couples joints the articulated-body recursion
    treats one at a time; the LDL^T of the generated M (which holds it) carries it.
    """
    return ("ldlt",) if model.coupled_drives else FORWARD_METHODS


def choose_forward_dynamics(model, grouping: str = "full",
                            method: str | None = None) -> ForwardDynamics:
    """
    Return forward dynamics by both methods and the cheaper by :func:`cost` (or ``method``).

    Both graphs are built (tens of milliseconds for 7 joints); ties go to the LDL^T.  A model
    with coupled drives has the LDL^T only (:func:`forward_methods`).
    """
    methods = forward_methods(model)
    if method is not None and method not in methods:
        forward_dynamics_graph(model, method, grouping)         # (raises, saying why)
    graphs = {m: forward_dynamics_graph(model, m, grouping) for m in methods}
    counts = {m: g.count(spec.flat_outputs) for m, (g, spec) in graphs.items()}
    if method is None:
        method = min(sorted(methods, reverse=True), key=lambda m: cost(counts[m]))
    return ForwardDynamics(method, graphs, counts)


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
