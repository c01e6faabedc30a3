"""
A fresh process's small jobs do not load numba (the install's extension, or plain Python first).

`robot-dynamics check` (one gravity vector), `bag info` (no dynamics) and a uniform `scale` of a
two-point trajectory, and a first rnea, forward_dynamics and mass_matrix of a new URDF through
the core's public functions, each run in a fresh interpreter whose import system refuses numba
and scipy and records every attempt (a meta-path finder first in ``sys.meta_path``): none may
try, and their results are checked against the same computed here (the compiled kernels where
numba works).  How long they take is bench/bench_first_contact.py's business.
"""
import json
import subprocess
import sys

import numpy as np

from locations import DATA
from robot_dynamics_ros.bags import write_joint_states
from robot_dynamics_ros.core import (RobotModel, forward_dynamics, gravity_torques, mass_matrix,
                                     rnea)

BLOCKED = ("numba", "scipy", "llvmlite")
PRELUDE = f"""
import json, sys

BLOCKED = {BLOCKED!r}
TRIED = []


class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            TRIED.append(name)
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by the test)",
                                      name=name)
        return None


sys.meta_path.insert(0, Blocker())
"""
COMMAND = PRELUDE + """
from robot_dynamics_ros.commands.cli import main
code = main(sys.argv[1:])
print(json.dumps({"tried": TRIED}))
sys.exit(code)
"""
FIRST_DYNAMICS = PRELUDE + """
import numpy as np
from robot_dynamics_ros.core import RobotModel, forward_dynamics, mass_matrix, rnea
model = RobotModel.from_description(sys.argv[1])
q = np.linspace(-0.4, 0.5, model.n)
qd = np.linspace(0.3, -0.2, model.n)
tau = rnea(model, q, qd, np.zeros(model.n))
print(json.dumps({"tau": tau.tolist(), "qdd": forward_dynamics(model, q, qd, tau).tolist(),
                  "B": mass_matrix(model, q).tolist(), "tried": TRIED}))
"""
URDF = DATA / "urdf" / "dsr_description2" / "urdf" / "m1013.urdf"


def run(script, *argv):
    result = subprocess.run([sys.executable, "-c", script, *map(str, argv)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    report = json.loads(lines[-1])
    assert report["tried"] == [], report["tried"]
    return "\n".join(lines[:-1]), report


def test_check_bag_info_and_a_uniform_scale_import_neither_numba_nor_scipy(tmp_path):
    out, _ = run(COMMAND, "check", "puma560")
    puma = RobotModel.named("puma560")
    shown = out.split("gravity torques at q = 0 (clipped to limits):")[1].split("\n")[0]
    expected = gravity_torques(puma, np.clip(np.zeros(puma.n), puma.lower, puma.upper))
    np.testing.assert_allclose(np.array(shown.strip(" []").split(), float), expected,
                               atol=1e-4)       # (printed to 4 decimals)
    write_joint_states(tmp_path / "bag", ["a", "b"], np.arange(5) * 1e-3, np.zeros((5, 2)))
    out, _ = run(COMMAND, "bag", "info", tmp_path / "bag")
    assert "Messages:          5" in out and "sensor_msgs/msg/JointState" in out
    trajectory = tmp_path / "small.yaml"
    trajectory.write_text(
        "joint_names: [joint1, joint2, joint3, joint4, joint5, joint6]\npoints:\n"
        "  - {time_from_start: 0.0, positions: [0, 0, 0, 0, 0, 0]}\n"
        "  - {time_from_start: 1.0, positions: [0.5, 0.3, -0.2, 0.1, 0.2, 0.3]}\n")
    out, _ = run(COMMAND, "scale", "puma560", trajectory, "--output", tmp_path / "out.yaml")
    assert "uniform scaling: c = " in out and (tmp_path / "out.yaml").is_file()


def test_a_first_rnea_forward_dynamics_and_mass_matrix_need_no_numba():
    _, report = run(FIRST_DYNAMICS, URDF)
    model = RobotModel.from_description(URDF)
    q = np.linspace(-0.4, 0.5, model.n)
    qd = np.linspace(0.3, -0.2, model.n)
    tau = rnea(model, q, qd, np.zeros(model.n))
    scale = np.abs(tau).max()
    np.testing.assert_allclose(report["tau"], tau, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(report["qdd"], forward_dynamics(model, q, qd, tau), rtol=0,
                               atol=1e-9 * max(1.0, np.abs(report["qdd"]).max()))
    B = mass_matrix(model, q)
    np.testing.assert_allclose(report["B"], B, rtol=0, atol=1e-12 * np.abs(B).max())
