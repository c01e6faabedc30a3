"""
The simulator's generated terms: B(q) and n(q, qd) of one robot in one straight-line function.

``core.simulation`` runs them (``generated_terms.py``: compiled in memory, spliced with the
straight-line solve, compiled by numba in ``compiled.py``) but never generates them: the core
does not import the code generator.  Whoever builds a simulator asks
``implementations.simulation_terms(model)`` for this text and passes it in (issue 22).

The core's Newton-Euler recursion (Renaud 1987, steps (0)-(10), with rotors and viscous
friction, Siciliano et al. 2009, eqs. 7.111-7.114, and the quadratic viscous friction of
``core/control/friction.py``) on the expression graph
(``graph_dynamics.torques``), as
``mass_matrix`` and ``nonlinear_effects`` are generated, but on one graph, so the joint sines and
cosines and every shared sub-expression are computed once per call:

    terms(q, qd) -> (B row 0 [:1], B row 1 [:2], ..., B row n-1 [:n], n(q, qd))
"""
from __future__ import annotations

from ..core.algorithms.newton_euler import rows_of
from ..core.model.bodies import gravity_in_base, link_constants
from .expr import Graph
from .graph_dynamics import torques, with_extra_friction
from .writer import FunctionSpec, function_source


def simulation_terms_source(model) -> str:
    """
    Return the Python source of ``terms(q, qd)`` of ``model`` (module docstring).

    ``model`` must have no Coulomb friction (``core.simulation.dynamics.without_coulomb``): its
    sgn(qd) would be part of n(q, qd); the simulator applies it as an implicit step.
    """
    n = model.n
    rows = rows_of(link_constants(model, "full"))
    g = Graph()
    q = [g.var(f"q{i + 1}") for i in range(n)]
    qd = [g.var(f"qd{i + 1}") for i in range(n)]
    gravity = gravity_in_base(model)
    effects = with_extra_friction(g, model, rows, gravity, q, qd,
                                  torques(g, rows, gravity, q, qd, [g.zero] * n))
    # B by columns: torques of a unit acceleration of joint j, no velocity, no gravity
    # (Siciliano et al. 2009, eqs. 7.115-7.116, column by column); rows i >= j only (the
    # friction terms vanish at zero velocity).
    columns = []
    for j in range(n):
        unit = [g.one if k == j else g.zero for k in range(n)]
        columns.append(torques(g, rows, (0.0, 0.0, 0.0), q, [g.zero] * n, unit))
    lower = [[columns[j][i] for j in range(i + 1)] for i in range(n)]
    inputs = {"q": [f"q{i + 1}" for i in range(n)], "qd": [f"qd{i + 1}" for i in range(n)]}
    spec = FunctionSpec("terms", inputs, lower + [effects],
                        "Lower triangle of B(q) by rows, then n(q, qd).")
    return function_source(g, spec)
