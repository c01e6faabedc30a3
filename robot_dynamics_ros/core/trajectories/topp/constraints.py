"""
Torque, velocity and acceleration limits as linear rows in (u, x) = (sdd, sd^2) per grid step.

On step k, u_k is constant, so x(theta) = x_k + 2 theta Delta_k u_k at the collocation point
s_k + theta Delta_k; with qd = q' sd and qdd = q' u + q'' x every limit becomes rows in (u_k, x_k):

* torque (a, b, c from collocation.py):
  lower <= (a + 2 theta Delta b) u + b x + c + friction <= upper, with
  Coulomb friction at its worst sign on steps where a joint reverses and viscous friction
  F_v q' sqrt(x) linearised at ``xbar`` (tangent: conservative where friction pushes the torque
  towards the violated limit, exact at convergence);
* velocity:  q'^2 (x + 2 theta Delta u) <= v^2;
* acceleration:  -A <= (q' + 2 theta Delta q'') u + q'' x <= A.

Each kind is a named set of rows (:class:`TorqueRows`, :class:`VelocityRows`,
:class:`AccelerationRows`: per step, collocation point and joint); :func:`step_rows` turns them
into the half-planes A u + B x <= C the reachability passes use, split into upper bounds on u
(A >= 0) and lower bounds (A <= 0).  :class:`Tightening` holds per-step amounts removed from
each limit, which the verification sets where the output breaks one.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..limits import Limits
from .collocation import Collocation
from .path import Grid

VELOCITY_FLOOR = 1e-300        # a tightened velocity limit never reaches zero (rows stay finite)


@dataclass(frozen=True)
class Tightening:
    """
    Amounts (N, n) removed from each limit on each grid step (all >= 0).

    ``path``: {index of a path constraint: (N, k) fraction of its limits removed}, filled where
    the output breaks one (empty: none).
    """

    effort_upper: np.ndarray
    effort_lower: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    path: dict = field(default_factory=dict)

    @classmethod
    def none(cls, steps: int, n: int) -> "Tightening":
        return cls(*(np.zeros((steps, n)) for _ in range(4)))

    def at(self, steps: np.ndarray) -> "Tightening":
        return Tightening(self.effort_upper[steps], self.effort_lower[steps], self.velocity[steps],
                          self.acceleration[steps], {i: a[steps] for i, a in self.path.items()})


@dataclass(frozen=True)
class TorqueRows:
    """
    lower <= coef_u u + coef_x x + offset_* <= upper, arrays (S, m, n) (limits (S, 1, n)).

    ``offset_upper``/``offset_lower``: gravity plus the friction terms that push the torque
    towards the upper/lower limit (their worst case on the step).
    """

    coef_u: np.ndarray
    coef_x: np.ndarray
    offset_upper: np.ndarray
    offset_lower: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


@dataclass(frozen=True)
class BoundRows:
    """Rows coef_u u + coef_x x against a ``bound``, arrays (S, m, n)."""

    coef_u: np.ndarray
    coef_x: np.ndarray
    bound: np.ndarray


class VelocityRows(BoundRows):
    """coef_u u + coef_x x <= bound (= v^2): one-sided (sd >= 0)."""


class AccelerationRows(BoundRows):
    """-bound <= coef_u u + coef_x x <= bound: two-sided."""


@dataclass(frozen=True)
class HalfPlanes:
    """Rows A u + B x <= C, each (S, R): R rows per step."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray


@dataclass(frozen=True)
class StepRows:
    """The rows of each step: ``upper`` bound u from above (A >= 0), ``lower`` from below."""

    upper: HalfPlanes
    lower: HalfPlanes


def torque_rows(col: Collocation, limits: Limits, xbar, tight: Tightening) -> TorqueRows:
    """
    Return the torque rows of the steps of ``col``.

    The torque rows of the steps of ``col``; ``xbar`` (m, S): linearisation points of
    sqrt(x) for viscous friction (None: no viscous term).
    """
    p = col.by_step                                   # (S, m, n): rows in the order (theta, joint)
    theta_delta = col.theta_delta.T[..., None]        # (S, m, 1)
    coef_u = p.a + 2.0 * theta_delta * p.b
    coef_x = p.b
    coulomb_max, coulomb_min = col.coulomb_range
    offset_upper = p.c + coulomb_max[:, None]
    offset_lower = p.c + coulomb_min[:, None]
    if xbar is not None:
        viscous = col.viscous_by_step
        root = np.sqrt(np.maximum(xbar.T, 1e-12))[..., None]               # (S, m, 1)
        coef_u = coef_u + viscous * (theta_delta / root)
        coef_x = coef_x + viscous * (0.5 / root)
        half = 0.5 * viscous * root
        offset_upper = offset_upper + half
        offset_lower = offset_lower + half
    return TorqueRows(coef_u, coef_x, offset_upper, offset_lower,
                      (limits.effort_lower + tight.effort_lower)[:, None],
                      (limits.effort_upper - tight.effort_upper)[:, None])


def velocity_rows(col: Collocation, limits: Limits, tight: Tightening) -> VelocityRows:
    p = col.by_step
    dq2 = p.dq ** 2
    bound = np.maximum(limits.velocity - tight.velocity, VELOCITY_FLOOR) ** 2
    return VelocityRows(2.0 * col.theta_delta.T[..., None] * dq2, dq2,
                        np.broadcast_to(bound[:, None], dq2.shape))


