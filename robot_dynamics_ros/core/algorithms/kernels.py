"""
The drivers numba compiles around the core's recursions: one configuration, or a batch.

Numba only: ``compiled.py`` puts these texts, with the recursions they call
(``newton_euler.forward_pass`` and ``backward_pass``, ...), into one module and compiles it.  Each
driver first checks the shapes and that its inputs are finite and returns False (status 1)
otherwise, writing nothing, so the caller's argument check costs nothing on valid input (the
caller then runs the full checks for the error message).  Arrays are float64 and C-contiguous;
``c`` is the model's rows of constants (``newton_euler.joint_rows``, with cos and sin of theta0
appended) and one more row holding the gravity vector in frame 0 (``compiled.constants``).

What a call costs besides the arithmetic, and what the drivers do about it (Puma 560, batch of
one, 2026-11-26, perf and timed loops): numba's dispatch of the arguments, some 0.05 us per
array, hence the constants in one array; reference counts, about 100 atomic operations per call
(16 % of it) and a third of each batch row, hence the drivers work on :func:`jit.unmanaged` views
of their arguments, which the caller holds; an allocation of the workspace (0.06 us), hence
:func:`scratch` on the stack.
"""
from __future__ import annotations

import math

import numpy as np

from ..jit import stack_array, unmanaged
from .aba import AW_D, N_ABA_WORKSPACE, accelerations, inertias, velocities
from .crba import N_CRBA_WORKSPACE, composite_inertias, mass_matrix_entries
from .newton_euler import (COS_ALPHA, N_WORKSPACE, PRISMATIC, PX, PY, PZ, SIN_ALPHA, THETA0,
                           backward_pass, forward_pass)
from .stick_slip import N_FRICTION_INDEX_ROWS, N_FRICTION_ROWS, friction_step

COS_THETA0_COLUMN = -2   # (the rows end with cos, sin theta0 snapped: compiled.constants_array)
SIN_THETA0_COLUMN = -1
# Scratch up to this many floats (32 KiB) lives on the stack: every driver's for up to 64 joints
# (the ABA's, the largest: 3,030 floats at 48 joints); longer chains take it from the heap.
STACK_FLOATS = 4096


def all_finite(x) -> bool:
    """Return whether every entry of the 1-D array x is finite."""
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return False
    return True


def all_finite_rows(x) -> bool:
    """Return whether every entry of the 2-D array x is finite."""
    for k in range(x.shape[0]):
        for i in range(x.shape[1]):
            if not math.isfinite(x[k, i]):
                return False
    return True


def joint_trig(c, q, qd, ct, st, sg):
    """Cos and sin of theta_i (exact constants for a prismatic joint) and sgn(qd_i)."""
    for i in range(q.shape[0]):
        if c[i, PRISMATIC] != 0.0:
            ct[i], st[i] = c[i, COS_THETA0_COLUMN], c[i, SIN_THETA0_COLUMN]
        else:
            theta = c[i, THETA0] + q[i]
            ct[i], st[i] = math.cos(theta), math.sin(theta)
        sg[i] = 1.0 if qd[i] > 0.0 else (-1.0 if qd[i] < 0.0 else 0.0)


def newton_euler_into(c, q, qd, qdd, g, wrench, ws, ct, st, sg, tau, moving):
    """Run the recursion for one configuration into ``tau`` (workspace given)."""
    joint_trig(c, q, qd, ct, st, sg)
    forward_pass(c, q, qd, qdd, ct, st, g, ws, moving)
    backward_pass(c, q, qd, qdd, sg, wrench, ws, tau, moving)


def valid(n, q, qd, qdd) -> bool:
    """Return whether q, qd, qdd all have n finite entries in C order (``valid_row``)."""
    return valid_row(n, q) and valid_row(n, qd) and valid_row(n, qdd)


def valid_batch(n, q, qd, qdd) -> bool:
    """Return whether q, qd, qdd are all (N, n) with finite entries in C order."""
    if qd.shape != q.shape or qdd.shape != q.shape:
        return False
    return valid_rows(n, q) and valid_rows(n, qd) and valid_rows(n, qdd)


def valid_row(n, q) -> bool:
    """
    Return whether the 1-D q has n finite entries in C order.

    (The order, as numpy's C-contiguous flag has it, is checked here because ``route.bound``
    calls these drivers by numba's entry point or the ahead-of-time extension, which convert
    arrays without checking it.)
    """
    return q.shape[0] == n and (n <= 1 or q.strides[0] == q.itemsize) and all_finite(q)


