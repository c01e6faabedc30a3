"""
core.Reference: a trajectory sampled as joint_trajectory_controller samples its active trajectory.

Oracles: a constant-acceleration motion p(t) = p0 + v0 t + a t^2 / 2, given as quintic points,
which the interpolation reproduces exactly (closed form); scipy's CubicHermiteSpline and numpy's
linear interpolation for JTC's lead-in segment from the measured state to the first point.
"""
import numpy as np
import pytest
from scipy.interpolate import CubicHermiteSpline

from robot_dynamics_ros.core import InputError, JointTrajectory, Reference, TrajectoryError

NS = 1_000_000_000
NAMES = ("a", "b", "c")
P0 = np.array([0.1, -0.4, 0.7])
V0 = np.array([0.3, 0.2, -0.5])
A = np.array([-0.6, 0.4, 0.9])
T0 = 1_700_000_000 * NS + 123            # a wall-clock stamp: nanoseconds must survive


def p(t):
    return P0 + V0 * t + 0.5 * A * t * t


def pd(t):
    return V0 + A * t


def motion(times=(0.0, 1.0, 2.0), fields=("velocities", "accelerations")):
    times = np.asarray(times, dtype=float)
    values = {"velocities": [pd(t) for t in times], "accelerations": [A for _ in times]}
    given = (values[f] if f in fields else None for f in ("velocities", "accelerations"))
    return JointTrajectory(NAMES, times, [p(t) for t in times], *given)


def test_sampled_on_the_closed_form_with_a_stamp_in_nanoseconds():
    ref = Reference(motion(), start=T0, now=T0 - NS)
    for t in (0.0, 0.25, 1.0, 1.75):
        q, qd, qdd = ref.sample(T0 + round(t * NS), P0)
        np.testing.assert_allclose(q, p(t), atol=1e-12)
        np.testing.assert_allclose(qd, pd(t), atol=1e-12)
        np.testing.assert_allclose(qdd, A, atol=1e-12)


def test_zero_stamp_starts_at_the_first_sample():
    ref = Reference(motion(), start=0, now=5 * NS)
    first = 7 * NS + 1
    np.testing.assert_allclose(ref.sample(first, P0 + 1.0).position, p(0.0), atol=1e-12)
    np.testing.assert_allclose(ref.sample(first + NS // 2, P0).position, p(0.5), atol=1e-12)
    assert ref.start == first


def test_after_the_end_the_last_point_as_given():
    ref = Reference(motion(), start=T0, now=T0)
    q, qd, qdd = ref.sample(T0 + 5 * NS, P0)
    np.testing.assert_allclose(q, p(2.0), atol=1e-12)
    np.testing.assert_allclose(qd, pd(2.0), atol=1e-12)     # held as given, velocity included
    np.testing.assert_allclose(qdd, A, atol=1e-12)


def test_lead_in_from_the_measured_state_is_cubic_hermite():
    """First point due 1.5 s after the first sample: JTC moves there from the measured state."""
    traj = motion(times=(0.5, 1.5))
    q_m, qd_m = P0 + np.array([0.2, -0.1, 0.15]), np.array([0.4, 0.1, -0.3])
    first = T0 + 10 * NS
    ref = Reference(traj, start=first + NS, now=first)
    oracle = CubicHermiteSpline([0.0, 1.5], [q_m, p(0.5)], [qd_m, pd(0.5)])
    for dt in (0.0, 0.4, 1.2):
        q, qd, qdd = ref.sample(first + round(dt * NS), q_m, qd_m)
        np.testing.assert_allclose(q, oracle(dt), atol=1e-12)
        np.testing.assert_allclose(qd, oracle(dt, 1), atol=1e-12)
        np.testing.assert_allclose(qdd, oracle(dt, 2), atol=1e-12)
    # the measured state is taken at the first sample only: later states do not move the lead-in
    later = ref.sample(first + NS, P0 + 3.0, qd_m)
    np.testing.assert_allclose(later.position, oracle(1.0), atol=1e-12)
    np.testing.assert_allclose(ref.sample(first + 2 * NS, q_m).position, p(1.0), atol=1e-12)


def test_lead_in_is_linear_without_measured_velocity():
    traj = motion(times=(1.0, 2.0))
    q_m = P0 - 0.3
    ref = Reference(traj, start=T0, now=T0)
    for dt in (0.0, 0.3, 0.9):
        q, qd, qdd = ref.sample(T0 + round(dt * NS), q_m)
        line = [np.interp(dt, [0.0, 1.0], [a, b]) for a, b in zip(q_m, p(1.0))]
        np.testing.assert_allclose(q, line, atol=1e-12)
        np.testing.assert_allclose(qd, p(1.0) - q_m, atol=1e-12)
        np.testing.assert_allclose(qdd, 0.0, atol=1e-12)


def test_a_reference_ending_in_the_past_is_refused():
    with pytest.raises(TrajectoryError, match="ends in the past"):
        Reference(motion(), start=T0, now=T0 + 3 * NS)
    Reference(motion(), start=T0, now=T0 + 2 * NS)          # ending now is still valid
    Reference(motion(), start=0, now=T0 + 3 * NS)           # zero stamp: starts when sampled


def test_a_clock_going_back_before_the_first_sample_gives_nothing():
    ref = Reference(motion(), start=0, now=T0)
    ref.sample(T0, P0)
    with pytest.raises(InputError, match="clock went back"):
        ref.sample(T0 - 1, P0)
