"""
A small DAG of named scalar expressions: the analytical form of Renaud's principles.

Renaud (Renaud 1987, introduction and end of the extrinsic calculation) evaluates the model "under
an analytical form": additions of 0 and multiplications by 0 or 1 are deleted, and every
sub-expression that costs an operation gets a name that is reused, never expanded again.  This
module does exactly that, for scalars:

* constant folding: ``x + 0 = x``, ``x * 0 = 0``, ``x * 1 = x``, ``x * -1 = -x``, constants combine
  (``c1 * (c2 * x) = (c1 c2) x``), ``x - x = 0``;
* negation is free (operation-count convention of the issue): it is pulled out of products and
  absorbed into additions (``a + (-b) = a - b``), and ``b - a`` is stored as ``-(a - b)`` so both
  share one node;
* structural hashing: an operation on the same operands (commutative ones in a canonical order) is
  the same node, so a repeated sub-expression is computed once (common-subexpression reuse);
* counting: only nodes reachable from the requested outputs are counted (dead code, such as the
  x and y components of n_1 when only n_1 . z is a torque, costs nothing).

Nodes are integers (indices into ``Graph.nodes``); an operation's operands always have smaller
indices, so index order is an evaluation order.  :class:`Node` wraps one with Python's arithmetic
operators, so that a recursion written for floats builds the graph when run on nodes (the core's
``algorithms/newton_euler.py``); Python floats mixed in are constants.
"""
from __future__ import annotations

from collections import Counter

from ..core.formulations.opcount import OpCount

# Kinds of node.  'sub' is a - b; 'neg' is -a (free); 'div' is a / b (forward dynamics' pivots);
# 'sin'/'cos' of one operand; 'sign' is sgn(a) in {-1, 0, 1} (Coulomb friction).
CONST, VAR, ADD, SUB, MUL, DIV, NEG, SIN, COS, SIGN = ("const", "var", "add", "sub", "mul", "div",
                                                       "neg", "sin", "cos", "sign")
COUNTED = {ADD: "additions", SUB: "additions", MUL: "multiplications", DIV: "divisions",
           SIN: "sin_cos", COS: "sin_cos", SIGN: "signs"}


class Node:
    """
    A node of a :class:`Graph` with the operators +, -, * and unary -, folded and hashed.

    Floats (and numpy scalars) on either side are constants.  Comparisons are not defined: a
    recursion run on nodes may branch on its constants, never on its variables.
    """

    __slots__ = ("graph", "index")
    __array_ufunc__ = None          # numpy scalars defer to the reflected operators below

    def __init__(self, graph: "Graph", index: int):
        self.graph, self.index = graph, index

    def _operand(self, other) -> int:
        if isinstance(other, Node):
            return other.index
        return self.graph.const(other)

    def _new(self, index: int) -> "Node":
        return Node(self.graph, index)

    def __add__(self, other):
        return self._new(self.graph.add(self.index, self._operand(other)))

    def __radd__(self, other):
        return self._new(self.graph.add(self._operand(other), self.index))

    def __sub__(self, other):
        return self._new(self.graph.sub(self.index, self._operand(other)))

    def __rsub__(self, other):
        return self._new(self.graph.sub(self._operand(other), self.index))

    def __mul__(self, other):
        return self._new(self.graph.mul(self.index, self._operand(other)))

    def __rmul__(self, other):
        return self._new(self.graph.mul(self._operand(other), self.index))

    def __truediv__(self, other):
        return self._new(self.graph.div(self.index, self._operand(other)))

    def __rtruediv__(self, other):
        return self._new(self.graph.div(self._operand(other), self.index))

    def __neg__(self):
        return self._new(self.graph.neg(self.index))

    def __pos__(self):
        return self

    def __abs__(self):
        # |x| = x sgn(x): sgn is the graph's one non-smooth operation
        return self * self._new(self.graph.sign(self.index))

    def __repr__(self) -> str:
        return f"Node({self.index}: {self.graph.nodes[self.index][0]})"


def index_of(graph: "Graph", value) -> int:
    """Return the node index of a :class:`Node` or of a constant (a float)."""
    return value.index if isinstance(value, Node) else graph.const(value)


