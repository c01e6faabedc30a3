"""Speed and quality of trajectory scaling on a 6-joint Puma 560 path with 100 waypoints.

    .venv/bin/python bench/bench_scaling.py [--quick]

Path: config/trajectories/puma560_path.yaml (quintic waypoints, starts and ends at rest).
Prints
  * uniform scaling (seed 002, Sect. 7.7) of 1,000 samples: ms per call, scale factor;
  * time-optimal scaling including all setup: ms per call, duration, max torque overshoot over the
    returned trajectory resampled at 10x its point density (controller interpolation, full model;
    also after a ROS round trip, times as whole nanoseconds),
    and duration relative to the same solver on a 10x finer grid;
  * the same for toppra (optional `bench` extra: toppra, with Pinocchio's rnea for the rigid body
    plus this package's rotor/friction terms when pinocchio is installed, else this package's rnea),
    with its default output (its spline) resampled the same way.
Every time is also given as a ratio to a baseline timed in the same run (one batched rnea of
1,000 samples), so figures from a busy machine stay comparable.
Targets (issue): uniform <= 5 ms; time-optimal <= 20 ms including setup.
"""
from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robot_dynamics_ros.core import RobotModel, rnea  # noqa: E402
from robot_dynamics_ros.core import Limits, uniform_scaling  # noqa: E402
from robot_dynamics_ros.core import time_optimal_scaling  # noqa: E402
from robot_dynamics_ros.core import JointTrajectory  # noqa: E402

PATH = ROOT / "config" / "trajectories" / "puma560_path.yaml"


