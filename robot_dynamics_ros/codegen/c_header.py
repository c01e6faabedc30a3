"""
C99 and C++17 printers: one header with a robot's dynamics, from the Python output's graphs.

The expression graphs are those of ``generate.py`` (the Python module's, plus M and n on one
graph and the tool Jacobian); ``writer.plan`` names the same nodes as in Python, and
``writer.printer`` writes the same arithmetic, with ``sin``/``cos`` of <math.h> (``std::`` of
<cmath> in C++).  Every function is straight-line code on ``double`` arrays in the robot file's
joint order: no allocation, no exception, no lock, no library beyond the C maths library, so a
real-time thread may call it.

The functions have C linkage in both languages and are ``static inline`` (C) or ``inline``
(C++), so the header may be included in many translation units; defining ``<PREFIX>_API``
(e.g. empty) before including it in one translation unit gives them external linkage there (a
shared library, for ctypes).  Forward dynamics solves M qdd = tau - n with an unrolled LDL^T
factorisation of the generated M (Golub and Van Loan, Matrix Computations, 4th ed., Alg. 4.1.2):
no square roots, n divisions.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field

from .expr import CONST, Graph
from .generate import GENERATOR_VERSION, check_model, header_functions
from .writer import FunctionSpec, Syntax, plan, printer

LANGUAGES = ("c", "cpp")
SYNTAX = {"c": Syntax("sin({})", "cos({})", "(double)(({x} > 0.0) - ({x} < 0.0))"),
          "cpp": Syntax("std::sin({})", "std::cos({})",
                        "static_cast<double>(({x} > 0.0) - ({x} < 0.0))")}
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# the arguments of each function of the header, after ``spec.inputs`` (its output array)
OUTPUT_ARGUMENT = {"rnea": "tau", "nonlinear_effects": "h", "gravity_torques": "g",
                   "mass_matrix": "M", "jacobian": "J"}
DOCS = {"rnea": "tau(q, qd, qdd): inverse dynamics with gravity, rotors and friction",
        "nonlinear_effects": "h(q, qd) = C(q, qd) qd + friction + g(q): tau at qdd = 0",
        "gravity_torques": "g(q): the torques that hold the robot still against gravity",
        "mass_matrix": "M(q), n x n row-major, rotors included",
        "jacobian": "J(q), 6 x n row-major: the tool's geometric Jacobian, rows [v; w], "
                    "world frame"}


@dataclass
class GeneratedHeader:
    robot: str
    prefix: str
    language: str
    source: str
    counts: dict = field(default_factory=dict)   # function -> OpCount (the graphs' counts)
    solve_counts: dict = field(default_factory=dict)  # the LDL^T solve: multiplications, ...
    description_sha256: str = ""


def default_prefix(name: str) -> str:
    """Return the robot's name made a C identifier (other characters become '_')."""
    text = re.sub(r"[^A-Za-z0-9_]", "_", name) or "robot"
    return "_" + text if text[0].isdigit() else text


def description_hash(model) -> str:
    """Return the SHA-256 of the model's description (its canonical dict), as hex."""
    text = json.dumps(model.to_dict(), sort_keys=True, default=float)
    return hashlib.sha256(text.encode()).hexdigest()


