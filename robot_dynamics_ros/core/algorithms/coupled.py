"""
The dynamics of a model with coupled drives: the recursion's, plus what the coupling adds.

A drive coupling K (``core/model/coupling.py``) adds the constant rotor inertia C = K^T D K - D
and the friction difference ``coupling.friction_change`` to what the Newton-Euler
recursion, the CRBA and the ABA compute with each joint's own rotor and friction.  The route
(``route.py``) wraps a coupled model's functions with these, as it wraps the friction law's
further terms; a model without a coupling gets its functions unchanged:

    tau = rnea(q, qd, qdd) + C qdd + df(qd),      B_coupled = B + C,
    qdd = (B + C)^{-1} (B + C - C) qdd_0,   qdd_0 = ABA(q, qd, tau - df(qd))

(the last: B qdd_0 = tau - df - n(q, qd), which is (B + C) qdd for the coupled model).
"""
from __future__ import annotations

import numpy as np

from ..inputs import joint_arrays
from ..model.coupling import coupling_terms, friction_change
from .compiled import singular


def adding_coupling(model, rnea):
    """Return ``rnea(q, qd, qdd)`` + C qdd + df(qd) (``rnea`` if not coupled)."""
    if not model.coupled_drives:
        return rnea

    inertia = coupling_terms(model).inertia

    def call(q, qd, qdd, _rnea=rnea, _model=model, _inertia=inertia, _change=friction_change):
        tau = _rnea(q, qd, qdd)         # (checks the arguments)
        return tau + _change(_model, qd) + qdd @ _inertia
    return call


def adding_coupled_inertia(model, mass):
    """Return ``mass(q)`` + C (``mass`` if not coupled)."""
    if not model.coupled_drives:
        return mass
    inertia = coupling_terms(model).inertia

    def call(q):
        return mass(q) + inertia
    return call


def coupled_forward(model, forward, mass):
    """
    Return the coupled model's forward dynamics from its recursion's (module docstring).

    ``forward``: the recursion's (ABA) forward dynamics; ``mass(q)``: the coupled B + C.
    """
    if not model.coupled_drives:
        return forward
    inertia = coupling_terms(model).inertia

    n, nd = model.n, np.ndarray

    def call(q, qd, tau):
        # float arrays of one shape go straight on (``forward`` checks their values, q and qd
        # first); anything else is checked and converted here, InputError naming the argument
        if not (q.__class__ is nd and qd.__class__ is nd and tau.__class__ is nd
                and q.shape == qd.shape == tau.shape and q.shape[-1:] == (n,)
                and q.dtype == qd.dtype == tau.dtype == np.float64):
            (q, qd, tau), _ = joint_arrays(model, q=q, qd=qd, tau=tau)
        qdd0 = forward(q, qd, tau - friction_change(model, qd))
        coupled = mass(q)
        rhs = (coupled @ qdd0[..., None])[..., 0] - qdd0 @ inertia
        try:
            return np.linalg.solve(coupled, rhs[..., None])[..., 0]
        except np.linalg.LinAlgError as exc:
            raise singular(model) from exc
    return call
