"""
The third-order pass: continuous acceleration and bounded joint jerk, by linear programs.

A time law on nodes of the path, found after the time-optimal one.

With x = sd^2 and u = sdd as functions of the path parameter s (x' = 2 u), the joint jerk is

    d qdd / dt = q' sddd + 3 q'' sd sdd + q'''(s) sd^3,   sddd = sd u'(s)

(the third-order constraint of Pham, Caron & Nakamura 2017, "On the structure of the
time-optimal path parameterization problem with third-order constraints").  Divided by sd > 0,
the jerk limit J becomes

    abs(q' u' + 3 q'' u + q''' x) <= J / sqrt(x),

linear in (x, u, u') on the left; the right side is convex in x, so its tangent at a reference
law x_ref, J / sqrt(x_ref) (1.5 - 0.5 x / x_ref), bounds it from below everywhere: with it the
row is linear and safe (every solution keeps the jerk at the nodes), the convex-concave
linearisation of Debrouwere et al. 2013 ("Time-optimal path following for robots with
convex-concave constraints using sequential convex programming").  The torque (with friction),
velocity, acceleration and path-constraint rows are linear in (u, x) as in the second-order
problem (collocation.py, constraint_set.py), viscous friction linearised at x_ref.

Discretisation on nodes s_0 < ... < s_N: x_k and u_k at each node; inside a step u is linear in
s (x quadratic: x_{k+1} = x_k + Delta_k (u_k + u_{k+1}), so sdd is continuous); on the first and
the last step the law leaves and reaches rest with constant path jerk (s = j t^3 / 6 from rest:
x_1 = 1.5 Delta_0 u_1 and sddd = sd_1 u_1 / (3 Delta_0)), so the output starts and stops with
zero velocity and acceleration.  Every row is imposed at the nodes, the jerk rows at both ends
of every step.  x is bounded by the time-optimal law (no admissible law is faster anywhere:
Bobrow et al. 1985); the rows are linearised at a reference law (the caller's, a fraction of
the time-optimal one).  The objective is the duration linearised at the reference
(int ds / sqrt(x) falls by ds / (2 x_ref^1.5) per unit of x).

Solved with HiGHS (``highspy``; Huangfu & Hall 2018, dual simplex) on a subset of the rows,
warm-started from the last basis as the broken rows are added (see :func:`solve`): on the
bench's paths half the time of ``scipy.optimize.linprog`` (HiGHS, solved from scratch each
time).  Its dual simplex prices with Devex (Harris 1973, "Pivot selection methods of the Devex
LP code") rather than its default, dual steepest edge, whose edge weights it recomputes for the
rows added between the solves: the same optima, in about half HiGHS's time on the bench's
paths.  The output's points are the nodes, at the law's times (Gauss-Legendre quadrature of
int ds / sd on each step; closed form on the end steps), with q, qd = q' sd and
qdd = q' u + q'' x: joint_trajectory_controller interpolates them with quintics, whose limits
the caller re-checks densely.
"""
from __future__ import annotations

import highspy
import numpy as np
from scipy import sparse

from ..limits import ScalingError
from .collocation import point_data

X_FLOOR = 1e-6        # reference x below this fraction of its largest: treated as this
MAX_CUTS = 30         # rounds of constraint generation per program
CUT_TOLERANCE = 1e-9  # a row broken by more than this (scaled) is added
INNER, FROM_REST, TO_REST = 0, 1, 2      # the kinds of step
NO_BOUND = 1e200      # a row bound beyond this is no bound (an unconstrained kind: 1e300)
DEVEX = 1              # HiGHS's simplex_dual_edge_weight_strategy: Devex pricing (docstring)
GAUSS = np.polynomial.legendre.leggauss(5)


