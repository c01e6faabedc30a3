"""
Gaussian measurement noise on simulated joint states, as a sensor would add it.

For identification experiments (issue 12) and for testing filters: the simulator's true state is
kept; what a node publishes, or what :func:`measured` returns, is the state plus zero-mean normal
noise with standard deviations ``position`` [rad or m], ``velocity`` and ``effort`` (a scalar or
one value per joint; 0 means exact), and what an effort sensor adds whatever the torque, the
robot file's torque offset.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError


def _std(value, n: int, name: str) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    a = np.full(n, float(a)) if a.ndim == 0 else a
    if a.shape != (n,) or not np.isfinite(a).all() or (a < 0.0).any():
        raise InputError(f"{name} noise: expected a standard deviation >= 0 or {n} of them, "
                         f"got {np.asarray(value).tolist()}")
    return a


@dataclass
class MeasurementNoise:
    """Standard deviations per joint and the random generator (``seed``: reproducible draws)."""

    n: int
    position: object = 0.0
    velocity: object = 0.0
    effort: object = 0.0
    seed: int | None = None
    rng: np.random.Generator = field(init=False, repr=False)

    def __post_init__(self):
        self.position = _std(self.position, self.n, "position")
        self.velocity = _std(self.velocity, self.n, "velocity")
        self.effort = _std(self.effort, self.n, "effort")
        self.rng = np.random.default_rng(self.seed)

    @property
    def active(self) -> bool:
        return bool(self.position.any() or self.velocity.any() or self.effort.any())

    def apply(self, q, qd, tau):
        """(q, qd, tau) with noise added: arrays (n,) or (N, n); each shape as given."""
        out = []
        for x, std in ((q, self.position), (qd, self.velocity), (tau, self.effort)):
            x = np.array(x, dtype=float)
            out.append(x + self.rng.standard_normal(x.shape) * std if std.any() else x)
        return tuple(out)


def measured(result, position=0.0, velocity=0.0, effort=0.0, seed=None, offset=0.0):
    """
    Return a copy of a ``SimulationResult`` as sensors would report it (qdd exact).

    Noise on q, qd and tau, and the effort sensors' ``offset`` (a scalar or one per joint, the
    robot file's ``friction.offset``: ``model.torque_offset``) added to tau.
    """
    noise = MeasurementNoise(result.q.shape[1], position, velocity, effort, seed)
    q, qd, tau = noise.apply(result.q, result.qd, result.tau)
    return result._replace(q=q, qd=qd, tau=tau + np.asarray(offset, dtype=float))
