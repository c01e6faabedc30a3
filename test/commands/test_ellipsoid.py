"""`robot-dynamics ellipsoid`: the core's values, printed and plotted."""

import re

import numpy as np

from robot_dynamics_ros.commands.cli import main as cli_main
from robot_dynamics_ros.core import RobotModel
from robot_dynamics_ros.core.task_space import dynamic_manipulability


def test_ellipsoid_prints_the_core_values_and_plots(capsys, tmp_path):
    png = tmp_path / "dme.png"
    assert cli_main(["ellipsoid", "planar2", "--q", "0.3", "0.9", "--torque-limits",
                     "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "task rows vx, vy" in out                     # a planar arm: its plane
    e = dynamic_manipulability(RobotModel.named("planar2"), [0.3, 0.9], task=(0, 1),
                               torque_limited=True)
    axes = [float(v) for v in re.findall(r"semi-axis \d: (\S+) along", out)]
    np.testing.assert_allclose(axes, e.semi_axes, rtol=1e-5)
    centre = [float(v) for v in re.search(r"centre .*: \[(.*)\]", out).group(1).split(",")]
    np.testing.assert_allclose(centre, e.centre, rtol=1e-5)
    assert png.stat().st_size > 10_000
    spatial = tmp_path / "panda.png"
    assert cli_main(["ellipsoid", "panda", "--q", "0", "-0.3", "0", "-2", "0", "1.7", "0.8",
                     "--plot", str(spatial)]) == 0
    assert "task rows vx, vy, vz" in capsys.readouterr().out and spatial.stat().st_size > 10_000
    assert cli_main(["ellipsoid", "puma560", "--q", "0", "0.3"]) == 1
    assert "expected shape (6,)" in capsys.readouterr().err
