"""
The path and its dynamics coefficients at the collocation points of a grid.

Along q(s), with sd = ds/dt and sdd = d2s/dt2 (Siciliano et al. 2009, eqs. 7.119-7.121 and 7.126
with r = s),

    tau = a(s) sdd + b(s) sd^2 + c(s) + F_v q'(s) sd + F_s sgn(q'(s)),
    a = B(q) q' = rnea(q, 0, q'),  b = B(q) q'' + C(q, q') q' = rnea(q, q', q''),  c = g(q)

(a and b without gravity and friction; B includes the rotor inertias).  The constraints of step k
are imposed at collocation points s_k + theta Delta_k: theta in :data:`REGULAR` (0, 1/2, 1) or
:data:`REFINED` (9 points, on steps where 3 are not enough).  The grid points' data are reused
when the grid is bisected (:class:`GridPoints`), so each new grid computes only its midpoints.
"""
from __future__ import annotations

from functools import cached_property
from typing import NamedTuple

import numpy as np

from ...control.friction import coulomb_friction, quadratic_viscous
from ..uniform import friction_torques
from .path import Grid, bisected
from .torques import Torques, torque_functions

REGULAR = np.array([0.0, 0.5, 1.0])
REFINED = np.linspace(0.0, 1.0, 9)


class PathPoints(NamedTuple):
    """The path and its torque coefficients at P path points (each (P, n), or (m, S, n))."""

    q: np.ndarray
    dq: np.ndarray          # q'(s)
    ddq: np.ndarray         # q''(s)
    c: np.ndarray           # g(q)
    a: np.ndarray           # B(q) q'
    b: np.ndarray           # B(q) q'' + C(q, q') q'


def point_data(model, path, parts, torques: Torques | None = None) -> list:
    """
    Compute the path and its torque coefficients at path points, in two batches.

    :class:`PathPoints` for each (s (P,), side) of ``parts``: g(q) in one batch (the generated
    gravity, about a tenth of an rnea), a and b in one rnea batch of 2 P states.
    """
    q, dq, ddq = _sample_parts(path, parts)
    # c = g(q), and with gravity a + c and b + c + friction; the subtraction costs a few ulps of
    # g(q), far below any tolerance.
    zeros, P = np.zeros_like(q), q.shape[0]
    torques = torques or torque_functions(model)
    c = torques.gravity(q)
    tau = torques.rnea(np.concatenate([q, q]), np.concatenate([zeros, dq]),
                       np.concatenate([dq, ddq]))
    a = tau[:P] - c
    # b: with the quadratic viscous friction F_v2 q'|q'| (times sd^2, as b), not the others
    b = tau[P:] - c - friction_torques(model, dq, q) + quadratic_viscous(model, dq)
    ends = np.cumsum([s.size for s, _ in parts])[:-1]
    return [PathPoints(*arrays) for arrays in zip(*(np.split(v, ends)
                                                    for v in (q, dq, ddq, c, a, b)))]


def _sample_parts(path, parts):
    """
    Return (q, q', q'') of ``parts`` (s, side), concatenated in their order.

    The parts of one side are sampled in one call (three spline evaluations each, whose cost
    is mostly per call); on a C2 path (``smooth``) both sides are the same.
    """
    smooth = getattr(path, "smooth", False)
    sides = ["right" if smooth else side for _, side in parts]
    if len(set(sides)) == 1:
        s = np.concatenate([s for s, _ in parts]) if len(parts) > 1 else parts[0][0]
        return path.sample(s, side=sides[0])
    sampled = [path.sample(s, side=side) for (s, _), side in zip(parts, sides)]
    return tuple(np.concatenate(arrays) for arrays in zip(*sampled))


