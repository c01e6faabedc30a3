"""
The identification page's example (doc/identification.md): a Puma 560 whose file is wrong.

    .venv/bin/python doc/identification_example.py [workdir]

1. The "real" robot is the shipped Puma 560 with other link masses (-20 % .. +30 %), centres of
   mass moved by up to 2 cm and 30 % more friction; its file (config/robots/puma560.yaml) is the
   model everyone uses.
2. ``robot-dynamics excite`` designs an excitation trajectory from the file.
3. The simulator (``core.simulate``, RK4 at 1 kHz) runs the real robot under computed-torque
   control with the file's model tracking that trajectory; joint positions with 1e-5 rad of
   encoder noise and the applied torques with 1 % of each effort limit of noise are recorded as a
   bag at 1 kHz (and a second run on another trajectory for validation).
4. ``robot-dynamics identify`` (its defaults: consistent, friction and offsets, the filter checked
   on a held-out share) turns the bag into a corrected robot file; the torque errors of the file
   and of the identified model are printed, on the held-out share and on the validation run.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "support"))

from identification_data import perturbed  # noqa: E402
from robot_dynamics_ros.bags import write_joint_states  # noqa: E402
from robot_dynamics_ros.core import JointTrajectory, RobotModel, rnea, simulate  # noqa: E402

CLI = [sys.executable, "-m", "robot_dynamics_ros.commands.cli"]


def real_robot(model):
    true = perturbed(model, [1.0, 1.2, 0.8, 1.3, 0.9, 1.25], seed=1)
    spec = true.to_dict()
    for joint in spec["joints"]:
        joint["friction"] = {k: 1.3 * v for k, v in joint["friction"].items()}
    return RobotModel.from_dict(spec, "puma560 (real)")


def run(model, real, trajectory, bag, seed, duration):
    """Computed-torque tracking of ``trajectory`` by the real robot; record a noisy bag."""
    kp, kd = 100.0, 20.0

    def controller(t, q, qd):
        q_r, qd_r, qdd_r = trajectory.sample(t)
        return rnea(model, q, qd, qdd_r + kp * (q_r - q) + kd * (qd_r - qd))

    q0 = np.asarray(trajectory.positions[0])
    sim = simulate(real, q0, np.zeros(model.n), duration, dt=1e-3, torque=controller)
    rng = np.random.default_rng(seed)
    q = sim.q + rng.normal(size=sim.q.shape) * 1e-5
    tau = sim.tau + rng.normal(size=sim.q.shape) * 0.01 * model.effort_limit
    write_joint_states(bag, model.joint_names, sim.t, q, effort=tau)
    return float(np.abs(sim.q - trajectory.sample(sim.t)[0]).max())


def main() -> int:
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="identify_"))
    work.mkdir(parents=True, exist_ok=True)
    model = RobotModel.named("puma560")
    real = real_robot(model)
    runs = {}
    for name, seed in (("excitation", 0), ("validation", 7)):
        path = work / f"{name}.yaml"
        subprocess.run(CLI + ["excite", "puma560", "-o", str(path), "--period", "10", "--periods",
                              "3", "--seed", str(seed), "--maxiter", "40", "--force"], check=True)
        trajectory = JointTrajectory.from_yaml(path)
        error = run(model, real, trajectory, work / f"{name}_bag", seed, trajectory.duration)
        print(f"{name}: simulated {trajectory.duration:.0f} s, tracking error {error:.2e} rad")
        runs[name] = work / f"{name}_bag"
    out = work / "puma560_identified.yaml"
    subprocess.run(CLI + ["identify", "puma560", str(runs["excitation"]),
                          "--validate", str(runs["validation"]), "-o", str(out), "--force"],
                   check=True)
    identified = RobotModel.from_yaml(out)
    rng = np.random.default_rng(3)
    q = rng.uniform(np.maximum(model.lower, -np.pi), np.minimum(model.upper, np.pi), (2000, 6))
    qd, qdd = rng.uniform(-1, 1, (2, 2000, 6))
    for label, m in (("file", model), ("identified", identified)):
        error = rnea(m, q, qd, qdd) - rnea(real, q, qd, qdd)
        print(f"{label:>10} model vs the real robot at 2000 random states: torque RMS per joint "
              f"{np.array2string(np.sqrt(np.mean(error ** 2, axis=0)), precision=3)} N m")
    print(f"files in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
