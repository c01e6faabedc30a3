"""
The one place where the implementation of a robot's dynamics is chosen.

The core (``robot_dynamics_ros.core``) owns the algorithms and never imports the code generator;
whoever needs dynamics in a loop (the nodes, the commands, bag processing, the time-optimal
scaling, the simulator) asks this module for a :class:`Kernel` and passes it in, the way toppra's
``JointTorqueConstraint(inv_dyn, ...)`` receives its inverse dynamics.

Implementations (``IMPLEMENTATIONS``):

* ``"compiled"``: the core's algorithms compiled by numba (``core/algorithms/compiled.py``): the
  one Newton-Euler recursion, the composite-rigid-body algorithm, the articulated-body algorithm
  and the tool Jacobian, about a microsecond per call and the arithmetic alone per batch row;
  the fastest for every function and batch size.  Unavailable without numba.
* ``"generated"``: the straight-line model of the code generator (``robot_dynamics_ros.codegen``),
  generated and compiled in memory for this exact model (tens of milliseconds), as plain Python;
  large batches run it once on numpy columns.  Faster than ``"plain"`` for one configuration.
* ``"plain"``: the core's algorithms as plain Python (``core/algorithms/plain.py``): floats for
  one configuration, numpy columns for a batch.

``select(model)`` (``prefer="fastest"``) picks the fastest implementation available: compiled,
else generated (else plain, where the generator refuses the model; ``reason`` says why);
``prefer="core"`` is what the core's own functions use: compiled, else plain.  Every
function of a :class:`Kernel` takes one configuration (n,) or a batch (N, n), checks its
arguments as the core does (``InputError`` naming the argument), and uses the model's gravity,
rotors and friction.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from .core import RobotModel
from .core import algorithms
from .core.algorithms import compiled, plain
from .core.algorithms.kinematics import jacobian as _numpy_jacobian
from .core.algorithms.rnea import gravity_in_base
from .core.control.friction import (adding_extra_friction, friction_torques,
                                    subtracting_extra_friction)
from .core.inputs import joint_arrays

IMPLEMENTATIONS = ("compiled", "generated", "plain")
PREFERENCES = ("fastest", "core") + IMPLEMENTATIONS
COLUMNS_FROM = 8      # generated: batches from this size run once on numpy columns
# Generating and compiling the straight-line model grows faster than linearly with the joints
# (0.05 s at 6, 0.85 s at 32, 1.8 s at 48 on this machine under load 2): longer chains compute
# with the core, checked before generation.
MAX_GENERATED_JOINTS = 32


@dataclass(frozen=True)
class Kernel:
    """
    The dynamics functions of one model in one implementation (immutable).

    ``rnea(q, qd, qdd)``, ``gravity_torques(q)``, ``nonlinear_effects(q, qd)``,
    ``mass_matrix(q)``, ``forward_dynamics(q, qd, tau)`` and ``jacobian(q)`` (the tool frame's
    geometric Jacobian, world axes) as ``robot_dynamics_ros.core`` defines them, single (n,) or
    batched (N, n).  ``implementation`` names what computes them, ``reason`` why it is not the
    one preferred (empty if it is).
    """

    model: RobotModel
    implementation: str
    reason: str
    rnea: Callable
    gravity_torques: Callable
    nonlinear_effects: Callable
    mass_matrix: Callable
    forward_dynamics: Callable
    jacobian: Callable


def _compiled(model: RobotModel) -> Kernel:
    """Return the core's functions compiled by numba, bound to the model (``compiled.bound``)."""
    b = compiled.bound(model)
    return Kernel(model, "compiled", "", rnea=b.rnea, gravity_torques=b.gravity_torques,
                  nonlinear_effects=lambda q, qd: algorithms.nonlinear_effects(model, q, qd),
                  mass_matrix=b.mass_matrix, forward_dynamics=b.forward_dynamics,
                  jacobian=b.jacobian)


