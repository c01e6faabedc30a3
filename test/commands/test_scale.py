"""`robot-dynamics scale`: paths, margins, overrides, reports and URDF input."""

import numpy as np
import pytest

from locations import PUMA_PATH, REPO
from robot_dynamics_ros.commands.cli import main
from robot_dynamics_ros.core import (JointTrajectory, Limits, RobotModel, rnea,
                                     time_optimal_scaling, tool_pose)


WAYPOINTS = """joint_names: [joint1, joint2]
waypoints:
  - [0.0, 0.0]
  - [0.6, 0.4]
  - [1.2, -0.2]
boundary: clamped
"""


def test_path_with_margins_and_acceleration_override(tmp_path, capsys):
    path, out = tmp_path / "waypoints.yaml", tmp_path / "out.yaml"
    path.write_text(WAYPOINTS)
    args = ["scale", "planar2", "--path", str(path), "--effort-margin", "0.8", "--acceleration",
            "3", "2.5", "--velocity-margin", "0.9", "--output", str(out), "--plot", str(tmp_path
                                                                                        / "p.png")]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "3 waypoints, C2 cubic spline (clamped)" in text and "binding limit per stretch" in text
    assert (tmp_path / "p.png").stat().st_size > 0
    model = RobotModel.named("planar2")
    written = JointTrajectory.from_yaml(out)
    t = np.linspace(0.0, written.duration, 10 * written.num_points)
    q, qd, qdd = written.sample(t)
    tau = rnea(model, q, qd, qdd)
    assert (np.abs(tau) <= 0.8 * model.effort_limit * 1.001).all()
    assert (np.abs(qd) <= 0.9 * model.velocity_limit * 1.001).all()
    assert (np.abs(qdd) <= np.array([3.0, 2.5]) * 1.001).all()
    assert np.abs(qdd).max(axis=0)[0] >= 0.99 * 3.0 or np.abs(qdd).max(axis=0)[1] >= 0.99 * 2.5


def test_time_optimal_trajectory_reports_binding_limits(capsys):
    assert main(["scale", "puma560", str(PUMA_PATH), "--method", "time_optimal"]) == 0
    text = capsys.readouterr().out
    lines = [line for line in text.splitlines() if "% of its limit" in line]
    assert len(lines) == 10 and all("torque" in line for line in lines)
    model = RobotModel.named("puma560")
    duration = time_optimal_scaling(model, JointTrajectory.from_yaml(PUMA_PATH)).duration
    assert f"new duration {duration:.4f} s" in text


@pytest.mark.parametrize("args, message", [
    (["T", "--path", "P"], "either a trajectory file or --path"),
    (["--path", "P", "--method", "uniform"], "no timing to scale uniformly"),
    (["T", "--effort-margin", "1.5"], "effort_margin: expected a fraction in (0, 1]"),
    (["T", "--acceleration", "1", "2", "3"], "acceleration: expected one value or 6"),
    (["T", "--acceleration", "0"], "acceleration: joint 'joint1' has limit 0.0"),
])
def test_errors_name_what_is_wrong(tmp_path, capsys, args, message):
    path = tmp_path / "waypoints.yaml"
    path.write_text(WAYPOINTS)
    args = [str(path) if a == "P" else str(PUMA_PATH) if a == "T" else a for a in args]
    assert main(["scale", "puma560"] + args) == 1
    assert message in capsys.readouterr().err


def test_limits_vocabulary_is_the_node_parameters():
    """Limits.from_model's margins are named as the scaler node's parameters."""
    import inspect
    params = inspect.signature(Limits.from_model).parameters
    assert list(params)[1:4] == ["effort_margin", "velocity_margin", "acceleration_margin"]


