"""
Composite-rigid-body algorithm on scalar components (Featherstone's CRBA).

In the spirit of Siciliano et al. 2009, Sect. 7.6: B(q) without n calls of inverse dynamics.

Each composite body i (links i..n) is kept in its own frame as (mass m, first moment h = m c,
inertia I about the frame origin).  Column i of B is the wrench F_i = Ic_i S_i needed to give joint
i a unit acceleration, carried down the chain by the same frame change as the RNEA's backward pass;
B_ji is its projection on joint j's axis.  Rotor spin (Siciliano et al. 2009, eqs. 7.113-7.114)
adds k_r^2 I_m on the diagonal and the reaction k_r I_m z_i on link i-1, exactly the RNEA's rotor
terms with qdd = e_i.  Like ``rnea.py``, components are floats (single call) or numpy columns (a
batch).
"""
from __future__ import annotations

import math

import numpy as np

from ..inputs import joint_arrays
from ..model.cache import model_constant
from ..model.inertia import parallel_axis
from ..model.joint_constants import joint_fields
from .rotations import rot_x

# The per-joint constants read below (model/joint_constants.py), in the order unpacked.
FIELDS = ("prismatic", "cos_alpha", "sin_alpha", "a", "theta0", "d0", "rotor", "gear_ratio")


def _rotate_inertia_x(ca, sa, xx, yy, zz, xy, xz, yz):
    """Entries of Rx(alpha) I Rx(alpha)^T."""
    if sa == 0.0:
        return (xx, yy, zz, xy, xz, yz) if ca > 0 else (xx, yy, zz, -xy, -xz, yz)
    if ca == 0.0:
        return xx, zz, yy, -sa * xz, sa * xy, -yz
    c2, s2, cs = ca * ca, sa * sa, ca * sa
    return (xx, c2 * yy - 2.0 * cs * yz + s2 * zz, s2 * yy + 2.0 * cs * yz + c2 * zz,
            ca * xy - sa * xz, sa * xy + ca * xz, cs * (yy - zz) + (c2 - s2) * yz)


def _composite_to_parent(body, ct, st, a, d, ca, sa):
    """(m, h, I about origin) of a body in frame i -> the same body in frame i-1."""
    m, hx, hy, hz, xx, yy, zz, xy, xz, yz = body
    # Rz(theta): into the intermediate frame X.
    c2, s2 = ct * ct - st * st, 2.0 * ct * st
    mean, half = 0.5 * (xx + yy), 0.5 * (xx - yy)
    xx, yy, xy = mean + half * c2 - xy * s2, mean - half * c2 + xy * s2, half * s2 + xy * c2
    xz, yz = ct * xz - st * yz, st * xz + ct * yz
    hx, hy = ct * hx - st * hy, st * hx + ct * hy
    # Shift the reference point to the parent's origin, p = (a, 0, d) in X (parallel axes):
    # I' = I + m (|p|^2 E - p p^T) + 2 (p.h) E - (h p^T + p h^T)
    ph = a * hx + d * hz
    xx, yy, zz = (xx + m * d * d + 2.0 * d * hz, yy + m * (a * a + d * d) + 2.0 * ph,
                  zz + m * a * a + 2.0 * a * hx)
    xy, xz, yz = xy - a * hy, xz - m * a * d - (hx * d + a * hz), yz - d * hy
    hx, hz = hx + m * a, hz + m * d
    hx, hy, hz = rot_x(ca, sa, hx, hy, hz)
    return (m, hx, hy, hz) + _rotate_inertia_x(ca, sa, xx, yy, zz, xy, xz, yz)


def _link_body(m, c, Ic) -> tuple:
    """Return (m, h = m c, I about the frame origin) of one link, floats (I: xx yy zz xy xz yz)."""
    I_o = parallel_axis(Ic, m, c)
    return tuple(map(float, (m, *(m * c), I_o[0, 0], I_o[1, 1], I_o[2, 2],
                             I_o[0, 1], I_o[0, 2], I_o[1, 2])))


def _link_bodies(model) -> tuple:
    """Each link as (m, h, I about its frame origin) in its internal frame; once per model."""
    ch = model.chain
    return model_constant(model, "crba_link_bodies", lambda _: tuple(
        _link_body(m, c, Ic) for m, c, Ic in zip(ch.mass, ch.com, ch.inertia)))


def _columns(model, q, xp):
    """B as a list of rows of components."""
    joints = joint_fields(model, FIELDS)
    bodies = _link_bodies(model)
    n = len(joints)
    geometry = []
    for i, (prism, ca, sa, a, th0, d0, _, _) in enumerate(joints):
        th, d = (th0, d0 + q[i]) if prism else (th0 + q[i], d0)
        geometry.append((xp.cos(th), xp.sin(th), a, d, ca, sa))
    prismatic = [joint[0] for joint in joints]
    B = [[0.0] * n for _ in range(n)]
    composite = None
    for i in range(n - 1, -1, -1):
        composite = bodies[i] if composite is None else tuple(
            x + y for x, y in zip(bodies[i], _composite_to_parent(composite, *geometry[i + 1])))
        m, hx, hy, hz, xx, yy, zz, xy, xz, yz = composite
        prism, _, _, _, _, _, rotor, kr = joints[i]
        # F_i = Ic_i S_i: (moment; force) about the origin of frame i.
        if prism:
            nx, ny, nz, fx, fy, fz = hy, -hx, 0.0, 0.0, 0.0, m
            B[i][i] = m + rotor * kr
        else:
            nx, ny, nz, fx, fy, fz = xz, yz, zz, -hy, hx, 0.0
            B[i][i] = zz + rotor * kr
        for j in range(i - 1, -1, -1):
            ct, st, a, d, ca, sa = geometry[j + 1]
            fx, fy = ct * fx - st * fy, st * fx + ct * fy
            nx, ny = ct * nx - st * ny, st * nx + ct * ny
            nx, ny, nz = nx - d * fy, ny + d * fx - a * fz, nz + a * fy
            if j == i - 1 and rotor != 0.0:
                nz = nz + rotor            # reaction of rotor i on link i-1: k_r I_m z_i
            fx, fy, fz = rot_x(ca, sa, fx, fy, fz)
            nx, ny, nz = rot_x(ca, sa, nx, ny, nz)
            B[i][j] = B[j][i] = fz if prismatic[j] else nz
    return B


def mass_matrix(model, q) -> np.ndarray:
    """
    Return B(q), the joint-space inertia matrix (Siciliano et al. 2009, eq. 7.32), rotors included.

    By the composite-rigid-body algorithm, O(n^2).  Shape (n, n), or (N, n, n) for a batch (N, n).
    """
    (q,), batched = joint_arrays(model, q=q)
    if batched:
        rows = _columns(model, np.ascontiguousarray(q.T), np)
        N = q.shape[0]
        return np.stack([np.stack(np.broadcast_arrays(*row, np.empty(N))[:-1], axis=-1)
                         for row in rows], axis=-2)
    return np.array(_columns(model, q.tolist(), math))
