"""Robot files written as text for the YAML and robot-file tests, and the error they give."""

import pytest

from robot_dynamics_ros.core import RobotDescriptionError, RobotModel, resolve_robot_path

PLANAR = resolve_robot_path("planar2").read_text()


def error_text(tmp_path, text):
    """Return the error of loading ``text`` as a robot file (it must name the file)."""
    with pytest.raises(RobotDescriptionError) as info:
        load_text(tmp_path, text)
    message = str(info.value)
    assert "robot.yaml" in message          # every message names the file
    return message


def load_text(tmp_path, text, name="robot.yaml"):
    """Write ``text`` (str or bytes) to a file and load it as a robot."""
    path = tmp_path / name
    path.write_text(text) if isinstance(text, str) else path.write_bytes(text)
    return RobotModel.from_yaml(path)