def c_order_rows(q) -> bool:
    """
    Return whether the 2-D q's entries lie in C order, as numpy's C-contiguous flag has it.

    (An empty array is in order whatever its strides, numpy 2 gives it zeros; a dimension of one
    may have any stride.)
    """
    rows, columns = q.shape
    if rows == 0 or columns == 0:
        return True
    return ((columns == 1 or q.strides[1] == q.itemsize)
            and (rows == 1 or q.strides[0] == columns * q.itemsize))


def valid_rows(n, q) -> bool:
    """Return whether the 2-D q has n columns and finite entries in C order (``valid_row``)."""
    return q.shape[1] == n and c_order_rows(q) and all_finite_rows(q)


def scratch(n, width):
    """
    Return a workspace (n, width) and the joints' trig (3, n), uninitialised, and six zeros.

    On the driver's stack (``INLINE``: this text runs in the driver) where they fit in
    STACK_FLOATS, else on the heap.
    """
    if n * (width + 3) + 6 <= STACK_FLOATS:
        ws, trig, z = stack_array(n, width), stack_array(3, n), stack_array(1, 6)
    else:
        ws, trig, z = np.empty((n, width)), np.empty((3, n)), np.empty((1, 6))
    zeros = z[0]
    zeros[:] = 0.0
    return ws, trig, zeros


def rnea_one(c, q, qd, qdd, out) -> bool:
    """Write tau of one configuration into ``out``; False (nothing written) if not valid."""
    n = c.shape[0] - 1
    if not (valid(n, q, qd, qdd) and out.shape[0] == n):
        return False
    c, q, qd, qdd, out = unmanaged(c), unmanaged(q), unmanaged(qd), unmanaged(qdd), unmanaged(out)
    ws, trig, zeros = scratch(n, N_WORKSPACE)
    newton_euler_into(c, q, qd, qdd, c[n, :3], zeros, ws, trig[0], trig[1], trig[2], out, True)
    return True


def gravity_one(c, q, out) -> bool:
    """Write g(q) of one configuration into ``out``; False (nothing written) if not valid."""
    n = c.shape[0] - 1
    if not (valid_row(n, q) and out.shape[0] == n):
        return False
    c, q, out = unmanaged(c), unmanaged(q), unmanaged(out)
    ws, trig, zeros = scratch(n, N_WORKSPACE)
    # (at rest the passes read no velocity: q stands in for qd and qdd)
    newton_euler_into(c, q, q, q, c[n, :3], zeros, ws, trig[0], trig[1], trig[2], out, False)
    return True


def rnea_many(c, q, qd, qdd, out) -> bool:
    """Write tau (N, n) of N configurations into ``out``; False (nothing written) if not valid."""
    c, zeros = unmanaged(c), stack_array(1, 6)
    zeros[0, :] = 0.0
    return rnea_general(c, c[c.shape[0] - 1, :3], q, qd, qdd, zeros, out)


def rnea_general(c, g, q, qd, qdd, wrench, out) -> bool:
    """
    Write tau (N, n) of N configurations into ``out``; False (nothing written) if not valid.

    ``g``: gravity in frame 0; ``wrench``: (N, 6), or (1, 6) for all (``newton_euler``).
    """
    n = c.shape[0] - 1
    if not (valid_batch(n, q, qd, qdd) and out.shape == q.shape):
        return False
    c, g, q, qd, qdd = unmanaged(c), unmanaged(g), unmanaged(q), unmanaged(qd), unmanaged(qdd)
    wrench, out = unmanaged(wrench), unmanaged(out)
    ws, trig, _ = scratch(n, N_WORKSPACE)
    last = wrench.shape[0] - 1
    for k in range(q.shape[0]):
        newton_euler_into(c, q[k], qd[k], qdd[k], g, wrench[min(k, last)], ws, trig[0],
                          trig[1], trig[2], out[k], True)
    return True


def gravity_many(c, q, out) -> bool:
    """Write g(q) (N, n) of N configurations into ``out``; False if not valid."""
    n = c.shape[0] - 1
    if not (valid_rows(n, q) and out.shape == q.shape):
        return False
    c, q, out = unmanaged(c), unmanaged(q), unmanaged(out)
    ws, trig, zeros = scratch(n, N_WORKSPACE)
    for k in range(q.shape[0]):
        newton_euler_into(c, q[k], q[k], q[k], c[n, :3], zeros, ws, trig[0], trig[1], trig[2],
                          out[k], False)
    return True


