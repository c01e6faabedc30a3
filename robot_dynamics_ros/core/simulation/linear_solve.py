"""
Straight-line solve of B(q) qdd = tau - h for the simulator, B symmetric positive definite.

The forward dynamics of a simulation step solve this system four times per RK4 step.  For six
joints numpy's ``linalg.solve`` costs more in call overhead than the arithmetic; TML (Turney et al.
1980, Sect. 7) solve it "by Gaussian elimination without pivoting, which is safe because M is
positive definite".  Here that is the Cholesky factorisation B = L L^T, written out once per size
as straight-line Python on floats (about n^3/6 + n^2 multiplications) and compiled in memory.
"""
from __future__ import annotations

import math
import threading
from typing import Callable

from ..errors import SingularityError

_SOLVERS: dict[int, Callable] = {}
_LOCK = threading.Lock()


def _names(prefix: str, count: int) -> str:
    """``p0, p1, ...`` as an assignment target (a trailing comma for one name)."""
    return ", ".join(f"{prefix}{i}" for i in range(count)) + ("," if count == 1 else "")


def solve_lines(n: int, p: str = "") -> list[str]:
    """
    Return the statements (indented once) that solve B x = t - h into ``{p}x0 .. {p}x<n-1>``.

    They read B's lower triangle from ``{p}a<i>_<j>`` (j <= i), h from ``{p}h<i>`` and the torques
    from ``{p}t<i>``; every name they set starts with ``p`` too, so the statements can follow other
    straight-line code without a name clash.
    """
    lines = [f"    {p}b{i} = {p}t{i} - {p}h{i}" for i in range(n)]
    for j in range(n):
        # L[j][j] = sqrt(a_jj - sum_k L[j][k]^2); r_j = 1 / L[j][j]
        s = "".join(f" - {p}l{j}_{k} * {p}l{j}_{k}" for k in range(j))
        lines.append(f"    {p}r{j} = 1.0 / _sqrt({p}a{j}_{j}{s})")
        for i in range(j + 1, n):
            s = "".join(f" - {p}l{i}_{k} * {p}l{j}_{k}" for k in range(j))
            lines.append(f"    {p}l{i}_{j} = ({p}a{i}_{j}{s}) * {p}r{j}")
    for i in range(n):                      # L y = b
        s = "".join(f" - {p}l{i}_{k} * {p}y{k}" for k in range(i))
        lines.append(f"    {p}y{i} = ({p}b{i}{s}) * {p}r{i}")
    for i in range(n - 1, -1, -1):          # L^T x = y
        s = "".join(f" - {p}l{k}_{i} * {p}x{k}" for k in range(i + 1, n))
        lines.append(f"    {p}x{i} = ({p}y{i}{s}) * {p}r{i}")
    return lines


def _source(n: int) -> str:
    """Python source of ``solve(T, tau) -> qdd`` (see :func:`dynamics_solver`)."""
    lines = ["def solve(T, tau, _sqrt=_sqrt):"]
    for i in range(n):
        lines.append(f"    {_names(f'a{i}_', i + 1)} = T[{i}]")
    lines.append(f"    {_names('h', n)} = T[{n}]")
    lines.append(f"    {_names('t', n)} = tau")
    lines.extend(solve_lines(n))
    lines.append(f"    return [{', '.join(f'x{i}' for i in range(n))}]")
    return "\n".join(lines) + "\n"


def singular(n: int) -> SingularityError:
    """Return the error of a mass matrix that is not positive definite (n x n)."""
    return SingularityError(
        f"mass matrix ({n} x {n}) is not positive definite here (a joint that moves no "
        "mass or inertia?): the accelerations are undefined")


def dynamics_solver(n: int) -> Callable:
    """
    Return ``solve(T, tau) -> qdd`` (a list of n floats), qdd = B^{-1} (tau - h).

    ``T`` = (row 0 of B [:1], ..., row n-1 of B [:n], h): the lower triangle of the symmetric
    positive-definite B, row i holding i + 1 entries, and the bias torques h, as
    ``dynamics.ForwardDynamics`` evaluates them.  Raises :class:`SingularityError` if B is not
    positive definite.
    """
    with _LOCK:
        solver = _SOLVERS.get(n)
    if solver is not None:
        return solver
    namespace = {"_sqrt": math.sqrt}
    exec(compile(_source(n), f"<dynamics solver n={n}>", "exec"), namespace)
    raw = namespace["solve"]

    def solve(T, tau):
        try:
            return raw(T, tau)
        except (ValueError, ZeroDivisionError):    # sqrt of a negative pivot, or a zero pivot
            raise singular(n) from None
    with _LOCK:
        return _SOLVERS.setdefault(n, solve)
