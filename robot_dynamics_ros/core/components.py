"""Per-joint constants and the elementary rotations shared by the scalar-component recursions
(``rnea.py``, ``crba.py``).  A component is a Python float (single call) or a numpy column (batch).

Frames are the model's internal modified-DH frames: T_{i-1,i} = Rx(alpha) Tx(a) Rz(theta) Tz(d).
The intermediate frame X (after Rx(alpha)) shares the parent's origin, and in it the child's origin
is simply (a, 0, d).
"""
from __future__ import annotations

import math

import numpy as np
import weakref

# Per-model caches, kept here so that the algorithms never touch the (constant) model itself.
_JOINT_CONSTANTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def joint_constants(model) -> tuple:
    """Per-joint Python floats used by the recursion, computed once per model."""
    cached = _JOINT_CONSTANTS.get(model)
    if cached is not None:
        return cached
    ch = model.chain
    joints = []
    for i in range(model.n):
        ca, sa = math.cos(ch.alpha_prev[i]), math.sin(ch.alpha_prev[i])
        if abs(sa) < 1e-15:
            ca, sa = (1.0 if ca > 0 else -1.0), 0.0
        elif abs(ca) < 1e-15:
            ca, sa = 0.0, (1.0 if sa > 0 else -1.0)
        I, c = ch.inertia[i], ch.com[i]
        # Entries that are zero up to rounding (e.g. cos(pi/2) ~ 6e-17 from re-expressing a
        # standard-DH link in its joint frame) become exact zeros, so the recursions can skip the
        # work on them (which matters in batches, where each product is an array operation).
        I = np.where(np.abs(I) <= 1e-14 * np.abs(I).max(), 0.0, I)
        c = np.where(np.abs(c) <= 1e-14 * np.abs(c).max(), 0.0, c)
        prismatic = bool(ch.prismatic[i])
        joints.append((
            prismatic, ca, sa, float(ch.a_prev[i]), float(ch.theta0[i]), float(ch.d0[i]),
            float(ch.mass[i]), *map(float, c),
            float(I[0, 0]), float(I[1, 1]), float(I[2, 2]), float(I[0, 1]), float(I[0, 2]), float(I[1, 2]),
            float(ch.rotor_inertia[i] * ch.gear_ratio[i]), float(ch.gear_ratio[i]),
            float(ch.viscous[i]), float(ch.coulomb[i]),
            # structure flags: the origin moves relative to the parent's (p = (a, 0, d) != 0);
            # the centre of mass is off the origin; the inertia tensor is diagonal
            prismatic or ch.a_prev[i] != 0.0 or ch.d0[i] != 0.0, bool(np.any(c != 0.0)),
            I[0, 1] == 0.0 and I[0, 2] == 0.0 and I[1, 2] == 0.0))
    _JOINT_CONSTANTS[model] = cached = tuple(joints)
    return cached


def rot_x_inv(ca, sa, x, y, z):
    """Components of a frame-(i-1) vector in the intermediate frame X: Rx(-alpha) v."""
    if sa == 0.0:
        return (x, y, z) if ca > 0 else (x, -y, -z)
    if ca == 0.0:
        return (x, z, -y) if sa > 0 else (x, -z, y)
    return x, ca * y + sa * z, ca * z - sa * y


def rot_x(ca, sa, x, y, z):
    """Components of an X-frame vector in frame i-1: Rx(alpha) v."""
    if sa == 0.0:
        return (x, y, z) if ca > 0 else (x, -y, -z)
    if ca == 0.0:
        return (x, -z, y) if sa > 0 else (x, z, -y)
    return x, ca * y - sa * z, sa * y + ca * z