def test_scale_command_takes_a_urdf(tmp_path, capsys):
    urdf = tmp_path / "puma.urdf"
    assert main(["urdf", "puma560", "-o", str(urdf)]) == 0
    path = str(REPO / "config/trajectories/puma560_path.yaml")
    assert main(["scale", "puma560", path]) == 0
    from_yaml = capsys.readouterr().out.splitlines()[1]
    assert main(["scale", str(urdf), path, "--tip-link", "tool0"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == from_yaml      # "uniform scaling: c = ..."


PANDA_LIMITS = REPO / "test" / "data" / "moveit" / "panda_moveit_config" / "config" / \
    "joint_limits.yaml"


def _panda_trajectory(path):
    panda = RobotModel.named("panda")
    middle = (panda.lower + panda.upper) / 2
    text = {"joint_names": list(panda.joint_names), "points": [
        {"time_from_start": t, "positions": (middle + 0.4 * t * np.ones(7)).tolist(),
         "velocities": ([0.0] * 7 if t in (0.0, 1.0) else [0.4] * 7)}
        for t in (0.0, 0.5, 1.0)]}
    import yaml
    path.write_text(yaml.safe_dump(text))
    return panda


@pytest.mark.parametrize("method", ["uniform", "time_optimal"])
def test_moveit_joint_limits_file(tmp_path, capsys, method):
    """The moveit_resources Panda file: its acceleration and jerk limits hold."""
    panda = _panda_trajectory(tmp_path / "traj.yaml")
    out = tmp_path / "out.yaml"
    assert main(["scale", "panda", str(tmp_path / "traj.yaml"), "--joint-limits",
                 str(PANDA_LIMITS), "--method", method, "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "acceleration for 7 joint(s), jerk for 7 joint(s)" in text
    assert "ignored: ['panda_finger_joint1', 'panda_finger_joint2']" in text
    assert ("jerk-limited: duration" in text) == (method == "time_optimal")
    written = JointTrajectory.from_yaml(out)
    t = np.linspace(0.0, written.duration, 20_000)
    _, qd, qdd = written.sample(t)
    acceleration = np.array([3.75, 1.875, 2.5, 3.125, 3.75, 5.0, 5.0])
    assert (np.abs(qdd) <= acceleration * 1.01).all()
    assert (np.abs(qd) <= np.array([2.175] * 4 + [2.61] * 3) * 1.001).all()
    # time_optimal with the file's jerk limits: the jerk-limited law (quintic, continuous
    # acceleration), whose jerk holds like uniform scaling's
    assert (written.interpolation == "quintic") == (method == "time_optimal")
    jerk = written.segment_jerk_max()
    assert (jerk <= 300.0 * (1 + 1e-3)).all()
    assert jerk.max() >= 0.99 * 300.0 or (np.abs(qdd).max(axis=0) >= 0.99 * acceleration).any()
    assert panda.n == 7


def test_joint_limits_of_another_robot_are_refused(tmp_path, capsys):
    _panda_trajectory(tmp_path / "traj.yaml")
    fanuc = REPO / "test" / "data" / "moveit" / "fanuc_moveit_config" / "config" / \
        "joint_limits.yaml"
    assert main(["scale", "panda", str(tmp_path / "traj.yaml"), "--joint-limits",
                 str(fanuc)]) != 0
    assert "names none of the joints of robot 'panda'" in capsys.readouterr().err


def test_tool_speed_and_payload_options(tmp_path, capsys):
    path, out, load = tmp_path / "waypoints.yaml", tmp_path / "out.yaml", tmp_path / "load.yaml"
    path.write_text(WAYPOINTS)
    load.write_text("mass: 0.5\ncom: [0.05, 0.0, 0.0]\n")
    assert main(["scale", "planar2", "--path", str(path), "--tool-speed", "0.4", "--payload",
                 str(load), "--output", str(out)]) == 0
    assert "frame 'tool' speed: linear 0.4 m/s" in capsys.readouterr().out
    model = RobotModel.named("planar2")
    carried = model.with_payload(0.5, (0.05, 0.0, 0.0))
    written = JointTrajectory.from_yaml(out)
    t = np.linspace(0.0, written.duration, 40 * written.num_points)
    q, qd, qdd = written.sample(t)
    h = 1e-6                    # the tool's speed by differences of its position (independent)
    ahead, behind = written.sample(np.clip(t + h, 0, None))[0], written.sample(t - h)[0]
    speed = np.linalg.norm(tool_pose(model, ahead)[:, :3, 3] - tool_pose(model, behind)[:, :3, 3],
                           axis=1) / (2 * h)
    assert 0.4 * 0.999 <= speed[1:-1].max() <= 0.4 * 1.001
    assert (np.abs(rnea(carried, q, qd, qdd)) <= model.effort_limit * 1.001).all()
    assert main(["scale", "planar2", "--path", str(path), "--jerk", "1", "2", "3"]) == 1
    assert "--jerk: expected one value or 2" in capsys.readouterr().err
