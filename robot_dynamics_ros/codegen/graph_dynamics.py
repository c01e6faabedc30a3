"""
The core's Newton-Euler recursion run on the expression graph: torques as nodes.

``core/algorithms/newton_euler.py`` is Renaud's projected algorithm, steps (0)-(10) (Renaud
1987), written once for any number type.  Run here on :class:`~.expr.Node` values, its
arithmetic builds the graph, which deletes the additions of 0 and the multiplications by 0 or 1
and names every sub-expression once: Renaud's "analytical form" (Renaud 1987).  What
needs a function is supplied in graph form: the joint sines and cosines (a multiple of pi/2 in
theta_i turns cos(q + theta0) into +-cos q or +-sin q) and sgn(qd) for Coulomb friction.
The core's articulated-body algorithm (``core/algorithms/aba.py``, written the same way) runs on
the graph too, and an LDL^T solve is unrolled on it: forward dynamics' two methods.
"""
from __future__ import annotations

from ..core.algorithms import aba, newton_euler as ne
from ..core.control.friction import coulomb_level
from ..core.model.bodies import quarter_turns
from ..core.model.coupling import coupling_terms
from ..core.transforms import exact_cos_sin
from .expr import Graph, index_of


def joint_trig(graph: Graph, row, q: int) -> tuple:
    """Return (cos theta_i, sin theta_i) as nodes or floats for the joint variable node ``q``."""
    g = graph
    theta0 = row[ne.THETA0]
    if row[ne.PRISMATIC] != 0.0:
        return exact_cos_sin(theta0)
    turns = quarter_turns(theta0)
    if turns is None:
        angle = g.add(q, g.const(theta0))
        return g.node(g.cos(angle)), g.node(g.sin(angle))
    cq, sq = g.node(g.cos(q)), g.node(g.sin(q))
    return [(cq, sq), (-sq, cq), (-cq, -sq), (sq, -cq)][turns]


def torques(graph: Graph, rows, gravity, q: list, qd: list, qdd: list,
            label: bool = False) -> list[int]:
    """
    Return tau as node indices: the recursion on the rows of constants ``rows``.

    ``q``, ``qd``, ``qdd``: node indices (variables, or ``graph.zero``); ``gravity``: three
    floats in frame 0 (zeros: no gravity).  Friction is included where the rows have it (at
    qd = 0 it folds away).  ``label``: name each node's step (:func:`label_steps`).
    """
    g = graph
    n = len(rows)
    q_, qd_, qdd_, trig, signs, ws = _recursion_inputs(g, rows, q, qd, qdd, ne.N_WORKSPACE)
    tau = [0.0] * n
    moving = any(k != g.zero for k in list(qd) + list(qdd))
    ne.forward_pass(rows, q_, qd_, qdd_, [t[0] for t in trig], [t[1] for t in trig],
                    [float(x) for x in gravity], ws, moving)
    ne.backward_pass(rows, q_, qd_, qdd_, signs, (0.0,) * 6, ws, tau, moving)
    if label:
        label_steps(g, trig, ws, tau)
    return [index_of(g, t) for t in tau]


def _recursion_inputs(g: Graph, rows, q: list, qd: list, third: list, workspace: int):
    """
    Return what a recursion on the graph starts from (Newton-Euler's and the ABA's alike).

    The nodes of ``q``, ``qd`` and ``third`` (qdd or tau), each joint's (cos, sin) of its angle,
    sgn(qd) and one workspace of ``workspace`` entries per joint.
    """
    nodes = [[g.node(k) for k in v] for v in (q, qd, third)]
    trig = [joint_trig(g, rows[i], q[i]) for i in range(len(rows))]
    signs = [g.node(g.sign(k)) for k in qd]
    return (*nodes, trig, signs, [[0.0] * workspace for _ in rows])


