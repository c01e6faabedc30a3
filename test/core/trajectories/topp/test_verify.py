"""
The re-check of a time-optimal output.

Sampled as the controller interpolates; intervals unchanged to the bit are reused; the exact
largest velocity of a segment.
"""

import numpy as np
import pytest

from robot_dynamics_ros.core import InputError, JointTrajectory, rnea
from robot_dynamics_ros.core.trajectories.topp.verify import verify


def test_verification_samples_are_the_controllers_interpolation(solved):
    """
    The verification samples the output as the controller interpolates it.

    The verification evaluates the output as the controller interpolates it: its states and
    torques equal JointTrajectory.sample and rnea at its check times, D + 1 per interval (the
    last just before the interval's end) plus the end point.
    """
    model, _, result = solved["puma560"]
    out, D = result.for_controller(), 4
    check = verify(model, out, result.limits, D, 1e-3)
    assert check.times.size == (out.num_points - 1) * (D + 1) + 1
    inside = check.times[:-1] - out.times[check.interval[:-1]]
    assert (inside >= 0).all() and (inside < np.diff(out.times)[check.interval[:-1]]).all()
    q, qd, qdd = out.sample(check.times[:-1])
    for got, want in ((check.velocities[:-1], qd), (check.accelerations[:-1], qdd)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * np.abs(want).max())
    tau = rnea(model, q, qd, qdd)
    np.testing.assert_allclose(check.torques[:-1], tau, rtol=0, atol=1e-6 * np.abs(tau).max())
    assert check.passed


def test_rechecks_reuse_only_unchanged_intervals(solved):
    """
    A re-check computes again every interval that changed, and only those agree with the last.

    The output with its second half shifted by half a nanosecond (as the rounding to whole
    nanoseconds does after an earlier step changes) and one interval's velocity changed: the
    re-check reusing the first check equals a fresh check of the changed trajectory.
    """
    model, _, result = solved["puma560"]
    out = result.for_controller()
    K, limits = out.num_points, result.limits
    index = np.arange(K, dtype=float)                      # stands for the points' path parameter
    first = verify(model, out, limits, 10, 1e-3)
    times = out.times.copy()
    times[K // 2:] += 0.5e-9
    qd = out.velocities.copy()
    qd[K // 4] *= 1.01
    changed = JointTrajectory(out.joint_names, times, out.positions, qd)
    again = verify(model, changed, limits, 10, 1e-3, s=index, previous=(out, first, index))
    fresh = verify(model, changed, limits, 10, 1e-3)
    scale = np.abs(limits.effort_upper)
    assert np.abs(again.torques - fresh.torques).max(axis=0).max() <= 1e-6 * scale.max()
    np.testing.assert_array_equal(again.velocities, fresh.velocities)
    np.testing.assert_array_equal(again.speeds, fresh.speeds)     # (the exact largest too)
    assert np.abs(again.torques - fresh.torques)[(K // 4 - 1) * 11:(K // 4 + 1) * 11].max() <= 1e-9


def test_recheck_of_an_unchanged_output_equals_a_fresh_check(solved):
    """
    A re-check of the same output reuses every sample and equals a fresh check to the bit.

    And sampling a subset of segments gives those segments of the full sampling.
    """
    model, _, result = solved["puma560"]
    out, limits = result.for_controller(), result.limits
    index = np.arange(out.num_points, dtype=float)
    first = verify(model, out, limits, 10, 1e-3)
    again = verify(model, out, limits, 10, 1e-3, s=index, previous=(out, first, index))
    for name in ("times", "interval", "torques", "velocities", "accelerations", "speeds"):
        np.testing.assert_array_equal(getattr(again, name), getattr(first, name))
    np.testing.assert_array_equal(again.failing, first.failing)
    fractions = np.array([0.0, 0.3, 1.0])
    some = np.array([0, 5, out.num_points - 2])
    for part, full in zip(out.sample_segments(fractions, some), out.sample_segments(fractions)):
        np.testing.assert_array_equal(part, full[some])


def test_segment_speed_max_is_the_exact_largest_velocity():
    """
    The largest |velocity| per segment of a cubic trajectory, against a closed form and sampling.

    One segment from rest at 0 to rest at 1 in 1 s: qd = 6 t (1 - t), largest 1.5 at t = 1/2;
    random cubic segments: the maximum of 20,001 samples per segment, never above it and within
    the sampling's resolution below it; some segments alone (a re-check) give those rows.
    """
    one = JointTrajectory(["j"], [0.0, 1.0], [[0.0], [1.0]], [[0.0], [0.0]])
    np.testing.assert_allclose(one.segment_speed_max(), [[1.5]], rtol=1e-15)
    rng = np.random.default_rng(3)
    K = 30
    traj = JointTrajectory(["a", "b"], np.cumsum(rng.uniform(0.1, 1.0, K)),
                           rng.normal(0, 1, (K, 2)), rng.normal(0, 2, (K, 2)))
    exact = traj.segment_speed_max()
    sampled = np.abs(traj.sample_segments(np.linspace(0.0, 1.0, 20001))[1]).max(axis=1)
    assert (sampled <= exact * (1 + 1e-12)).all()
    np.testing.assert_allclose(exact, sampled, rtol=1e-6)
    # Some segments of a trajectory not sampled yet (their coefficients alone): those rows.
    some = np.array([0, 7, K - 2])
    fresh = JointTrajectory(traj.joint_names, traj.times, traj.positions, traj.velocities)
    np.testing.assert_array_equal(fresh.segment_speed_max(some), exact[some])
    again = JointTrajectory(traj.joint_names, traj.times, traj.positions, traj.velocities)
    fractions = np.array([0.0, 0.25, 1.0])
    for part, full in zip(again.sample_segments(fractions, some),
                          traj.sample_segments(fractions)):
        np.testing.assert_array_equal(part, full[some])
    with pytest.raises(InputError, match="quintic"):
        JointTrajectory(["j"], [0.0, 1.0], [[0.0], [1.0]], [[0.0], [0.0]],
                        [[0.0], [0.0]]).segment_speed_max()
