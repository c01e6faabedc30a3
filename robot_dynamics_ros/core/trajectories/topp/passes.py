"""
The reachability passes of ``reachability.py`` as one loop over the steps, compiled by numba.

The same arithmetic as :func:`reachability.static_bound` (Newton's method from above, the pairs
of rows where it stalls), the backward pass and the greedy forward pass, written as plain loops
over each step's rows (flat arrays, step k's rows in [start[k], end[k])) so that numba compiles
them into one call: on the benchmark's Puma path the numpy implementation spends about a third
of the scaling's time in these passes (hundreds of small array operations per grid), the compiled
loop a few percent (issue 22).  Every row is visited (no pruning to the rows that can bind): the
minimum over all rows is the minimum over the pruned ones, so the law is the numpy
implementation's (``test_passes`` compares them).  Without numba, ``reachability.py`` runs the
numpy implementation.

Plain Python functions of numpy arrays (no numba import here): :func:`compiled` compiles them
once per process into the kernels' disk cache (``core/jit.py``), or loads them from it.
"""
from __future__ import annotations

import threading

import numpy as np

from ... import jit

X_CAP = 1e12          # stands for "unbounded" sd^2 (as reachability.X_CAP)
NEWTON_STEPS = 5      # as reachability.static_bound's iterations

_LOCK = threading.Lock()
_COMPILED: list = []


def _pairs(UA, UB, UC, us, ue, LA, LB, LC, ls, le):
    """Fourier-Motzkin over all pairs (lower i, upper j) of one step: the largest x."""
    best = np.inf
    for i in range(ls, le):
        for j in range(us, ue):
            D = UA[j] * LB[i] - LA[i] * UB[j]
            if D > 0.0:
                value = (UA[j] * LC[i] - LA[i] * UC[j]) / D
                if value < best:
                    best = value
    return min(best, X_CAP)


def static_bound(UA, UB, UC, us, ue, LA, LB, LC, ls, le):
    """Return the largest x of one step with some u meeting every row (``static_bound``)."""
    x_only = np.inf
    for j in range(us, ue):
        if UA[j] == 0.0 and UB[j] > 0.0:
            x_only = min(x_only, UC[j] / UB[j])
    for i in range(ls, le):
        if LA[i] == 0.0 and LB[i] > 0.0:
            x_only = min(x_only, LC[i] / LB[i])
    x = min(x_only, X_CAP)
    al, bl, cl = LA[le - 1], LB[le - 1], LC[le - 1]       # x_{k+1} >= 0: a close start
    for j in range(us, ue):
        D = UA[j] * bl - al * UB[j]
        if D > 0.0:
            x = min(x, (UA[j] * cl - al * UC[j]) / D)
    for _ in range(NEWTON_STEPS):
        # f(x) = min_j (pu_j - ru_j x) - max_i (pl_i - rl_i x), rows with u only
        up, jb = np.inf, -1
        for j in range(us, ue):
            if UA[j] > 0.0:
                value = UC[j] / UA[j] - UB[j] / UA[j] * x
                if jb < 0 or value < up:
                    up, jb = value, j
        lo, ib = -np.inf, -1
        for i in range(ls, le):
            if LA[i] < 0.0:
                value = LC[i] / LA[i] - LB[i] / LA[i] * x
                if ib < 0 or value > lo:
                    lo, ib = value, i
        if jb < 0 or ib < 0:
            break
        if up - lo >= -1e-15 * (abs(up) + abs(lo)):        # feasible up to rounding
            return x
        ru, rl = UB[jb] / UA[jb], LB[ib] / LA[ib]
        x_new = (UC[jb] / UA[jb] - LC[ib] / LA[ib]) / (ru - rl)
        if not (rl - ru < 0.0 and x_new < x):
            break                                       # degenerate or stalled: the pairs
        x = max(x_new, 0.0)
    return min(_pairs(UA, UB, UC, us, ue, LA, LB, LC, ls, le), x_only)


