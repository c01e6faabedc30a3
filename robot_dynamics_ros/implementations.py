"""
The one place where the implementation of a robot's dynamics is chosen.

The core (``robot_dynamics_ros.core``) owns the algorithms and never imports the code generator;
whoever needs dynamics in a loop (the nodes, the commands, bag processing, the time-optimal
scaling, the simulator) asks this module for a :class:`Kernel` and passes it in, the way toppra's
``JointTorqueConstraint(inv_dyn, ...)`` receives its inverse dynamics.

Implementations:

* ``"plain"``: the core's algorithms (``robot_dynamics_ros.core``);
* ``"generated"``: the straight-line model of the code generator (``robot_dynamics_ros.codegen``),
  generated and compiled in memory for this exact model (tens of milliseconds); where the
  generator refuses the model, the core's algorithms are used and ``reason`` says why.

``select(model)`` (``prefer="fastest"``) picks the fastest exact implementation available for the
model.  Every function of a :class:`Kernel` takes one configuration (n,) or a batch (N, n), checks
its arguments as the core does (``InputError`` naming the argument), and uses the model's
gravity, rotors and friction.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .core import RobotModel
from .core import algorithms
from .core.inputs import joint_arrays
from .core.trajectories.uniform import friction_torques

IMPLEMENTATIONS = ("generated", "plain")
PREFERENCES = ("fastest",) + IMPLEMENTATIONS


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


def _plain(model: RobotModel, reason: str = "") -> Kernel:
    return Kernel(
        model, "plain", reason,
        rnea=lambda q, qd, qdd: algorithms.rnea(model, q, qd, qdd),
        gravity_torques=lambda q: algorithms.gravity_torques(model, q),
        nonlinear_effects=lambda q, qd: algorithms.nonlinear_effects(model, q, qd),
        mass_matrix=lambda q: algorithms.mass_matrix(model, q),
        forward_dynamics=lambda q, qd, tau: algorithms.forward_dynamics(model, q, qd, tau),
        jacobian=lambda q: algorithms.jacobian(model, q))


COLUMNS_FROM = 8      # batches from this size run the generated code once on numpy columns


def _on_columns(model, single, raw, friction: bool):
    """
    Wrap a generated vector function: single calls as they are, large batches on columns.

    ``raw`` is the generated function of the friction-free model (its sign is written for
    floats); the friction F_v qd + F_s sgn(qd) (Siciliano et al. 2009, eq. 7.114) is added on the
    batch.
    """
    def call(*arrays):
        args, batched = joint_arrays(model, **dict(zip(("q", "qd", "qdd"), arrays)))
        if not batched or args[0].shape[0] < COLUMNS_FROM:
            return single(*args)
        columns = raw(*(list(a.T) for a in args), _sin=np.sin, _cos=np.cos, _array=tuple)
        out = np.stack(np.broadcast_arrays(*columns, args[0][:, 0])[:-1], axis=1)
        return out + friction_torques(model, args[1]) if friction else out
    return call


def _generated(model: RobotModel) -> Kernel:
    from .codegen import generated_model
    g = generated_model(model)
    rigid = generated_model(model.without_friction()).module
    return Kernel(model, "generated", "",
                  rnea=_on_columns(model, g.rnea, rigid.rnea, True),
                  gravity_torques=_on_columns(model, g.gravity_torques, rigid.gravity_torques,
                                              False),
                  nonlinear_effects=_on_columns(model, g.nonlinear_effects,
                                                rigid.nonlinear_effects, True),
                  mass_matrix=g.mass_matrix, forward_dynamics=g.forward_dynamics,
                  jacobian=lambda q: algorithms.jacobian(model, q))


def select(model: RobotModel, prefer: str = "fastest") -> Kernel:
    """
    Return the dynamics of ``model`` in the implementation ``prefer`` (see the module docstring).

    ``"fastest"``: the fastest exact implementation available for the model.  A preferred
    implementation that cannot serve the model falls back to ``"plain"``, ``reason`` saying why.
    Raises ValueError for an unknown ``prefer``.
    """
    if prefer not in PREFERENCES:
        raise ValueError(f"unknown dynamics implementation {prefer!r} "
                         f"(available: {list(PREFERENCES)})")
    if prefer == "plain":
        return _plain(model)
    from .codegen import CodegenError
    try:
        return _generated(model)
    except CodegenError as exc:
        return _plain(model, f"generated model refused: {exc}")


def simulation_terms(model: RobotModel) -> str | None:
    """
    Return the generated terms the simulator runs for ``model``, or None (the core's algorithms).

    The source of B(q) and n(q, qd) as one straight-line function (``codegen/simulation.py``) of
    the model without its Coulomb friction (the simulator's implicit step applies it), for
    ``core.simulation.Simulator(..., terms=...)`` / ``simulate``.  None where the generator
    refuses the model: the simulator then computes with the core's algorithms.
    """
    from .codegen import CodegenError
    from .codegen.simulation import simulation_terms_source
    from .core.simulation.dynamics import without_coulomb
    try:
        return simulation_terms_source(without_coulomb(model))
    except CodegenError:
        return None
