"""
C99 and C++17 printers: one header with a robot's dynamics, from the Python output's graphs.

The expression graphs are those of ``generate.py`` (the Python module's, plus forward dynamics
and the tool Jacobian); ``writer.plan`` names the same nodes as in Python, and
``writer.printer`` writes the same arithmetic, with ``sin``/``cos`` of <math.h> (``std::`` of
<cmath> in C++).  Every function is straight-line code on ``double`` arrays in the robot file's
joint order: no allocation, no exception, no lock, no library beyond the C maths library, so a
real-time thread may call it.

The functions have C linkage in both languages and are ``static inline`` (C) or ``inline``
(C++), so the header may be included in many translation units; defining ``<PREFIX>_API``
(e.g. empty) before including it in one translation unit gives them external linkage there (a
shared library, for ctypes).  Forward dynamics is the graph of the cheaper of two methods for
the robot (``generate.choose_forward_dynamics``: the articulated-body algorithm, or an unrolled
LDL^T of the generated M, Golub and Van Loan, Matrix Computations, 4th ed., Alg. 4.1.2); the
header's comment gives both methods' operation counts.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field

from .expr import CONST, Graph
from .generate import (DIVISION_COST, FORWARD_METHODS, GENERATOR_VERSION, CodegenError,
                       build_functions, check_model, choose_forward_dynamics, tool_jacobian)
from .writer import FunctionSpec, Syntax, plan, printer

LANGUAGES = ("c", "cpp")
SYNTAX = {"c": Syntax("sin({})", "cos({})", "(double)(({x} > 0.0) - ({x} < 0.0))"),
          "cpp": Syntax("std::sin({})", "std::cos({})",
                        "static_cast<double>(({x} > 0.0) - ({x} < 0.0))")}
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# the arguments of each function of the header, after ``spec.inputs`` (its output array)
OUTPUT_ARGUMENT = {"rnea": "tau", "nonlinear_effects": "h", "gravity_torques": "g",
                   "mass_matrix": "M", "jacobian": "J", "forward_dynamics": "qdd"}
DOCS = {"rnea": "tau(q, qd, qdd): inverse dynamics with gravity, rotors and friction",
        "nonlinear_effects": "h(q, qd) = C(q, qd) qd + friction + g(q): tau at qdd = 0",
        "gravity_torques": "g(q): the torques that hold the robot still against gravity",
        "mass_matrix": "M(q), n x n row-major, rotors included",
        "jacobian": "J(q), 6 x n row-major: the tool's geometric Jacobian, rows [v; w], "
                    "world frame",
        "forward_dynamics": "qdd(q, qd, tau) = M(q)^-1 (tau - n(q, qd)), friction and rotors "
                            "included (M must be positive definite)"}
METHOD_DOCS = {"aba": "by the articulated-body algorithm, unrolled",
               "ldlt": "by M and n on one graph and an unrolled LDL^T of M"}


@dataclass
class GeneratedHeader:
    robot: str
    prefix: str
    language: str
    source: str
    counts: dict = field(default_factory=dict)   # function -> OpCount (the graphs' counts)
    forward_method: str = ""                     # FORWARD_METHODS: the one forward_dynamics is
    forward_counts: dict = field(default_factory=dict)  # method -> OpCount, both methods
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


def _signature(prefix: str, name: str, inputs, output: str) -> str:
    args = [f"const double *{arg}" for arg in inputs] + [f"double *{output}"]
    return f"{prefix.upper()}_API void {prefix}_{name}({', '.join(args)})"


def _function(prefix: str, spec: FunctionSpec, doc: str, lines: list[str], output: str) -> str:
    body = "\n".join("    " + line for line in lines)
    return (f"/* {doc} */\n{_signature(prefix, spec.name, spec.inputs, output)}\n"
            f"{{\n{body}\n}}\n")


def _plain_function(prefix, graph, spec, syntax, doc: str | None = None,
                    name: str | None = None) -> str:
    """One function: its outputs written to the output array, row-major; ``name``: its own."""
    output = OUTPUT_ARGUMENT[spec.name]
    targets = [f"{output}[{i}]" for i in range(len(spec.flat_outputs))]
    lines = _body(graph, spec, syntax, targets)
    if name:
        spec = FunctionSpec(name, spec.inputs, spec.outputs, spec.doc)
    return _function(prefix, spec, doc or DOCS[spec.name], lines, output)


def _forward_alias(prefix: str, method: str) -> str:
    """Return the chosen forward dynamics as a call of its method's function (``both``)."""
    return (f"/* forward dynamics by the cheaper method for this robot: {method} */\n"
            f"{_signature(prefix, 'forward_dynamics', ('q', 'qd', 'tau'), 'qdd')}\n"
            f"{{\n    {prefix}_forward_dynamics_{method}(q, qd, tau, qdd);\n}}\n")


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


