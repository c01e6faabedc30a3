"""
The RNEA of ``rnea.py`` on a batch: every component a numpy column of N samples.

The recursion is ``rnea._recursion`` step for step (same equations, Siciliano et al. 2009, eqs.
7.107-7.114, same order of operations); what differs is that a component which is zero for every
sample, as the angular velocity components at a fixed base or the centre-of-mass components of a
link whose CoM lies on its joint axis, stays the Python float 0.0, and the products and sums with
it are skipped (``_m``, ``_a``, ``_s``, ``_rz_inv``).  In a batch each skipped operation is a whole
array operation, so this halves the cost on typical arms (Puma 560: 0.65 -> 0.32 us per
configuration); on single calls the checks would cost more than they save, which is why ``rnea.py``
has none. The results equal the textbook recursion's up to the sign of zeros.

Large batches run in chunks of ``CHUNK`` rows: the recursion keeps ~15 columns per joint alive,
and beyond a few MB of them the allocator returns the memory to the system after every call, so
that every column of the next call page-faults (slower than the arithmetic on it).
"""
from __future__ import annotations

import numpy as np

from ..model.joint_constants import joint_fields
from .rnea import BACKWARD_FIELDS, FORWARD_FIELDS
from .rotations import rot_x, rot_x_inv

CHUNK = 2048


def _zero(x) -> bool:
    """Return whether x is the float 0.0 (a structural zero), not an array."""
    return x.__class__ is float and x == 0.0


def _m(a, b):
    """Return a b, or the float 0.0 if a factor is a structural zero."""
    return 0.0 if _zero(a) or _zero(b) else a * b


def _a(a, b):
    """Return a + b, skipping a structural-zero term."""
    return a if _zero(b) else (b if _zero(a) else a + b)


def _s(a, b):
    """Return a - b, skipping a structural-zero term."""
    return a if _zero(b) else (-b if _zero(a) else a - b)


def _rz_inv(ct, st, x, y):
    """Rz(-theta) (x, y): (ct x + st y, ct y - st x) without the products with structural zeros."""
    if _zero(x):
        return (0.0, 0.0) if _zero(y) else (st * y, ct * y)
    if _zero(y):
        return ct * x, -(st * x)
    return ct * x + st * y, ct * y - st * x