class NodeData:
    """
    The path and its torque coefficients at the nodes, and the path's q''' on each step.

    ``rest``: the nodes where the law is at rest (the ends, and where the time-optimal law
    stops: a flat point of the path); each step is inner, from rest or to rest (``kind``).
    """

    def __init__(self, model, path, s, torques, path_constraints=(), rest=None):
        self.s = s
        self.rest = np.zeros(s.size, bool) if rest is None else rest.copy()
        self.rest[[0, -1]] = True
        if np.any(self.rest[1:] & self.rest[:-1]):
            k = int(np.argmax(self.rest[1:] & self.rest[:-1]))
            raise ScalingError(f"jerk_limited: the law would rest on a whole step near "
                               f"s = {s[k]:.6g}: no motion there within the limits")
        self.kind = np.where(self.rest[:-1], FROM_REST, np.where(self.rest[1:], TO_REST, INNER))
        self.delta = np.diff(s)
        p = point_data(model, path, [(s, "right")], torques)[0]
        self.points = p
        # q''' on each step: its mean over the step (exact on a cubic spline's piece)
        left = path.sample(s[1:], side="left")[2]
        self.q3 = (left - p.ddq[:-1]) / self.delta[:, None]
        levels = model.coulomb + model.coulomb_load * np.abs(p.c)
        self.static = p.c + levels * np.sign(p.dq)          # gravity and Coulomb (sd > 0)
        self.viscous = model.viscous * p.dq                  # F_v q' (times sd)
        self.path_rows = [c.coefficients(model, p.q, p.dq, p.ddq, np.ones(s.size))
                          for c in path_constraints]
        self.mid_dq = path.sample(0.5 * (s[1:] + s[:-1]))[1]      # q' at the steps' middles


def _block(terms, lower, upper):
    """
    Rows lower <= sum(coef * z[col]) <= upper as (columns, values, b) pieces of A z <= b.

    ``terms``: (col, coef) pairs of equal-length flat arrays (one entry per row; a row's columns
    distinct); infinite bounds give no row.  Each piece's rows have one entry per term: (K, T)
    columns and values, the first term's column first (the row's node: see :func:`_stack`).
    """
    cols = np.column_stack([col for col, _ in terms])
    coefs = np.column_stack([coef for _, coef in terms])
    out = []
    for sign, bound in ((1.0, upper), (-1.0, -lower)):
        keep = np.abs(bound) < NO_BOUND
        if keep.all():
            out.append((cols, sign * coefs, bound))
        elif keep.any():
            out.append((cols[keep], sign * coefs[keep], bound[keep]))
    return out


def _stack(blocks, size):
    """
    Stack (columns, values, upper) pieces into a sparse A_ub, b_ub and each row's node.

    Built in CSR form directly (each piece has a fixed number of entries per row).  The terms
    are given in increasing column order (x at the row's node, then the u columns, which
    follow every x): the columns sorted within each row, as scipy's COO conversion leaves them.
    """
    group = np.concatenate([c[:, 0] for c, _, _ in blocks])   # x at each row's node
    indices = np.concatenate([c.ravel() for c, _, _ in blocks])
    data = np.concatenate([v.ravel() for _, v, _ in blocks])
    indptr = np.concatenate([[0], np.cumsum(np.concatenate(
        [np.full(b.size, c.shape[1]) for c, _, b in blocks]))])
    A = sparse.csr_matrix((data, indices, indptr),
                          shape=(indptr.size - 1, size))
    return A, np.concatenate([b for _, _, b in blocks]), group


