"""
The right-hand side of the simulation and its compiled steps, from the core's one kernel route.

    qdd = B(q)^{-1} (tau - n_v(q, qd))          (Siciliano et al. 2009, eqs. 7.115-7.116)

with n_v = C(q, qd) qd + F_v qd + F_v2 qd|qd| + g(q) (rotor inertia and gyroscopic terms
included, Siciliano et al. 2009, eqs. 7.111-7.114).  Coulomb friction is not part of it: the
simulator applies it as an implicit step after each integration step (``friction.py``).

Where it is computed: the core's compiled kernels (``core/algorithms/compiled.py``), the same
module every caller of the core's dynamics uses.  A whole RK4 step is one call into it
(``kernels.rk4_one``: four articulated-body evaluations), and so is the RK4 step followed by the
implicit Coulomb step (``kernels.rk4_coulomb_one``: ``stick_slip.py``, the arrays version of
``friction.py``, with the CRBA's B); ``kernels.simulate_steps`` takes a run's whole steps
(saturation, RK4, Coulomb step, joint stops: ``Simulator.step``) in one call, its workspace
on the kernel's stack (as Pinocchio's ``Data`` holds its own): ``simulate`` under a fixed
torque is one call, under a controller one call per step.  The kernels are generic over the
model (its constants are a data array, ``compiled.constants``): a new robot compiles nothing.
Without numba, or with ``compiled=False``, the steps are taken in Python (``integrators.py``)
on B and n_v from the core's public functions, solved by the straight-line Cholesky of
``linear_solve.py``: the reference the compiled steps are tested against.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ..algorithms.compiled import constants, entry, kernels, status
from ..algorithms.route import bound
from ..algorithms.mass import mass_matrix
from ..algorithms.rnea import nonlinear_effects
from ..errors import InputError
from ..model.cache import model_constant
from .linear_solve import dynamics_solver

COMPILED = ("auto", True, False)


def without_coulomb(model):
    """
    Return the model without its Coulomb friction (viscous friction, rotors, all else kept).

    Without F_s sgn(qd) and the load-dependent F_l |g(q)| sgn(qd) (the simulator's implicit
    step applies both); the quadratic viscous F_v2 qd|qd| stays, integrated with the dynamics.
    Built once per model (``core.model.cache``).
    """
    if not np.any(model.coulomb) and not np.any(model.coulomb_load):
        return model

    def build(model):
        spec = model.to_dict()
        for joint in spec["joints"]:    # (the quadratic viscous term is smooth: kept)
            friction = joint["friction"]
            joint["friction"] = {"viscous": friction["viscous"], "coulomb": 0.0}
            for kept in ("viscous_quadratic", "joint_viscous"):     # (smooth: kept)
                if friction.get(kept):
                    joint["friction"][kept] = friction[kept]
        return type(model)(spec)
    return model_constant(model, "without_coulomb", build)


class ForwardDynamics:
    """
    ``f(q, qd, tau) -> qdd`` (lists of n floats) for one model, as described above.

    Calling it evaluates B and n_v by the core's public functions and keeps B's lower rows and
    n_v in ``last_terms`` (the Python friction step uses that B).  ``compiled`` "auto" (the
    kernels if numba works, else Python with one warning), True (InputError without numba) or
    False (Python).  Compiled, ``accelerations(q, qd, tau)`` is the core's compiled forward
    dynamics (lists in and out, no ``last_terms``), ``rk4_step(q, qd, tau, h)`` and
    ``rk4_coulomb_step(q, qd, tau, h, levels, stuck, share)`` return the kernels' rows as
    lists (q, qd after the step, qdd at its start, ...: ``kernels.rk4_into``), or None where
    the kernel refused the step (a singular B): the Python step then names the cause;
    ``simulate_steps(params, stuck, counts, iw, command, rows, h, share, limits, first,
    last)``
    is ``kernels.simulate_steps`` of the model (``Simulator.advance``: whole steps of a run in
    one call).  Otherwise the four are None.  ``how`` says which in words (for logs).  The
    model is never changed.
    """

    def __init__(self, model, compiled="auto"):
        if not (compiled is True or compiled is False or compiled == "auto"):
            raise InputError(f"compiled: {compiled!r} is not one of {list(COMPILED)}")
        self.model = model
        smooth = without_coulomb(model)

        def core_terms(q, qd):
            q = np.array(q)
            bias = nonlinear_effects(smooth, q, np.array(qd))
            rows = mass_matrix(smooth, q).tolist()
            return (*(tuple(row[:i + 1]) for i, row in enumerate(rows)), tuple(bias.tolist()))
        self._terms = core_terms
        self.solve = dynamics_solver(model.n)
        self.last_terms = None
        module = kernels() if compiled else None
        if compiled is True and module is None:
            raise InputError(f"compiled: True, but {status()} (compiled='auto' runs the same "
                             "steps as plain Python instead)")
        self.compiled = module is not None
        self.accelerations = self.rk4_step = self.rk4_coulomb_step = None
        self.simulate_steps = None
        if module is None:
            self.how = ("plain Python (compiled=False)" if compiled is False
                        else f"plain Python ({status()})")
            return
        self.how = f"in the core's compiled kernels ({status()})"
        forward = bound(smooth).forward_dynamics
        self.accelerations = lambda q, qd, tau: forward(
            np.array(q, dtype=float), np.array(qd, dtype=float),
            np.array(tau, dtype=float)).tolist()
        if smooth.coupled_drives:
            # the whole-step kernels run the recursion alone: a coupled model's RK4 stages take
            # the route's forward dynamics, which add the coupling (algorithms/coupled.py)
            self.how += ", RK4 stages in Python (coupled drives)"
            return
        self.rk4_step, self.rk4_coulomb_step = _steps(module, smooth)
        # (the constants bound: a C-implemented partial costs less than a Python frame)
        self.simulate_steps = partial(entry(module.simulate_steps), constants(smooth, "plain"))

    def __call__(self, q, qd, tau) -> list:
        terms = self.last_terms = self._terms(q, qd)
        return self.solve(terms, tau)


def _steps(module, smooth):
    """
    Return the compiled ``rk4_step`` and ``rk4_coulomb_step`` of ``smooth`` (see above).

    They call the kernels by their machine-code entries (``compiled.entry``: no dispatch), with
    arrays built here of the kernels' types; the kernels check shapes and finiteness.
    """
    c = constants(smooth, "plain")
    quadratic = np.array(smooth.viscous_quadratic, dtype=float)     # (writable: the signature)
    shape = (5, smooth.n)

    def rk4_step(q, qd, tau, h, _one=entry(module.rk4_one), _c=c, _f=quadratic,
                 _array=np.array, _empty=np.empty, _shape=shape, _float=float):
        out = _empty(_shape)
        if _one(_c, _array((q, qd, tau), dtype=_float), h, _f, out):
            return None
        return out.tolist()

    def rk4_coulomb_step(q, qd, tau, h, levels, stuck, share, _one=entry(module.rk4_coulomb_one),
                         _c=c, _f=quadratic, _array=np.array, _empty=np.empty, _shape=shape,
                         _float=float):
        out = _empty(_shape)
        if _one(_c, _array((q, qd, tau), dtype=_float), h, _f, levels, stuck, share, out):
            return None
        return out.tolist()
    return rk4_step, rk4_coulomb_step
