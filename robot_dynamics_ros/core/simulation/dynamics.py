"""
The right-hand side of the simulation: joint accelerations on sequences of floats.

    qdd = B(q)^{-1} (tau - n_v(q, qd))          (Siciliano et al. 2009, eqs. 7.115-7.116)

with n_v = C(q, qd) qd + F_v qd + g(q) (rotor inertia and gyroscopic terms included, Siciliano et
al. 2009, eqs. 7.111-7.114).  Coulomb friction is not part of it: the simulator applies it as an
implicit step after each integration step (``friction.py``).  Called four times per RK4 step, so it
works on plain Python floats: B and n_v from the generated straight-line model
(``generated_terms.py``: Renaud's quasi-minimal form, equal to the core to 1e-12) when
``implementation`` is "generated" (the default, "auto"), or from the core's algorithms ("core");
the system is solved by the straight-line Cholesky of ``linear_solve.py``.  The integrator's
stages, where B and n_v are not needed afterwards, call ``accelerations`` instead: the same two
pieces of generated code in one function body (``generated_terms.generated_accelerations``), the
same numbers in one call, compiled to machine code by numba when it is available (``compiled.py``).
"""
from __future__ import annotations

import numpy as np

from ..algorithms.crba import mass_matrix
from ..algorithms.rnea import nonlinear_effects
from ..errors import InputError
from ..model.cache import model_constant
from .compiled import compilation, compiled_dynamics
from .generated_terms import generated_accelerations, generated_terms
from .linear_solve import dynamics_solver

IMPLEMENTATIONS = ("auto", "generated", "core")
COMPILED = ("auto", True, False)


def without_coulomb(model):
    """
    Return the model without its Coulomb friction (viscous friction, rotors, all else kept).

    Without F_s sgn(qd) and the load-dependent F_l |g(q)| sgn(qd) (the simulator's implicit
    step applies both); the quadratic viscous F_v2 qd|qd| stays, integrated with the dynamics.

    Built once per model (``core.model.cache``), so its generated code is generated once too.
    """
    if not np.any(model.coulomb) and not np.any(model.coulomb_load):
        return model

    def build(model):
        spec = model.to_dict()
        for joint in spec["joints"]:    # (the quadratic viscous term is smooth: kept)
            friction = joint["friction"]
            joint["friction"] = {"viscous": friction["viscous"], "coulomb": 0.0}
            if friction.get("viscous_quadratic"):
                joint["friction"]["viscous_quadratic"] = friction["viscous_quadratic"]
        return type(model)(spec)
    return model_constant(model, "without_coulomb", build)


class ForwardDynamics:
    """
    ``f(q, qd, tau) -> qdd`` (lists of n floats) for one model, as described above.

    ``implementation``: "generated" (the generated model: ``terms``, the source of its terms,
    made outside the core by ``implementations.simulation_terms``), "core", or "auto" (the
    generated model if ``terms`` are given, else the core's algorithms).  ``last_terms``
    holds B's lower rows and n_v of the latest evaluation (the friction step uses that B).
    ``accelerations`` (generated model only, else None) is the same function in one generated
    body, bit for bit, without ``last_terms``, taking and returning tuples of floats: compiled by
    numba (``compiled.py``) unless ``compiled`` is False or numba is unavailable ("auto": then it
    warns once and runs as Python; True: InputError instead).  Where this one raises
    SingularityError, it raises ValueError or ZeroDivisionError (Python) or returns non-finite
    values (compiled).  ``compiled`` (bool) says which one it is, ``how`` in words (for logs);
    compiled, ``rk4_step`` and ``rk4_coulomb_step`` are ``compiled.CompiledDynamics``'s (else
    None).
    Everything is built (compiled) here, once per model.  The model is never changed.
    """

    def __init__(self, model, implementation: str = "auto", compiled="auto",
                 terms: str | None = None):
        if implementation not in IMPLEMENTATIONS:
            raise InputError(f"implementation: '{implementation}' is not one of "
                             f"{list(IMPLEMENTATIONS)}")
        if implementation == "generated" and terms is None:
            raise InputError("implementation: 'generated' needs the generated terms (terms="
                             "implementations.simulation_terms(model)); the core does not "
                             "generate code")
        if not (compiled is True or compiled is False or compiled == "auto"):
            raise InputError(f"compiled: {compiled!r} is not one of {list(COMPILED)}")
        self.model = model
        smooth = without_coulomb(model)
        self.implementation = "core" if implementation == "core" or terms is None \
            else "generated"
        # the same qdd in one call, without ``last_terms`` (None for "core"): see ``accelerations``
        self.accelerations = None
        self.rk4_step = None                        # (compiled: one RK4 step, see compiled.py)
        self.rk4_coulomb_step = None                # (compiled: with the Coulomb step)
        self.compiled = False
        self.how = "the core's algorithms"          # (what runs, for logs)
        if compiled is True and self.implementation == "core":
            raise InputError("compiled: True needs implementation 'generated' and its terms "
                             "(the core's algorithms are not compiled)")
        if self.implementation == "generated":
            self._terms = generated_terms(smooth, terms)
            machine, self.how = None, "plain Python (compiled=False)"
            if compiled:
                found, self.how = compilation(smooth, terms)     # (built once per model)
                if compiled is True and found is None:
                    raise InputError(f"compiled: True, but {self.how} (compiled='auto' runs the "
                                     "same code as plain Python instead)")
                machine = compiled_dynamics(smooth, terms)     # (the same; warns once if None)
            self.compiled = machine is not None
            self.accelerations = (machine.accelerations if machine is not None
                                  else generated_accelerations(smooth, terms))
            self.rk4_step = machine.rk4_step if machine is not None else None
            self.rk4_coulomb_step = machine.rk4_coulomb_step if machine is not None else None
        else:
            def core_terms(q, qd):
                q = np.array(q)
                bias = nonlinear_effects(smooth, q, np.array(qd))
                rows = mass_matrix(smooth, q).tolist()
                return (*(tuple(row[:i + 1]) for i, row in enumerate(rows)), tuple(bias.tolist()))
            self._terms = core_terms
        self.solve = dynamics_solver(model.n)
        self.last_terms = None

    def __call__(self, q, qd, tau) -> list:
        terms = self.last_terms = self._terms(q, qd)
        return self.solve(terms, tau)