class Collocation:
    """
    Path data at the collocation points ``thetas`` (m,) of the grid steps ``steps`` (S,).

    ``points``: their :class:`PathPoints` as (m, S, n) arrays, when already known;
    ``torques``: the :class:`~.torques.Torques` that compute them (default: the core's).
    """

    @staticmethod
    def parts(grid: Grid, steps: np.ndarray, thetas: np.ndarray):
        """
        Return the collocation points as ``point_data`` parts.

        The points as ``point_data`` parts: theta < 1 with the segment that starts at or
        before the point, theta = 1 as the left limit.
        """
        s0, d = grid.s[steps], grid.delta[steps]
        inner = thetas < 1.0
        return [((s0[None, :] + thetas[mask][:, None] * d[None, :]).ravel(), side)
                for mask, side in ((inner, "right"), (~inner, "left"))]

    def __init__(self, model, grid: Grid, steps: np.ndarray, thetas: np.ndarray, points=None,
                 torques: Torques | None = None):
        self.steps, self.thetas = steps, thetas
        self.torques = torques = torques or torque_functions(model)
        n, m, S = model.n, thetas.size, steps.size
        self.path_s = grid.s[steps]
        self.theta_delta = thetas[:, None] * grid.delta[steps][None, :]     # (m, S)
        if points is None:
            data = point_data(model, grid.path, self.parts(grid, steps, thetas), torques)
            inner = thetas < 1.0
            points = PathPoints(*(np.empty((m, S, n)) for _ in PathPoints._fields))
            for mask, part in zip((inner, ~inner), data):
                for dst, src in zip(points, part):
                    dst[mask] = src.reshape(-1, S, n)
        self.points = points
        self._model = model
        # (the friction terms and the step-major copies are computed when first used: a
        # collocation whose steps a later group overrides, or a rigid model, never needs some)

    @cached_property
    def coulomb(self) -> np.ndarray:
        """
        Coulomb friction at the points, (F_s + F_l |g(q)|) sgn(q') (m, S, n) (sd > 0).

        The friction law's dry friction (``control.friction.coulomb_friction``, c = g(q)).
        """
        return coulomb_friction(self._model, self.points.c, self.points.dq)

    @cached_property
    def coulomb_range(self):
        """(largest, smallest) Coulomb friction over each step's points, each (S, n)."""
        if not (self._model.coulomb.any() or self._model.coulomb_load.any()):
            zero = np.zeros(self.points.dq.shape[1:])
            return zero, zero
        return self.coulomb.max(axis=0), self.coulomb.min(axis=0)

    @cached_property
    def viscous(self) -> np.ndarray:
        """Viscous friction per unit sd at the points, F_v q' (m, S, n)."""
        return self._model.viscous * self.points.dq

    @cached_property
    def by_step(self) -> PathPoints:
        """``points`` step-major (S, m, n), as the constraint rows use them."""
        return PathPoints(*(np.ascontiguousarray(v.transpose(1, 0, 2)) for v in self.points))

    @cached_property
    def viscous_by_step(self) -> np.ndarray:
        return np.ascontiguousarray(self.viscous.transpose(1, 0, 2))

    def path_points(self) -> np.ndarray:
        """Return the collocation points' path parameters, flat (m S,) as ``flat_points``."""
        return (self.path_s[None, :] + self.theta_delta).reshape(-1)

    def flat_points(self) -> PathPoints:
        """``points`` as (m S, n) arrays."""
        return PathPoints(*(v.reshape(-1, v.shape[-1]) for v in self.points))


def _interleave(even: np.ndarray, odd: np.ndarray) -> np.ndarray:
    out = np.empty((even.shape[0] + odd.shape[0],) + even.shape[1:])
    out[0::2], out[1::2] = even, odd
    return out


