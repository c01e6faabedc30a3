"""
The inverse dynamics the time-optimal scaling evaluates: received from outside the core.

The path data (3 rnea per collocation point) and the re-check of the output (rnea at 4 samples
per output interval) are the scaling's largest costs, so the caller chooses the implementation
and passes it in, the way toppra's ``JointTorqueConstraint(inv_dyn, ...)`` receives its inverse
dynamics: ``time_optimal_scaling(..., dynamics=route.select(model))`` (``core.algorithms.route``:
the core's Newton-Euler compiled by numba, plain Python where numba cannot serve).  Without one,
the core's ``rnea`` and ``gravity_torques`` are called: the same torques, the same kernel where
numba is available.  The core never imports the
code generator (issue 22).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
from ...algorithms.rnea import gravity_torques, rnea
from ...errors import InputError


class Torques(NamedTuple):
    """
    Batch functions of one model: ``rnea(q, qd, qdd)`` and ``gravity(q)``, (N, n) -> (N, n).

    With the model's gravity, rotors and friction (F_v qd + F_s sgn(qd), Siciliano et al. 2009, eq.
    7.114), as ``core.rnea`` and ``core.gravity_torques`` compute them.
    """

    rnea: Callable
    gravity: Callable


def torque_functions(model, dynamics=None) -> Torques:
    """
    Return the :class:`Torques` of ``model`` from ``dynamics``, or the core's (None).

    ``dynamics``: anything with ``rnea(q, qd, qdd)`` and ``gravity_torques(q)`` for batches of
    ``model`` (e.g. a ``core.algorithms.route.Kernel``), or a function of the model returning that
    (``core.algorithms.route.select``); InputError if it carries another ``model``
    (torques of another robot, or of the same robot with another payload, would be wrong).
    """
    if dynamics is not None and not hasattr(dynamics, "rnea") and callable(dynamics):
        dynamics = dynamics(model)          # a selector (``route.select``)
    other = getattr(dynamics, "model", model)
    if other is not model:
        raise InputError(f"dynamics: computes the robot '{getattr(other, 'name', other)}', "
                         f"not the model being scaled ('{model.name}'); select it for this model")
    if dynamics is None:
        return Torques(lambda q, qd, qdd: rnea(model, q, qd, qdd),
                       lambda q: gravity_torques(model, q))
    return Torques(_chunked(dynamics.rnea), _chunked(dynamics.gravity_torques))


CHUNK = 2048      # states per call: larger batches on numpy columns leave the cache (measured)


def _chunked(function):
    """
    Evaluate ``function`` on batches of at most CHUNK states.

    A re-check of the Puma path evaluates about 4,000 states; on numpy columns (the generated
    model, or the core without numba) every operation makes a temporary the size of the batch,
    and two calls of 2,000 states took 1.3-1.8 ms where one of 4,000 took 2.3-4.3 ms on this
    shared machine.  The compiled kernel does not care either way.
    """
    def call(*arrays):
        N = arrays[0].shape[0]
        if N <= CHUNK:
            return function(*arrays)
        parts = -(-N // CHUNK)
        size = -(-N // parts)
        return np.concatenate([function(*(a[i:i + size] for a in arrays))
                               for i in range(0, N, size)])
    return call
