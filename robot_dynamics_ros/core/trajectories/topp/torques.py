"""
Inverse dynamics of large batches for the time-optimal scaling: the generated model on columns.

The path data (3 rnea per collocation point) and the re-check of the output (rnea at 11 samples
per output interval) are the time-optimal scaling's largest costs.  The code generator's
straight-line rnea of the robot (``robot_dynamics_ros.codegen``: Renaud's quasi-minimal
Newton-Euler, seed 004, the same torques as the core's RNEA, seed 002 eqs. 7.107-7.114, up to
rounding) evaluated once on whole numpy columns, one per joint, costs about 2/3 of the core's
batched RNEA (Puma 560, Panda): its arithmetic is the same, with fewer operations.

Friction is added here (F_v qd + F_s sgn(qd), seed 002 eq. 7.114), not generated: the generated
sign is written for floats.  The generated module is built once per model (tens of
milliseconds, kept in the model's cache) and checked against the core's ``rnea`` on a few
states when built; a model the generator refuses, or whose generated torques disagree, uses the
core's ``rnea``.
"""
from __future__ import annotations

import numpy as np

from ...algorithms.rnea import rnea
from ...model.cache import model_constant
from ..uniform import friction_torques

SELF_CHECK = 1e-9      # relative agreement with the core's rnea required of the generated code


def _stack(columns) -> np.ndarray:
    """Return the generated torques (n columns, or floats where constant) as (N, n)."""
    return np.stack(np.broadcast_arrays(*columns), axis=1)


def _columns_rnea(function):
    """Wrap a generated one-configuration rnea into a batch function on (N, n) arrays."""
    def batch(q, qd, qdd):
        return _stack(function(list(q.T), list(qd.T), list(qdd.T), _sin=np.sin, _cos=np.cos,
                               _array=tuple))
    return batch


def _build(model):
    """Return the batch function of the generated friction-free model, or None (core rnea)."""
    from ....codegen import CodegenError, generated_model   # (codegen builds on the core)
    try:
        batch = _columns_rnea(generated_model(model.without_friction()).module.rnea)
        rng = np.random.default_rng(0)
        q, qd, qdd = (rng.uniform(-1.0, 1.0, (4, model.n)) for _ in range(3))
        got = batch(q, qd, qdd) + friction_torques(model, qd)
    except (CodegenError, TypeError, ValueError):
        return None
    want = rnea(model, q, qd, qdd)
    if got.shape != want.shape or not np.all(np.abs(got - want) <= SELF_CHECK * max(
            1.0, float(np.abs(want).max()))):
        return None
    return batch


def batch_rnea(model, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """
    Return tau (N, n) of the states (N, n) with the model's gravity, rotors and friction.

    The same torques as ``rnea(model, q, qd, qdd)`` (to rounding), computed by the generated
    model where the model allows it (module docstring).  Arguments are not checked: the callers
    pass arrays they built from validated data.
    """
    batch = model_constant(model, "topp_generated_rnea", _build)
    if batch is None or q.shape[0] == 0:
        return rnea(model, q, qd, qdd)
    return batch(q, qd, qdd) + friction_torques(model, qd)
