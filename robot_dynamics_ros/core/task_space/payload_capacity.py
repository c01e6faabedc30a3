"""
Payload capacity: the largest point mass the arm can hold or carry within its effort limits.

A point mass m at the point c of the tool frame moves with the tool; with a_c = J_v qdd +
Jdot_v qd its acceleration (Siciliano et al. 2009, eq. 3.98) and g the gravity vector, the arm must
apply the force m (a_c - g) to it, which costs the joint torques J_v^T m (a_c - g) (Asada & Slotine
1986, eq. 4-7).  The joint torques are therefore affine in the mass::

    tau(m) = tau_0 + m tau_1,   tau_0 = RNEA(q, qd, qdd) of the arm as modelled (rotors,
                                        friction, any payload of the file),
                                tau_1 = J_v(c)^T (a_c - g),

and the capacity is the largest m >= 0 with |tau_i(m)| <= effort_i for every joint i: the
binding joint is the one whose limit is reached first.  Holding still (qd = qdd = 0) tau_0 is
the gravity torque g(q).  The capacity is the mass to add to the model as given (the file's own
payload stays); a joint whose torque does not change with the mass never binds, and when none
does the capacity is infinite (binding_joint None).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..algorithms.kinematics import jacobian, jacobian_dot_qd
from ..algorithms.rnea import rnea
from ..errors import InfeasibleError, InputError
from ..inputs import joint_arrays


class PayloadCapacity(NamedTuple):
    """The capacity and what limits it (per configuration for a batch)."""

    mass: float | np.ndarray              # kg; inf where no joint's torque depends on the mass
    binding_joint: str | None | tuple     # the joint whose effort limit is reached first
    torques: np.ndarray                   # (n,) joint torques with the payload at capacity
    sample: int | None = None             # along a trajectory: the index of the binding sample
    time: float | None = None             # along a trajectory: its time (s)


def _com_argument(com) -> np.ndarray:
    c = np.asarray(com, dtype=float)
    if c.shape != (3,) or not np.isfinite(c).all():
        raise InputError(f"com: expected the payload's centre of mass as 3 finite coordinates in "
                         f"the tool frame, got {com!r}")
    return c


def payload_torques(model, q, qd=None, qdd=None, com=(0.0, 0.0, 0.0)):
    """Return (tau_0, tau_1): joint torques without payload and per kg of payload at ``com``."""
    (q, qd, qdd), _ = joint_arrays(model, q=q, qd=qd, qdd=qdd)
    c = _com_argument(com)
    tau0 = rnea(model, q, qd, qdd)
    Jv = jacobian(model, q, point=c)[..., :3, :]
    acc = np.einsum("...ij,...j->...i", Jv, qdd) + jacobian_dot_qd(model, q, qd, point=c)[..., :3]
    tau1 = np.einsum("...ji,...j->...i", Jv, acc - model.gravity)
    return tau0, tau1


def _capacity(model, tau0, tau1, where):
    """
    Return the largest m >= 0 with |tau0 + m tau1| <= effort per row, and its joint (or -1).

    ``where(k)``: (words, time) locating row k of a batch in an error message.
    """
    model.require_limits(("effort",), "the payload capacity")
    limit = model.effort_limit
    over = np.abs(tau0) > limit
    if np.any(over):
        k, j = np.argwhere(np.atleast_2d(over))[0]
        words, time = where(int(k)) if tau0.ndim == 2 else ("", None)
        value = float(np.atleast_2d(tau0)[k, j])
        raise InfeasibleError(
            f"{model.name}: joint '{model.joint_names[j]}' needs {value:.6g}{words} without any "
            f"payload, beyond its effort limit {limit[j]:.6g}: no payload can be held",
            joint=model.joint_names[j], time=time)
    with np.errstate(divide="ignore", invalid="ignore"):
        up = (limit - tau0) / tau1          # where tau1 > 0: tau reaches +limit
        down = (-limit - tau0) / tau1       # where tau1 < 0: tau reaches -limit
    bound = np.where(tau1 > 0.0, up, np.where(tau1 < 0.0, down, np.inf))
    joint = np.argmin(bound, axis=-1)
    mass = np.take_along_axis(bound, joint[..., None], axis=-1)[..., 0]
    return mass, np.where(np.isfinite(mass), joint, -1)


def payload_capacity(model, q, qd=None, qdd=None, com=(0.0, 0.0, 0.0)) -> PayloadCapacity:
    """
    Compute the largest payload mass (kg) at ``com`` (tool frame) within the effort limits.

    At (q, qd, qdd), by default held still; with the binding joint.  Per configuration for a
    batch (N, n).  ``InfeasibleError`` (naming the joint) when the arm alone already exceeds a
    limit there.
    """
    tau0, tau1 = payload_torques(model, q, qd, qdd, com)
    mass, joint = _capacity(model, tau0, tau1,
                            lambda k: (f" at configuration {k} of the batch", None))
    torques = tau0 + np.where(np.isfinite(mass), mass, 0.0)[..., None] * tau1
    if np.ndim(mass) == 0:
        name = model.joint_names[joint] if joint >= 0 else None
        return PayloadCapacity(float(mass), name, torques)
    names = tuple(model.joint_names[j] if j >= 0 else None for j in joint)
    return PayloadCapacity(mass, names, torques)


def trajectory_payload_capacity(model, trajectory, samples: int = 1000,
                                com=(0.0, 0.0, 0.0)) -> PayloadCapacity:
    """
    Compute the largest payload the arm can carry along a trajectory within its effort limits.

    ``trajectory``: a ``core.trajectories.JointTrajectory`` with the model's joints (in any
    order).  The capacity is the smallest over ``samples`` evenly spaced times and the waypoint
    times (both one-sided limits there, where accelerations may jump); ``sample`` and ``time``
    say where it binds (indices: the grid, then the waypoints' left limits, then their right
    limits).
    """
    if not isinstance(samples, (int, np.integer)) or samples < 2:
        raise InputError(f"samples: expected an integer >= 2, got {samples!r}")
    if set(trajectory.joint_names) != set(model.joint_names):
        raise InputError(f"trajectory: joints {list(trajectory.joint_names)} are not the joints "
                         f"of '{model.name}' {list(model.joint_names)}")
    traj = trajectory.reordered(model.joint_names)
    grid = np.linspace(0.0, traj.duration, samples)
    times = np.concatenate([grid, traj.times, traj.times])
    sides = [traj.sample(grid), traj.sample(traj.times, side="left"), traj.sample(traj.times)]
    q, qd, qdd = (np.concatenate([s[k] for s in sides]) for k in range(3))
    tau0, tau1 = payload_torques(model, q, qd, qdd, com)
    mass, joint = _capacity(model, tau0, tau1,
                            lambda k: (f" at t = {times[k]:.6g} s", float(times[k])))
    k = int(np.argmin(mass))
    name = model.joint_names[joint[k]] if joint[k] >= 0 else None
    torques = tau0[k] + (mass[k] if np.isfinite(mass[k]) else 0.0) * tau1[k]
    return PayloadCapacity(float(mass[k]), name, torques, k, float(times[k]))