class GridPoints:
    """
    The path data of a grid's regular collocation, reused when it is bisected.

    The :class:`PathPoints` of the regular collocation of the grid ``s``: right limits at
    s_0..s_{N-1} (theta = 0), midpoints (theta = 1/2), left limits at s_1..s_N (theta = 1).

    Bisection makes the midpoints grid points, so the next grid's data are these plus its new
    midpoints only (``bisected``, then ``add_midpoints``).
    """

    # REFINED holds theta = 0, 1/2, 1, whose data are the grid's; the others are inside the step.
    _INNER = (REFINED > 0.0) & (REFINED < 1.0) & (REFINED != 0.5)

    def __init__(self, model, path, s: np.ndarray, right=None, left=None, ends=None,
                 torques: Torques | None = None):
        self.model, self.path, self.s = model, path, s
        self.torques = torques = torques or torque_functions(model)
        # Midpoints lie inside knot segments (the grid holds every knot): no side to choose.
        self.mid_s = 0.5 * (s[:-1] + s[1:])           # as bisected() computes them
        self.mid, self.extra = None, []
        if right is None:
            if getattr(path, "smooth", False):
                # q, q', q'' continuous (a C2 spline): a grid point's left and right limits are
                # the same data, computed once.
                self.mid, at_grid = point_data(model, path, [(self.mid_s, "right"), (s, "right")],
                                               torques)
                right, left = (PathPoints(*(v[a:b] for v in at_grid))
                               for a, b in ((0, -1), (1, None)))
                ends = (tuple(v[-1:] for v in at_grid[:3]), tuple(v[:1] for v in at_grid[:3]))
            else:
                self.mid, right, left = point_data(
                    model, path, [(self.mid_s, "right"), (s[:-1], "right"), (s[1:], "left")],
                    torques)
                ends = (path.sample(s[-1:]), path.sample(s[:1], side="left"))
        self.right, self.left, self.ends = right, left, ends

    def bisected(self) -> "GridPoints":
        right = PathPoints(*(_interleave(r, m) for r, m in zip(self.right, self.mid)))
        left = PathPoints(*(_interleave(m, lt) for m, lt in zip(self.mid, self.left)))
        return GridPoints(self.model, self.path, bisected(self.s), right, left, self.ends,
                          self.torques)

    def add_midpoints(self, extra=()):
        """
        Compute the midpoints' data (and that of ``extra`` parts in the same batch).

        Compute the midpoints' data, and in the same batch that of the parts ``extra``
        (``self.extra``).
        """
        data = point_data(self.model, self.path, [(self.mid_s, "right")] + list(extra),
                          self.torques)
        self.mid, self.extra = data[0], data[1:]

    def grid(self) -> Grid:
        """Return the :class:`Grid` of these points (end conditions from the data at hand)."""
        (_, dq_end, ddq_end), (_, dq_start, ddq_start) = self.ends
        sides = (np.concatenate([self.right.dq, dq_end]), np.concatenate([self.right.ddq,
                                                                          ddq_end]),
                 np.concatenate([dq_start, self.left.dq]), np.concatenate([ddq_start,
                                                                           self.left.ddq]))
        return Grid(self.path, self.s, sides)

    def collocation(self, grid: Grid) -> Collocation:
        points = PathPoints(*(np.stack([r, m, lt])
                            for r, m, lt in zip(self.right, self.mid, self.left)))
        return Collocation(self.model, grid, np.arange(grid.N), REGULAR, points, self.torques)

    def refined_parts(self, grid: Grid, steps: np.ndarray):
        """Return the ``point_data`` parts that ``refined`` needs beyond the grid's data."""
        if not steps.size:
            return []
        s0, d = grid.s[steps], grid.delta[steps]
        return [((s0[None, :] + REFINED[self._INNER][:, None] * d[None, :]).ravel(), "right")]

    def refined(self, grid: Grid, steps: np.ndarray) -> Collocation:
        """
        Return the REFINED collocation of ``steps``, mostly from data at hand.

        The collocation REFINED on ``steps``, from the grid's data and ``self.extra``
        (computed for ``refined_parts``).
        """
        n, S = self.model.n, steps.size
        points = PathPoints(*(np.empty((REFINED.size, S, n)) for _ in PathPoints._fields))
        for dst, right, mid, left, inner in zip(points, self.right, self.mid, self.left,
                                                self.extra[0]):
            dst[0], dst[REFINED.size // 2], dst[-1] = right[steps], mid[steps], left[steps]
            dst[self._INNER] = inner.reshape(-1, S, n)
        return Collocation(self.model, grid, steps, REFINED, points, self.torques)
