"""`robot-dynamics scale`: paths, margins, overrides, reports and URDF input."""

import numpy as np
import pytest

from locations import PUMA_PATH, REPO
from robot_dynamics_ros.cli import main
from robot_dynamics_ros.core import JointTrajectory, Limits, RobotModel, rnea, time_optimal_scaling


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
