"""
The implicit Coulomb friction step of ``core/simulation/friction.py`` on numpy arrays, for numba.

The same set-valued law and the same method as ``simulation.friction.CoulombStep`` (Moreau's
time-stepping: B (v - v*) = -dt F_s s, s_i = sgn(v_i), or any value in [-1, 1] where v_i = 0;
the common cases first, then an active-set method, coordinate descent should that cycle), written
on arrays so that numba compiles it into the simulator's RK4 step (``kernels.rk4_coulomb_one``,
in the one compiled module of ``compiled.py``, generic over the model): while friction holds
joints, a step is one call into machine code instead of the Python step of ``friction.py``
(about 75 us on the Puma 560, issue 22).  ``simulation/friction.py`` stays the plain-Python
implementation; ``test/core/simulation/test_friction.py`` checks that the two agree.

Plain Python functions of numpy arrays (no numba import here): ``compiled.py`` compiles them.
They allocate nothing (but the coordinate-descent fallback): the caller gives them a float
workspace ``w`` (n + N_FRICTION_ROWS, n) and an integer one ``iw`` (N_FRICTION_INDEX_ROWS, n),
whose rows are named below, so that a step of the simulator is free of heap allocations.
"""
from __future__ import annotations

import math

SWEEPS = 200                # coordinate-descent sweeps at most (the fallback), as friction.py
TOLERANCE = 1e-13
# rows of the float workspace after the first n (the Cholesky factor of solve_subset)
FW_Y, FW_X, FW_DIRECTION, FW_VELOCITY, FW_RHS, FW_FRICTION, FW_IMPULSE = 0, 1, 2, 3, 4, 5, 6
N_FRICTION_ROWS = 7
# rows of the integer workspace
IW_ORDER, IW_FREE, IW_STICKS, IW_REVERSES, IW_BREAKS = 0, 1, 2, 3, 4
N_FRICTION_INDEX_ROWS = 5


def _sign(x: float) -> float:
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


def solve_subset(B, index, count, rhs, w):
    """
    Solve B[index, index] x = rhs for the first ``count`` indices (Cholesky; B SPD).

    Returns x: the first ``count`` entries of the row FW_X of ``w`` (its first rows hold the
    factor L).
    """
    n = w.shape[1]
    L, y, x = w, w[n + FW_Y], w[n + FW_X]
    for j in range(count):
        d = B[index[j], index[j]]
        for m in range(j):
            d -= L[j, m] * L[j, m]
        L[j, j] = math.sqrt(d)
        for i in range(j + 1, count):
            s = B[index[i], index[j]]
            for m in range(j):
                s -= L[i, m] * L[j, m]
            L[i, j] = s / L[j, j]
    for i in range(count):
        s = rhs[i]
        for m in range(i):
            s -= L[i, m] * y[m]
        y[i] = s / L[i, i]
    for i in range(count - 1, -1, -1):
        s = y[i]
        for m in range(i + 1, count):
            s -= L[m, i] * x[m]
        x[i] = s / L[i, i]
    return x[:count]


def coulomb_velocity(B, target, friction, stuck, w, iw):
    """
    Return the velocity after the friction impulse of a step (``friction.CoulombStep``).

    ``B`` (n, n) the mass matrix, ``target`` (n,) the velocity v* without Coulomb friction,
    ``friction`` (n,) dt F_s (0 for joints without), ``stuck`` (n,) booleans: the previous step's
    sticking joints in, this step's out (the warm start of the active set); ``w``, ``iw`` the
    workspaces (the result is the row FW_VELOCITY of ``w``, or the fallback's array).
    """
    n = target.size
    order, after = iw[IW_ORDER], w[n + FW_VELOCITY]
    everywhere = True
    moving = True
    for i in range(n):
        order[i] = i
        if friction[i] > 0.0:
            if target[i] == 0.0:
                moving = False
        else:
            everywhere = False
    if moving:
        # sliding in the same direction throughout: v = v* - dt B^-1 F_s sgn(v*)
        impulse = w[n + FW_DIRECTION]
        for i in range(n):
            impulse[i] = friction[i] * _sign(target[i])
        change = solve_subset(B, order, n, impulse, w)
        for i in range(n):
            after[i] = target[i] - change[i]
        kept = True
        for i in range(n):
            if friction[i] > 0.0 and (after[i] == 0.0 or (after[i] > 0.0) != (target[i] > 0.0)):
                kept = False
        if kept:
            stuck[:] = False
            return after
    if everywhere:
        # friction stops every joint: |(B v*)_i| <= dt F_s,i for all i
        held = True
        for i in range(n):
            total = 0.0
            for j in range(n):
                total += B[i, j] * target[j]
            if abs(total) > friction[i]:
                held = False
        if held:
            stuck[:] = True
            after[:] = 0.0
            return after
    return _active_set(B, target, friction, stuck, w, iw)