def _node_rows(data: NodeData, limits, reference):
    """Return the torque, acceleration and path-constraint rows at the inner nodes 1..N-1."""
    N, p = data.s.size - 1, data.points
    k = np.arange(1, N)
    shape = (k.size, p.q.shape[1])
    X, U = np.broadcast_to(k[:, None], shape).ravel(), np.broadcast_to(N + 1 + k[:, None],
                                                                       shape).ravel()
    root = np.sqrt(reference[k])[:, None]
    viscous = data.viscous[k]
    # viscous friction F_v q' sd, linearised at the reference (the tangent of sqrt)
    cx = (p.b[k] + 0.5 * viscous / root).ravel()
    const = data.static[k] + 0.5 * viscous * root
    blocks = _block([(X, cx), (U, p.a[k].ravel())],
                    np.broadcast_to(limits.effort_lower - const, shape).ravel(),
                    np.broadcast_to(limits.effort_upper - const, shape).ravel())
    acc = np.broadcast_to(limits.acceleration, shape).ravel()
    if np.isfinite(acc).any():
        blocks += _block([(X, p.ddq[k].ravel()), (U, p.dq[k].ravel())], -acc, acc)
    for a, b, c, lower, upper in data.path_rows:
        m = a.shape[1]
        Xp, Up = np.repeat(k, m), np.repeat(N + 1 + k, m)
        blocks += _block([(Xp, b[k].ravel()), (Up, a[k].ravel())],
                         (lower[k] - c[k]).ravel(), (upper[k] - c[k]).ravel())
    # velocity in the middle of the inner steps (x there: x_i + Delta (0.75 u_i + 0.25 u_i+1)),
    # where x, quadratic in s, may bulge above its values at the nodes
    i = np.flatnonzero(data.kind == INNER)
    shape = (i.size, p.q.shape[1])
    d = np.broadcast_to(data.delta[i][:, None], shape).ravel()
    dq2 = (data.mid_dq[i] ** 2).ravel()
    rep = (lambda v: np.broadcast_to(v[:, None], shape).ravel())
    blocks += _block([(rep(i), dq2), (rep(N + 1 + i), 0.75 * d * dq2),
                      (rep(N + 2 + i), 0.25 * d * dq2)], np.full(dq2.size, -np.inf),
                     np.broadcast_to(limits.velocity ** 2, shape).ravel())
    return blocks


def _jerk_rows(data: NodeData, jerk, reference):
    """
    Return the jerk rows at both ends of every step (module docstring).

    Inner steps: q'_k (u_{i+1} - u_i) / Delta_i + 3 q''_k u_k + q'''_i x_k at k = i, i + 1; the
    end steps: constant path jerk sd_1 u_1 / (3 Delta_0) (and its mirror at the end).
    """
    N, p = data.s.size - 1, data.points
    n, d, U = p.q.shape[1], data.delta, N + 1
    blocks = []

    def add(node, x_coef, pairs):
        """Rows at nodes ``node`` (K,): x_node with x_coef, and (u index, coef) pairs."""
        cols = np.stack([node] + [col for col, _ in pairs], axis=1)[:, None, :]
        cols = np.broadcast_to(cols, (node.size, n, cols.shape[2])).reshape(-1, cols.shape[2])
        # J / sd, convex in x, bounded below by its tangent at the reference: J / sd_ref
        # (1.5 - 0.5 x / x_ref), an inner (safe) linearisation everywhere
        ref = reference[node][:, None]
        level = (1.5 * jerk[None, :] / np.sqrt(ref)).ravel()
        slope = (0.5 * jerk[None, :] / ref ** 1.5).ravel()
        coefs = np.stack([x_coef.ravel()] + [coef.ravel() for _, coef in pairs], axis=1)
        for sign in (1.0, -1.0):
            signed = sign * coefs
            signed[:, 0] += slope
            blocks.append((cols, signed, level))
    inner = np.flatnonzero(data.kind == INNER)
    for k, own in ((inner, 0), (inner + 1, 1)):
        slope = p.dq[k] / d[inner][:, None]
        three = 3.0 * p.ddq[k]
        add(k, data.q3[inner], [(U + inner, -slope + (three if own == 0 else 0.0)),
                                (U + inner + 1, slope + (three if own == 1 else 0.0))])
    for kind, shift, sign in ((FROM_REST, 1, 1.0), (TO_REST, 0, -1.0)):
        step = np.flatnonzero(data.kind == kind)
        node, far = step + shift, step + 1 - shift
        rate = sign / (3.0 * d[step])[:, None]            # sddd / sd_node per unit of u_node
        add(node, np.zeros((step.size, n)), [(U + node, p.dq[far] * rate)])
        add(node, data.q3[step], [(U + node, p.dq[node] * rate + 3.0 * p.ddq[node])])
    return blocks


