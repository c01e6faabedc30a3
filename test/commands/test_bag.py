"""`robot-dynamics bag`: the command line's reports."""

import subprocess
import sys

import numpy as np

from robot_dynamics_ros.commands.cli import main as cli_main


def test_the_command_line_reports_a_bad_bag_in_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "robot_dynamics_ros.commands.cli", "bag",
                             "info", str(tmp_path / "missing")], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip() == ("robot-dynamics bag: unusable bag: bag "
                                     f"{tmp_path / 'missing'}: no such file or directory")


def test_bag_process_takes_a_urdf_chain(tmp_path, capsys):
    urdf = tmp_path / "puma.urdf"
    assert cli_main(["urdf", "puma560", "-o", str(urdf)]) == 0
    command = ["bag", "process", str(tmp_path / "no_bag"), str(tmp_path / "out"), "--robot",
               str(urdf), "--tip-link"]
    assert cli_main(command + ["nope"]) == 1
    assert "tip_link 'nope': no such link" in capsys.readouterr().err
    assert cli_main(command + ["tool0"]) == 1            # the robot loads; the bag does not exist
    assert "no_bag" in capsys.readouterr().err


def test_bag_process_of_many_bags_prints_a_summary_and_fails_for_the_bad_one(tmp_path, capsys):
    from robot_dynamics_ros.bags import write_joint_states
    from robot_dynamics_ros.core import RobotModel
    puma = RobotModel.named("puma560")
    (tmp_path / "in").mkdir()
    t = np.arange(100) * 1e-3
    q = 0.1 * np.sin(t[:, None] + np.arange(6))
    for name in ("run_a", "run_b"):
        write_joint_states(tmp_path / "in" / name, puma.joint_names, t, q, np.cos(q), q)
    (tmp_path / "in" / "run_c").mkdir()
    (tmp_path / "in" / "run_c" / "metadata.yaml").write_text("rosbag2_bagfile_information: [")
    out = tmp_path / "out"
    command = ["bag", "process", str(tmp_path / "in"), str(out), "--robot", "puma560",
               "--no-progress", "--workers", "1"]
    assert cli_main(command) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert [line.split()[:2] for line in lines[2:5]] == [["run_a", "done"], ["run_b", "done"],
                                                         ["run_c", "failed"]]
    assert lines[5].startswith("2 processed, 0 skipped (output there before; --overwrite redoes "
                               "them), 1 failed; summary in ")
    assert f"robot-dynamics bag: {tmp_path / 'in' / 'run_c'}: unusable bag: bag " in captured.err
    assert sorted(p.name for p in out.iterdir())[:2] == ["process_summary.csv", "run_a"]
    # the single-bag form as before: the same output bag as the fleet's
    (tmp_path / "one").mkdir()
    assert cli_main(["bag", "process", str(tmp_path / "in" / "run_a"),
                     str(tmp_path / "one" / "run_a"), "--robot", "puma560", "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith(f"{tmp_path / 'one' / 'run_a'}: 100 joint states")
    for f in ("metadata.yaml", "run_a.mcap"):
        assert (tmp_path / "one" / "run_a" / f).read_bytes() == (out / "run_a" / f).read_bytes()
    # a rerun skips what is done; a glob of one bag is a fleet too
    assert cli_main(command[:2] + [str(tmp_path / "in" / "run_[ab]")] + command[3:]) == 0
    assert "0 processed, 2 skipped" in capsys.readouterr().out
    assert cli_main(["bag", "process", str(tmp_path / "in" / "run_a*"), str(out), "--robot",
                     "puma560", "--scheduler", "nonsense://x"]) == 1
    assert capsys.readouterr().err.splitlines()[-1].startswith(
        "robot-dynamics bag: invalid input: --scheduler nonsense://x: no Dask scheduler there "
        "(ValueError: unknown address scheme 'nonsense'")
