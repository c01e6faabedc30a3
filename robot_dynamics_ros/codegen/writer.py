"""
Python source for expression DAG outputs: one flat, straight-line function per output set.

Every node used more than once gets a local name (``x<k>``) and is computed once; a node used
once is written inline in its single user (no work is repeated either way, and CPython then
spends no time storing and reloading it).  Constants are literals; negations are absorbed by the
DAG into subtractions wherever an addition uses them.  ``sin``/``cos``/``array`` are bound as
default arguments so that they are local-variable lookups.
"""
from __future__ import annotations

from dataclasses import dataclass

from .expr import ADD, CONST, COS, DIV, MUL, NEG, SIGN, SIN, SUB, VAR, Graph

MAX_INLINE_DEPTH = 12  # deeper single-use chains get names (keeps lines and parser stacks short)


@dataclass
class FunctionSpec:
    """
    One generated function: ``name(arg, ...)`` returning ``outputs`` as a numpy array.

    ``outputs`` is a list, or a list of rows for a matrix.  ``inputs`` maps each argument to the
    DAG variable names of its elements (so ``q`` -> ["q1", ..., "qn"]).
    """

    name: str
    inputs: dict[str, list[str]]
    outputs: list
    doc: str

    @property
    def flat_outputs(self) -> list[int]:
        out = []
        for item in self.outputs:
            out.extend(item if isinstance(item, (list, tuple)) else [item])
        return out


def _literal(value: float) -> str:
    return repr(float(value))


def plan(graph: Graph, outputs: list[int]) -> tuple[list[int], set[int]]:
    """
    Return (evaluation order, the nodes given a name) for ``outputs``: shared by both printers.

    A node is named when it is used more than once (a negation is written inline, its operand
    named), when sgn() reads it, or when its inline chain would be deeper than MAX_INLINE_DEPTH.
    """
    order = graph.reachable(outputs)
    uses: dict[int, int] = {}
    for k in order:
        for o in graph.operands(k):
            uses[o] = uses.get(o, 0) + 1
    for o in outputs:
        uses[o] = uses.get(o, 0) + 1
    for k in reversed(order):  # a negation used n times is written inline n times: its operand
        if graph.kind(k) == NEG:  # is then used n times too, and must be named, not recomputed
            uses[graph.operands(k)[0]] += uses[k] - 1
    sign_operands = {graph.operands(k)[0] for k in order if graph.kind(k) == SIGN}

    named: set[int] = set()
    depth: dict[int, int] = {}
    for k in order:
        kind = graph.kind(k)
        if kind in (CONST, VAR):
            depth[k] = 0
            continue
        d = 1 + max(depth[o] for o in graph.operands(k))
        if (uses[k] > 1 and kind != NEG) or k in sign_operands or d > MAX_INLINE_DEPTH:
            named.add(k)
            d = 0
        depth[k] = d
    return order, named


@dataclass(frozen=True)
class Syntax:
    """What differs between the printers' expressions: sin, cos and sgn (``{}``: the operand)."""

    sin: str
    cos: str
    sign: str


PYTHON = Syntax("_sin({})", "_cos({})", "(({x} > 0.0) - ({x} < 0.0))")


def printer(graph: Graph, named: set[int], syntax: Syntax):
    """
    Return ``(ref, expression)``: the text of a node as an operand, and of its own operation.

    A named node is ``x<k>``; a variable is its name; a constant a literal.  The arithmetic is
    the same in Python and C (``+``, ``-``, ``*``, ``/``, unary ``-``, parentheses).
    """
    def ref(k: int) -> str:
        kind = graph.kind(k)
        if kind == CONST:
            v = graph.value(k)
            return _literal(v) if v >= 0 else f"({_literal(v)})"
        if kind == VAR:
            return graph.payload(k)
        if k in named:
            return f"x{k}"
        return f"({expression(k)})"

    def expression(k: int) -> str:
        kind, ops = graph.kind(k), graph.operands(k)
        if kind == ADD:
            a, b = ops
            if graph.kind(b) == CONST and graph.value(b) < 0:
                return f"{ref(a)} - {_literal(-graph.value(b))}"
            return f"{ref(a)} + {ref(b)}"
        if kind == SUB:
            return f"{ref(ops[0])} - {ref(ops[1])}"
        if kind == MUL:
            return f"{ref(ops[0])} * {ref(ops[1])}"
        if kind == DIV:
            return f"{ref(ops[0])} / {ref(ops[1])}"
        if kind == NEG:
            return f"-{ref(ops[0])}"
        if kind == SIN:
            return syntax.sin.format(ref(ops[0]))
        if kind == COS:
            return syntax.cos.format(ref(ops[0]))
        if kind == SIGN:
            return syntax.sign.format(x=ref(ops[0]))
        raise AssertionError(kind)
    return ref, expression


def function_source(graph: Graph, spec: FunctionSpec) -> str:
    outputs = spec.flat_outputs
    order, named = plan(graph, outputs)
    ref, expression = printer(graph, named, PYTHON)

    used_vars = {graph.payload(k) for k in order if graph.kind(k) == VAR}
    args = list(spec.inputs)
    lines = [f"def {spec.name}({', '.join(args)}, _sin=_math.sin, _cos=_math.cos, "
             f"_array=_np.array, _ndarray=_np.ndarray):",
             f'    """{spec.doc}"""']
    for arg, names in spec.inputs.items():
        targets = [nm if nm in used_vars else "_" for nm in names]
        if all(t == "_" for t in targets):
            continue
        lhs = ", ".join(targets) + ("," if len(targets) == 1 else "")
        lines.append(f"    {lhs} = {arg}.tolist() if type({arg}) is _ndarray else {arg}")
    for k in order:
        if k in named:
            lines.append(f"    x{k} = {expression(k)}")

    def out(k: int) -> str:
        text = ref(k)
        return text if graph.kind(k) != CONST else _literal(graph.value(k))

    rows = []
    for item in spec.outputs:
        if isinstance(item, (list, tuple)):
            rows.append("(" + ", ".join(out(k) for k in item) + ",)")
        else:
            rows.append(out(item))
    body = ",\n        ".join(rows)
    lines.append(f"    return _array((\n        {body},\n    ))")
    return "\n".join(lines) + "\n"
