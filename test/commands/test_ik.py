"""`robot-dynamics ik`: a configuration that reaches the pose, the closed-form list, failures."""

import re

import numpy as np

from robot_dynamics_ros.commands.cli import main as cli_main
from robot_dynamics_ros.core import RobotModel, tool_pose
from robot_dynamics_ros.core.task_space import rotation_matrix


def _printed_q(text):
    return np.array([float(v) for v in re.findall(r"^  q \S+\s+(\S+) (?:rad|m)$", text, re.M)])


def test_ik_prints_a_configuration_that_reaches_the_pose(capsys):
    xyz, rpy = [0.4, 0.1, 0.5], [3.0, 0.1, -0.2]
    assert cli_main(["ik", "panda", "--xyz", *map(str, xyz), "--rpy", *map(str, rpy)]) == 0
    out = capsys.readouterr().out
    assert "reached" in out
    T = tool_pose(RobotModel.named("panda"), _printed_q(out))
    assert np.abs(T[:3, 3] - xyz).max() < 1e-5                         # printed to 1e-6 rad
    assert np.abs(T[:3, :3] - rotation_matrix("rpy", rpy)).max() < 1e-5


def test_ik_closed_form_lists_the_four_solutions(capsys):
    model = RobotModel.named("asada_5r1p")
    T = tool_pose(model, [0.3, 0.7, 0.8, 0.4, 0.6, -0.5])
    rpy = [np.arctan2(T[2, 1], T[2, 2]), -np.arcsin(T[2, 0]), np.arctan2(T[1, 0], T[0, 0])]
    argv = ["ik", "asada_5r1p", "--xyz", *map(str, T[:3, 3]), "--rpy", *map(str, rpy), "--all"]
    assert cli_main(argv) == 0
    q = _printed_q(capsys.readouterr().out).reshape(4, 6)
    for solution in q:
        assert np.abs(tool_pose(model, solution) - T).max() < 1e-5


def test_ik_failures_exit_with_1_and_say_why(capsys):
    assert cli_main(["ik", "planar2", "--xyz", "3", "0", "0", "--restarts", "1"]) == 1
    assert "NOT reached" in capsys.readouterr().out
    assert cli_main(["ik", "puma560", "--xyz", "0.5", "0", "0.3", "--rpy", "0", "0", "0",
                     "--all"]) == 1
    assert "not the 5-R-1-P arm" in capsys.readouterr().err
