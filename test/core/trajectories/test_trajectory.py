"""
JointTrajectory: validation and joint_trajectory_controller interpolation.

Oracles: polynomials of the interpolation's own degree are reproduced exactly from their samples
(positions/velocities/accelerations at the waypoints), velocities and accelerations agree with
finite differences of the sampled positions, and the waypoints are hit exactly.
"""
import numpy as np
import pytest

from robot_dynamics_ros.core import JointTrajectory

TIMES = np.array([0.0, 0.3, 0.7, 1.5, 2.0])


def poly(coeffs, t):
    """q, qd, qdd of a polynomial per joint; coeffs (deg+1, n), ascending powers."""
    t = np.asarray(t, dtype=float)[:, None]
    deg = coeffs.shape[0] - 1
    q = sum(coeffs[p] * t**p for p in range(deg + 1))
    qd = sum(p * coeffs[p] * t**(p - 1) for p in range(1, deg + 1))
    qdd = sum(p * (p - 1) * coeffs[p] * t**(p - 2)
              for p in range(2, deg + 1)) + 0.0 * t * coeffs[0]
    return q, qd, qdd


@pytest.mark.parametrize("degree, fields", [(1, 1), (3, 2), (5, 3)])
def test_reproduces_polynomial_of_its_degree(degree, fields):
    rng = np.random.default_rng(degree)
    coeffs = rng.normal(size=(degree + 1, 3))
    q, qd, qdd = poly(coeffs, TIMES)
    if degree == 1:   # linear interpolation needs one segment per polynomial piece: use 2 points
        traj = JointTrajectory(("a", "b", "c"), TIMES[[0, -1]], q[[0, -1]])
    else:
        traj = JointTrajectory(("a", "b", "c"), TIMES, q, qd, qdd if fields == 3 else None)
    t = np.linspace(TIMES[0], TIMES[-1], 97)[:-1]   # the last point itself: see test_end_point
    got = traj.sample(t)
    want = poly(coeffs, t)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=1e-9 * max(1.0, np.abs(w).max()))


