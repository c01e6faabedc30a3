"""
Coulomb friction in the simulator: an implicit, set-valued (stick-slip) step that never chatters.

The robot file's joint friction is tau_f = F_v qd + F_s sgn(qd) (seed 002, eq. 7.114 and 7.116).
The viscous part is smooth and integrated with the rest of the dynamics.  The Coulomb part jumps
at rest: evaluated explicitly, a fixed step flips its sign from step to step around qd = 0
(chatter) and an adaptive step stalls on the jump; smoothing it (tanh(qd / v_s)) makes joints
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

The common case (every joint with friction keeps its direction of motion) is one extra linear
solve with the last B of the step; otherwise the problem is solved by coordinate descent
(each joint in turn: the one-dimensional minimiser is a soft threshold), to 1e-13 relative.
The velocity change is then also applied to the positions over half the step (the impulse is
spread over the step), and in full for semi-implicit Euler, whose positions use the new velocity.
"""
from __future__ import annotations

import math

SWEEPS = 200                # coordinate-descent sweeps at most (a few suffice in practice)
TOLERANCE = 1e-13


class CoulombStep:
    """The implicit Coulomb friction step for one model (joints with F_s > 0 only)."""

    def __init__(self, model, solve):
        self.joints = tuple((i, float(model.coulomb[i])) for i in range(model.n)
                            if model.coulomb[i] > 0.0)
        self.n = model.n
        self._solve = solve           # dynamics_solver: solve(T, tau) = B^{-1} (tau - h)
        self._zero_bias = (0.0,) * model.n

    def __call__(self, terms, velocity: list, dt: float) -> list:
        """Return the velocity after the step's friction impulse (``terms``: B's lower rows)."""
        if not self.joints:
            return velocity
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
                return after
        return self._descent(rows, velocity, dt)

    def _descent(self, rows, target: list, dt: float) -> list:
        """Minimise 1/2 (v - v*)^T B (v - v*) + dt sum F_s |v_i| by coordinate descent."""
        n = self.n
        B = [[rows[max(i, j)][min(i, j)] for j in range(n)] for i in range(n)]
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