def _active_set(B, target, friction, stuck, w, iw):
    """Find the sticking joints by the active-set iteration of ``friction.CoulombStep``."""
    n = target.size
    sticks, free, reverses, breaks = iw[IW_STICKS], iw[IW_FREE], iw[IW_REVERSES], iw[IW_BREAKS]
    direction, rhs, v, impulse = (w[n + FW_DIRECTION], w[n + FW_RHS], w[n + FW_VELOCITY],
                                  w[n + FW_IMPULSE])
    for i in range(n):
        sticks[i] = 1 if stuck[i] and friction[i] > 0.0 else 0
        direction[i] = _sign(target[i])
    for _ in range(4 * n):
        count = 0
        for i in range(n):
            if sticks[i] == 0:
                free[count] = i
                count += 1
        # sliding joints: B_LL (v_L - v*_L) = B_LS v*_S - dt f_L;  sticking joints: v_S = 0
        for a in range(count):
            i = free[a]
            s = 0.0
            for j in range(n):
                if sticks[j] != 0:
                    s += B[i, j] * target[j]
            rhs[a] = s - friction[i] * direction[i]
        change = solve_subset(B, free, count, rhs, w)
        v[:] = 0.0
        for a in range(count):
            v[free[a]] = target[free[a]] + change[a]
        consistent = True
        for i in range(n):
            reverses[i], breaks[i], impulse[i] = 0, 0, 0.0
            if sticks[i] != 0:
                # the sticking joint's friction impulse: dt f_i = -B_i: (v - v*)
                s = 0.0
                for j in range(n):
                    s -= B[i, j] * (v[j] - target[j])
                impulse[i] = s
                if abs(s) > friction[i] * (1.0 + 1e-12):
                    breaks[i] = 1
                    consistent = False
            elif friction[i] > 0.0 and _sign(v[i]) != direction[i]:
                reverses[i] = 1
                consistent = False
        if consistent:
            for i in range(n):
                stuck[i] = sticks[i] != 0
            return v
        # a joint that breaks away slides the way its friction would have to push; a sliding
        # joint that would reverse sticks instead
        for i in range(n):
            if breaks[i] != 0:
                sticks[i] = 0
                direction[i] = _sign(impulse[i])
            if reverses[i] != 0:
                sticks[i] = 1
    return _descent(B, target, friction)


def _descent(B, target, friction):
    """Minimise 1/2 (v - v*)^T B (v - v*) + dt sum F_s |v_i| by coordinate descent."""
    n = target.size
    v = target.copy()
    scale = 1.0
    for i in range(n):
        scale = max(scale, abs(target[i]))
    for _ in range(SWEEPS):
        largest = 0.0
        for i in range(n):
            coupling = 0.0
            for j in range(n):
                if j != i:
                    coupling += B[i, j] * (v[j] - target[j])
            c = target[i] - coupling / B[i, i]
            new = math.copysign(max(abs(c) - friction[i] / B[i, i], 0.0), c)
            largest = max(largest, abs(new - v[i]))
            v[i] = new
        if largest <= TOLERANCE * scale:
            break
    return v


def friction_step(end_mass, start_mass, q0, qd0, q, qd, qdd, h, coulomb, stuck, share, out, w,
                  iw):
    """
    Write (q, qd, qdd) into the rows of ``out`` after the Coulomb step of an integration step.

    ``end_mass``: B (n, n) where the step evaluated last (its B couples the friction impulse,
    as the Python step's); ``start_mass``: B at the start (q0), read only where a joint with
    friction moves at the start; (q, qd)
    after the step without Coulomb friction, ``qdd`` at its start; ``coulomb`` F_s (n,),
    ``stuck`` as :func:`coulomb_velocity`, ``share`` the part of the step over which the
    positions take the velocity change (``Simulator``); ``w``, ``iw`` the workspaces.  ``qdd``
    comes back with F_s sgn(qd0) (Siciliano et al. 2009, eq. 7.115).
    """
    n = q0.size
    friction = w[n + FW_FRICTION]
    for i in range(n):
        friction[i] = h * coulomb[i]
    after = coulomb_velocity(end_mass, qd, friction, stuck, w, iw)
    for i in range(n):
        # a joint at rest that stays at rest (stuck) keeps its position exactly
        out[0, i] = q0[i] if after[i] == 0.0 and qd0[i] == 0.0 else q[i] + share * (after[i]
                                                                                    - qd[i])
        out[1, i] = after[i]
    impulse, order = w[n + FW_IMPULSE], iw[IW_ORDER]
    moving = False
    for i in range(n):
        impulse[i] = coulomb[i] * _sign(qd0[i])
        order[i] = i
        moving = moving or impulse[i] != 0.0
    if not moving:          # (no friction torque at the start: qdd as integrated)
        for i in range(n):
            out[2, i] = qdd[i]
        return
    change = solve_subset(start_mass, order, n, impulse, w)
    for i in range(n):
        out[2, i] = qdd[i] - change[i]