def _recursion(model, q, qd, qdd, g, wrench):
    """
    Return tau as a list of per-joint columns (or floats, for torques independent of the state).

    A torque is a float where it does not depend on the state, e.g. for massless outer links;
    arguments as ``rnea._recursion``'s, columns of N samples.
    """
    n = model.n
    wx = wy = wz = 0.0
    wdx = wdy = wdz = 0.0
    ax, ay, az = -g[0], -g[1], -g[2]
    kin = []
    for i, (prism, ca, sa, a, th0, d0, offset) in enumerate(joint_fields(model, FORWARD_FIELDS)):
        qi, qdi, qddi = q[i], qd[i], qdd[i]
        th, d = (th0, d0 + qi) if prism else ((th0 + qi) if th0 != 0.0 else qi, d0)
        ct, st = np.cos(th), np.sin(th)
        pwx, pwy, pwz = rot_x_inv(ca, sa, wx, wy, wz)
        pdx, pdy, pdz = rot_x_inv(ca, sa, wdx, wdy, wdz)
        vx, vy, vz = rot_x_inv(ca, sa, ax, ay, az)
        if offset:                                                               # (7.109)
            tx, ty, tz = pwy * d, pwz * a - pwx * d, -pwy * a
            vx = vx + pdy * d + pwy * tz - pwz * ty
            vy = vy + pdz * a - pdx * d + pwz * tx - pwx * tz
            vz = vz - pdy * a + pwx * ty - pwy * tx
        wx, wy = _rz_inv(ct, st, pwx, pwy)
        wdx, wdy = _rz_inv(ct, st, pdx, pdy)
        ax, ay = _rz_inv(ct, st, vx, vy)
        wz, wdz, az = pwz, pdz, vz
        if prism:
            ax = ax + 2.0 * qdi * wy
            ay = ay - 2.0 * qdi * wx
            az = az + qddi
        elif _zero(wx) and _zero(wy):                                 # (7.107), (7.108)
            wz = wz + qdi
            wdz = wdz + qddi
        else:
            wdx = wdx + qdi * wy
            wdy = wdy - qdi * wx
            wz = wz + qdi
            wdz = wdz + qddi
        kin.append((wx, wy, wz, wdx, wdy, wdz, ax, ay, az, ct, st, d, pwx, pwy, pdz))

    fx, fy, fz, nx, ny, nz = wrench if wrench is not None else (0.0,) * 6       # (7.112)-(7.114)
    tau = [0.0] * n
    backward = joint_fields(model, BACKWARD_FIELDS)
    for i in range(n - 1, -1, -1):
        (prism, ca, sa, a, m, cx, cy, cz, ixx, iyy, izz, ixy, ixz, iyz,
         rotor, kr, fv, fc, offset, off_centre, diagonal) = backward[i]
        wx, wy, wz, wdx, wdy, wdz, ax, ay, az, ct, st, d, pwx, pwy, pdz = kin[i]
        if m != 0.0 and not off_centre:
            fx, fy, fz = fx + m * ax, fy + m * ay, fz + m * az
        elif m != 0.0:                                                           # (7.110)
            ux, uy, uz = (_s(_m(wy, cz), _m(wz, cy)), _s(_m(wz, cx), _m(wx, cz)),
                          _s(_m(wx, cy), _m(wy, cx)))
            Fx = m * _s(_a(_s(_a(ax, _m(wdy, cz)), _m(wdz, cy)), _m(wy, uz)), _m(wz, uy))
            Fy = m * _s(_a(_s(_a(ay, _m(wdz, cx)), _m(wdx, cz)), _m(wz, ux)), _m(wx, uz))
            Fz = m * _s(_a(_s(_a(az, _m(wdx, cy)), _m(wdy, cx)), _m(wx, uy)), _m(wy, ux))
            fx, fy, fz = _a(fx, Fx), _a(fy, Fy), _a(fz, Fz)
            nx, ny, nz = (_s(_a(nx, _m(cy, Fz)), _m(cz, Fy)), _s(_a(ny, _m(cz, Fx)), _m(cx, Fz)),
                          _s(_a(nz, _m(cx, Fy)), _m(cy, Fx)))
        if diagonal:                                                             # (7.113)
            # (joint 1 only needs nz; a term with equal moments of inertia vanishes)
            if i:
                nx = _a(_a(nx, _m(ixx, wdx)), 0.0 if izz == iyy else _m(izz - iyy, _m(wy, wz)))
                ny = _a(_a(ny, _m(iyy, wdy)), 0.0 if ixx == izz else _m(ixx - izz, _m(wz, wx)))
            nz = _a(_a(nz, _m(izz, wdz)), 0.0 if iyy == ixx else _m(iyy - ixx, _m(wx, wy)))
        else:
            hx = ixx * wx + ixy * wy + ixz * wz
            hy = ixy * wx + iyy * wy + iyz * wz
            hz = ixz * wx + iyz * wy + izz * wz
            nx = nx + ixx * wdx + ixy * wdy + ixz * wdz + wy * hz - wz * hy
            ny = ny + ixy * wdx + iyy * wdy + iyz * wdz + wz * hx - wx * hz
            nz = nz + ixz * wdx + iyz * wdy + izz * wdz + wx * hy - wy * hx
        t = fz if prism else nz                                                  # (7.114)
        if rotor != 0.0:
            t = t + rotor * (pdz + kr * qdd[i])
        if fv != 0.0:
            t = t + fv * qd[i]
        if fc != 0.0:
            t = t + fc * np.sign(qd[i])
        tau[i] = t
        if i == 0:
            break
        fx, fy = ct * fx - st * fy, st * fx + ct * fy
        nx, ny = ct * nx - st * ny, st * nx + ct * ny
        if offset:
            nx, ny, nz = nx - d * fy, ny + d * fx - a * fz, nz + a * fy
        if rotor != 0.0:
            rq = rotor * qd[i]
            nx = nx + rq * pwy
            ny = ny - rq * pwx
            nz = nz + rotor * qdd[i]
        fx, fy, fz = rot_x(ca, sa, fx, fy, fz)
        nx, ny, nz = rot_x(ca, sa, nx, ny, nz)
    return tau


def rnea_columns(model, q, qd, qdd, g, wrench) -> np.ndarray:
    """
    Return tau (N, n) for validated (N, n) arrays.

    ``g``: 3 floats, base frame; ``wrench``: six columns (N,) or None (see
    ``rnea.wrench_in_last_frame``).
    """
    N = q.shape[0]
    out = np.empty((N, model.n))
    chunks = max(-(-N // CHUNK), 1)
    size = max(-(-N // chunks), 1)
    for start in range(0, N, size):
        stop = start + size
        part = None if wrench is None else [w[start:stop] for w in wrench]
        # (columns transposed per chunk: small copies, reused by the allocator)
        q_c, qd_c, qdd_c = (np.ascontiguousarray(v[start:stop].T) for v in (q, qd, qdd))
        for j, t in enumerate(_recursion(model, q_c, qd_c, qdd_c, g, part)):
            out[start:stop, j] = t      # a float (state-independent torque) broadcasts
    return out