def acceleration_rows(col: Collocation, limits: Limits,
                      tight: Tightening) -> AccelerationRows | None:
    """None when no joint has an acceleration limit."""
    if not np.isfinite(limits.acceleration).any():
        return None
    p = col.by_step
    acc = np.where(np.isfinite(limits.acceleration), limits.acceleration,
                   1e300) - tight.acceleration
    return AccelerationRows(p.dq + 2.0 * col.theta_delta.T[..., None] * p.ddq, p.ddq,
                            np.broadcast_to(np.maximum(acc, 0.0)[:, None], p.dq.shape))


def path_rows(col: Collocation, constraints, tight: Tightening) -> list:
    """
    Return the (upper, lower) row blocks of the path constraints, each array (S, m, k).

    A canonical row a sdd + b sd^2 + c in [lower, upper] at the collocation point
    s_k + theta Delta_k is (a + 2 theta Delta b) u + b x + c (x(theta) = x_k + 2 theta Delta u_k).
    The coefficients at full limits are computed once per collocation (kept on it).
    """
    if not constraints:
        return []
    p = col.by_step
    S, m, n = p.q.shape
    flat = tuple(v.reshape(-1, n) for v in (p.q, p.dq, p.ddq))
    cache = col.__dict__.setdefault("path_coefficients", {})
    theta_delta = col.theta_delta.T[..., None]
    blocks = []
    for i, constraint in enumerate(constraints):
        if i in tight.path:
            fraction = np.repeat(1.0 - tight.path[i], m, axis=0)          # (S m, k)
            rows = constraint.coefficients(col._model, *flat, fraction)
        else:
            if i not in cache:
                cache[i] = constraint.coefficients(col._model, *flat, np.ones(S * m))
            rows = cache[i]
        a, b, c, lower, upper = (v.reshape(S, m, -1) for v in rows)
        blocks.append(_two_sided(a + 2.0 * theta_delta * b, b, c, c, lower, upper))
    return blocks


def _two_sided(A, B, const_up, const_lo, lower, upper):
    """
    Split a two-sided row into an upper-bound row and a lower-bound row on u.

    A u + B x + const_up <= upper and A u + B x + const_lo >= lower as one row with A >= 0
    (an upper bound on u) and one with A <= 0 (a lower bound on u), both as A u + B x <= C.
    """
    pos = A >= 0.0
    c_hi, c_lo = upper - const_up, const_lo - lower
    abs_a, signed_b = np.abs(A), np.where(pos, B, -B)
    up = (abs_a, signed_b, np.where(pos, c_hi, c_lo))
    lo = (-abs_a, -signed_b, np.where(pos, c_lo, c_hi))
    return up, lo


def step_rows(col: Collocation, grid: Grid, limits: Limits, xbar, tight: Tightening) -> StepRows:
    """
    All rows of each step of ``col`` as half-planes.

    All rows of each step of ``col`` as half-planes (S, R); ``tight``: the tightening of the
    steps of ``col`` (``Tightening.at(col.steps)``); the path constraints of ``limits``
    (``constraint_set.PathLimits``) add theirs.
    """
    S = col.steps.size
    torque = torque_rows(col, limits, xbar, tight)
    up, lo = _two_sided(torque.coef_u, torque.coef_x, torque.offset_upper, torque.offset_lower,
                        torque.lower, torque.upper)
    ups, los = [up], [lo]
    velocity = velocity_rows(col, limits, tight)
    ups.append((velocity.coef_u, velocity.coef_x, velocity.bound))
    acceleration = acceleration_rows(col, limits, tight)
    if acceleration is not None:
        up, lo = _two_sided(acceleration.coef_u, acceleration.coef_x, 0.0, 0.0,
                            -acceleration.bound, acceleration.bound)
        ups.append(up)
        los.append(lo)
    for up, lo in path_rows(col, getattr(limits, "path", ()), tight):
        ups.append(up)
        los.append(lo)
    shape = torque.coef_u.shape

    def full(v):                # (S, m, n), or a path constraint's (S, m, k)
        if getattr(v, "ndim", 0) == 3 and v.shape[:2] == shape[:2]:
            return v
        return np.broadcast_to(v, shape)

    def stack(blocks, extra):   # (S, m, n) blocks -> (S, R), plus one extra row per step
        return HalfPlanes(*(np.concatenate([full(blk[i]).reshape(S, -1) for blk in blocks]
                                           + [extra[i][:, None]], axis=1) for i in range(3)))
    # Lower set: also x_{k+1} = x_k + 2 Delta u_k >= 0 (last: reachability relies on it).  Upper
    # set: also a slack row u <= 1e30, so that rows without u in the lower set still meet a
    # partner in the elimination.
    d = grid.delta[col.steps]
    lower = stack(los, (-2.0 * d, -np.ones(S), np.zeros(S)))
    upper = stack(ups, (np.ones(S), np.zeros(S), np.full(S, 1e30)))
    # The rest state (x = u = 0) is admissible (static feasibility is checked beforehand); rows
    # that the friction linearisation pushes past it are clamped, and the verification catches
    # the rest.
    for rows in (lower, upper):
        np.maximum(rows.C, 0.0, out=rows.C)
    return StepRows(upper, lower)
