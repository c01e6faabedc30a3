"""
Loading URDF robots, and the speed of the models they give.

    python3 bench/bench_urdf.py [--quick]

The URDF: the shipped Panda written by ``robot-dynamics urdf`` (7 joints), plus what a real
Panda description carries: a fixed flange and hand, two finger joints (one a ``<mimic>``), a camera
and a TCP frame, and a collision-sphere frame fixed to every arm link: 21 links, 20 joints.
Timed (minimum over repeats, milliseconds):

* ``RobotModel.from_urdf`` (chain from ``base_link`` to ``panda_hand_tcp``: fingers locked and
  merged into link 7) against, in the same run, loading the Panda's YAML file
  (``RobotModel.named``) and Pinocchio's ``buildModelFromUrdf`` of the same file (the whole tree);
* the dynamics of the loaded model against the YAML Panda's: ``rnea`` single and batched (10,000
  configurations), ``gravity_torques``, ``mass_matrix`` (target: the converted model as fast as a
  YAML one, i.e. a ratio near 1).

Then the agreement with Pinocchio (the tests' oracle, ``test/urdf_samples.py``) over random URDF
trees: the worst relative error of each quantity (``--trees``, five states each).

Target (URDF issue): loading under 20 ms.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "support"))  # urdf_samples

from robot_dynamics_ros.core import RobotModel, gravity_torques, mass_matrix, rnea  # noqa: E402
from robot_dynamics_ros.core.model.urdf_export import urdf_text  # noqa: E402

TARGET_MS = 20.0
INERTIAL = ('<inertial><origin xyz="0 0 0.04" rpy="0.1 0 0"/><mass value="{m}"/><inertia '
            'ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{j}"/></inertial>')


def panda_with_gripper() -> str:
    """Return the Panda URDF with hand, fingers, camera, TCP and collision frames (21 links)."""
    text = urdf_text(RobotModel.named("panda"), "panda")
    extra = ['<link name="flange"/>',
             '<joint name="flange_joint" type="fixed"><parent link="tool0"/><child link="flange"/>'
             '<origin xyz="0 0 0" rpy="0 0 -0.7853981633974483"/></joint>',
             f'<link name="panda_hand">{INERTIAL.format(m=0.73, i=0.0025, j=0.0017)}</link>',
             '<joint name="hand_joint" type="fixed"><parent link="flange"/>'
             '<child link="panda_hand"/></joint>',
             '<link name="panda_hand_tcp"/>',
             '<joint name="tcp_joint" type="fixed"><parent link="panda_hand"/>'
             '<child link="panda_hand_tcp"/><origin xyz="0 0 0.1034"/></joint>',
             f'<link name="camera">{INERTIAL.format(m=0.1, i=1e-4, j=1e-4)}</link>',
             '<joint name="camera_joint" type="fixed"><parent link="panda_hand"/>'
             '<child link="camera"/><origin xyz="0.05 0 0.03" rpy="0 -1.2 0"/></joint>']
    for k, sign in ((1, 1), (2, -1)):
        mimic = '<mimic joint="finger_joint1"/>' if k == 2 else ""
        extra += [f'<link name="finger{k}">{INERTIAL.format(m=0.015, i=2e-6, j=1e-6)}</link>',
                  f'<joint name="finger_joint{k}" type="prismatic"><parent link="panda_hand"/>'
                  f'<child link="finger{k}"/><origin xyz="0 0 0.0584"/><axis xyz="0 {sign} 0"/>'
                  f'<limit lower="0" upper="0.04" effort="100" velocity="0.2"/>{mimic}</joint>']
    for i in range(1, 8):
        extra += [f'<link name="link{i}_sc"/>',
                  f'<joint name="link{i}_sc_joint" type="fixed"><parent link="link{i}"/>'
                  f'<child link="link{i}_sc"/><origin xyz="0 0 0.02"/></joint>']
    return text.replace("</robot>", "  " + "\n  ".join(extra) + "\n</robot>")


def best_ms(fn, number: int, repeat: int = 7) -> float:
    """Return milliseconds per call: the minimum over repeats (the least disturbed by load)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--quick", action="store_true",
                        help="fewer repetitions, 10 random URDFs")
    parser.add_argument("--trees", type=int, default=60, help="random URDFs for the agreement")
    args = parser.parse_args()
    number = 5 if args.quick else 20
    if args.quick:
        args.trees = min(args.trees, 10)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "panda_gripper.urdf"
        path.write_text(panda_with_gripper())
        text = path.read_text()
        links, joints = text.count("<link name="), text.count("<joint name=")
        model = RobotModel.from_urdf(path, tip_link="panda_hand_tcp")
        load = best_ms(lambda: RobotModel.from_urdf(path, tip_link="panda_hand_tcp"), number)
        load_yaml = best_ms(lambda: RobotModel.named("panda"), number)
        print(f"URDF: {links} links, {joints} joints, chain of {model.n} joints "
              f"(base_link -> panda_hand_tcp), {path.stat().st_size} bytes")
        print(f"RobotModel.from_urdf: {load:.2f} ms (target {TARGET_MS:g} ms: "
              f"{'met' if load < TARGET_MS else 'NOT met'}); "
              f"YAML Panda RobotModel.named: {load_yaml:.2f} ms")
        try:
            import pinocchio as pin
            pin_ms = best_ms(lambda: pin.buildModelFromUrdf(str(path)), number)
            print(f"Pinocchio {pin.__version__} buildModelFromUrdf (whole tree): {pin_ms:.2f} ms")
        except ImportError:
            print("Pinocchio not installed: no reference timing")
    yaml_model = RobotModel.named("panda")
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, 7))
    Q, QD, QDD = rng.uniform(-1, 1, (3, 10_000, 7))
    print(f"{'function':<28}{'URDF model':>12}{'YAML model':>12}{'ratio':>8}   (us per call / "
          "per configuration)")
    reps = 200 if args.quick else 2000
    for label, fn, count in (
            ("rnea", lambda m: rnea(m, q, qd, qdd), reps),
            ("gravity_torques", lambda m: gravity_torques(m, q), reps),
            ("mass_matrix", lambda m: mass_matrix(m, q), reps),
            ("rnea, batch of 10,000", lambda m: rnea(m, Q, QD, QDD), 3)):
        per = 10_000 if "batch" in label else 1
        ours = best_ms(lambda: fn(model), count) * 1e3 / per
        theirs = best_ms(lambda: fn(yaml_model), count) * 1e3 / per
        print(f"{label:<28}{ours:>12.3f}{theirs:>12.3f}{ours / theirs:>8.2f}")
    agreement(args.trees)
    return 0


