"""Excitation trajectories: within the limits and better conditioned than the start."""

import numpy as np
import pytest

from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core.identification import design_excitation


# -- excitation ----------------------------------------------------------------------------------
def test_excitation_within_limits_and_better_conditioned():
    model = RobotModel.named("planar2")
    iterations = []
    excitation = design_excitation(
        model,
        period=4.0,
        harmonics=3,
        maxiter=15,
        acceleration_limit=20.0,
        on_iteration=lambda: iterations.append(1))
    assert 1 <= len(iterations) <= 15          # once per optimiser iteration, at most maxiter
    assert excitation.condition_number < 0.1 * excitation.initial_condition_number
    traj = excitation.trajectory
    t = np.linspace(0.0, traj.period, 4001)
    q, qd, qdd = traj.evaluate(t)
    assert np.allclose(qd[0], 0.0, atol=1e-12) and np.allclose(qdd[0], 0.0, atol=1e-12)
    assert np.allclose(q[0], q[-1]) and np.allclose(qd[-1], 0.0, atol=1e-9)
    assert np.all(q >= model.lower) and np.all(q <= model.upper)
    assert np.all(np.abs(qd) <= 0.8 * model.velocity_limit * (1 + 1e-3))
    assert np.all(np.abs(qdd) <= 20.0 * (1 + 1e-3))
    assert np.all(np.abs(rnea(model, q, qd, qdd)) <= 0.8 * model.effort_limit * (1 + 1e-3))
    # velocities and accelerations are the derivatives of the positions (central differences)
    h = t[1] - t[0]
    assert np.allclose((q[2:] - q[:-2]) / (2 * h), qd[1:-1], atol=1e-4 * np.abs(qd).max())
    # the trajectory file samples the same motion for a controller
    jt = traj.to_trajectory(model.joint_names, periods=2, rate=50.0)
    assert jt.duration == pytest.approx(2 * traj.period)
    sample = jt.sample(np.array([0.37, 5.1]))
    assert np.allclose(sample[0], traj.evaluate(np.array([0.37, 5.1 - traj.period]))[0], atol=1e-5)