def _equalities(data: NodeData):
    """
    Return the steps' equalities: x_{i+1} = x_i + Delta_i (u_i + u_{i+1}) on inner steps.

    From rest with constant path jerk, x_{i+1} = 1.5 Delta_i u_{i+1}; to rest, its mirror
    x_i = -1.5 Delta_i u_i.
    """
    N, d, kind = data.s.size - 1, data.delta, data.kind
    inner, start, end = (np.flatnonzero(kind == k) for k in (INNER, FROM_REST, TO_REST))
    a, b, c = inner.size, start.size, end.size
    r = np.arange(a)
    rows = np.concatenate([r, r, r, r, a + np.arange(b), a + np.arange(b),
                           a + b + np.arange(c), a + b + np.arange(c)])
    cols = np.concatenate([inner + 1, inner, N + 1 + inner, N + 2 + inner,
                           start + 1, N + 2 + start, end, N + 1 + end])
    vals = np.concatenate([np.ones(a), -np.ones(a), -d[inner], -d[inner],
                           np.ones(b), -1.5 * d[start], np.ones(c), 1.5 * d[end]])
    A = sparse.csr_matrix((vals, (rows, cols)), shape=(a + b + c, 2 * (N + 1)))
    return A, np.zeros(a + b + c)


def solve(data: NodeData, limits, upper, reference):
    """
    Solve the linear program: the fastest (x, u) at the nodes, rows frozen at ``reference``.

    ``upper``: x's upper bound at each node (the time-optimal law, the velocity limits).
    Returns (x, u).

    Most rows never bind, so the program is solved on a subset of them (constraint generation,
    as cutting-plane methods do): the rows the solution breaks are added and it is solved again,
    until it breaks none; the first rows are those x's bound breaks.  Variables are scaled by
    x's bound (x / upper lies in [0, 1], and the linearised duration weighs each node by about
    its time step: well conditioned for HiGHS).
    """
    N = data.s.size - 1
    ref = np.maximum(reference, X_FLOOR * reference.max())
    blocks = _node_rows(data, limits, ref) + _jerk_rows(data, limits.jerk, ref)
    A_ub, b_ub, group = _stack(blocks, 2 * (N + 1))
    np.maximum(b_ub, 0.0, out=b_ub)       # rest (x = u = 0) stays admissible (static: checked)
    A_eq, b_eq = _equalities(data)
    x_max = np.where(data.rest, 0.0, upper)
    scale = np.empty(2 * (N + 1))
    scale[:N + 1] = np.maximum(x_max, 1e-9 * x_max.max())
    scale[N + 1:] = x_max.max() * 20.0 / (data.s[-1] - data.s[0])
    span = 0.5 * (np.append(data.delta, 0.0) + np.append(0.0, data.delta))
    weight = np.zeros(2 * (N + 1))
    weight[:N + 1] = -span / ref ** 1.5 * scale[:N + 1]
    weight /= np.abs(weight).max()
    A_ub.data *= scale[A_ub.indices]
    A_eq.data *= scale[A_eq.indices]
    bounds = np.column_stack([np.concatenate([np.zeros(N + 1), np.full(N + 1, -np.inf)]),
                              np.concatenate([x_max / scale[:N + 1], np.full(N + 1, np.inf)])])
    bounds[N + 1 + np.flatnonzero(data.rest)] = 0.0
    norm = np.sqrt(np.maximum(np.add.reduceat(A_ub.data ** 2, A_ub.indptr[:-1]), 1e-300))
    program = _Program(weight, bounds, A_eq, b_eq)
    rows = np.zeros(b_ub.size, bool)
    # seeded with the rows most broken at x's bound (and u = x' / 2 there): the program without
    # rows would find about that law, so its solve is skipped (one solve fewer of 5-8)
    z = np.concatenate([x_max, 0.5 * np.gradient(x_max, data.s)]) / scale
    slack = (b_ub - A_ub @ z) / norm
    solved = False
    for _ in range(MAX_CUTS):
        broken = (slack < -CUT_TOLERANCE) & ~rows
        if solved and not broken.any():
            break
        if broken.any():
            new = _worst_per_node(np.flatnonzero(broken), slack, group)
            program.add(A_ub, new, b_ub)
            rows[new] = True
        z, solved = program.run(), True
        slack = (b_ub - A_ub @ z) / norm
    z = z * scale
    return np.maximum(z[:N + 1], 0.0), z[N + 1:]