def _plain(model: RobotModel, reason: str = "") -> Kernel:
    """Return the core's algorithms as plain Python, whether or not numba is available."""
    def gravity():
        return compiled.kernel_array(gravity_in_base(model, None))[0]

    def rnea(q, qd, qdd):
        (q, qd, qdd), _ = joint_arrays(model, q=q, qd=qd, qdd=qdd)
        return plain.rnea(model, q, qd, qdd, gravity(), np.zeros((1, 6)))

    def mass_matrix(q):
        (q,), _ = joint_arrays(model, q=q)
        return plain.mass_matrix(model, q)

    def forward_dynamics(q, qd, tau):
        (q, qd, tau), _ = joint_arrays(model, q=q, qd=qd, tau=tau)
        qdd, ok = plain.forward_dynamics(model, q, qd, tau, gravity(), np.zeros((1, 6)))
        if not ok:
            raise compiled.singular(model)
        return qdd

    full = adding_extra_friction(model, rnea)
    return Kernel(model, "plain", reason, rnea=full,
                  gravity_torques=lambda q: rnea(q, np.zeros_like(q), np.zeros_like(q)),
                  nonlinear_effects=lambda q, qd: full(q, qd, np.zeros_like(q)),
                  mass_matrix=mass_matrix,
                  forward_dynamics=subtracting_extra_friction(model, forward_dynamics),
                  jacobian=lambda q: _numpy_jacobian(model, q, frame="tool"))


def _on_columns(model, single, raw, friction: bool):
    """
    Wrap a generated vector function: single calls as they are, large batches on columns.

    ``raw`` is the generated function of the friction-free model (its sign is written for
    floats); the friction (F_v qd + F_s sgn(qd), Siciliano et al. 2009, eq. 7.114, and the
    further terms of ``core/control/friction.py``) is added on the batch.
    """
    def call(*arrays):
        args, batched = joint_arrays(model, **dict(zip(("q", "qd", "qdd"), arrays)))
        if not batched or args[0].shape[0] < COLUMNS_FROM:
            return single(*args)
        columns = raw(*(list(a.T) for a in args), _sin=np.sin, _cos=np.cos, _array=tuple)
        out = np.stack(np.broadcast_arrays(*columns, args[0][:, 0])[:-1], axis=1)
        return out + friction_torques(model, args[1], args[0]) if friction else out
    return call


def _generated(model: RobotModel, reason: str = "") -> Kernel:
    from .codegen import generated_model
    g = generated_model(model)
    rigid = generated_model(model.without_friction()).module
    return Kernel(model, "generated", reason,
                  rnea=_on_columns(model, g.rnea, rigid.rnea, True),
                  gravity_torques=_on_columns(model, g.gravity_torques, rigid.gravity_torques,
                                              False),
                  nonlinear_effects=_on_columns(model, g.nonlinear_effects,
                                                rigid.nonlinear_effects, True),
                  mass_matrix=g.mass_matrix,
                  forward_dynamics=lambda q, qd, tau: algorithms.forward_dynamics(
                      model, q, qd, tau),
                  jacobian=lambda q: algorithms.jacobian(model, q))


def select(model: RobotModel, prefer: str = "fastest") -> Kernel:
    """
    Return the dynamics of ``model`` in the implementation ``prefer`` (see the module docstring).

    ``"fastest"``: compiled if numba works, else generated; ``"core"``: compiled, else plain.  A
    preferred implementation that cannot serve the model falls back (compiled -> generated ->
    plain, generated -> core), ``reason`` saying why.  Raises ValueError for an unknown
    ``prefer``.
    """
    if prefer not in PREFERENCES:
        raise ValueError(f"unknown dynamics implementation {prefer!r} "
                         f"(available: {list(PREFERENCES)})")
    if prefer == "plain":
        return _plain(model)
    if prefer == "generated":
        refused = _generation_refused(model)
        if refused is None:
            return _generated(model)
        kernel = select(model, "core")
        return replace(kernel, reason=refused)
    if compiled.kernels() is not None:
        return _compiled(model)
    reason = f"compiled kernels unavailable: {compiled.status()}"
    if prefer == "core" or _generation_refused(model) is not None:
        return _plain(model, reason)
    return _generated(model, reason)


def _generation_refused(model: RobotModel) -> str | None:
    """Return why the generated model cannot serve ``model``, or None if it can."""
    if model.n > MAX_GENERATED_JOINTS:
        return (f"generated model not built: {model.n} joints, more than "
                f"{MAX_GENERATED_JOINTS} (its generation time grows faster than linearly)")
    from .codegen import CodegenError, generated_model
    try:
        generated_model(model)
    except CodegenError as exc:
        return f"generated model refused: {exc}"
    return None
