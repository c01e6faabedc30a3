"""
MoveIt joint_limits.yaml files: real ones from moveit_resources (test/data/moveit), bad ones.

The panda file's limits replace the shipped Panda's where its has_* flags are true, the finger
joints are ignored; the FANUC file (MoveIt Setup Assistant style) reads the same way; uniform
scaling with the file's acceleration and jerk limits keeps the exact largest jerk of every
segment (checked against finite differences of the sampled acceleration) within them.
"""
import numpy as np
import pytest

from locations import REPO
from robot_dynamics_ros.core import JointTrajectory, Limits, RobotModel, TrajectoryError
from robot_dynamics_ros.core import uniform_scaling
from robot_dynamics_ros.core.trajectories.joint_limits_file import load_joint_limits
from robot_dynamics_ros.core.trajectories.limits import with_jerk

MOVEIT = REPO / "test" / "data" / "moveit"
PANDA_FILE = MOVEIT / "panda_moveit_config" / "config" / "joint_limits.yaml"
FANUC_FILE = MOVEIT / "fanuc_moveit_config" / "config" / "joint_limits.yaml"
PANDA = RobotModel.named("panda")


def test_panda_file_replaces_the_robots_limits_where_it_gives_them():
    limits = load_joint_limits(PANDA_FILE)
    given = limits.overrides(PANDA)
    np.testing.assert_array_equal(given["velocity"], [2.175] * 4 + [2.61] * 3)
    np.testing.assert_array_equal(given["acceleration"], [3.75, 1.875, 2.5, 3.125, 3.75, 5.0, 5.0])
    np.testing.assert_array_equal(given["jerk"], [300.0] * 7)
    assert given["effort"] is None                            # the file gives none: the robot's
    assert limits.ignored_joints(PANDA) == ["panda_finger_joint1", "panda_finger_joint2"]
    assert "jerk for 7 joint(s)" in limits.summary(PANDA)


def test_fanuc_setup_assistant_file_reads_without_jerk():
    limits = load_joint_limits(FANUC_FILE)
    assert limits.limits["jerk"] == {} and limits.limits["effort"] == {}
    assert limits.limits["acceleration"]["joint_6"] == 2.094
    assert len(limits.joints) == 6
    with pytest.raises(TrajectoryError, match="names none of the joints of robot 'panda'"):
        limits.overrides(PANDA)


def test_a_joint_the_file_does_not_name_keeps_the_robots_limit(tmp_path):
    path = tmp_path / "joint_limits.yaml"
    path.write_text("joint_limits:\n  panda_joint2:\n    has_velocity_limits: true\n"
                    "    max_velocity: 1\n    has_acceleration_limits: false\n"
                    "    max_acceleration: 0\n")                 # (what the assistant writes)
    given = load_joint_limits(path).overrides(PANDA)
    expected = PANDA.velocity_limit.copy()
    expected[1] = 1.0
    np.testing.assert_array_equal(given["velocity"], expected)
    assert given["acceleration"] is None


@pytest.mark.parametrize("text, words", [
    ("joint_limits:\n  j:\n    has_velocity_limits: yes\n    max_velocity: 1\n",
     r"joint_limits.j.has_velocity_limits: expected true or false, got 'yes'"),
    ("joint_limits:\n  j:\n    has_acceleration_limits: true\n    max_acceleration: -2\n",
     r"joint_limits.j.max_acceleration: has_acceleration_limits is true, so max_acceleration "
     r"must be a number > 0, got -2"),
    ("joint_limits:\n  j:\n    has_jerk_limits: true\n",
     r"joint_limits.j.max_jerk: .* got None"),
    ("joint_limits:\n  j:\n    max_vel: 1\n", r"joint_limits.j: unknown keys \['max_vel'\]"),
    ("limits:\n  j: {}\n", "expected MoveIt's joint_limits.yaml format"),
    ("joint_limits:\n  j: 3\n", "joint_limits.j: expected a mapping"),
    ("joint_limits: {}\nspeed: 1\n", r"unknown keys \['speed'\]"),
])
def test_bad_files_are_refused_naming_file_joint_and_key(tmp_path, text, words):
    path = tmp_path / "joint_limits.yaml"
    path.write_text(text)
    with pytest.raises(TrajectoryError, match=words) as error:
        load_joint_limits(path)
    assert str(path) in str(error.value)


def test_uniform_scaling_keeps_the_files_jerk_and_acceleration():
    """The largest jerk after scaling, exact per segment, against finite differences too."""
    t = np.linspace(0.0, 2.0, 9)
    rng = np.random.default_rng(3)
    q = (PANDA.lower + PANDA.upper) / 2 + np.cumsum(rng.uniform(-0.15, 0.15, (t.size, 7)), axis=0)
    traj = JointTrajectory(PANDA.joint_names, t, q, np.gradient(q, t, axis=0),
                           np.zeros_like(q))                           # quintic segments
    given = load_joint_limits(PANDA_FILE).overrides(PANDA)
    jerk = np.full(7, 20.0)                                  # tighter than the file, to bind
    limits = with_jerk(Limits.from_model(PANDA, acceleration=given["acceleration"],
                                         velocity=given["velocity"]), jerk)
    out = uniform_scaling(PANDA, traj, limits).trajectory
    worst = out.segment_jerk_max().max(axis=0)
    assert (worst <= jerk * (1 + 1e-9)).all() and worst.max() == pytest.approx(20.0, rel=1e-9)
    # the exact per-segment maximum, against the sampled acceleration's slope
    samples = np.linspace(out.times[0], out.times[-1], 40_001)
    _, _, qdd = out.sample(samples)
    slope = np.abs(np.diff(qdd, axis=0) / np.diff(samples)[:, None])
    segment = np.searchsorted(out.times, samples[:-1], side="right") - 1
    inside = np.isin(segment, np.arange(out.num_points - 1)) & \
        (np.searchsorted(out.times, samples[1:], side="right") - 1 == segment)
    assert slope[inside].max() <= worst.max() * (1 + 1e-3)
    assert slope[inside].max() >= worst.max() * (1 - 1e-2)
    # without the jerk limit the scaling is faster: the jerk limit was binding
    assert uniform_scaling(PANDA, traj, with_jerk(limits, np.full(7, np.inf))).scale_factor < \
        out.times[-1] / traj.times[-1] - 1e-6
