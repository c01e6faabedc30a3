"""
``robot-dynamics identify`` with its defaults on real robots' public logs (issue 28, "Done when").

Oracle: the model each data set's authors publish with it, friction included
(test/support/identification_corpus.py, test/data/identification/README.md).  Each robot's
training recordings are identified together with the defaults and only what the data need to be
read (the UR10e's drive gains, the TX40's unit torque constant: motor torques); the file must
be written, and on the validation recording (``--validate``, filtered at the cut-off the
command chose) its torque RMS error must be at most the published model's on every joint.
Data that cannot be committed (licence) are read from a checkout under
``$ROBOT_DYNAMICS_CORPUS``; without it the test skips and says why.
"""
import numpy as np
import pytest

from identification_corpus import (CORPUS, chosen_factor, compare, source, validation_samples,
                                   write_bags)
from robot_dynamics_ros.commands.cli import main
from robot_dynamics_ros.core import RobotModel

CASES = [pytest.param(robot, id=robot.name) for robot in CORPUS]


def _worse_joints(robot, tmp_path, capsys) -> list:
    """Identify ``robot`` with the defaults; return the joints worse than the published model."""
    directory, reason = source(robot)
    if directory is None:
        pytest.skip(reason)
    recordings = robot.read(directory, tmp_path)
    bags, validation = write_bags(recordings, tmp_path / "bags")      # every training recording
    out = tmp_path / "identified.yaml"
    code = main(["identify", recordings.robot, *map(str, bags), "--validate", str(validation),
                 "-o", str(out), *recordings.arguments])
    report = capsys.readouterr().out
    assert code == 0 and out.exists(), f"{robot.name}: nothing written with the defaults"
    identified = RobotModel.from_yaml(out)
    ours, published = compare(recordings, identified,
                              validation_samples(recordings, chosen_factor(report)))
    assert np.all(np.isfinite(ours))
    return [(name, float(a), float(b)) for name, a, b
            in zip(identified.joint_names, ours, published) if a > b]


@pytest.mark.parametrize("robot", CASES)
def test_identify_with_defaults_is_no_worse_than_the_published_model(robot, tmp_path, capsys):
    worse = _worse_joints(robot, tmp_path, capsys)
    assert worse == [], f"{robot.name}: joints worse than the published model (RMS N m)"


def test_the_tx40s_robot_file_reads_its_motor_data_as_figaroh_does(tmp_path):
    """
    The TX40's coupling in the robot file reproduces FIGAROH's conversion of its motor data.

    Oracle: FIGAROH's ``staubli_tx40_tools.py`` as written there: joint positions
    inv(reduction_matrix) q_m with reduction_matrix[5, 4] = r6 (plus the zero offsets of joints
    2, 3), joint torques red_tau tau_m with red_tau[4, 5] = r6.
    """
    robot = next(r for r in CORPUS if r.name == "staubli_tx40")
    directory, _ = source(robot)
    recordings = robot.read(directory, tmp_path)
    r = np.array([32.0, 32.0, 45.0, -48.0, 45.0, 32.0])
    positions, torques = np.diag(r), np.diag(r)
    positions[5, 4], torques[4, 5] = r[5], r[5]
    motor_q = np.loadtxt(directory / "pos_read_data_1khz.csv.gz", delimiter=",", skiprows=1)
    rec, motor_tau = recordings.training["tx40_train"]
    rows = slice(0, rec.t.size)
    q = motor_q[rows] @ np.linalg.inv(positions).T + [0.0, -np.pi / 2, np.pi / 2, 0.0, 0.0, 0.0]
    assert np.allclose(rec.q, q, rtol=0, atol=1e-12)
    assert np.allclose(rec.tau, motor_tau @ torques.T, rtol=1e-12, atol=1e-12)
    assert recordings.model.has_coupling and recordings.arguments == ["--torque-constant", "1"]
