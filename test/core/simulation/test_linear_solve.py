"""The simulator's linear solve of B(q) qdd = tau - n."""

import numpy as np
import pytest

from robot_dynamics_ros.core import SingularityError
from robot_dynamics_ros.core.simulation.linear_solve import dynamics_solver


# --------------------------------------------------------------------------------- building blocks
def test_dynamics_solver_solves_the_system():
    rng = np.random.default_rng(0)
    for n in (1, 2, 6, 7):
        A = rng.normal(size=(n, n))
        B = A @ A.T + n * np.eye(n)
        h, tau = rng.normal(size=(2, n))
        terms = tuple(tuple(B[i, :i + 1]) for i in range(n)) + (tuple(h),)     # lower rows
        x = dynamics_solver(n)(terms, tau.tolist())
        np.testing.assert_allclose(x, np.linalg.solve(B, tau - h), rtol=1e-12, atol=1e-12)
    with pytest.raises(SingularityError, match="not positive definite"):
        dynamics_solver(2)(((1.0,), (1.0, 1.0), (0.0, 0.0)), [1.0, 1.0])
    with pytest.raises(SingularityError, match="not positive definite"):
        dynamics_solver(2)(((1.0,), (2.0, 1.0), (0.0, 0.0)), [1.0, 1.0])