def _preamble(model, prefix, language, source, digest, header) -> str:
    P = prefix.upper()
    count_lines = "\n".join(f"  {name:<18} {c}" for name, c in header.counts.items())
    methods = "\n".join(
        f"  forward dynamics by {method:<5} {c}"
        + ("  <- forward_dynamics" if method == header.forward_method else "")
        for method, c in header.forward_counts.items())
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
            f"{methods}\n(forward_dynamics: the cheaper method for this robot by multiplications "
            f"+ additions + {DIVISION_COST} x divisions)\n")
    return "/*\n" + _comment(text) + "\n */\n"


def generate_header(model, language: str = "cpp", prefix: str | None = None,
                    grouping: str = "full", source: str | None = None,
                    forward: str = "auto") -> GeneratedHeader:
    """
    Return a C99 (``"c"``) or C++17 (``"cpp"``) header of ``model``'s dynamics.

    ``forward``: forward dynamics' method, "auto" (the cheaper:
    ``generate.choose_forward_dynamics``), one of FORWARD_METHODS, or "both":
    ``<prefix>_forward_dynamics_aba`` and ``_ldlt`` besides ``<prefix>_forward_dynamics`` (the
    cheaper, calling one of them), for tests and the benchmark.
    """
    check_model(model)
    if language not in LANGUAGES:
        raise CodegenError(f"{model.name}: language must be one of {list(LANGUAGES)}, "
                           f"got {language!r}")
    if forward not in ("auto", "both") + FORWARD_METHODS:
        raise CodegenError(f"{model.name}: forward must be 'auto', 'both' or one of "
                           f"{list(FORWARD_METHODS)}, got {forward!r}")
    prefix = default_prefix(model.name) if prefix is None else prefix
    if not IDENTIFIER.match(prefix):
        raise CodegenError(f"prefix {prefix!r} is not a C identifier (letters, digits, '_', "
                           "not starting with a digit)")
    syntax, P = SYNTAX[language], prefix.upper()
    functions = build_functions(model, grouping) + [tool_jacobian(model, grouping)]
    choice = choose_forward_dynamics(model, grouping,
                                     None if forward in ("auto", "both") else forward)
    header = GeneratedHeader(model.name, prefix, language, "",
                             {spec.name: g.count(spec.flat_outputs) for g, spec in functions},
                             choice.method, choice.counts, description_hash(model))
    header.counts["forward_dynamics"] = choice.counts[choice.method]
    parts = [_plain_function(prefix, g, spec, syntax) for g, spec in functions]
    if forward == "both":
        parts += [_plain_function(prefix, g, spec, syntax,
                                  f"{DOCS['forward_dynamics']} {METHOD_DOCS[method]}",
                                  f"forward_dynamics_{method}")
                  for method, (g, spec) in choice.graphs.items()]
        parts.append(_forward_alias(prefix, choice.method))
    else:
        g, spec = choice.graphs[choice.method]
        parts.append(_plain_function(prefix, g, spec, syntax, f"{DOCS['forward_dynamics']} "
                                     f"{METHOD_DOCS[choice.method]}"))
    api = "static inline" if language == "c" else "inline"
    guard = f"{P}_DYNAMICS_{'H' if language == 'c' else 'HPP'}_"
    header.source = "\n".join([
        _preamble(model, prefix, language, source, header.description_sha256, header),
        f"#ifndef {guard}\n#define {guard}\n",
        "#include <math.h>\n" if language == "c" else "#include <cmath>\n#include <math.h>\n",
        f"#ifndef {P}_API\n#define {P}_API {api}\n#endif\n",
        '#ifdef __cplusplus\nextern "C" {\n#endif\n',
        _constants(model, prefix, header.description_sha256), *parts,
        f'#ifdef __cplusplus\n}}  /* extern "C" */\n#endif\n\n#endif  /* {guard} */']) + "\n"
    return header