def law(delta, corner, free_start, free_end, UA, UB, UC, ustart, uend, LA, LB, LC, lstart,
        lend, tiny):
    """
    Return (x (N+1,), u (N,)): the backward and greedy forward passes of ``reachable_law``.

    Rows A u + B x <= C of step k: upper (A >= 0) in [ustart[k], uend[k]), lower (A <= 0) in
    [lstart[k], lend[k]), its last lower row x_{k+1} >= 0 (``constraints.step_rows``);
    ``corner`` (N+1,) points where the law stops; ``tiny`` (N,): |A| below it does not bound
    u in the forward pass (``reachability.step_sets``).
    """
    N = delta.size
    static = np.empty(N)
    for k in range(N):
        if corner[k]:
            static[k] = 0.0
        else:
            static[k] = static_bound(UA, UB, UC, ustart[k], uend[k], LA, LB, LC, lstart[k],
                                     lend[k])
    hi = np.empty(N + 1)
    h = X_CAP if free_end else 0.0
    hi[N] = h
    for k in range(N - 1, -1, -1):
        # hi_k = min(static_k, min_i(alpha_i hi_{k+1} + beta_i)) over the lower rows
        v = static[k]
        two_d = 2.0 * delta[k]
        for i in range(lstart[k], lend[k]):
            Dr = two_d * LB[i] - LA[i]
            if LA[i] < 0.0 and Dr > 0.0:
                t = -LA[i] / Dr * h + two_d * LC[i] / Dr
                if t < v:
                    v = t
        h = v
        hi[k] = h
    for k in range(N + 1):
        if corner[k]:
            hi[k] = 0.0
    x = np.empty(N + 1)
    u = np.empty(N)
    xk = hi[0] if free_start else 0.0
    x[0] = xk
    for k in range(N):
        two_d = 2.0 * delta[k]
        u_max = (hi[k + 1] - xk) / two_d
        for j in range(ustart[k], uend[k]):
            if UA[j] > tiny[k]:
                t = UC[j] / UA[j] - UB[j] / UA[j] * xk
                if t < u_max:
                    u_max = t
        u_min = -xk / two_d
        for i in range(lstart[k], lend[k] - 1):
            if LA[i] < -tiny[k]:
                t = LC[i] / LA[i] - LB[i] / LA[i] * xk
                if t > u_min:
                    u_min = t
        uk = u_min if u_min > u_max else u_max
        u[k] = uk
        xk = xk + two_d * uk
        if xk < 0.0:
            xk = 0.0
        x[k + 1] = xk
    return x, u


_HEADER = '''"""
The time-optimal scaling's reachability passes (core/trajectories/topp/passes.py), by numba.

Do not edit: generated from the package's functions; the file name is a hash of this text.
nogil: the scaling releases the GIL while the passes run (a node's other threads go on).
"""
import numpy as np
'''
_F8, _I8, _B1 = "float64[::1]", "int64[::1]", "boolean[::1]"
# (numba's string signature of law: (x, u) from the rows of every step)
_LAW = (f"UniTuple({_F8}, 2)({_F8}, {_B1}, boolean, boolean, {_F8}, {_F8}, {_F8}, {_I8}, {_I8}, "
        f"{_F8}, {_F8}, {_F8}, {_I8}, {_I8}, {_F8})")


def source() -> str:
    """Return the text of the compiled module (``jit.compile_module``)."""
    return jit.module_text(_HEADER + f"# law: {_LAW}\n",
                           {"X_CAP": X_CAP, "NEWTON_STEPS": NEWTON_STEPS},
                           (_pairs, static_bound, law))


def spec() -> jit.Spec:
    """Return the compiled module as ``jit``'s ahead-of-time functions need it."""
    return jit.Spec(__name__, "topp_passes", source,
                    {"_pairs": None, "static_bound": None, "law": _LAW},
                    tuple(sorted({__file__, jit.__file__})), {"nogil": True})


def compiled():
    """
    Return :func:`law` compiled by numba (once per process), or None without numba.

    The extension compiled ahead of time where ``robot-dynamics compile`` built it (loaded in
    milliseconds without importing numba: ``jit.load_ahead``), else loaded from the kernels'
    disk cache (``core/jit.py``) when it holds them, else compiled.
    """
    with _LOCK:
        if not _COMPILED:
            module = jit.load_ahead(spec()) or jit.load_ahead(spec(), source())
            if module is None:
                module, _ = jit.compile_module(source(), "topp_passes", spec().functions,
                                               {"nogil": True})
            _COMPILED.append(None if module is None else module.law)
        return _COMPILED[0]
