"""Motor currents as efforts: drive gains from torque constants or a YAML file (drives.py)."""

import numpy as np
import pytest

from robot_dynamics_ros.core import InputError, RobotModel
from robot_dynamics_ros.core.identification.drives import gains_from_constants, gains_from_file

PUMA = RobotModel.named("puma560")      # has gear ratios
PANDA = RobotModel.named("panda")       # has none


def test_torque_constants_times_the_files_gear_ratios():
    gains = gains_from_constants(PUMA, [0.2])
    assert np.allclose(gains.gains, 0.2 * PUMA.gear_ratio)
    assert np.allclose(gains.torques(np.ones((3, 6))), 0.2 * PUMA.gear_ratio)
    per_joint = gains_from_constants(PANDA, [1, 2, 3, 4, 5, 6, 7])
    assert np.array_equal(per_joint.gains, [1, 2, 3, 4, 5, 6, 7])
    with pytest.raises(InputError, match="1 value or 7"):
        gains_from_constants(PANDA, [1.0, 2.0])
    with pytest.raises(InputError, match="non-zero finite"):
        gains_from_constants(PANDA, [float("nan")])


def test_drive_gain_file(tmp_path):
    path = tmp_path / "gains.yaml"
    entries = {name: 2.0 for name in PUMA.joint_names}
    lines = [f"{name}: {value}" for name, value in entries.items()]
    lines[1] = "joint2: {torque_constant: 0.25, gear_ratio: 100}"
    lines[2] = "joint3: {torque_constant: 0.25}"
    lines[3] = "joint4: {drive_gain: 7.5}"
    path.write_text("\n".join(lines) + "\n")
    gains = gains_from_file(PUMA, path)
    assert np.allclose(gains.gains, [2.0, 25.0, 0.25 * PUMA.gear_ratio[2], 7.5, 2.0, 2.0])
    assert gains.gear_ratios == {"joint2": 100.0}
    path.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(InputError, match="joint6"):
        gains_from_file(PUMA, path)
    path.write_text("\n".join(lines + ["wrist: 3"]) + "\n")
    with pytest.raises(InputError, match="wrist"):
        gains_from_file(PUMA, path)
    lines[0] = "joint1: {torque_const: 1}"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="joint1.*torque_const"):
        gains_from_file(PUMA, path)
