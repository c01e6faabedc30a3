"""
Straight-line solve of B(q) qdd = tau - n(q, qd) - F_s tanh(qd / v_s) for the simulator.

The forward dynamics of a simulation step solve this system four times per RK4 step.  For six
joints numpy's ``linalg.solve`` costs more in call overhead than the arithmetic; TML (seed 001,
Sect. 7, notes 2.9) solve it "by Gaussian elimination without pivoting, which is safe because M is
positive definite".  Here that is the Cholesky factorisation B = L L^T, written out once per size
and friction constants as straight-line Python on floats (about n^3/6 + n^2 multiplications) and
compiled in memory; the right-hand side, regularised Coulomb friction included (``friction.py``),
is formed in the same function.
"""
from __future__ import annotations

import math
import threading
from typing import Callable

from ..errors import SingularityError

_SOLVERS: dict[tuple, Callable] = {}
_LOCK = threading.Lock()


def _names(prefix: str, count: int) -> str:
    """``p0, p1, ...`` as an assignment target (a trailing comma for one name)."""
    return ", ".join(f"{prefix}{i}" for i in range(count)) + ("," if count == 1 else "")


def _source(n: int, coulomb: tuple) -> str:
    """Python source of ``solve(T, tau, qd) -> qdd`` (see :func:`dynamics_solver`)."""
    lines = ["def solve(T, tau, qd, _sqrt=_sqrt, _tanh=_tanh):"]
    for i in range(n):
        lines.append(f"    {_names(f'a{i}_', i + 1)} = T[{i}]")
    lines.append(f"    {_names('h', n)} = T[{n}]")
    lines.append(f"    {_names('t', n)} = tau")
    friction = {i: (fs, inv_vs) for i, fs, inv_vs in coulomb}
    for i in range(n):
        term = (f" - {friction[i][0]!r} * _tanh(qd[{i}] * {friction[i][1]!r})"
                if i in friction else "")
        lines.append(f"    b{i} = t{i} - h{i}{term}")
    for j in range(n):
        # L[j][j] = sqrt(a_jj - sum_k L[j][k]^2); r_j = 1 / L[j][j]
        s = "".join(f" - l{j}_{k} * l{j}_{k}" for k in range(j))
        lines.append(f"    r{j} = 1.0 / _sqrt(a{j}_{j}{s})")
        for i in range(j + 1, n):
            s = "".join(f" - l{i}_{k} * l{j}_{k}" for k in range(j))
            lines.append(f"    l{i}_{j} = (a{i}_{j}{s}) * r{j}")
    for i in range(n):                      # L y = b
        s = "".join(f" - l{i}_{k} * y{k}" for k in range(i))
        lines.append(f"    y{i} = (b{i}{s}) * r{i}")
    for i in range(n - 1, -1, -1):          # L^T x = y
        s = "".join(f" - l{k}_{i} * x{k}" for k in range(i + 1, n))
        lines.append(f"    x{i} = (y{i}{s}) * r{i}")
    lines.append(f"    return [{', '.join(f'x{i}' for i in range(n))}]")
    return "\n".join(lines) + "\n"


def dynamics_solver(n: int, coulomb: tuple = ()) -> Callable:
    """
    ``solve(T, tau, qd) -> qdd`` (a list of n floats).

    ``T`` = (row 0 of B [:1], ..., row n-1 of B [:n], h): the lower triangle of the symmetric
    positive-definite B, row i holding i + 1 entries, and the bias torques h = n(q, qd) without
    Coulomb friction, as
    ``generated_terms`` returns them; ``coulomb`` = ((joint index, F_s, 1 / v_s), ...) adds
    F_s tanh(qd / v_s) to h.  Raises :class:`SingularityError` if B is not positive definite.
    """
    key = (n, tuple(coulomb))
    with _LOCK:
        solver = _SOLVERS.get(key)
    if solver is not None:
        return solver
    namespace = {"_sqrt": math.sqrt, "_tanh": math.tanh}
    exec(compile(_source(n, key[1]), f"<dynamics solver n={n}>", "exec"), namespace)
    raw = namespace["solve"]

    def solve(T, tau, qd):
        try:
            return raw(T, tau, qd)
        except (ValueError, ZeroDivisionError):    # sqrt of a negative pivot, or a zero pivot
            raise SingularityError(
                f"mass matrix ({n} x {n}) is not positive definite here (a joint that moves no "
                "mass or inertia?): the accelerations are undefined") from None
    with _LOCK:
        return _SOLVERS.setdefault(key, solve)
