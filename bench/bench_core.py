"""
Speed of the dynamics core: microseconds per call and per configuration in a batch of 10,000.

    .venv/bin/python bench/bench_core.py [--quick]

Prints, for the Puma 560 (6 joints) and the Panda (7 joints): single calls of rnea, mass_matrix,
gravity_torques, forward_dynamics, and the same per configuration for a batch.  Every figure is
also given as a ratio to a baseline timed in the same run (one 6x6 numpy matrix-vector product, so
figures from a busy machine stay comparable), and, when the optional `bench` extra is installed,
side by side with Pinocchio (pin.rnea, crba, computeGeneralizedGravity, aba; called in a Python
loop for batches) and roboticstoolbox-python (its C-backed rne, batched).  Agreement with both is
checked on the rigid-body model.
Targets (issue 2): single rnea <= 40 us; batched rnea <= 1 us per configuration.
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
from robot_dynamics_ros.core import (RobotModel, forward_dynamics, gravity_torques,  # noqa: E402
                                     mass_matrix, rnea)


def best_time(fn, number: int, repeat: int = 5) -> float:
    """Seconds per call: the minimum over repeats (the least disturbed by other load)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def bench_robot(name: str, batch: int, quick: bool):
    model = RobotModel.named(name)
    rigid = model.rigid()
    n = model.n
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, n) for _ in range(3))
    Q, QD, QDD = (rng.uniform(-1, 1, (batch, n)) for _ in range(3))
    tau, TAU = rnea(model, q, qd, qdd), rnea(model, Q, QD, QDD)
    reps = 200 if quick else 2000
    rows = {}
    ours = {
        "rnea": (lambda: rnea(model, q, qd, qdd), lambda: rnea(model, Q, QD, QDD)),
        "mass_matrix": (lambda: mass_matrix(model, q), lambda: mass_matrix(model, Q)),
        "gravity_torques": (lambda: gravity_torques(model, q), lambda: gravity_torques(model, Q)),
        "forward_dynamics": (lambda: forward_dynamics(model, q, qd, tau),
                             lambda: forward_dynamics(model, Q, QD, TAU)),
    }
    for key, (single, batched) in ours.items():
        rows[key] = {"ours": (best_time(single, reps) * 1e6,
                              best_time(batched, 1, 3) * 1e6 / batch)}

    pm = pinocchio_model(model)
    if pm is not None:
        import pinocchio as pin
        data = pm.createData()
        np.testing.assert_allclose(pin.rnea(pm, data, q, qd, qdd), rnea(rigid, q, qd, qdd),
                                   atol=1e-9)
        M = pin.crba(pm, data, q)
        np.testing.assert_allclose(np.triu(M) + np.triu(M, 1).T, mass_matrix(rigid, q),
                                   atol=1e-9)
        tau_r = rnea(rigid, q, qd, qdd)
        calls = {
            "rnea": (lambda: pin.rnea(pm, data, q, qd, qdd),
                     lambda: [pin.rnea(pm, data, *x) for x in zip(Q, QD, QDD)]),
            "mass_matrix": (lambda: pin.crba(pm, data, q),
                            lambda: [pin.crba(pm, data, x) for x in Q]),
            "gravity_torques": (lambda: pin.computeGeneralizedGravity(pm, data, q),
                                lambda: [pin.computeGeneralizedGravity(pm, data, x) for x in Q]),
            "forward_dynamics": (lambda: pin.aba(pm, data, q, qd, tau_r),
                                 lambda: [pin.aba(pm, data, *x) for x in zip(Q, QD, TAU)]),
        }
        for key, (single, batched) in calls.items():
            rows[key]["pinocchio"] = (best_time(single, reps) * 1e6,
                                      best_time(batched, 1, 3) * 1e6 / batch)

    robot = roboticstoolbox_robot(model)
    if robot is not None:
        np.testing.assert_allclose(robot.rne(q, qd, qdd), rnea(rigid, q, qd, qdd), atol=1e-9)
        np.testing.assert_allclose(robot.inertia(q), mass_matrix(rigid, q), atol=1e-9)
        rows["rnea"]["roboticstoolbox"] = (
            best_time(lambda: robot.rne(q, qd, qdd), reps // 4) * 1e6,
            best_time(lambda: robot.rne(Q, QD, QDD), 1, 3) * 1e6 / batch)
        rows["gravity_torques"]["roboticstoolbox"] = (
            best_time(lambda: robot.gravload(q), reps // 4) * 1e6,
            best_time(lambda: robot.gravload(Q), 1, 3) * 1e6 / batch)
    return model, rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer repetitions and a batch of 1,000")
    args = parser.parse_args(argv)
    batch = 1000 if args.quick else 10_000
    A, x = np.random.rand(6, 6), np.random.rand(6)
    baseline = best_time(lambda: A @ x, 20000) * 1e6
    print(f"baseline: one 6x6 numpy matrix-vector product = {baseline:.3f} us")
    for name in ("puma560", "panda"):
        model, rows = bench_robot(name, batch, args.quick)
        print(f"\n{model.name} ({model.n} joints): us per call, and us per configuration in a "
              f"batch of {batch}; (x baseline), (ours/it) = our time over the library's")
        libs = sorted({lib for r in rows.values() for lib in r} - {"ours"})
        print(f"{'function':<18}{'ours single':>22}{'ours batch':>22}"
              + "".join(f"{lib + ' single':>30}{lib + ' batch':>28}" for lib in libs))
        for key, r in rows.items():
            s0, b0 = r["ours"]
            cells = f"{s0:>12.2f} ({s0 / baseline:>5.1f}x){b0:>12.3f} ({b0 / baseline:>5.2f}x)"
            for lib in libs:
                if lib in r:
                    s, b = r[lib]
                    cells += (f"{s:>12.2f} (ours/it {s0 / s:>5.1f})"
                              f"{b:>12.3f} (ours/it {b0 / b:>4.2f})")
                else:
                    cells += f"{'-':>30}{'-':>28}"
            print(f"{key:<18}{cells}")
        s, b = rows["rnea"]["ours"]
        verdict = (("met" if b <= 1 else "MISSED") if batch == 10_000
                   else "the target is for a batch of 10,000")
        print(f"targets: single rnea {s:.1f} us (<= 40: {'met' if s <= 40 else 'MISSED'}), "
              f"batched rnea {b:.3f} us/config in a batch of {batch} (<= 1: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