def mass_one(c, q, out) -> bool:
    """Write B(q) (n, n) into ``out``; False (nothing written) if q is not valid."""
    n = c.shape[0] - 1
    if not (valid_row(n, q) and out.shape[0] == n and out.shape[1] == n):
        return False
    c, q, out = unmanaged(c), unmanaged(q), unmanaged(out)
    ws, trig, _ = scratch(n, N_CRBA_WORKSPACE)
    joint_trig(c, q, q, trig[0], trig[1], trig[2])
    composite_inertias(c, q, trig[0], trig[1], ws)
    mass_matrix_entries(c, ws, out)
    return True


def mass_many(c, q, out) -> bool:
    """Write B of N configurations into ``out`` (N, n, n); False if q is not valid."""
    n = c.shape[0] - 1
    if not (valid_rows(n, q) and out.shape[0] == q.shape[0]
            and out.shape[1] == n and out.shape[2] == n):
        return False
    c, q, out = unmanaged(c), unmanaged(q), unmanaged(out)
    ws, trig, _ = scratch(n, N_CRBA_WORKSPACE)
    for k in range(q.shape[0]):
        joint_trig(c, q[k], q[k], trig[0], trig[1], trig[2])
        composite_inertias(c, q[k], trig[0], trig[1], ws)
        mass_matrix_entries(c, ws, out[k])
    return True


def _aba_into(c, g, q, qd, tau, wrench, ws, trig, out) -> int:
    """Run the three ABA passes for one configuration; 2 if a pivot D_i is not positive."""
    n = q.shape[0]
    joint_trig(c, q, qd, trig[0], trig[1], trig[2])
    velocities(c, q, qd, trig[0], trig[1], ws)
    inertias(c, qd, tau, trig[2], wrench, ws)
    for i in range(n):
        if not ws[i, AW_D] > 0.0:
            return 2
    accelerations(c, g, ws, out)
    return 0


def aba_one(c, q, qd, tau, out) -> int:
    """Write qdd into ``out``: 0, or 1 if the input is not valid, 2 if B(q) is singular."""
    n = c.shape[0] - 1
    if not (valid(n, q, qd, tau) and out.shape[0] == n):
        return 1
    c, q, qd, tau, out = unmanaged(c), unmanaged(q), unmanaged(qd), unmanaged(tau), unmanaged(out)
    ws, trig, zeros = scratch(n, N_ABA_WORKSPACE)
    return _aba_into(c, c[n, :3], q, qd, tau, zeros, ws, trig, out)


def aba_many(c, q, qd, tau, out) -> int:
    """Write qdd (N, n) into ``out`` (status as aba_one), the model's gravity, no wrench."""
    c, zeros = unmanaged(c), stack_array(1, 6)
    zeros[0, :] = 0.0
    return aba_general(c, c[c.shape[0] - 1, :3], q, qd, tau, zeros, out)


def aba_general(c, g, q, qd, tau, wrench, out) -> int:
    """Write qdd (N, n) into ``out`` (status as aba_one); ``wrench`` (N, 6) or (1, 6)."""
    n = c.shape[0] - 1
    if not (valid_batch(n, q, qd, tau) and out.shape == q.shape):
        return 1
    c, g, q, qd, tau = unmanaged(c), unmanaged(g), unmanaged(q), unmanaged(qd), unmanaged(tau)
    wrench, out = unmanaged(wrench), unmanaged(out)
    ws, trig, _ = scratch(n, N_ABA_WORKSPACE)
    last = wrench.shape[0] - 1
    for k in range(q.shape[0]):
        if _aba_into(c, g, q[k], qd[k], tau[k], wrench[min(k, last)], ws, trig, out[k]):
            return 2
    return 0


