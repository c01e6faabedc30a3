"""`robot-dynamics check`: what it prints, and that it runs without rclpy."""

import subprocess
import sys
import textwrap

import yaml

from coupled_wrist import wrist
from locations import REPO
from robot_dynamics_ros.commands.cli import main as cli_main
from robot_texts import planar_dict


def test_check_command(capsys, tmp_path):
    assert cli_main(["check", "puma560"]) == 0
    out = capsys.readouterr().out
    assert "joint6" in out and "37.48" in out and "OK" in out
    assert cli_main(["check", "stanford"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr(
    ).out.splitlines() if line.startswith("joint")}
    assert "m, m/s, N" in rows["joint3"] and "0.3048" in rows["joint3"]       # prismatic: metres
    assert "rad, rad/s, N m" in rows["joint2"]
    bad = tmp_path / "bad.yaml"
    data = planar_dict()
    data["joints"][0]["link"]["mass"] = -1
    bad.write_text(yaml.safe_dump(data))
    assert cli_main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.yaml" in err and "joint1" in err and "link.mass" in err


def test_check_names_the_coupled_drives(capsys, tmp_path):
    path = tmp_path / "wrist.yaml"
    path.write_text(yaml.safe_dump(wrist()))
    assert cli_main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "coupled drive of joint6: motor position = 50 x (1 joint5 + 1 joint6)" in out
    path.write_text(yaml.safe_dump({**wrist(), "coupling": {"joints": ["joint5", "joint6"],
                                                            "matrix": [[1, 2], [2, 4]]}}))
    assert cli_main(["check", str(path)]) == 1
    assert "wrist.yaml: coupling.matrix: must be invertible" in capsys.readouterr().err


def test_core_and_check_command_work_without_rclpy():
    """core/ and `robot-dynamics check` must import and run where ROS is not installed."""
    script = textwrap.dedent("""
        import importlib.abc, sys
        class NoRos(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] in ("rclpy", "launch", "launch_ros", "rosidl_runtime_py",
                                          "robot_dynamics_interfaces", "sensor_msgs", "std_msgs"):
                    raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        sys.meta_path.insert(0, NoRos())
        from robot_dynamics_ros.core import RobotModel, gravity_torques
        from robot_dynamics_ros.commands.cli import main
        print(gravity_torques(RobotModel.named("puma560"), [0.0] * 6)[1])
        sys.exit(main(["check", "planar2"]))
    """)
    root = REPO
    result = subprocess.run([sys.executable, "-c", script], cwd=root,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("37.48") and "OK" in result.stdout