def best_ms(fn, number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e3


def overshoot(model, limits, sample, t0, t1, points):
    """Max torque excess over the limit, relative to the limit, at 10 samples per output point."""
    t = np.linspace(t0, t1, 10 * points)
    q, qd, qdd = sample(t)
    tau = rnea(model, q, qd, qdd)
    return float(np.maximum((tau - limits.effort_upper) / np.abs(limits.effort_upper),
                            (limits.effort_lower - tau) / np.abs(limits.effort_lower)).max())


def bench_toppra(model, traj, limits, repeat, rigid_only=False):
    try:
        import toppra as ta
        import toppra.algorithm as algo
        import toppra.constraint as constraint
    except ImportError:
        print("toppra: not installed (pip install '.[bench]' or `make bench-venv`): skipped")
        return None
    ta.setup_logging("WARNING")
    try:
        sys.path.insert(0, str(ROOT / "bench"))
        from reference_models import pinocchio_model
        pm = pinocchio_model(model)
    except Exception:  # noqa: BLE001 -- optional
        pm = None
    rigid = model.rigid()
    if pm is not None and rigid_only:
        import pinocchio as pin
        data = pm.createData()

        def inv_dyn(q, qd, qdd):
            return pin.rnea(pm, data, q, qd, qdd)
        which = "Pinocchio rnea, rigid model"
        model = rigid
    elif pm is not None:
        import pinocchio as pin
        data = pm.createData()

        def inv_dyn(q, qd, qdd):   # Pinocchio's rigid body + this package's rotors and friction
            return (pin.rnea(pm, data, q, qd, qdd) + rnea(model, q, qd, qdd) - rnea(rigid, q, qd, qdd))
        which = "Pinocchio rnea + this package's rotor/friction terms, full model"
    else:
        if rigid_only:
            model = rigid

        def inv_dyn(q, qd, qdd):
            return rnea(model, q, qd, qdd)
        which = "this package's rnea" + (", rigid model" if rigid_only else ", full model")
    s = traj.times
    path = ta.SplineInterpolator(s, traj.positions)
    lim = np.stack([limits.effort_lower, limits.effort_upper], axis=1)
    vlim = np.stack([-limits.velocity, limits.velocity], axis=1)

    def solve():
        pc_tau = constraint.JointTorqueConstraint(inv_dyn, lim, np.zeros(model.n))
        pc_vel = constraint.JointVelocityConstraint(vlim)
        instance = algo.TOPPRA([pc_vel, pc_tau], path)     # default output: ParametrizeSpline
        return instance.compute_trajectory(), len(instance.problem_data.gridpoints)
    result, points = solve()
    if result is None:
        print("toppra: failed to find a parametrisation")
        return None
    ms = best_ms(solve, 1, repeat)
    t1 = result.duration
    over = overshoot(model, limits, lambda t: (result(t), result(t, 1), result(t, 2)), 0.0, t1, max(points, 100))
    print(f"toppra ({which}): {ms:.1f} ms, duration {t1:.4f} s, max overshoot {100 * over:+.2f} %")
    return ms, t1, over


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeat = 3 if args.quick else 10
    model = RobotModel.named("puma560")
    traj = JointTrajectory.from_yaml(PATH)
    limits = Limits.from_model(model)
    print(f"path: {traj.num_points} waypoints, {model.n} joints, {traj.interpolation}, {traj.duration} s")

    Q, QD, QDD = traj.sample(np.linspace(0, traj.duration, 1000))
    base = best_ms(lambda: rnea(model, Q, QD, QDD), 5, repeat)
    print(f"baseline: one batched rnea of 1,000 samples = {base:.2f} ms")

    uni = uniform_scaling(model, traj, limits, samples=1000)
    ms_u = best_ms(lambda: uniform_scaling(model, traj, limits, samples=1000), 3, repeat)
    over_u = overshoot(model, limits, uni.trajectory.sample, 0.0, uni.duration, 1000)
    print(f"uniform:      {ms_u:6.2f} ms ({ms_u / base:.1f} x baseline; target 5 ms)  c = {uni.scale_factor:.4f}, "
          f"duration {uni.duration:.4f} s, max overshoot {100 * over_u:+.3f} %")

    opt = time_optimal_scaling(model, traj, limits)
    ms_t = best_ms(lambda: time_optimal_scaling(model, traj, limits), 1, repeat)
    out = opt.for_controller()
    over_t = overshoot(model, limits, out.sample, out.times[0], out.times[-1], out.num_points)
    fine = time_optimal_scaling(model, traj, limits, grid_steps=1500)
    # after a ROS round trip: times as whole nanoseconds (sec + nanosec, as ros_messages rounds them)
    sec = np.floor(out.times)
    ros = JointTrajectory(out.joint_names, sec + 1e-9 * np.round((out.times - sec) * 1e9), out.positions,
                          out.velocities)
    over_ros = overshoot(model, limits, ros.sample, ros.times[0], ros.times[-1], ros.num_points)
    print(f"time-optimal: {ms_t:6.2f} ms ({ms_t / base:.1f} x baseline; target 20 ms)  duration {opt.duration:.4f} s "
          f"({opt.duration / uni.duration:.3f} x uniform), {out.num_points} points, "
          f"max overshoot {100 * over_t:+.3f} % ({100 * over_ros:+.3f} % after a ROS round trip), vs 10x finer grid ({fine.duration:.4f} s): "
          f"{100 * (opt.duration / fine.duration - 1):+.2f} %")
    bench_toppra(model, traj, limits, repeat)
    rigid = model.rigid()
    opt_r = time_optimal_scaling(rigid, traj, limits)
    ms_r = best_ms(lambda: time_optimal_scaling(rigid, traj, limits), 1, repeat)
    out_r = opt_r.for_controller()
    over_r = overshoot(rigid, limits, out_r.sample, out_r.times[0], out_r.times[-1], out_r.num_points)
    print(f"rigid model (no rotors, no friction), as in the issue's reference setup:\n"
          f"time-optimal: {ms_r:6.2f} ms, duration {opt_r.duration:.4f} s, max overshoot {100 * over_r:+.3f} %")
    bench_toppra(model, traj, limits, repeat, rigid_only=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
