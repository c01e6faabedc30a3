"""
Speed of the task-space core: numeric inverse kinematics and the operational space model.

    .venv/bin/python bench/bench_task_space.py [--quick] [--targets N]

Inverse kinematics on the Panda: N (default 1,000) random reachable targets, the tool poses of
uniformly random configurations within the joint limits, solved one by one from the default start
(the middle of the joint ranges) with the default settings (full pose, 1e-6 m and 1e-6 rad,
100 iterations per attempt, 20 restarts); prints the success rate and the median, mean, p90 and
p99 time per solve, then the same targets solved as one batch (time per target).  Goal (issue
13): success >= 99 % and median < 2 ms.  Reference, when the optional `bench` extra is installed:
roboticstoolbox-python's C++ Levenberg-Marquardt solver ``ik_LM`` on the same DH model and
targets, with its default search settings (``slimit`` 100 searches of ``ilimit`` 30 iterations,
joint limits enforced) and tolerance 1e-12 on its residual E; its solutions are checked
with our criteria (1e-6 m, 1e-6 rad).

A baseline timed in the same run (one 6x6 numpy matrix-vector product, as in bench_core.py)
says how loaded the machine was.  Operational space model: microseconds per configuration,
single calls and one batch of 1,000 (Puma 560 and Panda), with the mass matrix alone as the
baseline timed in the same run, and Pinocchio (``computeAllTerms``: its mass matrix, nonlinear
effects and frame Jacobian; the same formulas 7.130-7.132 in numpy) as the reference when
installed.
"""
from __future__ import annotations

import argparse
import sys
import time
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reference_models import pinocchio_model, roboticstoolbox_robot  # noqa: E402
from robot_dynamics_ros.core import mass_matrix, RobotModel, tool_pose  # noqa: E402
from robot_dynamics_ros.core.task_space import (inverse_kinematics,  # noqa: E402
                                                operational_space_model)


