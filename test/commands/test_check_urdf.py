"""`robot-dynamics check` on URDF files, and the URDF documentation's worked example."""

from pathlib import Path

import numpy as np

from locations import REPO
from robot_dynamics_ros.commands.cli import main as cli_main
from robot_dynamics_ros.core import RobotModel
from urdf_samples import random_urdf


def test_check_prints_what_was_merged_and_locked(tmp_path, capsys):
    sample = random_urdf(np.random.default_rng(5), n=4)
    path = tmp_path / "robot.urdf"
    path.write_text(sample.text)
    assert cli_main(["check", str(path), "--tip-link", "tool"]) == 0
    out = capsys.readouterr().out
    assert "chain from root link 'base' to tip link 'tool', 4 joints" in out
    assert "locked off-chain joints: " in out and "finger2_joint = 0" in out
    assert "palm" in out and "camera" in out and "tool" in out        # merged into chain links
    assert "fixed to the root link (no effect on the dynamics): other_arm" in out
    assert "OK" in out


def test_check_prints_continuous_joints_without_limits(tmp_path, capsys):
    sample = random_urdf(np.random.default_rng(6), n=2, types=("continuous",), branches=False)
    path = tmp_path / "robot.urdf"
    path.write_text(sample.text)
    assert cli_main(["check", str(path), "--tip-link", "tool"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("joint1"))
    assert line.split()[1:5] == ["continuous", line.split()[2], "none", "none"]


def test_readme_worked_example(tmp_path, capsys, monkeypatch):
    readme = (REPO / "doc" / "urdf.md").read_text()
    example = readme[readme.index("## Worked example"):]
    xml = example[example.index("```xml\n") + 7:example.index("```\n", example.index("```xml"))]
    shown = example[example.index("$ robot-dynamics check"):]
    shown = shown[:shown.index("...")].splitlines()[1:]
    (tmp_path / "arm.urdf").write_text(xml)
    monkeypatch.chdir(tmp_path)
    assert cli_main(["check", "arm.urdf", "--tip-link", "tool0"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[:len(shown)] == shown
    assert RobotModel.from_urdf("arm.urdf").joint_names[-1] == "finger_joint"
    assert cli_main(["convert", "arm.urdf", "--tip-link", "tool0", "-o", "arm.yaml"]) == 0
    assert "d: 0.5" in Path("arm.yaml").read_text()