def _worst_per_node(broken, slack, group):
    """Return the most broken row of each node among ``broken`` (indices)."""
    order = broken[np.lexsort((slack[broken], group[broken]))]
    _, first = np.unique(group[order], return_index=True)
    return order[first]


class _QuietHighs(highspy.Highs):
    """
    A ``highspy.Highs`` silent from its construction on.

    HiGHS prints its banner on the C stdout at the first call made with ``output_flag`` true
    (HiGHS issue 1702: "output_flag must be set to false before calling a HiGHS method"), and
    ``highspy.Highs.__init__`` makes one (``enableCallbacks``); the banner would land in the
    command's output and the nodes' logs.  The option is set here, first: nothing process-wide
    (no file descriptor redirected: the nodes are multi-threaded).
    """

    def enableCallbacks(self):
        self.setOptionValue("output_flag", False)
        super().enableCallbacks()


class _Program:
    """A HiGHS linear program to which rows are added, each solve warm-started from the last."""

    def __init__(self, cost, bounds, A_eq, b_eq):
        self.h = h = _QuietHighs()
        h.setOptionValue("presolve", "off")
        h.setOptionValue("simplex_dual_edge_weight_strategy", DEVEX)
        inf = highspy.kHighsInf
        h.addVars(cost.size, np.where(np.isfinite(bounds[:, 0]), bounds[:, 0], -inf),
                  np.where(np.isfinite(bounds[:, 1]), bounds[:, 1], inf))
        h.changeColsCost(cost.size, np.arange(cost.size, dtype=np.int32), cost)
        self._add(A_eq, np.arange(b_eq.size), b_eq, b_eq)

    def _add(self, A, rows, lower, upper):
        """Add the rows ``rows`` of the CSR matrix ``A`` (indices) with their bounds."""
        if not rows.size:
            return
        begin, count = A.indptr[rows], np.diff(A.indptr)[rows]
        starts = np.concatenate([[0], np.cumsum(count)[:-1]])
        take = np.repeat(begin - starts, count) + np.arange(count.sum())
        self.h.addRows(rows.size, lower, upper, take.size, starts.astype(np.int32),
                       A.indices[take].astype(np.int32), A.data[take])

    def add(self, A, rows, upper):
        """Add the rows ``rows`` (indices) of A z <= upper."""
        self._add(A, rows, np.full(rows.size, -highspy.kHighsInf), upper[rows])

    def run(self) -> np.ndarray:
        h = self.h
        h.run()
        status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise ScalingError(f"jerk_limited: the third-order program found no law "
                               f"({h.modelStatusToString(status)})")
        return np.array(h.getSolution().col_value)


def node_times(data: NodeData, x, u):
    """
    Return the law's time at every node (from 0).

    Inner steps: int ds / sqrt(x(s)) with x quadratic in s, by 5-point Gauss-Legendre; steps
    from or to rest (constant path jerk): 2 sd / abs(sdd) at their moving node.
    """
    s, kind = data.s, data.kind
    d = np.diff(s)
    xi, w = GAUSS
    inner = np.flatnonzero(kind == INNER)
    sigma = 0.5 * (xi[None, :] + 1.0) * d[inner, None]
    slope = (u[inner + 1] - u[inner]) / d[inner]
    xs = x[inner, None] + 2.0 * u[inner, None] * sigma + slope[:, None] * sigma ** 2
    moving = np.where(kind == FROM_REST, np.arange(d.size) + 1, np.arange(d.size))
    ends = kind != INNER
    if np.any(xs <= 0.0) or np.any(x[moving[ends]] <= 0.0) or np.any(u[moving[ends]] == 0.0):
        raise ScalingError("jerk_limited: the third-order law stops inside the path")
    steps = np.empty(d.size)
    steps[inner] = 0.5 * d[inner] * (w[None, :] / np.sqrt(xs)).sum(axis=1)
    steps[ends] = 2.0 * np.sqrt(x[moving[ends]]) / np.abs(u[moving[ends]])
    return np.concatenate([[0.0], np.cumsum(steps)])
