"""
The recursions as plain Python, where numba is unavailable: floats, or numpy columns for a batch.

The texts are the compiled ones (``newton_euler.py``, ``aba.py``, ``crba.py``); here they run on
one configuration as Python floats (lists), or on a batch (N, n) with every quantity a numpy
column of the batch (in chunks of CHUNK rows: beyond a few MB of columns the allocator's returns
to the system make every column of the next chunk page-fault).  Arguments are checked by the
callers.
"""
from __future__ import annotations

import math

import numpy as np

from . import aba, crba, newton_euler as ne
from ..model.bodies import numeric_form
from .newton_euler import PRISMATIC, THETA0, joint_rows

CHUNK = 2048


def _trig(rows, q):
    """Return cos and sin of theta_i: lists of floats (q (n,)) or arrays (n, N) (q columns)."""
    if isinstance(q, list):
        theta = [r[THETA0] + (0.0 if r[PRISMATIC] else x) for r, x in zip(rows, q)]
        return [math.cos(t) for t in theta], [math.sin(t) for t in theta]
    theta0 = np.array([r[THETA0] for r in rows])[:, None]
    moves = np.array([0.0 if r[PRISMATIC] else 1.0 for r in rows])[:, None]
    theta = theta0 + moves * q
    return np.cos(theta), np.sin(theta)


def _sign(qd):
    if isinstance(qd, list):
        return [float((x > 0.0) - (x < 0.0)) for x in qd]
    return np.sign(qd)


def _chunks(arrays, wrench):
    """Yield (slice, columns of each array, wrench of the chunk) for (N, n) arrays."""
    for start in range(0, arrays[0].shape[0], CHUNK):
        part = slice(start, start + CHUNK)
        columns = [np.ascontiguousarray(a[part].T) for a in arrays]
        w = None if wrench is None else (wrench[part].T if wrench.shape[0] > 1 else wrench[0])
        yield part, columns, w


def rnea(model, q, qd, qdd, g, wrench) -> np.ndarray:
    """Return tau: q, qd, qdd (n,) or (N, n); ``g`` (3,); ``wrench`` (1, 6) or (N, 6)."""
    rows = joint_rows(model, numeric_form(model))
    if q.ndim == 1:
        return np.array(_rnea(rows, q.tolist(), qd.tolist(), qdd.tolist(), g.tolist(),
                              wrench[0].tolist()))
    out = np.empty(q.shape)
    for part, (q_c, qd_c, qdd_c), w in _chunks((q, qd, qdd), wrench):
        for j, t in enumerate(_rnea(rows, q_c, qd_c, qdd_c, g.tolist(), w)):
            out[part, j] = t        # (a float, a state-independent torque, broadcasts)
    return out


def _rnea(rows, q, qd, qdd, g, wrench) -> list:
    ct, st = _trig(rows, q)
    ws = [[0.0] * ne.N_WORKSPACE for _ in rows]
    tau = [0.0] * len(rows)
    ne.forward_pass(rows, q, qd, qdd, ct, st, g, ws)
    ne.backward_pass(rows, q, qd, qdd, _sign(qd), wrench, ws, tau)
    return tau


def mass_matrix(model, q) -> np.ndarray:
    """Return B(q), (n, n) or (N, n, n)."""
    rows = joint_rows(model, "plain")
    n = model.n
    if q.ndim == 1:
        return np.array(_mass(rows, q.tolist()))
    out = np.empty((q.shape[0], n, n))
    for part, (q_c,), _ in _chunks((q,), None):
        for i, line in enumerate(_mass(rows, q_c)):
            for j, entry in enumerate(line):
                out[part, i, j] = entry
    return out


def _mass(rows, q) -> list:
    ct, st = _trig(rows, q)
    ws = [[0.0] * crba.N_CRBA_WORKSPACE for _ in rows]
    out = [[0.0] * len(rows) for _ in rows]
    crba.composite_inertias(rows, q, ct, st, ws)
    crba.mass_matrix_entries(rows, ws, out)
    return out


def forward_dynamics(model, q, qd, tau, g, wrench) -> tuple[np.ndarray, bool]:
    """Return (qdd, whether every pivot D_i is positive) by the ABA; arguments as ``rnea``."""
    rows = joint_rows(model, "plain")
    if q.ndim == 1:
        qdd, ok = _aba(rows, q.tolist(), qd.tolist(), tau.tolist(), g.tolist(),
                       wrench[0].tolist())
        return np.array(qdd), ok
    out, ok = np.empty(q.shape), True
    for part, (q_c, qd_c, tau_c), w in _chunks((q, qd, tau), wrench):
        qdd, ok_part = _aba(rows, q_c, qd_c, tau_c, g.tolist(), w)
        ok = ok and ok_part
        for j, x in enumerate(qdd):
            out[part, j] = x
    return out, ok


def _aba(rows, q, qd, tau, g, wrench) -> tuple[list, bool]:
    ct, st = _trig(rows, q)
    ws = [[0.0] * aba.N_ABA_WORKSPACE for _ in rows]
    qdd = [0.0] * len(rows)
    aba.velocities(rows, q, qd, ct, st, ws)
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            aba.inertias(rows, qd, tau, _sign(qd), wrench, ws)
        except ZeroDivisionError:
            return qdd, False
        if not all(np.all(np.asarray(w[aba.AW_D]) > 0.0) for w in ws):
            return qdd, False
        aba.accelerations(rows, g, ws, qdd)
    return qdd, True
