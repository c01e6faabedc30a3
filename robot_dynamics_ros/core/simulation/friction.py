"""
Coulomb friction in the simulator: an implicit, set-valued (stick-slip) step that never chatters.

The robot file's joint friction is tau_f = F_v qd + F_s sgn(qd) (Siciliano et al. 2009, eq. 7.114
and 7.116). The viscous part is smooth and integrated with the rest of the dynamics.  The Coulomb
part jumps at rest: evaluated explicitly, a fixed step flips its sign from step to step around qd =
0 (chatter) and an adaptive step stalls on the jump; smoothing it (tanh(qd / v_s)) makes joints
creep under any torque.  The simulator instead treats it as the set-valued law it is, with
Moreau's time-stepping: each step integrates the dynamics without Coulomb friction to the
velocity v*, then chooses the friction impulse of the step implicitly, so that the velocity v
after the step satisfies

    B (v - v*) = -dt F_s s,   s_i = sgn(v_i) if v_i != 0, any value in [-1, 1] if v_i = 0

with B the mass matrix (rotors included).  That is the minimiser of the strictly convex
1/2 (v - v*)^T B (v - v*) + dt sum_i F_s,i |v_i|, so it exists and is unique.  What it means:

* a joint whose applied torque stays below its Coulomb level **sticks**: its velocity is exactly
  0 and it does not creep; it breaks away when the torque exceeds F_s;
* a sliding joint loses exactly dt F_s of momentum per step (coupled through B), so it stops at
  the instant the friction can hold it, without overshooting through zero;
* the step is unconditionally stable: no friction parameter has to fit the step size.

The common case, every joint with friction sliding the same way through the whole step, needs no
extra work at all: there the law is the constant F_s sgn(qd), and the simulator integrates it with
the rest of the dynamics (``Simulator._sliding_step``), falling back to the implicit step when a
joint starts at rest or would stop within the step.  In the implicit step, when every joint keeps
its direction of motion it costs one extra linear solve with the last B of the step.
Otherwise an active-set method finds which joints stick: with the sticking set S guessed
(starting from the previous step's), the sliding joints' friction is known (F_s in the direction
of motion) and the sticking joints' velocity is 0, which is one linear system for the sliding
velocities and the sticking joints' friction torques; a sliding joint whose velocity would change
sign is moved to S, a sticking joint whose torque exceeds F_s leaves it, until the solution is
consistent (one or two passes in practice).  Should that ever cycle, coordinate descent (each
joint in turn: the one-dimensional minimiser is a soft
threshold) solves the problem to 1e-13 relative.

The velocity change is then also applied to the positions over half the step (the impulse is
spread over the step), and in full for semi-implicit Euler, whose positions use the new velocity.
"""
from __future__ import annotations

import math

import numpy as np

SWEEPS = 200                # coordinate-descent sweeps at most (the fallback)
TOLERANCE = 1e-13