def with_extra_friction(graph: Graph, model, rows, gravity, q: list, qd: list,
                        tau: list) -> list[int]:
    """
    Return tau + F_v2 qd|qd| + F_l |g(q)| sgn(qd) as node indices, where the model has them.

    The friction law's terms beyond the rows' F_v, F_s (``core/control/friction.py``; the dry
    friction's level by its ``coulomb_level``), g(q) the recursion's own gravity torques on the
    same graph; |x| is x sgn(x) (``expr.Node.__abs__``).
    """
    if not model.has_extra_friction:
        return tau
    g, n = graph, len(rows)
    load = None
    if any(model.coulomb_load):
        load = torques(g, rows, gravity, q, [g.zero] * n, [g.zero] * n)
    out = []
    for i in range(n):
        t, v, s = g.node(tau[i]), g.node(qd[i]), g.node(g.sign(qd[i]))
        if model.viscous_quadratic[i] != 0.0:
            t = t + float(model.viscous_quadratic[i]) * (v * v * s)
        if load is not None and model.coulomb_load[i] != 0.0:     # (F_s: in the rows)
            t = t + coulomb_level(0.0, float(model.coulomb_load[i]), g.node(load[i])) * s
        out.append(index_of(g, t))
    return out


def articulated_accelerations(graph: Graph, rows, gravity, q: list, qd: list,
                              tau: list) -> list[int]:
    """
    Return qdd as node indices: the core's articulated-body algorithm (``aba.py``) on the graph.

    Featherstone, Rigid Body Dynamics Algorithms (2008), Table 7.1, with rotors and F_v, F_s
    friction, run on :class:`~.expr.Node` values as the Newton-Euler recursion is: its three
    passes (velocities, articulated inertias, accelerations) become one straight line whose
    divisions are those by the pivots D_i.  ``rows``: plain bodies (``aba.py``); ``q``, ``qd``,
    ``tau``: node indices (``tau`` without the friction law's further terms).
    """
    g = graph
    n = len(rows)
    q_, qd_, tau_, trig, signs, ws = _recursion_inputs(g, rows, q, qd, tau, aba.N_ABA_WORKSPACE)
    qdd = [0.0] * n
    aba.velocities(rows, q_, qd_, [t[0] for t in trig], [t[1] for t in trig], ws)
    aba.inertias(rows, qd_, tau_, signs, (0.0,) * 6, ws)
    aba.accelerations(rows, [float(x) for x in gravity], ws, qdd)
    return [index_of(g, x) for x in qdd]


def ldl_solve(graph: Graph, lower: list, b: list) -> list[int]:
    """
    Return x solving M x = b as node indices, by M = L D L^T unrolled on the graph.

    ``lower[i][j]`` (j <= i): M's lower triangle, ``b``: node indices.  Golub and Van Loan,
    Matrix Computations, 4th ed., Alg. 4.1.2 (v_k = L_jk d_k), then L y = b, D z = y and
    L^T x = z: no square root, one division per pivot (1 / d_j, then multiplications); the
    graph folds what the structural zeros of M make 0.
    """
    g, n = graph, len(b)
    M = [[g.node(k) for k in row] for row in lower]
    L = [[0.0] * n for _ in range(n)]
    d, inverse = [0.0] * n, [0.0] * n
    for j in range(n):
        v = [L[j][k] * d[k] for k in range(j)]
        d[j] = M[j][j] - sum((L[j][k] * v[k] for k in range(j)), 0.0)
        inverse[j] = 1.0 / d[j]
        for i in range(j + 1, n):
            L[i][j] = (M[i][j] - sum((L[i][k] * v[k] for k in range(j)), 0.0)) * inverse[j]
    y = [0.0] * n
    for i in range(n):                      # L y = b
        y[i] = g.node(b[i]) - sum((L[i][k] * y[k] for k in range(i)), 0.0)
    x = [0.0] * n
    for i in reversed(range(n)):            # L^T x = D^-1 y
        x[i] = y[i] * inverse[i] - sum((L[k][i] * x[k] for k in range(i + 1, n)), 0.0)
    return [index_of(g, value) for value in x]


FORWARD_STEPS = (("1", (ne.W_WX, ne.W_WY, ne.W_WZ)),
                 ("3", (ne.W_AX, ne.W_AY, ne.W_AZ, ne.W_PAZ)),
                 ("5", (ne.W_TX, ne.W_TY, ne.W_TZ)),
                 ("2", (ne.W_DXX, ne.W_DYY, ne.W_DZZ, ne.W_DXY, ne.W_DXZ, ne.W_DYZ)),
                 ("4", (ne.W_BXX, ne.W_BXY, ne.W_BXZ, ne.W_BYX, ne.W_BYY, ne.W_BYZ, ne.W_BZX,
                        ne.W_BZY, ne.W_BZZ)),
                 ("6", (ne.W_LX, ne.W_LY, ne.W_LZ, ne.W_RX, ne.W_RY, ne.W_RZ)))
