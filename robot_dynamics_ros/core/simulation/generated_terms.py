"""
B(q) and n(q, qd) of one robot in one straight-line function, for the simulator's inner loop.

Built with the code generator of ``robot_dynamics_ros.codegen`` (Renaud's quasi-minimal
Newton-Euler, seed 004, with rotors and viscous friction, seed 002, 7.111-7.114), as its
``mass_matrix`` and ``nonlinear_effects`` are, but on one expression graph, so the joint sines
and cosines and every shared sub-expression are computed once per call, and returning Python
floats (no numpy per call):

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

# The writer binds ``_np.array`` as the container of the outputs: a tuple keeps them floats.
_TUPLE_OUTPUTS = types.SimpleNamespace(array=tuple, ndarray=np.ndarray)


def _source(model) -> str:
    from ...codegen.expr import Graph            # (codegen builds on the core: import late)
    from ...codegen.parameters import gravity_in_base, link_constants
    from ...codegen.renaud import RenaudEmitter
    from ...codegen.writer import FunctionSpec, function_source
    n = model.n
    links = link_constants(model, "full")
    g = Graph()
    q = [g.var(f"q{i + 1}") for i in range(n)]
    qd = [g.var(f"qd{i + 1}") for i in range(n)]
    effects = RenaudEmitter(g, links, gravity_in_base(model)).torques(q, qd, [g.zero] * n)
    # B by columns: torques of a unit acceleration of joint j, no velocity, no gravity (seed 002,
    # 7.115-7.116 and L1200's column-by-column recipe); rows i >= j only.
    emitter = RenaudEmitter(g, links, np.zeros(3))
    columns = []
    for j in range(n):
        unit = [g.one if k == j else g.zero for k in range(n)]
        columns.append(emitter.torques(q, [g.zero] * n, unit, gravity=False, friction=False))
    lower = [[columns[j][i] for j in range(i + 1)] for i in range(n)]
    inputs = {"q": [f"q{i + 1}" for i in range(n)], "qd": [f"qd{i + 1}" for i in range(n)]}
    spec = FunctionSpec("terms", inputs, lower + [effects],
                        "Lower triangle of B(q) by rows, then n(q, qd).")
    return function_source(g, spec)


def _compile(model):
    namespace = {"_math": math, "_np": _TUPLE_OUTPUTS}
    exec(compile(_source(model), f"<simulation terms of {model.name}>", "exec"), namespace)
    return namespace["terms"]


def generated_terms(model):
    """
    ``terms(q, qd)`` of ``model`` (see the module docstring); generated once per model.

    ``model`` must have no Coulomb friction (``dynamics.without_coulomb``): its sgn(qd) would be
    part of n(q, qd).
    """
    return model_constant(model, "simulation_terms", _compile)