class Graph:
    """Builder of a hashed expression DAG with constant folding (see the module docstring)."""

    def __init__(self):
        self.nodes: list[tuple] = []          # (kind, operands, payload): payload = value or name
        self._index: dict[tuple, int] = {}
        self.labels: list[str] = []           # the step that first built each node (reporting)
        self.label = ""
        self.zero = self.const(0.0)
        self.one = self.const(1.0)

    # -- leaves ---------------------------------------------------------------------------------
    def _intern(self, kind: str, operands: tuple, payload=None) -> int:
        key = (kind, operands, payload)
        node = self._index.get(key)
        if node is None:
            node = len(self.nodes)
            self.nodes.append(key)
            self.labels.append(self.label)
            self._index[key] = node
        return node

    def const(self, value: float) -> int:
        value = float(value)
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"non-finite constant {value!r} in a generated expression")
        return self._intern(CONST, (), value + 0.0)  # + 0.0 turns -0.0 into 0.0

    def var(self, name: str) -> int:
        return self._intern(VAR, (), name)

    def node(self, index: int) -> Node:
        """Return node ``index`` with arithmetic operators (:class:`Node`)."""
        return Node(self, index)

    # -- inspection -----------------------------------------------------------------------------
    def kind(self, node: int) -> str:
        return self.nodes[node][0]

    def operands(self, node: int) -> tuple:
        return self.nodes[node][1]

    def payload(self, node: int):
        return self.nodes[node][2]

    def is_const(self, node: int, value: float | None = None) -> bool:
        k, _, v = self.nodes[node]
        return k == CONST and (value is None or v == value)

    def value(self, node: int) -> float:
        return self.nodes[node][2]

    # -- operations -----------------------------------------------------------------------------
    def neg(self, a: int) -> int:
        kind, ops, v = self.nodes[a]
        if kind == CONST:
            return self.const(-v)
        if kind == NEG:
            return ops[0]
        return self._intern(NEG, (a,))

    def add(self, a: int, b: int) -> int:
        ka, kb = self.kind(a), self.kind(b)
        if ka == CONST and kb == CONST:
            return self.const(self.value(a) + self.value(b))
        if self.is_const(a, 0.0):
            return b
        if self.is_const(b, 0.0):
            return a
        if ka == NEG and kb == NEG:
            return self.neg(self.add(self.operands(a)[0], self.operands(b)[0]))
        if ka == NEG:
            return self.sub(b, self.operands(a)[0])
        if kb == NEG:
            return self.sub(a, self.operands(b)[0])
        if kb == CONST and ka != CONST:  # constants last; otherwise operands in index order
            return self._intern(ADD, (a, b))
        if ka == CONST:
            return self._intern(ADD, (b, a))
        return self._intern(ADD, (a, b) if a < b else (b, a))

    def sub(self, a: int, b: int) -> int:
        if a == b:
            return self.zero
        ka, kb = self.kind(a), self.kind(b)
        if ka == CONST and kb == CONST:
            return self.const(self.value(a) - self.value(b))
        if self.is_const(b, 0.0):
            return a
        if self.is_const(a, 0.0):
            return self.neg(b)
        if kb == NEG:
            return self.add(a, self.operands(b)[0])
        if ka == NEG:
            return self.neg(self.add(self.operands(a)[0], b))
        if kb == CONST:  # x - c  ->  x + (-c): one canonical form for constant offsets
            return self.add(a, self.const(-self.value(b)))
        if ka == CONST:  # c - x  ->  -(x + (-c))
            return self.neg(self.sub(b, a))
        if a < b:  # b - a is stored once; a - b is its negation (free)
            return self.neg(self._intern(SUB, (b, a)))
        return self._intern(SUB, (a, b))

    def mul(self, a: int, b: int) -> int:
        ka, kb = self.kind(a), self.kind(b)
        if ka == CONST and kb == CONST:
            return self.const(self.value(a) * self.value(b))
        if kb == CONST:
            a, b, ka, kb = b, a, kb, ka
        if ka == CONST:
            v = self.value(a)
            if v == 0.0:
                return self.zero
            if v == 1.0:
                return b
            if v == -1.0:
                return self.neg(b)
            if v < 0.0:
                return self.neg(self.mul(self.const(-v), b))
            if kb == NEG:
                return self.neg(self.mul(a, self.operands(b)[0]))
            if kb == MUL and self.kind(self.operands(b)[0]) == CONST:  # c1 (c2 x) = (c1 c2) x
                c2, x = self.operands(b)
                return self.mul(self.const(v * self.value(c2)), x)
            return self._intern(MUL, (a, b))
        if ka == NEG:
            return self.neg(self.mul(self.operands(a)[0], b))
        if kb == NEG:
            return self.neg(self.mul(a, self.operands(b)[0]))
        return self._intern(MUL, (a, b) if a < b else (b, a))

    def div(self, a: int, b: int) -> int:
        """Return a / b: by a constant, a multiplication by its inverse; signs pulled out."""
        ka, kb = self.kind(a), self.kind(b)
        if kb == CONST:
            if self.value(b) == 0.0:
                raise ZeroDivisionError("division by a constant 0 in a generated expression")
            return self.mul(a, self.const(1.0 / self.value(b)))
        if self.is_const(a, 0.0):
            return self.zero
        if ka == NEG:
            return self.neg(self.div(self.operands(a)[0], b))
        if kb == NEG:
            return self.neg(self.div(a, self.operands(b)[0]))
        if ka == CONST and self.value(a) < 0.0:
            return self.neg(self.div(self.const(-self.value(a)), b))
        return self._intern(DIV, (a, b))

    def sin(self, a: int) -> int:
        if self.kind(a) == CONST:
            raise ValueError("sin of a constant must be folded by the caller")
        return self._intern(SIN, (a,))

    def cos(self, a: int) -> int:
        if self.kind(a) == CONST:
            raise ValueError("cos of a constant must be folded by the caller")
        return self._intern(COS, (a,))

    def sign(self, a: int) -> int:
        if self.kind(a) == CONST:
            v = self.value(a)
            return self.const((v > 0.0) - (v < 0.0))
        if self.kind(a) == NEG:
            return self.neg(self.sign(self.operands(a)[0]))
        return self._intern(SIGN, (a,))

    def sum(self, terms) -> int:
        total = self.zero
        for t in terms:
            total = self.add(total, t)
        return total

    def dot(self, xs, ys) -> int:
        return self.sum(self.mul(x, y) for x, y in zip(xs, ys))

    # -- analysis -------------------------------------------------------------------------------
    def reachable(self, outputs) -> list[int]:
        """Nodes the outputs depend on, in evaluation (index) order."""
        seen = set()
        stack = [o for o in outputs]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            stack.extend(self.nodes[node][1])
        return sorted(seen)

    def count(self, outputs) -> OpCount:
        tally = Counter(COUNTED.get(self.nodes[k][0]) for k in self.reachable(outputs))
        return OpCount(multiplications=tally["multiplications"], additions=tally["additions"],
                       sin_cos=tally["sin_cos"], signs=tally["signs"],
                       divisions=tally["divisions"])

    def label_reachable(self, outputs, label: str) -> None:
        """Give ``label`` to the nodes the outputs depend on that have none yet."""
        stack = list(outputs)
        while stack:      # (the nodes a labelled node depends on are labelled: stop there)
            node = stack.pop()
            if not self.labels[node]:
                self.labels[node] = label
                stack.extend(self.nodes[node][1])

    def count_by_label(self, outputs) -> dict[str, OpCount]:
        """Operation counts split by the label (step) under which each node was first built."""
        tallies: dict[str, Counter] = {}
        for k in self.reachable(outputs):
            what = COUNTED.get(self.nodes[k][0])
            if what:
                tallies.setdefault(self.labels[k], Counter())[what] += 1
        return {label: OpCount(multiplications=t["multiplications"], additions=t["additions"],
                               sin_cos=t["sin_cos"], signs=t["signs"],
                               divisions=t["divisions"])
                for label, t in sorted(tallies.items())}

    def evaluate(self, outputs, values: dict) -> list[float]:
        """Numeric value of the outputs given the variables (a check independent of the writer)."""
        import math
        val = {}
        for k in self.reachable(outputs):
            kind, ops, payload = self.nodes[k]
            x = [val[o] for o in ops]
            val[k] = {CONST: lambda: payload, VAR: lambda: float(values[payload]),
                      ADD: lambda: x[0] + x[1], SUB: lambda: x[0] - x[1], MUL: lambda: x[0] * x[1],
                      DIV: lambda: x[0] / x[1],
                      NEG: lambda: -x[0], SIN: lambda: math.sin(x[0]), COS: lambda: math.cos(x[0]),
                      SIGN: lambda: float((x[0] > 0) - (x[0] < 0))}[kind]()
        return [val[o] for o in outputs]