@pytest.mark.parametrize("kind", ["linear", "cubic", "quintic"])
def test_waypoints_hit_and_derivatives_consistent(kind):
    rng = np.random.default_rng(7)
    q = rng.normal(size=(5, 2))
    qd = rng.normal(size=(5, 2)) if kind != "linear" else None
    qdd = rng.normal(size=(5, 2)) if kind == "quintic" else None
    traj = JointTrajectory(("a", "b"), TIMES, q, qd, qdd)
    assert traj.interpolation == kind
    qs, qds, qdds = traj.sample(TIMES)
    np.testing.assert_allclose(qs, q, atol=1e-12)
    if qd is not None:
        np.testing.assert_allclose(qds, qd, atol=1e-9)
    if qdd is not None:
        np.testing.assert_allclose(qdds, qdd, atol=1e-7)
    # central differences inside each segment
    h = 1e-6
    mids = 0.5 * (TIMES[:-1] + TIMES[1:])
    qp, qdp, _ = traj.sample(mids + h)
    qm, qdm, _ = traj.sample(mids - h)
    _, qd_mid, qdd_mid = traj.sample(mids)
    np.testing.assert_allclose((qp - qm) / (2 * h), qd_mid, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose((qdp - qdm) / (2 * h), qdd_mid, rtol=1e-5, atol=1e-5)


def test_quintic_matches_jtc_formula_at_a_point():
    # one segment from rest at 0 to rest at 1 over T = 1: JTC's quintic is 10 t^3 - 15 t^4 + 6 t^5
    traj = JointTrajectory(("a",), [0.0, 1.0], [[0.0], [1.0]], [[0.0], [0.0]], [[0.0], [0.0]])
    q, qd, qdd = traj.sample(0.25)
    s = 0.25
    assert q[0] == pytest.approx(10 * s**3 - 15 * s**4 + 6 * s**5)
    assert qd[0] == pytest.approx(30 * s**2 - 60 * s**3 + 30 * s**4)
    assert qdd[0] == pytest.approx(60 * s - 180 * s**2 + 120 * s**3)


def test_hold_outside_time_range():
    """
    Before the first point and after the last, hold as JTC does.

    Before the first point: held at rest.  After the last: the last point as stored, velocity
    included, as JTC's Trajectory::sample outputs once the trajectory has played out.
    """
    traj = JointTrajectory(("a",), [0.5, 1.0], [[1.0], [2.0]], [[3.0], [4.0]])
    q, qd, qdd = traj.sample(np.array([0.0, 2.0]))
    np.testing.assert_allclose(q[:, 0], [1.0, 2.0])
    np.testing.assert_allclose(qd[:, 0], [0.0, 4.0])
    np.testing.assert_allclose(qdd, 0.0)
    q, qd, qdd = traj.sample(1.0)      # the end point itself is still on the last segment
    assert q[0] == pytest.approx(2.0) and qd[0] == pytest.approx(4.0)


def test_end_point_as_given_like_jtc():
    """
    At the last time the last point as stored, as JTC outputs it.

    At the last time JTC outputs the last point as stored, missing fields as zero; the left
    limit is the end of the last segment's polynomial.
    """
    traj = JointTrajectory(("a",), [0.0, 1.0], [[0.0], [1.0]], [[0.0], [0.5]])
    q, qd, qdd = traj.sample(1.0)
    assert (q[0], qd[0], qdd[0]) == (1.0, 0.5, 0.0)
    _, _, qdd_left = traj.sample(1.0, side="left")
    # cubic Hermite 0 -> 1 with end velocity 0.5 over 1 s: q = 2.5 t^2 - 1.5 t^3, q''(1) = 5 - 9
    assert qdd_left[0] == pytest.approx(-4.0)


def test_scalar_and_batch_shapes():
    traj = JointTrajectory(("a", "b"), [0.0, 1.0], [[0.0, 1.0], [1.0, 0.0]])
    assert [x.shape for x in traj.sample(0.3)] == [(2,)] * 3
    assert [x.shape for x in traj.sample(np.linspace(0, 1, 11))] == [(11, 2)] * 3
    single = JointTrajectory(("a",), [0.0], [[0.2]])
    assert single.sample(5.0)[0][0] == pytest.approx(0.2)


@pytest.mark.parametrize("kwargs, message", [
    (dict(times=[0.0, 0.5, 0.5]), "point 2 (0.5 s) is not after point 1"),
    (dict(times=[0.0, 1.0, 0.5]), "point 2"),
    (dict(times=[-1.0, 1.0, 2.0]), "negative"),
    (dict(times=[0.0, np.inf, 2.0]), "point 1 is not finite"),
    (dict(positions=[[0.0, 0.0], [np.nan, 0.0], [1.0, 1.0]]), "positions: point 1 joint 'a'"),
    (dict(positions=[[0.0, 0.0], [1.0, 1.0]]), "positions: expected shape (3, 2)"),
    (dict(velocities=np.zeros((3, 3))), "velocities: expected shape (3, 2)"),
    (dict(velocities=[[0, 0], [0, np.inf], [0, 0]]), "velocities: point 1 joint 'b'"),
    (dict(accelerations=np.zeros((3, 2))), "accelerations: given without velocities"),
    (dict(joint_names=("a", "a")), "'a' appears twice"),
    (dict(joint_names=()), "joint_names: empty"),
])
def test_validation_names_field_and_point(kwargs, message):
    args = dict(joint_names=("a", "b"), times=[0.0, 0.5, 1.0], positions=np.zeros((3, 2)))
    args.update(kwargs)
    with pytest.raises(ValueError) as info:
        JointTrajectory(**args)
    assert message in str(info.value)


def test_yaml_round_trip_and_ros_time(tmp_path):
    data = {"joint_names": ["j1", "j2"], "points": [{"time_from_start": {"sec": 0, "nanosec": 0},
                                                     "positions": [0, 0], "velocities": [0, 0]},
                                                    {"time_from_start": {"sec": 1,
                                                                         "nanosec": 500000000},
                                                     "positions": [1, 2], "velocities": [0, 0]}]}
    traj = JointTrajectory.from_dict(data)
    assert traj.duration == pytest.approx(1.5) and traj.interpolation == "cubic"
    import yaml
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(traj.to_dict()))
    again = JointTrajectory.from_yaml(path)
    np.testing.assert_array_equal(again.positions, traj.positions)
    np.testing.assert_array_equal(again.times, traj.times)


