"""
PointSampler and Reference.sample_values: the control loop's plain-Python sampling.

Oracle: the vectorised JointTrajectory.sample (itself checked against closed forms, scipy and
JTC's formulas in test_trajectory.py / test_reference.py), on random linear, cubic and quintic
trajectories, at random times, at every waypoint, before the first and after the last point;
and a constant-acceleration motion the quintic reproduces exactly.
"""

import numpy as np
import pytest

from robot_dynamics_ros.core import JointTrajectory, Reference
from robot_dynamics_ros.core.trajectories.point_sampling import PointSampler

NS = 1_000_000_000
NAMES = ("a", "b", "c", "d", "e", "f")


def random_trajectory(rng, interpolation: str, points: int = 7, start: float = 0.3):
    times = start + np.cumsum(rng.uniform(0.05, 0.8, points))
    shape = (points, len(NAMES))
    velocities = rng.normal(size=shape) if interpolation != "linear" else None
    accelerations = rng.normal(size=shape) if interpolation == "quintic" else None
    return JointTrajectory(NAMES, times, rng.normal(size=shape), velocities, accelerations)


def sample_times(rng, traj):
    t0, t1 = traj.times[0], traj.times[-1]
    inside = rng.uniform(t0, t1, 200)
    return np.concatenate([[t0 - 1.0, t0 - 1e-9, t1, t1 + 1e-9, t1 + 5.0], traj.times, inside])


@pytest.mark.parametrize("interpolation", ["linear", "cubic", "quintic"])
def test_point_sampler_equals_the_vectorised_sampling(rng, interpolation):
    traj = random_trajectory(rng, interpolation)
    sampler = PointSampler(traj)
    times = sample_times(rng, traj)
    for t in np.concatenate([times, np.sort(times), np.sort(times)[::-1]]).tolist():
        expected = traj.sample(t)
        got = sampler.sample(t)
        assert all(type(values) is list and len(values) == traj.n for values in got)
        for e, g in zip(expected, got):
            np.testing.assert_allclose(g, e, rtol=1e-13, atol=1e-12)


def test_point_sampler_single_point_held_at_rest(rng):
    positions, velocities = rng.normal(size=(1, 6)), rng.normal(size=(1, 6))
    traj = JointTrajectory(NAMES, [0.5], positions, velocities)
    sampler = PointSampler(traj)
    for t in (0.0, 0.5, 2.0):
        for e, g in zip(traj.sample(t), sampler.sample(t)):
            np.testing.assert_array_equal(g, e)
    q, qd, qdd = sampler.sample(2.0)                # one point: no motion, at rest
    np.testing.assert_array_equal(q, positions[0])
    np.testing.assert_array_equal(qd, np.zeros(6))
    np.testing.assert_array_equal(qdd, np.zeros(6))


def test_point_sampler_after_the_end_gives_the_last_point_as_given(rng):
    traj = random_trajectory(rng, "quintic")
    q, qd, qdd = PointSampler(traj).sample(traj.duration + 1.0)
    np.testing.assert_array_equal(q, traj.positions[-1])
    np.testing.assert_array_equal(qd, traj.velocities[-1])
    np.testing.assert_array_equal(qdd, traj.accelerations[-1])


def test_point_sampler_reproduces_constant_acceleration():
    """A constant acceleration given as quintic points is sampled exactly (closed form)."""
    p0, v0, a = np.linspace(-1, 1, 6), np.linspace(0.5, -0.5, 6), np.linspace(-0.3, 0.9, 6)
    times = np.array([0.0, 0.4, 1.1, 2.0])
    traj = JointTrajectory(NAMES, times, [p0 + v0 * t + 0.5 * a * t * t for t in times],
                           [v0 + a * t for t in times], [a for _ in times])
    sampler = PointSampler(traj)
    for t in (0.1, 0.4, 0.77, 1.5, 1.999):
        q, qd, qdd = sampler.sample(t)
        np.testing.assert_allclose(q, p0 + v0 * t + 0.5 * a * t * t, atol=1e-12)
        np.testing.assert_allclose(qd, v0 + a * t, atol=1e-12)
        np.testing.assert_allclose(qdd, a, atol=1e-12)


@pytest.mark.parametrize("interpolation", ["linear", "cubic", "quintic"])
@pytest.mark.parametrize("with_velocity", [True, False])
def test_reference_sample_values_equals_sample(rng, interpolation, with_velocity):
    """Lead-in from the measured state, the trajectory, the hold after the end; a clock step."""
    traj = random_trajectory(rng, interpolation, start=0.4)
    first = 1_700_000_000 * NS + 17
    start = first + NS // 2                         # first point due 0.9 s after the first sample
    q_m, qd_m = rng.normal(size=6), rng.normal(size=6) if with_velocity else None
    one, other = Reference(traj, start, first), Reference(traj, start, first)
    offsets = np.concatenate([[0.0], np.sort(rng.uniform(0.0, traj.duration + 1.0, 300)),
                              [traj.duration + 3.0]])
    for k, dt in enumerate(offsets):
        now = first + round(dt * NS)
        expected = one.sample(now, q_m, qd_m)
        got = other.sample_values(now, q_m.tolist(), None if qd_m is None else qd_m.tolist())
        for e, g in zip(expected, got):
            assert type(g) is list
            np.testing.assert_allclose(g, e, rtol=1e-13, atol=1e-12, err_msg=f"sample {k}")
    with pytest.raises(Exception, match="clock went back"):
        other.sample_values(first - 1, q_m.tolist())