BACKWARD_STEPS = (("7", (ne.W_EX, ne.W_EY, ne.W_EZ)), ("9", (ne.W_NX, ne.W_NY, ne.W_NZ)))


def label_steps(graph: Graph, trig, ws, tau) -> None:
    """
    Name Renaud's step (Renaud 1987, steps (0)-(10)) of every node the torques use.

    For the per-step counts.

    By data flow, in the order of the algorithm: a node belongs to the first step whose
    quantities (the workspace of the recursion) it enters; what only the torques use (rotors,
    friction, Z . f of a prismatic joint) is step "10".
    """
    g = graph
    g.label_reachable([index_of(g, x) for pair in trig for x in pair], "trig")
    for row in ws:
        for step, fields in FORWARD_STEPS:
            g.label_reachable([index_of(g, row[k]) for k in fields], step)
    for row in reversed(ws):
        for step, fields in BACKWARD_STEPS:
            g.label_reachable([index_of(g, row[k]) for k in fields], step)
    g.label_reachable([index_of(g, t) for t in tau], "10")


def with_coupling(graph: Graph, model, qd: list, qdd: list | None, tau: list) -> list[int]:
    """
    Return tau + C qdd + the coupled drives' friction difference, where the model couples drives.

    ``core/model/coupling.py`` and ``core/algorithms/coupled.py``: C = K^T D K - D (constants)
    times ``qdd`` (None: at zero acceleration), and per coupled drive i, with v = K_i qd, its
    F_v v + F_v2 v|v| + F_s sgn(v) on the joints through K_i^T in place of the per-joint
    F_v qd_i + F_v2 qd_i|qd_i| + F_s sgn(qd_i) (the rows' and :func:`with_extra_friction`'s),
    plus joint i's joint-side F_vj qd_i + F_sj sgn(qd_i).
    """
    if not model.coupled_drives:
        return tau
    g, n = graph, model.n
    out = [g.node(t) for t in tau]
    if qdd is not None:
        inertia = coupling_terms(model).inertia
        for i in range(n):
            for j in range(n):
                if inertia[i, j] != 0.0:
                    out[i] = out[i] + float(inertia[i, j]) * g.node(qdd[j])
    for i in model.coupled_drives:
        row, fv, fs = model.coupling[i], float(model.viscous[i]), float(model.coulomb[i])
        fq = float(model.viscous_quadratic[i])
        v = g.node(g.zero)
        for j in range(n):
            if row[j] != 0.0:
                v = v + float(row[j]) * g.node(qd[j])
        sv, si = g.node(g.sign(index_of(g, v))), g.node(g.sign(qd[i]))
        # (the joint-side F_vj qd_i + F_sj sgn(qd_i) stays on joint i: taken off what goes)
        own_v = fv - float(model.joint_viscous[i])
        own_s = fs - float(model.joint_coulomb[i])
        drive, own = fv * v + fs * sv, own_v * g.node(qd[i]) + own_s * si
        if fq != 0.0:   # F_v2 v|v| on the drive (with_extra_friction put F_v2 qd_i|qd_i| in)
            drive, own = drive + fq * (v * v * sv), own + fq * (g.node(qd[i]) * g.node(qd[i]) * si)
        for j in range(n):
            if row[j] != 0.0:
                out[j] = out[j] + float(row[j]) * drive
        out[i] = out[i] - own
    return [index_of(g, t) for t in out]


def with_coupled_inertia(graph: Graph, model, rows: list[list[int]]) -> list[list[int]]:
    """Return the rows of M (node indices; a lower triangle's too) plus C's constant entries."""
    if not model.coupled_drives:
        return rows
    inertia, g = coupling_terms(model).inertia, graph
    return [[index_of(g, g.node(m) + float(inertia[i, j])) if inertia[i, j] != 0.0 else m
             for j, m in enumerate(row)] for i, row in enumerate(rows)]