def tool_jacobian_into(c, q, axes, out):
    """
    Write the tool frame's geometric Jacobian (6, n), world axes, into ``out``.

    Column i: [z_i x (p - p_i); z_i] for a revolute joint, [z_i; 0] for a prismatic one
    (Siciliano et al. 2009, eqs. 7.18-7.19); the world poses of the joint frames from the base
    pose in row n of ``c``; ``axes``: scratch (n, 6) for the joints' axes and origins.
    """
    n = q.shape[0]
    e = c[n]
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = (e[3], e[4], e[5], e[6], e[7], e[8], e[9],
                                                   e[10], e[11])
    px, py, pz = e[12], e[13], e[14]
    for i in range(n):
        row = c[i]
        ca, sa = row[COS_ALPHA], row[SIN_ALPHA]
        ox, oy, oz = row[PX], row[PY], row[PZ]       # joint i's origin (newton_euler's doc)
        if row[PRISMATIC] != 0.0:
            cq, sq = row[COS_THETA0_COLUMN], row[SIN_THETA0_COLUMN]
            oy, oz = oy - sa * q[i], oz + ca * q[i]
        else:
            cq, sq = math.cos(row[THETA0] + q[i]), math.sin(row[THETA0] + q[i])
        # origin: p + R p_{i-1,i}(i-1); R <- R Rx(alpha) Rz(theta)
        px, py, pz = (px + (r00 * ox + r01 * oy + r02 * oz), py + (r10 * ox + r11 * oy + r12 * oz),
                      pz + (r20 * ox + r21 * oy + r22 * oz))
        r01, r02 = ca * r01 + sa * r02, ca * r02 - sa * r01
        r11, r12 = ca * r11 + sa * r12, ca * r12 - sa * r11
        r21, r22 = ca * r21 + sa * r22, ca * r22 - sa * r21
        r00, r01 = cq * r00 + sq * r01, cq * r01 - sq * r00
        r10, r11 = cq * r10 + sq * r11, cq * r11 - sq * r10
        r20, r21 = cq * r20 + sq * r21, cq * r21 - sq * r20
        axes[i, 0], axes[i, 1], axes[i, 2] = r02, r12, r22
        axes[i, 3], axes[i, 4], axes[i, 5] = px, py, pz
    tx = px + r00 * e[24] + r01 * e[25] + r02 * e[26]      # the tool point: flange offset
    ty = py + r10 * e[24] + r11 * e[25] + r12 * e[26]
    tz = pz + r20 * e[24] + r21 * e[25] + r22 * e[26]
    for i in range(n):
        zx, zy, zz = axes[i, 0], axes[i, 1], axes[i, 2]
        if c[i, PRISMATIC] != 0.0:
            out[0, i], out[1, i], out[2, i] = zx, zy, zz
            out[3, i] = out[4, i] = out[5, i] = 0.0
        else:
            dx, dy, dz = tx - axes[i, 3], ty - axes[i, 4], tz - axes[i, 5]
            out[0, i], out[1, i] = zy * dz - zz * dy, zz * dx - zx * dz
            out[2, i] = zx * dy - zy * dx
            out[3, i], out[4, i], out[5, i] = zx, zy, zz


def jacobian_one(c, q, out) -> bool:
    """Write the tool Jacobian (6, n) into ``out``; False if q is not valid."""
    n = c.shape[0] - 1
    if not (valid_row(n, q) and out.shape[0] == 6 and out.shape[1] == n):
        return False
    c, q, out = unmanaged(c), unmanaged(q), unmanaged(out)
    ws, _, _ = scratch(n, 6)
    tool_jacobian_into(c, q, ws, out)
    return True


def jacobian_many(c, q, out) -> bool:
    """Write the tool Jacobians (N, 6, n) into ``out``; False if q is not valid."""
    n = c.shape[0] - 1
    if not (valid_rows(n, q) and out.shape[0] == q.shape[0]
            and out.shape[1] == 6 and out.shape[2] == n):
        return False
    c, q, out = unmanaged(c), unmanaged(q), unmanaged(out)
    ws, _, _ = scratch(n, 6)
    for k in range(q.shape[0]):
        tool_jacobian_into(c, q[k], ws, out[k])
    return True


def _aba_stage(c, g, x, v, tau, quadratic, wrench, ws, trig, torque, out) -> int:
    """Write qdd of the ABA at (x, v) under tau - F_v2 v|v| into ``out`` (status as aba_one)."""
    for i in range(x.shape[0]):
        torque[i] = tau[i] - quadratic[i] * (v[i] * abs(v[i]))
    return _aba_into(c, g, x, v, torque, wrench, ws, trig, out)