def best_time(fn, number: int, repeat: int = 5) -> float:
    """Return seconds per call: the minimum over repeats (the least disturbed by other load)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def percentiles(seconds) -> str:
    ms = 1e3 * np.asarray(seconds)
    return (f"median {np.median(ms):.3f} ms, mean {ms.mean():.3f} ms, "
            f"p90 {np.percentile(ms, 90):.3f} ms, p99 {np.percentile(ms, 99):.3f} ms")


def bench_ik(count: int) -> None:
    model = RobotModel.named("panda")
    rng = np.random.default_rng(2024)
    Q = rng.uniform(model.lower, model.upper, (count, model.n))
    targets = tool_pose(model, Q)
    times, results = [], []
    for T in targets:
        start = time.perf_counter()
        results.append(inverse_kinematics(model, T))
        times.append(time.perf_counter() - start)
    success = np.array([r.success for r in results])
    iterations = np.array([r.iterations for r in results])
    attempts = np.array([r.attempts for r in results])
    print(f"IK, Panda, {count} random reachable targets, one by one:")
    print(f"  success {100 * success.mean():.1f} % ({(~success).sum()} failed); "
          f"{percentiles(times)}")
    print(f"  iterations: median {np.median(iterations):.0f}, mean {iterations.mean():.1f}; "
          f"solved by the first attempt: {100 * np.mean(attempts == 1):.1f} %")
    start = time.perf_counter()
    batch = inverse_kinematics(model, targets)
    elapsed = time.perf_counter() - start
    print(f"  as one batch: success {100 * batch.success.mean():.1f} %, "
          f"{1e3 * elapsed / count:.3f} ms per target ({elapsed:.2f} s in all)")

    robot = roboticstoolbox_robot(model)
    if robot is None:
        print("  (roboticstoolbox-python not installed: no reference)")
        return
    # rtb's ik_LM ignores a DHRobot's tool: it solves for the flange, T tool^-1 (the same problem).
    flange_targets = targets @ np.linalg.inv(model.tool)
    np.testing.assert_allclose(robot.fkine(Q[0]).A, flange_targets[0], atol=1e-12)
    times, success = [], []
    for T, F in zip(targets, flange_targets):
        start = time.perf_counter()
        solution = robot.ik_LM(F, ilimit=30, slimit=100, tol=1e-12, joint_limits=True)
        times.append(time.perf_counter() - start)
        ok = bool(solution.success)
        if ok:      # checked as ours: tool position 1e-6 m and orientation 1e-6 rad
            reached = robot.fkine(np.asarray(solution.q, dtype=float)).A @ model.tool
            err_p = np.linalg.norm(reached[:3, 3] - T[:3, 3])
            cos = (np.trace(T[:3, :3] @ reached[:3, :3].T) - 1) / 2
            ok = err_p <= 1e-6 and np.arccos(np.clip(cos, -1, 1)) <= 1e-6
        success.append(ok)
    print(f"  roboticstoolbox ik_LM (C++): success {100 * np.mean(success):.1f} %; "
          f"{percentiles(times)}")


def bench_osm(name: str, batch: int, quick: bool) -> None:
    model = RobotModel.named(name)
    rng = np.random.default_rng(0)
    q, qd = rng.uniform(-1, 1, model.n), rng.uniform(-1, 1, model.n)
    Q, QD = rng.uniform(-1, 1, (batch, model.n)), rng.uniform(-1, 1, (batch, model.n))
    reps = 100 if quick else 1000
    single = best_time(lambda: operational_space_model(model, q, qd), reps) * 1e6
    batched = best_time(lambda: operational_space_model(model, Q, QD), 1, 3) * 1e6 / batch
    base_single = best_time(lambda: mass_matrix(model, q), reps) * 1e6
    base_batch = best_time(lambda: mass_matrix(model, Q), 1, 3) * 1e6 / batch
    print(f"OSM, {name}: single {single:.1f} us ({single / base_single:.1f}x mass_matrix), "
          f"batch of {batch}: {batched:.2f} us per configuration "
          f"({batched / base_batch:.1f}x mass_matrix)")
    pm = pinocchio_model(model.rigid())
    if pm is None:
        print("  (Pinocchio not installed: no reference)")
        return
    import pinocchio as pin
    flange = pin.SE3(model.chain.flange[:3, :3].copy(), model.chain.flange[:3, 3].copy())
    fid = pm.addFrame(pin.Frame("tool", model.n, flange, pin.FrameType.OP_FRAME))
    data = pm.createData()
    rigid = model.rigid()

    def pinocchio_osm(q, qd):
        pin.computeAllTerms(pm, data, q, qd)
        M = np.triu(data.M) + np.triu(data.M, 1).T
        J = pin.getFrameJacobian(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)
        Jdot_qd = pin.getFrameClassicalAcceleration(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)
        Binv_Jt = np.linalg.solve(M, J.T)
        Lambda = np.linalg.inv(J @ Binv_Jt)
        J_bar_t = Lambda @ Binv_Jt.T
        g = pin.computeGeneralizedGravity(pm, data, q)
        mu = J_bar_t @ (data.nle - g) - Lambda @ Jdot_qd.vector
        return Lambda, mu, J_bar_t @ g

    Lambda, mu, p = pinocchio_osm(q, qd)
    ours = operational_space_model(rigid, q, qd)
    np.testing.assert_allclose(ours.Lambda, Lambda, rtol=1e-8, atol=1e-8 * np.abs(Lambda).max())
    np.testing.assert_allclose(ours.p, p, rtol=1e-8, atol=1e-8 * np.abs(p).max())
    np.testing.assert_allclose(ours.mu, mu, rtol=1e-7, atol=1e-7 * (1 + np.abs(mu).max()))
    ref_single = best_time(lambda: pinocchio_osm(q, qd), reps) * 1e6
    ref_batch = best_time(lambda: [pinocchio_osm(*x) for x in zip(Q, QD)], 1, 3) * 1e6 / batch
    print(f"  Pinocchio computeAllTerms + numpy (agreement checked): single {ref_single:.1f} us, "
          f"Python loop {ref_batch:.1f} us per configuration")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--quick", action="store_true", help="fewer targets and repetitions")
    parser.add_argument("--targets", type=int, default=None, help="IK targets (default 1000)")
    args = parser.parse_args(argv)
    A, x = np.eye(6), np.ones(6)
    baseline = best_time(lambda: A @ x, 20000) * 1e6
    print(f"baseline, one 6x6 numpy matrix-vector product: {baseline:.2f} us (the machine's "
          "speed in this run; about 1 us on a quiet one)")
    bench_ik(args.targets or (100 if args.quick else 1000))
    for name in ("puma560", "panda"):
        bench_osm(name, 1000, args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
