"""
Per-joint constants of the internal chain as Python floats, for the scalar recursions.

The scalar recursions outside ``algorithms/`` (the identification regressor, the task-space
scalar kinematics) work on Python floats or numpy columns, one scalar component at a time; they
read the model through these per-joint records, computed once per model
(``cache.model_constant``); the dynamics algorithms read ``newton_euler.joint_rows``.  Entries
that are zero up to rounding (cos(pi/2) ~ 6e-17 after re-expressing a standard-DH link in its
joint frame) are made exact zeros, so the recursions can skip the work on them.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..transforms import exact_cos_sin
from .cache import model_constant


class JointConstants(NamedTuple):
    """Constants of joint i and link i in internal (modified-DH) frame i; see ``model.Chain``."""

    prismatic: bool
    cos_alpha: float        # of alpha_{i-1}
    sin_alpha: float
    a: float                # a_{i-1}
    theta0: float           # joint offset (q adds to it for a revolute joint)
    d0: float               # (q adds to it for a prismatic joint)
    e: float                # O_i in frame Rx(alpha_{i-1}) is (a, e, d0 [+ q]) (model.Chain)
    mass: float
    cx: float               # centre of mass in frame i
    cy: float
    cz: float
    ixx: float              # inertia about the centre of mass, frame i axes
    iyy: float
    izz: float
    ixy: float
    ixz: float
    iyz: float
    # k_r I_m: rotor inertia times gear ratio (Siciliano et al. 2009, eqs. 7.111-7.114)
    rotor: float
    gear_ratio: float       # k_r
    viscous: float          # F_v, joint side
    coulomb: float          # F_s, joint side
    offset: bool            # origin i moves relative to origin i-1 (p = (a, e, d) != 0)
    off_centre: bool        # the centre of mass is off the origin
    diagonal: bool          # the inertia tensor is diagonal in frame i


def _snap(x: np.ndarray) -> np.ndarray:
    """Entries below 1e-14 of the largest made exact zeros."""
    return np.where(np.abs(x) <= 1e-14 * np.abs(x).max(), 0.0, x)


def _build(model) -> tuple[JointConstants, ...]:
    ch = model.chain
    joints = []
    for i in range(model.n):
        ca, sa = exact_cos_sin(ch.alpha_prev[i])
        I, c = _snap(ch.inertia[i]), _snap(ch.com[i])
        prismatic = bool(ch.prismatic[i])
        joints.append(JointConstants(
            prismatic=prismatic, cos_alpha=ca, sin_alpha=sa, a=float(ch.a_prev[i]),
            theta0=float(ch.theta0[i]), d0=float(ch.d0[i]), e=float(ch.e_prev[i]),
            mass=float(ch.mass[i]),
            cx=float(c[0]), cy=float(c[1]), cz=float(c[2]),
            ixx=float(I[0, 0]), iyy=float(I[1, 1]), izz=float(I[2, 2]),
            ixy=float(I[0, 1]), ixz=float(I[0, 2]), iyz=float(I[1, 2]),
            rotor=float(ch.rotor_inertia[i] * ch.gear_ratio[i]),
            gear_ratio=float(ch.gear_ratio[i]),
            viscous=float(ch.viscous[i]), coulomb=float(ch.coulomb[i]),
            offset=prismatic or bool(np.any(ch.p_prev[i] != 0.0)),
            off_centre=bool(np.any(c != 0.0)),
            diagonal=I[0, 1] == 0.0 and I[0, 2] == 0.0 and I[1, 2] == 0.0))
    return tuple(joints)


def joint_constants(model) -> tuple[JointConstants, ...]:
    """Return the model's per-joint constants (computed once per model)."""
    return model_constant(model, "joint_constants", _build)


def joint_fields(model, names: tuple[str, ...]) -> tuple[tuple, ...]:
    """
    Per joint, the values of the fields ``names`` as a plain tuple (computed once per model).

    The scalar recursions unpack these tuples in their inner loops, where reading a NamedTuple's
    fields by attribute would cost about a third of a single RNEA call; the field order is the
    ``names`` the recursion gives, next to its unpacking.
    """
    return model_constant(model, ("joint_fields", names), lambda m: tuple(
        tuple(getattr(joint, name) for name in names) for joint in joint_constants(m)))
