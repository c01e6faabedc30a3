"""
Speed of the generated dynamics code: microseconds per call from Python, single configuration.

    python3 bench/bench_codegen.py [--quick]

For the Puma 560 and the Panda: the generated rnea / gravity_torques / mass_matrix (the raw
generated functions with numpy-array and list arguments, and the checked generated_model() wrapper)
against the core's functions timed in the same run, and, when the optional
`bench` extra is installed, Pinocchio (pin.rnea, computeGeneralizedGravity, crba) and
roboticstoolbox-python (its C-backed rne).  Agreement with the core is checked before timing.
Target (codegen issue): the generated Puma 560 rnea at most 10 us per call.
"""
from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reference_models import pinocchio_model, roboticstoolbox_robot  # noqa: E402
from robot_dynamics_ros.codegen import generated_model  # noqa: E402
from robot_dynamics_ros.core import RobotModel, gravity_torques, mass_matrix, rnea  # noqa: E402

TARGET_US = 10.0


def per_call_us(fn, number: int, repeat: int = 5) -> float:
    """Microseconds per call: the minimum over repeats (the least disturbed by other load)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def bench_robot(name: str, reps: int) -> dict:
    model = RobotModel.named(name)
    rigid = model.rigid()
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, model.n) for _ in range(3))
    ql, qdl, qddl = q.tolist(), qd.tolist(), qdd.tolist()
    rows = {}
    for label, m in (("full model", model), ("rigid", rigid)):
        dyn = generated_model(m)
        raw = dyn.module
        tau = rnea(m, q, qd, qdd)
        np.testing.assert_allclose(raw.rnea(q, qd, qdd), tau, rtol=0,
                                   atol=1e-12 * max(1, abs(tau).max()))
        np.testing.assert_allclose(raw.mass_matrix(q), mass_matrix(m, q), rtol=0, atol=1e-12)
        rows[f"rnea ({label})"] = {
            "generated": per_call_us(lambda: raw.rnea(q, qd, qdd), reps),
            "generated, lists": per_call_us(lambda: raw.rnea(ql, qdl, qddl), reps),
            "generated_model().rnea (checked)": per_call_us(lambda: dyn.rnea(q, qd, qdd), reps),
            "core": per_call_us(lambda: rnea(m, q, qd, qdd), reps // 10),
            "ops": dyn.counts["rnea"]}
    dyn = generated_model(model)
    raw = dyn.module
    rows["gravity_torques"] = {"generated": per_call_us(lambda: raw.gravity_torques(q), reps),
                               "core": per_call_us(lambda: gravity_torques(model, q), reps // 10),
                               "ops": dyn.counts["gravity_torques"]}
    rows["mass_matrix"] = {"generated": per_call_us(lambda: raw.mass_matrix(q), reps),
                           "core": per_call_us(lambda: mass_matrix(model, q), reps // 10),
                           "ops": dyn.counts["mass_matrix"]}
    pm = pinocchio_model(model)
    if pm is not None:
        import pinocchio as pin
        data = pm.createData()
        rows["rnea (rigid)"]["pinocchio"] = per_call_us(lambda: pin.rnea(pm, data, q, qd, qdd),
                                                        reps)
        rows["gravity_torques"]["pinocchio (rigid)"] = per_call_us(
            lambda: pin.computeGeneralizedGravity(pm, data, q), reps)
        rows["mass_matrix"]["pinocchio (rigid)"] = per_call_us(lambda: pin.crba(pm, data, q), reps)
    robot = roboticstoolbox_robot(model)
    if robot is not None:
        rows["rnea (rigid)"]["roboticstoolbox"] = per_call_us(lambda: robot.rne(q, qd, qdd),
                                                              reps // 10)
    return model, rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    reps = 2000 if args.quick else 20000
    A, x = np.random.rand(6, 6), np.random.rand(6)
    baseline = per_call_us(lambda: A @ x, 20000)
    print(f"baseline: one 6x6 numpy matrix-vector product = {baseline:.3f} us")
    for name in ("puma560", "panda"):
        model, rows = bench_robot(name, reps)
        print(f"\n{model.name} ({model.n} joints): us per call (x baseline); "
              "core/generated = speed-up")
        for key, r in rows.items():
            gen = r["generated"]
            cells = [f"generated {gen:7.2f} ({gen / baseline:4.1f}x)"]
            cells += [f"{lib} {t:7.2f} (gen/it {gen / t:4.2f})" for lib, t in r.items()
                      if lib not in ("generated", "ops")]
            print(f"  {key:<20}" + "   ".join(cells) + f"   [{r['ops']}]")
            if "core" in r:
                print(f"  {'':<20}core/generated = {r['core'] / gen:.1f}")
        if name == "puma560":
            t = rows["rnea (full model)"]["generated"]
            print(f"target: generated Puma 560 rnea {t:.2f} us per call "
                  f"(<= {TARGET_US:g} us: {'met' if t <= TARGET_US else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
