"""`robot-dynamics bag`: the command line's reports."""

import subprocess
import sys

from robot_dynamics_ros.cli import main as cli_main


def test_the_command_line_reports_a_bad_bag_in_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "robot_dynamics_ros.cli", "bag", "info",
                             str(tmp_path / "missing")], capture_output=True, text=True)
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