def agreement(trees: int) -> None:
    """Print the worst relative error against Pinocchio of each quantity over random trees."""
    try:
        from urdf_samples import PinocchioChain, random_urdf, relative_error
    except ImportError as exc:
        print(f"no agreement check ({exc})")
        return
    from robot_dynamics_ros.core import coriolis_matrix, forward_dynamics, jacobian, tool_pose
    worst = {}
    for seed in range(trees):
        rng = np.random.default_rng(1000 + seed)
        sample = random_urdf(rng, n=int(rng.integers(1, 8)))
        locked = {k: float(rng.uniform(*v)) for k, v in sample.lockable.items()
                  if k not in sample.mimic}
        model = RobotModel.from_urdf(sample.text, tip_link=sample.tip, locked=locked).rigid()
        positions = dict(locked, **{k: m * locked[j] + o for k, (j, m, o) in sample.mimic.items()})
        oracle = PinocchioChain(sample.text, sample.chain, sample.tip, positions)
        low = np.where(np.isfinite(model.lower), model.lower, -2 * np.pi)
        high = np.where(np.isfinite(model.upper), model.upper, 2 * np.pi)
        for _ in range(5):
            q = rng.uniform(low, high)
            qd, qdd = rng.uniform(-2, 2, model.n), rng.uniform(-3, 3, model.n)
            tau = rnea(model, q, qd, qdd)
            for key, ours, theirs in (
                    ("rnea", tau, oracle.rnea(q, qd, qdd)),
                    ("gravity_torques", gravity_torques(model, q), oracle.gravity(q)),
                    ("mass_matrix", mass_matrix(model, q), oracle.mass_matrix(q)),
                    ("coriolis_matrix", coriolis_matrix(model, q, qd), oracle.coriolis(q, qd)),
                    ("forward_dynamics", forward_dynamics(model, q, qd, tau + 1.0),
                     oracle.forward_dynamics(q, qd, tau + 1.0)),
                    ("tool_pose", tool_pose(model, q), oracle.tool_pose(q)),
                    ("jacobian", jacobian(model, q), oracle.jacobian(q))):
                worst[key] = max(worst.get(key, 0.0), relative_error(ours, theirs))
    print(f"agreement with Pinocchio over {trees} random URDF trees x 5 states (worst relative "
          "error, to max(1, |value|)):")
    print("  " + ", ".join(f"{key} {value:.1e}" for key, value in worst.items()))


if __name__ == "__main__":
    sys.exit(main())
