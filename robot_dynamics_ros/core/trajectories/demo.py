"""
The demo's reference: a rest-to-rest out-and-back motion inside the joint limits of any robot.

Used by ``robot-dynamics demo`` and by the benchmarks and tests that run the same motion
(``bench/bench_closed_loop.py``, ``bench/bench_simulation.py``), so that they all follow one
trajectory.  Three points (start, turn, start) with zero velocity and acceleration at each:
sampled as joint_trajectory_controller samples such points, each half is a quintic.
"""
from __future__ import annotations

import numpy as np

from .trajectory import JointTrajectory


def demo_trajectory(model, duration: float):
    """Rest-to-rest quintic out-and-back motion between two poses inside the joint limits."""
    # Continuous joints (no position limits) move within one turn.
    lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
    mid = 0.5 * (lower + upper)
    span = upper - lower
    q0 = np.clip(np.zeros(model.n), lower + 0.1 * span, upper - 0.1 * span)
    q1 = q0 + 0.25 * span * np.sign(mid - q0 + 1e-9)
    half = max(duration / 2.0, 0.5)
    zeros = np.zeros((3, model.n))
    return JointTrajectory(model.joint_names, [0.0, half, 2 * half], [q0, q1, q0], zeros, zeros)
