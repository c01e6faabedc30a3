"""`robot-dynamics excite`: a runnable excitation trajectory, with or without a progress bar."""

import numpy as np
import pytest

from robot_dynamics_ros.commands.cli import main
from robot_dynamics_ros.core import JointTrajectory


def test_excite_writes_a_runnable_trajectory(tmp_path, capsys):
    out = tmp_path / "excitation.yaml"
    assert main(["excite", "planar2", "-o", str(out), "--period", "4", "--harmonics", "3",
                 "--maxiter", "10", "--periods", "2", "--rate", "50"]) == 0
    err = capsys.readouterr().err
    assert "condition number" in err
    # the progress bar counts the optimiser's iterations out of --maxiter
    assert "SLSQP iterations" in err and "/10" in err
    traj = JointTrajectory.from_yaml(out)
    assert traj.duration == pytest.approx(8.0) and traj.interpolation == "quintic"
    assert np.allclose(traj.velocities[0], 0.0, atol=1e-12)


def test_excite_no_progress_prints_no_bar(tmp_path, capsys):
    out = tmp_path / "excitation.yaml"
    assert main(["excite", "planar2", "-o", str(out), "--period", "4", "--harmonics", "3",
                 "--maxiter", "3", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "condition number" in err and "SLSQP iterations" not in err
