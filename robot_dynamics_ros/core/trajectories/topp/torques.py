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

from typing import Callable, NamedTuple

import numpy as np

from ...algorithms.rnea import rnea
from ...model.cache import model_constant
from ..uniform import friction_torques

SELF_CHECK = 1e-9      # relative agreement with the core's rnea required of the generated code


def _stack(columns) -> np.ndarray:
    """Return the generated torques (n columns, or floats where constant) as (N, n)."""
    return np.stack(np.broadcast_arrays(*columns), axis=1)


def _on_columns(function):
    """Wrap a generated one-configuration function into a batch function of (N, n) arrays."""
    def batch(*arrays):
        return _stack(function(*(list(a.T) for a in arrays), _sin=np.sin, _cos=np.cos,
                               _array=tuple))
    return batch


class Generated(NamedTuple):
    """Batch functions of the generated friction-free model: rnea(q, qd, qdd), gravity(q)."""

    rnea: Callable
    gravity: Callable


def _agrees(got, want) -> bool:
    return got.shape == want.shape and bool(np.all(np.abs(got - want) <= SELF_CHECK * max(
        1.0, float(np.abs(want).max()))))


def _build(model) -> Generated | None:
    """Return the batch functions of the generated friction-free model, or None (core rnea)."""
    from ....codegen import CodegenError, generated_model   # (codegen builds on the core)
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1.0, 1.0, (4, model.n)) for _ in range(3))
    try:
        module = generated_model(model.without_friction()).module
        functions = Generated(_on_columns(module.rnea), _on_columns(module.gravity_torques))
        got = functions.rnea(q, qd, qdd) + friction_torques(model, qd)
        got_gravity = functions.gravity(q)
    except (CodegenError, TypeError, ValueError):
        return None
    zeros = np.zeros_like(q)
    if not (_agrees(got, rnea(model, q, qd, qdd))
            and _agrees(got_gravity, rnea(model, q, zeros, zeros))):
        return None
    return functions


def _generated(model) -> Generated | None:
    return model_constant(model, "topp_generated_dynamics", _build)


def batch_rnea(model, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """
    Return tau (N, n) of the states (N, n) with the model's gravity, rotors and friction.

    The same torques as ``rnea(model, q, qd, qdd)`` (to rounding), computed by the generated
    model where the model allows it (module docstring).  Arguments are not checked: the callers
    pass arrays they built from validated data.
    """
    functions = _generated(model)
    if functions is None or q.shape[0] == 0:
        return rnea(model, q, qd, qdd)
    return functions.rnea(q, qd, qdd) + friction_torques(model, qd)


def batch_gravity(model, q: np.ndarray) -> np.ndarray:
    """Return g(q) (N, n) for configurations (N, n): ``batch_rnea`` at rest, cheaper."""
    functions = _generated(model)
    if functions is None or q.shape[0] == 0:
        zeros = np.zeros_like(q)
        return rnea(model, q, zeros, zeros)
    return functions.gravity(q)