def rk4_into(c, q, qd, tau, h, quadratic, ws, trig, zeros, s, out) -> int:
    """
    Take one classical RK4 step of qdd = ABA(q, qd, tau - F_v2 qd|qd|) with tau held.

    Turney et al. 1980, Sect. 7, as ``simulation.integrators.rk4_source``, the same operations
    in the same order: stage 2 at (q + h/2 qd, qd + h/2 a1), stage 3 at (q + h/2 v2, qd + h/2
    a2), stage 4 at (q + h v3, qd + h a3).  ``s``: scratch (10, n).  Rows of ``out`` (5, n): q
    and qd after the step, qdd at its start, q and qd of the fourth stage (whose B the Coulomb
    step couples, as the Python step's last evaluation).  2 if a pivot is not positive.
    """
    n = q.shape[0]
    g = c[n, :3]
    k = 0.5 * h
    x, torque, a1, a2, a3, a4, w2, w3, w4 = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]
    if _aba_stage(c, g, q, qd, tau, quadratic, zeros, ws, trig, torque, a1):
        return 2
    for i in range(n):
        w2[i] = qd[i] + k * a1[i]
        x[i] = q[i] + k * qd[i]
    if _aba_stage(c, g, x, w2, tau, quadratic, zeros, ws, trig, torque, a2):
        return 2
    for i in range(n):
        w3[i] = qd[i] + k * a2[i]
        x[i] = q[i] + k * w2[i]
    if _aba_stage(c, g, x, w3, tau, quadratic, zeros, ws, trig, torque, a3):
        return 2
    for i in range(n):
        w4[i] = qd[i] + h * a3[i]
        x[i] = q[i] + h * w3[i]
    if _aba_stage(c, g, x, w4, tau, quadratic, zeros, ws, trig, torque, a4):
        return 2
    sixth = h / 6.0
    for i in range(n):
        out[0, i] = q[i] + sixth * (qd[i] + 2.0 * (w2[i] + w3[i]) + w4[i])
        out[1, i] = qd[i] + sixth * (a1[i] + 2.0 * (a2[i] + a3[i]) + a4[i])
        out[2, i], out[3, i], out[4, i] = a1[i], x[i], w4[i]
    return 0


def valid_step(n, state, quadratic, out) -> bool:
    """Return whether ``state`` (3, n) and F_v2 (n,) are finite in C order, ``out`` (5, n)."""
    return (state.shape[0] == 3 and valid_rows(n, state) and quadratic.shape[0] == n
            and all_finite(quadratic) and out.shape[0] == 5 and out.shape[1] == n
            and c_order_rows(out))


def rk4_one(c, state, h, quadratic, out) -> int:
    """
    Write one RK4 step into ``out`` (``rk4_into``): 0, 1 if the input is not valid, 2 singular.

    ``state``: rows q, qd and the torque held over the step (one array: ``compiled.step_entry``
    calls this by its machine-code entry); ``c``: the constants of the model without Coulomb
    friction (``compiled.constants``, plain rows); ``quadratic``: F_v2 (n,), the friction the
    ABA's rows do not hold.
    """
    n = c.shape[0] - 1
    if not valid_step(n, state, quadratic, out):
        return 1
    c, state, quadratic, out = unmanaged(c), unmanaged(state), unmanaged(quadratic), unmanaged(out)
    ws, trig, zeros = scratch(n, N_ABA_WORKSPACE)
    s = stack_array(9, n) if n <= 64 else np.empty((9, n))
    return rk4_into(c, state[0], state[1], state[2], h, quadratic, ws, trig, zeros, s, out)


def mass_into(c, q, ws, trig, out):
    """Write B(q) (n, n) into ``out`` by the CRBA (workspace ``ws`` (n, N_CRBA_WORKSPACE))."""
    joint_trig(c, q, q, trig[0], trig[1], trig[2])
    composite_inertias(c, q, trig[0], trig[1], ws)
    mass_matrix_entries(c, ws, out)


