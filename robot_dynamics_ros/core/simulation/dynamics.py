"""
The right-hand side of the simulation: joint accelerations on lists of floats.

    qdd = B(q)^{-1} (tau - n_v(q, qd) - F_s tanh(qd / v_s))            (seed 002, 7.115-7.116)

with n_v = C(q, qd) qd + F_v qd + g(q) (rotor inertia and gyroscopic terms included, seed 002,
7.111-7.114) and the regularised Coulomb friction of ``friction.py``.  Called four times per RK4
step, so it works on plain Python floats: B and n_v from the generated straight-line model
(``generated_terms.py``: Renaud's quasi-minimal form, equal to the core to 1e-12) when
``implementation`` is "generated" (the default, "auto"), or from the core's algorithms ("core");
the system is solved by the straight-line Cholesky of ``linear_solve.py``.
"""
from __future__ import annotations

import math

import numpy as np

from ..algorithms.crba import mass_matrix
from ..algorithms.rnea import nonlinear_effects
from ..errors import InputError
from .generated_terms import generated_terms
from .linear_solve import dynamics_solver

IMPLEMENTATIONS = ("auto", "generated", "core")


def without_coulomb(model):
    """Return the model without its Coulomb friction (viscous friction, rotors, all else kept)."""
    if not np.any(model.coulomb):
        return model
    spec = model.to_dict()
    for joint in spec["joints"]:
        joint["friction"] = {"viscous": joint["friction"]["viscous"], "coulomb": 0.0}
    return type(model)(spec)


class ForwardDynamics:
    """
    ``f(q, qd, tau) -> qdd`` (lists of n floats) for one model, as described above.

    ``coulomb_velocity``: v_s per joint (``friction.coulomb_velocity``).  ``implementation``:
    "auto" / "generated" (the generated model) or "core".  The model is never changed.
    """

    def __init__(self, model, coulomb_velocity, implementation: str = "auto"):
        if implementation not in IMPLEMENTATIONS:
            raise InputError(f"implementation: '{implementation}' is not one of "
                             f"{list(IMPLEMENTATIONS)}")
        self.model = model
        smooth = without_coulomb(model)
        self.implementation = "core" if implementation == "core" else "generated"
        if self.implementation == "generated":
            self._terms = generated_terms(smooth)
        else:
            def core_terms(q, qd):
                q = np.array(q)
                bias = nonlinear_effects(smooth, q, np.array(qd))
                rows = mass_matrix(smooth, q).tolist()
                return (*(row[:i + 1] for i, row in enumerate(rows)), bias.tolist())
            self._terms = core_terms
        # (joint index, F_s, 1 / v_s) of the joints with Coulomb friction
        vs = np.asarray(coulomb_velocity, dtype=float)
        self._coulomb = tuple((i, float(model.coulomb[i]), 1.0 / float(vs[i]))
                              for i in range(model.n) if model.coulomb[i] != 0.0)
        self._solve = dynamics_solver(model.n, self._coulomb)

    def friction(self, qd) -> list:
        """Return the regularised Coulomb torques F_s tanh(qd / v_s) (zero where F_s = 0)."""
        out = [0.0] * self.model.n
        for i, fs, inv_vs in self._coulomb:
            out[i] = fs * math.tanh(qd[i] * inv_vs)
        return out

    def __call__(self, q, qd, tau) -> list:
        return self._solve(self._terms(q, qd), tau, qd)
