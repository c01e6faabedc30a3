"""`robot-dynamics convert` / `urdf`: output files and refusals."""

from robot_dynamics_ros.commands.cli import main as cli_main


def test_output_files_are_not_overwritten_by_accident(tmp_path, capsys):
    target = tmp_path / "robot.urdf"
    target.write_text("mine")
    assert cli_main(["urdf", "panda", "-o", str(target)]) == 1
    assert target.read_text() == "mine" and "use --force" in capsys.readouterr().err
    assert cli_main(["urdf", "panda", "-o", str(target), "--force"]) == 0
    again = ["urdf", str(target), "--tip-link", "tool0", "-o", str(target), "--force"]
    assert cli_main(again) == 1
    assert "is the input" in capsys.readouterr().err


def test_convert_refuses_a_bad_urdf_and_writes_nothing(tmp_path, capsys):
    bad, out = tmp_path / "bad.urdf", tmp_path / "out.yaml"
    bad.write_text("<robot name='x'><link name='a'/>")
    assert cli_main(["convert", str(bad), "-o", str(out)]) == 1
    assert "malformed XML" in capsys.readouterr().err and not out.exists()