def rk4_coulomb_one(c, state, h, quadratic, coulomb, stuck, share, out) -> int:
    """
    Write one RK4 step followed by the implicit Coulomb step into ``out`` (status as rk4_one).

    ``stick_slip.friction_step`` with B at the fourth stage and at the start (the CRBA), as
    ``simulation.Simulator.step`` takes it in Python: rows 0-2 of ``out`` are q, qd after the
    step and qdd at its start with F_s sgn(qd) (Siciliano et al. 2009, eq. 7.115); ``coulomb``
    F_s (n,) this step's levels, ``stuck`` (n,) the sticking joints (updated in place),
    ``share`` the part of the step over which positions take the friction's velocity change.
    """
    n = c.shape[0] - 1
    if not (valid_step(n, state, quadratic, out) and coulomb.shape[0] == n
            and stuck.shape[0] == n and all_finite(coulomb)):
        return 1
    ws, trig, zeros = scratch(n, N_ABA_WORKSPACE)
    s = np.empty((12 + 2 * n, n))
    w, iw = np.empty((n + N_FRICTION_ROWS, n)), np.empty((N_FRICTION_INDEX_ROWS, n), np.int64)
    return coulomb_step_into(c, state[0], state[1], state[2], h, quadratic, coulomb, stuck,
                             share, ws, trig, zeros, s, w, iw, out)


def coulomb_step_into(c, q, qd, tau, h, quadratic, coulomb, stuck, share, ws, trig, zeros, s,
                      w, iw, out) -> int:
    """
    ``rk4_coulomb_one``'s step on its scratch ``s`` (12 + 2 n, n); status as rk4_one.

    ``w``, ``iw``: the workspaces of ``stick_slip.friction_step``.
    """
    n = q.shape[0]
    status = rk4_into(c, q, qd, tau, h, quadratic, ws, trig, zeros, s, out)
    if status:
        return status
    end, start = s[12:12 + n], s[12 + n:12 + 2 * n]
    mass_into(c, out[3], ws, trig, end)
    for i in range(n):
        if coulomb[i] != 0.0 and qd[i] != 0.0:      # (B at the start: for qdd's friction)
            mass_into(c, q, ws, trig, start)
            break
    s[9, :], s[10, :], s[11, :] = out[0], out[1], out[2]
    friction_step(end, start, q, qd, s[9], s[10], s[11], h, coulomb, stuck, share, out, w, iw)
    return 0


def step_into(c, params, q, qd, tau, h, share, stuck, ws, trig, zeros, s, w, iw,
              out) -> int:
    """
    Take ``simulation.Simulator.step``'s RK4 step from (q, qd) under ``tau``, into ``out``.

    The same branches and operations as the Python step: without Coulomb friction one RK4
    step; while every joint with friction slides the same way through the step, the RK4 step
    with F_s sgn(qd) held in the torque; otherwise the RK4 step and the implicit Coulomb step
    (``coulomb_step_into``; ``w``, ``iw`` its workspaces).  ``params`` rows 3, 4: F_s, F_v2
    (``simulate_steps``); rows 0-2 of ``out`` (5, n): q, qd after the step, qdd at its start.
    0, or 2 if a pivot is not positive or the state is not finite (nothing kept: the caller
    takes the step in Python, which names the cause); ``stuck`` is as before then.
    """
    n = q.shape[0]
    levels, quadratic = params[3], params[4]
    torque, saved = s[13 + 2 * n], s[14 + 2 * n]
    friction, slides = False, True
    for i in range(n):
        torque[i] = tau[i]
        saved[i] = 1.0 if stuck[i] else 0.0
        if levels[i] > 0.0:
            friction = True
            if qd[i] == 0.0:
                slides = False
            else:
                torque[i] -= levels[i] if qd[i] > 0.0 else -levels[i]
    if friction and slides:
        if rk4_into(c, q, qd, torque, h, quadratic, ws, trig, zeros, s, out):
            return 2
        if not (all_finite(out[0]) and all_finite(out[1])):
            return 2
        for i in range(n):
            if levels[i] > 0.0 and ((out[1, i] > 0.0) != (qd[i] > 0.0) or out[1, i] == 0.0):
                slides = False
        if slides:
            stuck[:] = False
            return 0
    if friction:
        status = coulomb_step_into(c, q, qd, tau, h, quadratic, levels, stuck, share, ws, trig,
                                   zeros, s, w, iw, out)
    else:
        status = rk4_into(c, q, qd, tau, h, quadratic, ws, trig, zeros, s, out)
    if status == 0 and all_finite(out[0]) and all_finite(out[1]):
        return 0
    for i in range(n):
        stuck[i] = saved[i] != 0.0
    return 2


def stop_at_limits(lower, upper, q, qd, counts):
    """``Simulator._stop_at_limits``: a joint beyond a limit is put on it, inelastic stop."""
    for i in range(q.shape[0]):
        if q[i] > upper[i]:
            q[i] = upper[i]
            if qd[i] > 0.0:
                qd[i] = 0.0
            counts[i] += 1
        elif q[i] < lower[i]:
            q[i] = lower[i]
            if qd[i] < 0.0:
                qd[i] = 0.0
            counts[i] += 1


