"""
B(q) and n(q, qd) of one robot in one straight-line function, for the simulator's inner loop.

Generated outside the core (``codegen/simulation.py``: Renaud's quasi-minimal Newton-Euler,
Renaud 1987, with rotors and viscous friction, Siciliano et al. 2009, eqs. 7.111-7.114, on one
expression graph, so the joint sines and cosines and every shared sub-expression are computed once
per call) and passed in as source text (``implementations.simulation_terms``): the core never
imports the code generator. Here it is compiled, returning Python floats (no numpy per call):

    terms(q, qd) -> (B row 0 [:1], B row 1 [:2], ..., B row n-1 [:n], n(q, qd))

(the lower triangle of B, rows of increasing length, then the n entries of n(q, qd) =
C(q, qd) qd + F_v qd + g(q)).  Coulomb friction is left out: the simulator applies it as an
implicit step (``friction.py``).  Compiled in memory once per model (``core.model.cache``).
"""
from __future__ import annotations

import math
import types

import numpy as np

from ..model.cache import model_constant
from .linear_solve import solve_lines

# The writer binds ``_np.array`` as the container of the outputs: a tuple keeps them floats.
_TUPLE_OUTPUTS = types.SimpleNamespace(array=tuple, ndarray=np.ndarray)


def _compile(model, source: str):
    namespace = {"_math": math, "_np": _TUPLE_OUTPUTS}
    exec(compile(source, f"<simulation terms of {model.name}>", "exec"), namespace)
    return namespace["terms"]


# How the function reads sin, cos and sqrt: bound as default arguments (local names: the
# fastest look-up in CPython), or as module globals (numba, ``compiled.py``, compiles globals
# that are math functions; it does not take function objects as default arguments).
IN_MEMORY_SIGNATURE = "def accelerations(q, qd, tau, _sin=_math.sin, _cos=_math.cos, " \
    "_sqrt=_math.sqrt):"
MODULE_SIGNATURE = "def accelerations(q, qd, tau):"


def _terms_lines(model, source: str) -> list[str]:
    """
    Return the statements of ``terms`` that leave B's lower triangle and n(q, qd) in names.

    B's row i in ``s_a<i>_<j>`` (j <= i), n(q, qd) in ``s_h<j>``: the names
    ``linear_solve.solve_lines(n, "s_")`` reads.
    """
    n = model.n
    lines = source.splitlines()
    start = lines.index("    return _array((")
    rows = [line.strip() for line in lines[start + 1:-1]]
    if len(rows) != n + 1 or lines[-1] != "    ))":
        raise AssertionError(f"unexpected end of the generated terms of {model.name}")
    out = []
    for line in lines[2:start]:
        for arg in ("q", "qd"):                  # sequences of floats only: no numpy check
            line = line.replace(f" = {arg}.tolist() if type({arg}) is _ndarray else {arg}",
                                f" = {arg}")
        out.append(line)
    for i, row in enumerate(rows):
        # "(e0, e1, ...,)," with no comma inside an expression (binary operators, one-argument
        # sin/cos): row i < n is B's row i up to the diagonal, row n is n(q, qd)
        items = row[1:-3].split(", ") if row.endswith(",),") and row[0] == "(" else []
        names = ([f"s_a{i}_{j}" for j in range(i + 1)] if i < n
                 else [f"s_h{j}" for j in range(n)])
        if len(items) != len(names):
            raise AssertionError(f"unexpected row {i} in the generated terms of {model.name}")
        out.extend(f"    {name} = {item}" for name, item in zip(names, items))
    return out


def _flat_names(n: int) -> list:
    return [f"s_a{i}_{j}" for i in range(n) for j in range(i + 1)] + [f"s_h{j}" for j in range(n)]


def accelerations_source(model, source: str, signature: str = IN_MEMORY_SIGNATURE,
                         call_terms: bool = False) -> str:
    """
    Python source of ``accelerations(q, qd, tau)``: the terms' code, then the solve's, in one body.

    The statements are those of ``terms`` (its outputs assigned to the names the solve reads
    instead of returned) followed by those of ``linear_solve.solve_lines``, so every float
    operation, and so every result, is the same as ``solve(terms(q, qd), tau)``.  Returns a
    tuple of n floats.  ``signature``: the ``def`` line (see ``IN_MEMORY_SIGNATURE``).
    ``call_terms``: the terms by a call of ``flat_terms(q, qd)`` (:func:`flat_terms_source`,
    the same statements) instead of in the body: the compiled module holds their code once.
    """
    n = model.n
    out = [signature,
           '    """Return qdd = B(q)^-1 (tau - n(q, qd)) as a tuple (no Coulomb friction)."""']
    if call_terms:
        out.append(f"    {', '.join(_flat_names(n))} = flat_terms(q, qd)")
    else:
        out.extend(_terms_lines(model, source))
    torques = ", ".join(f"s_t{i}" for i in range(n)) + ("," if n == 1 else "")
    out.append(f"    {torques} = tau")
    out.extend(solve_lines(n, "s_"))
    out.append(f"    return ({''.join(f's_x{i}, ' for i in range(n)).rstrip()})")
    return "\n".join(out) + "\n"


def flat_terms_source(model, source: str) -> str:
    """
    Python source of ``flat_terms(q, qd)``: B's lower triangle by rows, then n(q, qd), one tuple.

    The statements of ``terms`` (the same float operations), for numba (``compiled.py``), which
    takes a flat tuple of n (n + 1) / 2 + n floats more readily than rows of different lengths.
    """
    names = _flat_names(model.n)
    out = ["def flat_terms(q, qd):",
           '    """Return B(q)\'s lower triangle by rows, then n(q, qd) (no Coulomb friction)."""']
    out.extend(_terms_lines(model, source))
    out.append(f"    return ({', '.join(names)},)")
    return "\n".join(out) + "\n"


def _compile_accelerations(model, source: str):
    namespace = {"_math": math}
    exec(compile(accelerations_source(model, source),
                 f"<simulation accelerations of {model.name}>", "exec"), namespace)
    return namespace["accelerations"]


def generated_accelerations(model, source: str):
    """
    ``accelerations(q, qd, tau) -> qdd`` of ``model`` in one straight-line function.

    qdd = B(q)^{-1} (tau - n(q, qd)) (Siciliano et al. 2009, eq. 7.115), the code of
    :func:`generated_terms` followed by the straight-line Cholesky solve of ``linear_solve.py`` in
    the same body: no call, tuple or list between them (four calls per RK4 step).  ``q``, ``qd``,
    ``tau``: sequences of n floats.  A mass matrix that is not positive definite raises ValueError
    (square root of a negative pivot) or ZeroDivisionError: the caller re-evaluates with the
    checked
    ``linear_solve.dynamics_solver`` for the error message.  Same condition on ``model`` as
    :func:`generated_terms`; generated once per model.
    """
    return model_constant(model, "simulation_accelerations",
                          lambda m: _compile_accelerations(m, source))


def generated_terms(model, source: str):
    """
    ``terms(q, qd)`` of ``model`` from its ``source`` (module docstring); compiled once per model.

    ``model`` must have no Coulomb friction (``dynamics.without_coulomb``): its sgn(qd) would be
    part of n(q, qd).
    """
    return model_constant(model, "simulation_terms", lambda m: _compile(m, source))