@pytest.mark.parametrize("points, message", [([{"time_from_start": 0, "positions": [0, 0]},
                                               {"time_from_start": 1, "positions": [0]}],
                                              "points[1].positions: expected 2 values"),
                                             ([{"time_from_start": 0, "positions": [0, 0],
                                                "velocities": [0, 0]}, {"time_from_start": 1,
                                                                        "positions": [1, 1]}],
                                              "points[1].velocities: given in some points"),
                                             ([{"positions": [0, 0]}],
                                              "points[0].time_from_start: missing"),
                                             ([{"time_from_start": "soon", "positions": [0, 0]}],
                                              "points[0].time_from_start: expected seconds"),
                                             ([{"time_from_start": 0, "positions": [0, "x"]}],
                                              "points[0].positions: expected numbers"),
                                             ([{"time_from_start": 0, "positions": [0, 0],
                                                "speed": [0, 0]}], "points[0]: unknown key"),])
def test_from_dict_errors_name_source_and_field(points, message):
    with pytest.raises(ValueError) as info:
        JointTrajectory.from_dict(
            {"joint_names": ["a", "b"], "points": points}, source="traj.yaml")
    assert str(info.value).startswith("traj.yaml: ") and message in str(info.value)


def test_from_yaml_missing_file(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        JointTrajectory.from_yaml(tmp_path / "nope.yaml")


def test_reordered():
    traj = JointTrajectory(("b", "a"), [0.0, 1.0], [[1.0, 2.0], [3.0, 4.0]])
    again = traj.reordered(("a", "b"))
    np.testing.assert_array_equal(again.positions, [[2.0, 1.0], [4.0, 3.0]])
    with pytest.raises(ValueError, match="unknown joint"):
        traj.reordered(("a", "c"))
    with pytest.raises(ValueError, match="missing joint"):
        JointTrajectory(("a",), [0.0], [[0.0]]).reordered(("a", "b"))


def test_yaml_file_rules_as_robot_files(tmp_path, monkeypatch):
    """
    Trajectory files follow the robot files' YAML rules.

    Trajectory files are read by the same YAML reader as robot files: YAML 1.2 numbers (2e-4 is
    a number), duplicate keys refused with the line, a size bound; errors are TrajectoryError.
    """
    from robot_dynamics_ros.core import TrajectoryError
    from robot_dynamics_ros.core.trajectories import trajectory as module
    path = tmp_path / "t.yaml"
    path.write_text("joint_names: [a]\npoints:\n- {time_from_start: 0, positions: [2e-4]}\n"
                    "- {time_from_start: 1e0, positions: [1]}\n")
    traj = JointTrajectory.from_yaml(path)
    assert traj.positions[0, 0] == 2e-4 and traj.duration == 1.0
    path.write_text(
        "joint_names: [a]\npoints:\n- {time_from_start: 0, positions: [0], positions: [1]}\n")
    with pytest.raises(TrajectoryError, match=r"t.yaml.*duplicate key 'positions'.*line 3"):
        JointTrajectory.from_yaml(path)
    monkeypatch.setattr(module, "MAX_FILE_BYTES", 10)
    with pytest.raises(TrajectoryError, match="larger than a trajectory file may be"):
        JointTrajectory.from_yaml(path)


def test_sample_segments_equal_sample():
    """
    sample_segments equals sample at the same times.

    sample_segments evaluates each segment's own polynomial at local fractions: the states
    sample() gives at those times (f = 1: the left limit at the segment's end).
    """
    rng = np.random.default_rng(3)
    for fields in (1, 2, 3):
        arrays = [rng.normal(size=(5, 2)) for _ in range(fields)]
        traj = JointTrajectory(("a", "b"), TIMES, *arrays)
        f = np.array([0.0, 0.25, 0.5, 0.999, 1.0])
        got = traj.sample_segments(f)
        t = TIMES[:-1, None] + np.diff(TIMES)[:, None] * f
        want = traj.sample(t.ravel(), side="left")
        inner = traj.sample(t[:, :-1].ravel())
        for g, w, i in zip(got, want, inner):
            assert g.shape == (4, 5, 2)
            np.testing.assert_allclose(g[:, :-1].reshape(-1, 2), i.reshape(-1, 2), atol=1e-12)
            np.testing.assert_allclose(g[:, -1], w.reshape(4, 5, 2)[:, -1], atol=1e-9)
    with pytest.raises(ValueError, match="fractions"):
        traj.sample_segments([1.5])