def simulate_steps(c, params, stuck, counts, iw, command, rows, h, share, limits, first,
                   last) -> int:
    """
    Take ``Simulator.step``'s steps first .. last - 1 of a run under ``command``, in one call.

    The whole step of ``simulation.Simulator.step`` with the compiled RK4 (its effort saturation,
    ``step_into``, the joint stops), on the run's rows: ``rows`` (4, N + 1, n) q, qd, qdd and
    the applied torque per step, q and qd of row ``first`` the start; writes q, qd of rows
    first + 1 .. last and qdd, torque of rows first .. last - 1.  ``command`` (n,) the torque
    held over every one of these steps (a fixed torque: all steps of a run; a controller: one
    step per call).  ``params`` (5, n): the lower and upper position limits, the effort limits,
    F_s and F_v2; ``c`` the constants of the model without Coulomb friction; ``stuck`` (bool)
    the sticking joints (in place); ``counts`` (2, n) the steps each joint was clipped at its
    effort limit and stopped at a position limit (added to); ``iw`` (N_FRICTION_INDEX_ROWS, n)
    the Coulomb step's integer workspace; ``limits``: 1 joint stops, 2 effort saturation
    (bits).  The float scratch lives on the stack: nothing is allocated per step (but by the
    coordinate-descent fallback of ``stick_slip.py``, should the active set cycle).  Returns
    the index of the
    first step not taken: ``last``, or the step whose torque is not finite, whose B is
    singular or whose state is not finite (nothing of it written: the caller takes that step
    in Python, which raises the error naming the cause); -1 if the arguments are not valid.
    """
    n = c.shape[0] - 1
    if not (params.shape[0] == 5 and params.shape[1] == n and c_order_rows(params)
            and all_finite(params[3]) and all_finite(params[4]) and stuck.shape[0] == n
            and counts.shape[0] == 2 and counts.shape[1] == n and c_order_rows(counts)
            and iw.shape[0] == N_FRICTION_INDEX_ROWS and iw.shape[1] == n and c_order_rows(iw)
            and command.shape[0] == n and (n <= 1 or command.strides[0] == command.itemsize)
            and rows.shape[0] == 4 and rows.shape[2] == n
            and 0 <= first and first <= last and last < rows.shape[1]
            and c_order_rows(rows[0]) and math.isfinite(h) and math.isfinite(share)):
        return -1
    c, params, stuck, counts = unmanaged(c), unmanaged(params), unmanaged(stuck), unmanaged(counts)
    command, rows, iw = unmanaged(command), unmanaged(rows), unmanaged(iw)
    ws, trig, zeros = scratch(n, N_ABA_WORKSPACE)
    # scratch rows: rk4_into 0-8, coulomb_step_into 9 .. 11 + 2 n, step_into 13 + 2 n and
    # 14 + 2 n, then the applied torque, the clipped joints, the step's rows (5) and the
    # Coulomb step's workspace (n + N_FRICTION_ROWS)
    height = 21 + 3 * n + N_FRICTION_ROWS
    s = stack_array(height, n) if height * n <= STACK_FLOATS else np.empty((height, n))
    applied, clipped, out = s[12 + 2 * n], s[15 + 2 * n], s[16 + 2 * n:21 + 2 * n]
    w = s[21 + 2 * n:]
    effort = params[2]
    if not all_finite(command):
        return first
    for i in range(n):
        x, bound = command[i], effort[i]
        applied[i], clipped[i] = x, 0.0
        if limits & 2 and (x > bound or x < -bound):
            applied[i], clipped[i] = (bound if x > 0.0 else -bound), 1.0
    for k in range(first, last):
        if step_into(c, params, rows[0, k], rows[1, k], applied, h, share, stuck, ws, trig,
                     zeros, s, w, iw, out):
            return k
        q, qd = rows[0, k + 1], rows[1, k + 1]
        for i in range(n):
            q[i], qd[i] = out[0, i], out[1, i]
            rows[2, k, i], rows[3, k, i] = out[2, i], applied[i]
            if clipped[i] != 0.0:
                counts[0, i] += 1
        if limits & 1:
            stop_at_limits(params[0], params[1], q, qd, counts[1])
    return last
