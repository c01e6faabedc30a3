"""Torque constraints along a path: the static bound and the envelope of rows."""

import numpy as np

from robot_dynamics_ros.core import Limits
from robot_dynamics_ros.core.trajectories.topp import collocation, constraints, reachability
from topp_cases import puma_level


def test_static_bound_equals_pairwise_elimination():
    """
    Newton's static bound equals pairwise elimination.

    Newton's method on the concave piecewise-linear feasibility function gives the same
    largest x as Fourier-Motzkin over every pair of rows (the closed form), on the Puma's rows
    with and without viscous linearisation, refined collocation, and random rows.
    """
    model, traj, points, grid = puma_level()
    limits = Limits.from_model(model)
    none = constraints.Tightening.none(grid.N, model.n)
    regular = points.collocation(grid)
    refined = collocation.Collocation(model, grid, np.arange(0, grid.N, 7), collocation.REFINED)
    cases = []
    for col in (regular, refined):
        for xbar in (None, np.full((col.thetas.size, col.steps.size), 0.05)):
            cases.append(constraints.step_rows(col, grid, limits, xbar, none.at(col.steps)))
    rng = np.random.default_rng(4)
    S = 200
    up = constraints.HalfPlanes(rng.uniform(0, 2, (S, 9)) * (rng.uniform(size=(S, 9)) > 0.2),
                                rng.normal(size=(S, 9)), rng.uniform(0, 3, (S, 9)))
    lo = constraints.HalfPlanes(-rng.uniform(0, 2, (S, 7)) * (rng.uniform(size=(S, 7)) > 0.2),
                                rng.normal(size=(S, 7)), rng.uniform(0, 3, (S, 7)))
    cases.append(constraints.StepRows(up, lo))
    for rows in cases:
        got = reachability.static_bound(rows.upper, rows.lower)
        want = reachability.static_bound_pairs(rows.upper, rows.lower)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_envelope_rows_give_the_minimum_of_all_rows():
    """The rows envelope_rows keeps give the same minimum as all rows everywhere in [0, H]."""
    rng = np.random.default_rng(5)
    S, R = 300, 12
    a, b = rng.normal(size=(S, R)), rng.uniform(0, 5, (S, R))
    b[rng.uniform(size=(S, R)) < 0.1] = np.inf
    H = rng.uniform(0, 4, S)
    A, B, start, end = reachability.envelope_rows(a, b, H)
    kept = [list(zip(A[s:e], B[s:e])) for s, e in zip(start.tolist(), end.tolist())]
    for k in range(S):
        h = np.append(rng.uniform(0, H[k], 20), [0.0, H[k]])
        full = (a[k][None] * h[:, None] + b[k][None]).min(axis=1)
        pruned = np.min([[ak * hi + bk for ak, bk in kept[k]] for hi in h], axis=1)
        np.testing.assert_allclose(pruned, full, rtol=1e-14)