def c_string(text: str) -> str:
    """Return ``text`` as a C string literal: printable ASCII kept, everything else escaped."""
    out = []
    for byte in str(text).encode("utf-8"):
        ch = chr(byte)
        out.append(ch if 32 <= byte < 127 and ch not in '"\\?' else f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def c_double(value: float) -> str:
    """Return a C double literal (Python's shortest round-trip repr; infinities as HUGE_VAL)."""
    value = float(value)
    if math.isinf(value):
        return "HUGE_VAL" if value > 0 else "-HUGE_VAL"
    return repr(value)


def _body(graph: Graph, spec: FunctionSpec, syntax: Syntax, targets: list[str]) -> list[str]:
    """
    Return the statements of one function: inputs to locals, named nodes, then the outputs.

    ``targets``: the C lvalue (``tau[0]``) or declaration (``const double m0_0``) of each of
    ``spec.flat_outputs``.
    """
    outputs = spec.flat_outputs
    order, named = plan(graph, outputs)
    ref, expression = printer(graph, named, syntax)
    used = {graph.payload(k) for k in order if graph.kind(k) == "var"}
    lines = []
    for arg, names in spec.inputs.items():
        present = [(i, nm) for i, nm in enumerate(names) if nm in used]
        if not present:
            lines.append(f"(void){arg};")
        lines.extend(f"const double {nm} = {arg}[{i}];" for i, nm in present)
    lines.extend(f"const double x{k} = {expression(k)};" for k in order if k in named)
    for target, k in zip(targets, outputs):
        text = c_double(graph.value(k)) if graph.kind(k) == CONST else ref(k)
        lines.append(f"{target} = {text};")
    return lines


def ldl_solve(n: int, m, b, x) -> tuple[list[str], dict]:
    """
    Return statements solving M x = b by M = L D L^T, unrolled for n, and their counts.

    ``m(i, j)`` (i >= j), ``b(i)``: names of M's lower triangle and of the right-hand side;
    ``x(i)``: the lvalue of the solution.  Golub and Van Loan, Alg. 4.1.2 (v_k = L_jk d_k).
    """
    lines, mul, add = [], 0, 0

    def dot(terms):
        nonlocal mul, add
        mul, add = mul + len(terms), add + len(terms)
        return "".join(f" - {a} * {c}" for a, c in terms)
    for j in range(n):
        for k in range(j):
            lines.append(f"const double v{j}_{k} = L{j}_{k} * d{k};")
        mul += j
        terms = dot([(f"L{j}_{k}", f"v{j}_{k}") for k in range(j)])
        lines.append(f"const double d{j} = {m(j, j)}{terms};")
        lines.append(f"const double r{j} = 1.0 / d{j};")
        for i in range(j + 1, n):
            terms = dot([(f"L{i}_{k}", f"v{j}_{k}") for k in range(j)])
            lines.append(f"const double L{i}_{j} = ({m(i, j)}{terms}) * r{j};")
            mul += 1
    for i in range(n):          # L y = b, then z = D^-1 y
        terms = dot([(f"L{i}_{k}", f"y{k}") for k in range(i)])
        lines.append(f"const double y{i} = {b(i)}{terms};")
    for i in reversed(range(n)):  # L^T x = z
        terms = dot([(f"L{k}_{i}", f"s{k}") for k in range(i + 1, n)])
        lines.append(f"const double s{i} = y{i} * r{i}{terms};")
        mul += 1
    lines.extend(f"{x(i)} = s{i};" for i in range(n))
    return lines, {"multiplications": mul, "additions": add + n, "divisions": n}


def _signature(prefix: str, name: str, inputs, output: str) -> str:
    args = [f"const double *{arg}" for arg in inputs] + [f"double *{output}"]
    return f"{prefix.upper()}_API void {prefix}_{name}({', '.join(args)})"


def _function(prefix: str, spec: FunctionSpec, doc: str, lines: list[str], output: str) -> str:
    body = "\n".join("    " + line for line in lines)
    return (f"/* {doc} */\n{_signature(prefix, spec.name, spec.inputs, output)}\n"
            f"{{\n{body}\n}}\n")


def _plain_function(prefix, graph, spec, syntax, n) -> str:
    """One of FUNCTIONS or the Jacobian: outputs written to the output array, row-major."""
    output = OUTPUT_ARGUMENT[spec.name]
    targets = [f"{output}[{i}]" for i in range(len(spec.flat_outputs))]
    return _function(prefix, spec, DOCS[spec.name], _body(graph, spec, syntax, targets), output)


def _forward_dynamics(prefix, graph, spec, syntax, n) -> tuple[str, dict]:
    """Return the C of qdd = M^-1 (tau - n(q, qd)): M and n on one graph, then LDL^T."""
    targets = [f"const double m{i}_{j}" for i in range(n) for j in range(i + 1)]
    targets += [f"const double h{i}" for i in range(n)]
    lines = _body(graph, spec, syntax, targets)
    lines += [f"const double b{i} = tau[{i}] - h{i};" for i in range(n)]
    solve, counts = ldl_solve(n, lambda i, j: f"m{i}_{j}", lambda i: f"b{i}",
                              lambda i: f"qdd[{i}]")
    fd = FunctionSpec("forward_dynamics", {"q": [], "qd": [], "tau": []}, [], "")
    doc = ("qdd(q, qd, tau) = M(q)^-1 (tau - n(q, qd)): M and n on one graph, solved by an "
           "unrolled LDL^T (M must be positive definite)")
    return _function(prefix, fd, doc, lines + solve, "qdd"), counts


def _constants(model, prefix: str, digest: str) -> str:
    P, n = prefix.upper(), model.n

    def array(kind, values, name):
        return (f"static const {kind} {prefix}_{name}[{n}] = {{"
                + ", ".join(values) + "};")
    limits = [("lower_limits", model.lower), ("upper_limits", model.upper),
              ("velocity_limits", model.velocity_limit), ("effort_limits", model.effort_limit)]
    lines = [f"#define {P}_DOF {n}",
             f"#define {P}_GENERATOR_VERSION {GENERATOR_VERSION}",
             f"static const char {prefix}_robot_name[] = {c_string(model.name)};",
             f"static const char {prefix}_description_sha256[] = {c_string(digest)};",
             array("char *const", [c_string(x) for x in model.joint_names], "joint_names"),
             array("char *const", [c_string(x) for x in model.joint_types], "joint_types")]
    lines += [array("double", [c_double(v) for v in values], name) + "  /* HUGE_VAL: none */"
              for name, values in limits]
    lines += [f"{P}_API int {prefix}_dof(void) {{ return {n}; }}",
              f"{P}_API const char *{prefix}_name(void) {{ return {prefix}_robot_name; }}",
              f"{P}_API const char *{prefix}_description_hash(void) "
              f"{{ return {prefix}_description_sha256; }}"]
    return "\n".join(lines) + "\n"


def _comment(text: str) -> str:
    return "\n".join((" * " + line).rstrip() for line in text.replace("*/", "* /").split("\n"))


def _preamble(model, prefix, language, source, digest, counts, solve_counts) -> str:
    P = prefix.upper()
    count_lines = "\n".join(f"  {name:<18} {c}" for name, c in counts.items())
    solve = ", ".join(f"{v} {k}" for k, v in solve_counts.items())
    text = (f"Dynamics of robot {model.name!r}, generated by `robot-dynamics codegen` "
            f"(--language {language}) -- do not edit.\n\n"
            f"Source: {source or '<in memory>'}; description SHA-256 {digest}.\n"
            f"{model.n} joints in this order: {', '.join(model.joint_names)}.\n"
            "Renaud's quasi-minimal Newton-Euler (Renaud 1987) with the robot file's rotors, "
            "friction\n(F_v qd + F_v2 qd|qd| + (F_s + F_l |g(q)|) sgn(qd)) and gravity; arrays "
            "are double, in the\njoint order above; matrices row-major (M: n x n, J: 6 x n, "
            "rows [v; w] in the world frame).\n"
            "No allocation, no exception, no lock: only the C maths library.\n\n"
            f"Functions (C linkage), {P}_API: static inline (C) / inline (C++) unless defined "
            "before\nthe #include (e.g. empty, in one translation unit, to export them from a "
            "shared library).\n\n"
            f"Operation counts (negations free, sin/cos apart):\n{count_lines}\n"
            f"  forward_dynamics = mass_and_effects + LDL^T solve ({solve})\n")
    return "/*\n" + _comment(text) + "\n */\n"


def generate_header(model, language: str = "cpp", prefix: str | None = None,
                    grouping: str = "full", source: str | None = None) -> GeneratedHeader:
    """Return a C99 (``"c"``) or C++17 (``"cpp"``) header of ``model``'s dynamics."""
    from .generate import CodegenError
    check_model(model)
    if language not in LANGUAGES:
        raise CodegenError(f"{model.name}: language must be one of {list(LANGUAGES)}, "
                           f"got {language!r}")
    prefix = default_prefix(model.name) if prefix is None else prefix
    if not IDENTIFIER.match(prefix):
        raise CodegenError(f"prefix {prefix!r} is not a C identifier (letters, digits, '_', "
                           "not starting with a digit)")
    syntax, n, P = SYNTAX[language], model.n, prefix.upper()
    functions = header_functions(model, grouping)
    counts = {spec.name: g.count(spec.flat_outputs) for g, spec in functions}
    parts = [_plain_function(prefix, g, spec, syntax, n) for g, spec in functions
             if spec.name != "mass_and_effects"]
    g, spec = next((g, s) for g, s in functions if s.name == "mass_and_effects")
    fd, solve_counts = _forward_dynamics(prefix, g, spec, syntax, n)
    parts.append(fd)
    digest = description_hash(model)
    api = "static inline" if language == "c" else "inline"
    guard = f"{P}_DYNAMICS_{'H' if language == 'c' else 'HPP'}_"
    text = "\n".join([
        _preamble(model, prefix, language, source, digest, counts, solve_counts),
        f"#ifndef {guard}\n#define {guard}\n",
        "#include <math.h>\n" if language == "c" else "#include <cmath>\n#include <math.h>\n",
        f"#ifndef {P}_API\n#define {P}_API {api}\n#endif\n",
        '#ifdef __cplusplus\nextern "C" {\n#endif\n',
        _constants(model, prefix, digest), *parts,
        f'#ifdef __cplusplus\n}}  /* extern "C" */\n#endif\n\n#endif  /* {guard} */'])
    return GeneratedHeader(model.name, prefix, language, text + "\n", counts, solve_counts,
                           digest)