class CoulombStep:
    """The implicit Coulomb friction step for one model (joints with F_s > 0 only)."""

    def __init__(self, model, solve):
        self.n = model.n
        self._solve = solve           # dynamics_solver: solve(T, tau) = B^{-1} (tau - h)
        self._zero_bias = (0.0,) * model.n
        self.set_levels(model.coulomb.tolist())
        # the previous step's sticking joints (an array: the compiled step updates it in place)
        self._stuck = np.zeros(model.n, dtype=bool)
        self.may_stick = False        # whether _stuck may hold a True (set by every implicit step)

    def set_levels(self, levels: list) -> None:
        """
        Set each joint's dry-friction level for the next steps (F_s, or F_s + F_l |g(q)|).

        The load-dependent friction (``core.control.friction``) changes the level with the
        position: the simulator sets it from the step's starting position before each step.
        """
        self.joints = tuple((i, float(f)) for i, f in enumerate(levels) if f > 0.0)
        self._friction = [float(f) for f in levels]

    def sliding(self):
        """Note a step in which every joint with friction slid (for the next warm start)."""
        if self.may_stick:          # (a flag: asking the array costs as much as the RK4 step)
            self._stuck[:] = False
            self.may_stick = False

    def __call__(self, terms, velocity: list, dt: float) -> list:
        """Return the velocity after the step's friction impulse (``terms``: B's lower rows)."""
        if not self.joints:
            return velocity
        self.may_stick = True
        rows = terms[:self.n]
        # sliding in the same direction throughout: v = v* - dt B^{-1} F_s sgn(v*)
        impulse = [0.0] * self.n
        for i, fs in self.joints:
            v = velocity[i]
            impulse[i] = dt * fs if v > 0.0 else (-dt * fs if v < 0.0 else 0.0)
        if all(impulse[i] != 0.0 for i, _ in self.joints):
            change = self._solve(rows + (self._zero_bias,), impulse)
            after = [v - c for v, c in zip(velocity, change)]
            if all((after[i] > 0.0) == (velocity[i] > 0.0) and after[i] != 0.0
                   for i, _ in self.joints):
                self._stuck[:] = [False] * self.n
                return after
        if self._all_held(rows, velocity, dt):
            self._stuck[:] = [True] * self.n
            return [0.0] * self.n
        return self._active_set(rows, velocity, dt)

    def _all_held(self, rows, target: list, dt: float) -> bool:
        """Tell whether friction can stop every joint: |(B v*)_i| <= dt F_s,i for all i."""
        if len(self.joints) != self.n:
            return False
        n = self.n
        for i, fs in self.joints:
            # (B v*)_i from the lower triangle: row i up to i, then column i below it
            row = rows[i]
            total = sum(row[j] * target[j] for j in range(i + 1))
            total += sum(rows[k][i] * target[k] for k in range(i + 1, n))
            if abs(total) > dt * fs:
                return False
        return True

    def _active_set(self, rows, target: list, dt: float) -> list:
        """Solve the step with the sticking joints found by an active-set iteration."""
        n = self.n
        # full rows of B from the lower triangle: row i = (B_i0 .. B_ii, B_(i+1)i .. B_(n-1)i)
        B = [[float(x) for x in rows[i]] + [float(rows[k][i]) for k in range(i + 1, n)]
             for i in range(n)]
        target = [float(x) for x in target]
        friction = [dt * f for f in self._friction]
        stuck = [bool(s) and f > 0.0 for s, f in zip(self._stuck, friction)]
        direction = [(x > 0.0) - (x < 0.0) for x in target]
        for _ in range(4 * n):
            free = [i for i in range(n) if not stuck[i]]
            held = [i for i in range(n) if stuck[i]]
            # sliding joints: B_LL (v_L - v*_L) = B_LS v*_S - dt f_L;  sticking joints: v_S = 0
            rhs = [sum(B[i][j] * target[j] for j in held) - friction[i] * direction[i]
                   for i in free]
            change = _solve_spd([[B[i][j] for j in free] for i in free], rhs)
            v = [0.0] * n
            for i, c in zip(free, change):
                v[i] = target[i] + c
            # the sticking joints' friction impulse: dt f_S = -B_S: (v - v*)
            difference = [a - b for a, b in zip(v, target)]
            impulse = {i: -sum(B[i][j] * difference[j] for j in range(n)) for i in held}
            reversed_ = [i for i in free
                         if friction[i] > 0.0 and ((v[i] > 0.0) - (v[i] < 0.0)) != direction[i]]
            breaks = [i for i in held if abs(impulse[i]) > friction[i] * (1.0 + 1e-12)]
            if not reversed_ and not breaks:
                self._stuck[:] = stuck
                return v
            # a joint that breaks away slides the way its friction would have to push (f = F s,
            # s = sgn(v)); a sliding joint that would reverse sticks instead
            for i in breaks:
                stuck[i], direction[i] = False, (impulse[i] > 0.0) - (impulse[i] < 0.0)
            for i in reversed_:
                stuck[i] = True
        return self._descent(rows, target, dt)

    def _descent(self, rows, target: list, dt: float) -> list:
        """Minimise 1/2 (v - v*)^T B (v - v*) + dt sum F_s |v_i| by coordinate descent."""
        n = self.n
        B = [[float(x) for x in rows[i]] + [float(rows[k][i]) for k in range(i + 1, n)]
             for i in range(n)]
        friction = [0.0] * n
        for i, fs in self.joints:
            friction[i] = dt * fs
        v = list(target)
        scale = max(1.0, max(abs(x) for x in target))
        for _ in range(SWEEPS):
            largest = 0.0
            for i in range(n):
                row = B[i]
                # c: the minimiser of joint i's quadratic with the others fixed
                coupling = sum(row[j] * (v[j] - target[j]) for j in range(n) if j != i)
                c = target[i] - coupling / row[i]
                threshold = friction[i] / row[i]
                new = math.copysign(max(abs(c) - threshold, 0.0), c)
                largest = max(largest, abs(new - v[i]))
                v[i] = new
            if largest <= TOLERANCE * scale:
                break
        return v


def _solve_spd(A: list, b: list) -> list:
    """Solve A x = b for a small symmetric positive-definite A (Cholesky, lists of floats)."""
    k = len(b)
    L = [[0.0] * k for _ in range(k)]
    for j in range(k):
        d = A[j][j] - sum(L[j][m] * L[j][m] for m in range(j))
        L[j][j] = math.sqrt(d)
        for i in range(j + 1, k):
            L[i][j] = (A[i][j] - sum(L[i][m] * L[j][m] for m in range(j))) / L[j][j]
    y = [0.0] * k
    for i in range(k):
        y[i] = (b[i] - sum(L[i][m] * y[m] for m in range(i))) / L[i][i]
    x = [0.0] * k
    for i in range(k - 1, -1, -1):
        x[i] = (y[i] - sum(L[m][i] * x[m] for m in range(i + 1, k))) / L[i][i]
    return x
