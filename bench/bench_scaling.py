"""
Speed and quality of trajectory scaling: ours against toppra 0.6.10 in the same run.

    .venv/bin/python bench/bench_scaling.py [--quick] [--repeat R]

Paths (each the same C2 cubic spline for both solvers: scipy's CubicSpline, not-a-knot, through
the waypoints, which is toppra's SplineInterpolator; ours gets it as a JointPath):

* the Puma 560 path, config/trajectories/puma560_path.yaml (100 waypoints, s = their times), on the
  rigid model (toppra's torque constraint cannot express viscous friction);
* three Panda paths through 6, 12 and 20 random via points within 60 % of the joint ranges
  (seeds 1, 2, 3; s = linspace(0, 1)), the 12-point one with effort limits x 0.55.

toppra settings: ``algo.TOPPRA([JointVelocityConstraint, JointTorqueConstraint(Interpolation
discretization)], path, solver_wrapper="seidel", parametrizer="ParametrizeConstAccel")`` with its
default grid (``propose_gridpoints``), inverse dynamics by Pinocchio's rnea; the reference
duration is the same on a 2000-point uniform grid.  Ours: ``time_optimal_scaling(model,
JointPath(...), dynamics=route.select(model))`` with its defaults (the inverse dynamics
chosen before the timing, as toppra's Pinocchio model is built before its).  Times are the best
of ``--repeat`` runs each, the two solvers taking turns, setup included (the generation of our
straight-line dynamics, tens of milliseconds once per model, is not in these times).

Overshoot (max over joints and samples of (|value| - limit) / limit, torque and velocity): the
output re-sampled at 10x its point density, uniformly in time:
* "JTC": as joint_trajectory_controller interpolates it (cubic Hermite through the output's
  positions and velocities: ours' ``for_controller()``; toppra's output sampled at its grid times);
* "exact": toppra's own ParametrizeConstAccel output evaluated directly (its recommended exact
  output, no controller interpolation).
Then the jerk-limited law (``topp/jerk_limited.py``, the third-order pass) on the same paths,
against the time-optimal one (duration and time, the time-optimal computation included in its
time; wall time and this process's CPU time, each the best of the runs in turns) and against
ruckig following the time-optimal output at 1 kHz (its duration, the torque it then needs, how
far it leaves the path: the largest distance of its positions from the path densely sampled, how
far it falls behind the reference's position at the same time, and its error at the end), each
row with the load average when it was measured (``--jerk-only``: this table alone); and the
Puma trajectory with a tool speed limit.
Also printed: uniform scaling on the Puma trajectory and a baseline (one batched rnea of 1,000
Puma samples) so figures from a busy machine stay comparable; and (``--growth``) how the time and
the output grow with the waypoints: the 6-via-point Panda path's spline sampled at 100 to 5,000
waypoints, each a JointPath (the spline through the samples: the same curve to interpolation
accuracy), both solvers.
"""
from __future__ import annotations

import argparse
import sys
import time
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from reference_models import pinocchio_model  # noqa: E402
from robot_dynamics_ros.core import JointPath, JointTrajectory, Limits, RobotModel  # noqa: E402
from robot_dynamics_ros.core import rnea, time_optimal_scaling, uniform_scaling  # noqa: E402
from robot_dynamics_ros.core.algorithms.route import select  # noqa: E402

PUMA_PATH = ROOT / "config" / "trajectories" / "puma560_path.yaml"
REFERENCE_GRID = 2000


def best_ms(fn, repeat: int) -> float:
    return min(timeit.repeat(fn, number=1, repeat=repeat)) * 1e3


def best_of_alternating_ms(first, second, repeat: int, clock=timeit.default_timer):
    """
    Return the best times (ms) of ``first`` and ``second`` run in turns, ``repeat`` each.

    In turns, so that a change of the machine's load during the run weighs on both alike.
    ``clock``: wall time, or ``time.process_time`` (this process's CPU time: what the
    computation costs, without the time other processes take the core from it).
    """
    times = ([], [])
    for _ in range(repeat):
        for fn, out in zip((first, second), times):
            start = clock()
            fn()
            out.append(clock() - start)
    return min(times[0]) * 1e3, min(times[1]) * 1e3


def overshoot(model, limits, q, qd, qdd):
    """Return the worst torque and velocity excess over the limits, relative to the limit."""
    tau = rnea(model, q, qd, qdd)
    torque = np.maximum((tau - limits.effort_upper) / np.abs(limits.effort_upper),
                        (limits.effort_lower - tau) / np.abs(limits.effort_lower)).max()
    return float(torque), float((np.abs(qd) / limits.velocity - 1.0).max())


def resampled(traj: JointTrajectory):
    """Return (q, qd, qdd) of ``traj`` at 10x its point density, uniformly in time."""
    return traj.sample(np.linspace(traj.times[0], traj.times[-1], 10 * traj.num_points))


def panda_case(vias: int, seed: int, effort_margin: float):
    model = RobotModel.named("panda")
    rng = np.random.default_rng(seed)
    mid, half = 0.5 * (model.lower + model.upper), 0.5 * (model.upper - model.lower)
    waypoints = mid + 0.6 * half * rng.uniform(-1.0, 1.0, (vias, model.n))
    name = f"Panda, {vias} via points" + (f", effort x {effort_margin}" if effort_margin < 1
                                          else "")
    return name, model, np.linspace(0.0, 1.0, vias), waypoints, Limits.from_model(model,
                                                                                  effort_margin)


def cases(quick: bool):
    puma = RobotModel.named("puma560").rigid()
    traj = JointTrajectory.from_yaml(PUMA_PATH)
    out = [("Puma 560 path (rigid model)", puma, traj.times, traj.positions,
            Limits.from_model(puma))]
    out += [panda_case(6, 1, 1.0), panda_case(12, 2, 0.55)]
    if not quick:
        out.append(panda_case(20, 3, 1.0))
    return out


def toppra_solver(model, s, waypoints, limits, gridpoints=None):
    """Return a function solving with toppra (settings in the module docstring)."""
    import pinocchio as pin
    import toppra as ta
    import toppra.algorithm as algo
    import toppra.constraint as constraint
    ta.setup_logging("WARNING")
    pm = pinocchio_model(model)
    data = pm.createData()

    def inv_dyn(q, qd, qdd):
        return pin.rnea(pm, data, q, qd, qdd)
    effort = np.stack([limits.effort_lower, limits.effort_upper], axis=1)
    velocity = np.stack([-limits.velocity, limits.velocity], axis=1)

    def solve():
        path = ta.SplineInterpolator(s, waypoints)
        torque = constraint.JointTorqueConstraint(
            inv_dyn, effort, np.zeros(model.n),
            discretization_scheme=constraint.DiscretizationType.Interpolation)
        instance = algo.TOPPRA([constraint.JointVelocityConstraint(velocity), torque], path,
                               gridpoints=gridpoints, solver_wrapper="seidel",
                               parametrizer="ParametrizeConstAccel")
        return instance.compute_trajectory(), instance.problem_data.gridpoints
    return solve


def run_case(name, model, s, waypoints, limits, repeat):
    row = {"name": name}
    solve = toppra_solver(model, s, waypoints, limits)
    result, grid = solve()
    path = JointPath(model.joint_names, waypoints, s)
    dynamics = select(model)          # (as toppra's inverse dynamics: chosen before the timing)
    ours = time_optimal_scaling(model, path, limits, dynamics=dynamics)
    row["toppra_ms"], row["ours_ms"] = best_of_alternating_ms(
        solve, lambda: time_optimal_scaling(model, path, limits, dynamics=dynamics), repeat)
    row["toppra_duration"] = result.duration
    row["toppra_points"] = len(grid)
    t = np.linspace(0.0, result.duration, 10 * len(grid))
    row["toppra_exact"] = overshoot(model, limits, result(t), result(t, 1), result(t, 2))
    t_grid = np.concatenate([[0.0], np.cumsum(np.diff(result._ts))])   # its grid times
    jtc = JointTrajectory(model.joint_names, t_grid, result(t_grid), result(t_grid, 1))
    row["toppra_jtc"] = overshoot(model, limits, *resampled(jtc))
    reference, _ = toppra_solver(model, s, waypoints, limits,
                                 np.linspace(s[0], s[-1], REFERENCE_GRID))()
    row["reference"] = reference.duration
    row["ours_duration"] = ours.duration
    out = ours.for_controller()
    row["ours_points"] = out.num_points
    row["ours_jtc"] = overshoot(model, limits, *resampled(out))
    return row


def growth(repeat: int) -> None:
    """Print time and output size against the number of waypoints of one path (module doc)."""
    _, model, s6, vias, limits = panda_case(6, 1, 1.0)
    curve = JointPath(model.joint_names, vias, s6)
    dynamics = select(model)
    print("\n| waypoints | toppra ms | ours ms | speed-up | toppra grid points | "
          "ours output points | ours duration |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for points in (100, 500, 1000, 2000, 5000):
        s = np.linspace(0.0, 1.0, points)
        waypoints = curve.sample(s)[0]
        solve = toppra_solver(model, s, waypoints, limits)
        _, grid = solve()
        path = JointPath(model.joint_names, waypoints, s)
        ours = time_optimal_scaling(model, path, limits, dynamics=dynamics)
        toppra_ms, ours_ms = best_of_alternating_ms(
            solve, lambda: time_optimal_scaling(model, path, limits, dynamics=dynamics), repeat)
        print(f"| {points} | {toppra_ms:.1f} | {ours_ms:.1f} | {toppra_ms / ours_ms:.2f} x | "
              f"{len(grid)} | {ours.for_controller().num_points} | {ours.duration:.4f} s |",
              flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two Panda paths, 3 repeats")
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--growth", action="store_true",
                        help="also time 100 to 5,000 waypoints of one path")
    parser.add_argument("--jerk-only", action="store_true",
                        help="only the jerk-limited table (the paths of the toppra table)")
    args = parser.parse_args()
    repeat = args.repeat or (3 if args.quick else 7)
    if args.jerk_only:
        jerk_section(args.quick, repeat)
        return 0
    model = RobotModel.named("puma560")
    traj = JointTrajectory.from_yaml(PUMA_PATH)
    Q, QD, QDD = traj.sample(np.linspace(0, traj.duration, 1000))
    base = min(timeit.repeat(lambda: rnea(model, Q, QD, QDD), number=5, repeat=repeat)) / 5 * 1e3
    print(f"baseline: one batched rnea of 1,000 Puma samples = {base:.2f} ms")
    uni = uniform_scaling(model, traj)
    ms = best_ms(lambda: uniform_scaling(model, traj), repeat)
    print(f"uniform scaling, Puma trajectory (full model, 1,000 samples): {ms:.2f} ms "
          f"({ms / base:.1f} x baseline), c = {uni.scale_factor:.4f}, "
          f"duration {uni.duration:.4f} s")
    dynamics = select(model)
    full = time_optimal_scaling(model, traj, dynamics=dynamics)
    ms = best_ms(lambda: time_optimal_scaling(model, traj, dynamics=dynamics), repeat)
    print(f"time-optimal, Puma trajectory (full model: rotors, friction): {ms:.1f} ms "
          f"({ms / base:.1f} x baseline), duration {full.duration:.4f} s "
          f"({full.duration / uni.duration:.3f} x uniform)")
    try:
        import toppra  # noqa: F401
        import pinocchio  # noqa: F401
    except ImportError:
        print("toppra / pinocchio not installed (`make bench-venv`): comparison skipped")
        return 0
    print("\n| path | toppra ms | ours ms | speed-up | toppra duration (grid points) | "
          "ours duration (points) | toppra 2000-grid | ours vs 2000-grid | overshoot torque / "
          "velocity: toppra exact | toppra JTC | ours JTC |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for case in cases(args.quick):
        r = run_case(*case, repeat)

        def pct(pair):
            return f"{100 * pair[0]:+.3f} % / {100 * pair[1]:+.3f} %"
        print(f"| {r['name']} | {r['toppra_ms']:.1f} | {r['ours_ms']:.1f} | "
              f"{r['toppra_ms'] / r['ours_ms']:.2f} x | {r['toppra_duration']:.4f} s "
              f"({r['toppra_points']}) | {r['ours_duration']:.4f} s ({r['ours_points']}) | "
              f"{r['reference']:.4f} s | "
              f"{100 * (r['ours_duration'] / r['reference'] - 1):+.2f} % | "
              f"{pct(r['toppra_exact'])} | {pct(r['toppra_jtc'])} | {pct(r['ours_jtc'])} |",
              flush=True)
    jerk_section(args.quick, repeat)
    tool_speed_line(repeat)
    if args.growth:
        growth(max(3, repeat // 2))
    return 0


JERK_DIVISOR = 20     # bench jerk limits: each joint's peak acceleration in 1/20 of the motion


def ruckig_follow(model, reference: JointTrajectory, limits, acceleration, jerk, dt=1e-3):
    """
    Follow ``reference`` with ruckig at 1 kHz (its target: the reference's next state).

    What a user does to smooth a time-optimal trajectory after the fact: an online jerk-limited
    generator (ruckig, Berscheid & Kroger 2021) tracking it within velocity, acceleration and
    jerk limits.  Returns (duration, q, qd, qdd at every cycle, seconds taken).
    """
    from ruckig import InputParameter, OutputParameter, Result, Ruckig
    n = model.n
    otg, inp, out = Ruckig(n, dt), InputParameter(n), OutputParameter(n)
    inp.max_velocity = limits.velocity.tolist()
    inp.max_acceleration = acceleration.tolist()
    inp.max_jerk = jerk.tolist()
    inp.current_position = reference.positions[0].tolist()
    inp.current_velocity, inp.current_acceleration = [0.0] * n, [0.0] * n
    T, vmax, zero = reference.times[-1], limits.velocity, [0.0] * n
    steps = int(np.ceil(T / dt))
    targets = reference.sample(np.minimum(dt * np.arange(1, steps + 1), T))
    states, start = [], timeit.default_timer()
    for k in range(10 * steps):                       # bounded: at most 10 x the reference
        i = min(k, steps - 1)
        inp.target_position = targets[0][i].tolist()
        inp.target_velocity = np.clip(targets[1][i], -vmax, vmax).tolist()   # (within 0.1 %)
        inp.target_acceleration = zero       # (with the reference's, ruckig foresees overshoots
        #                                       of its velocity limit and refuses)
        result = otg.update(inp, out)
        states.append((out.new_position, out.new_velocity, out.new_acceleration))
        out.pass_to_input(inp)
        if k >= steps - 1 and result == Result.Finished:
            break
    taken = timeit.default_timer() - start
    q, qd, qdd = (np.array(v) for v in zip(*states))
    return len(states) * dt, q, qd, qdd, taken, targets


def usage(model, limits, q, qd, qdd):
    """Return the largest torque, velocity and acceleration used (fractions of the limits)."""
    tau = rnea(model, q, qd, qdd)
    effort = np.where(tau >= 0, tau / limits.effort_upper, tau / limits.effort_lower).max()
    acc = (np.abs(qdd) / limits.acceleration).max() if np.isfinite(limits.acceleration).all() \
        else float("nan")
    return float(effort), float((np.abs(qd) / limits.velocity).max()), float(acc)


def jerk_section(quick: bool, repeat: int) -> None:
    """Print the jerk-limited law against the time-optimal one and against ruckig."""
    import os
    from robot_dynamics_ros.core.trajectories.limits import with_jerk
    from robot_dynamics_ros.core.trajectories.topp import jerk_limited
    try:
        import ruckig  # noqa: F401
    except ImportError:
        ruckig = None
    print(f"\njerk limits: each joint's peak acceleration of the time-optimal law reached in "
          f"1/{JERK_DIVISOR} of its duration (binding); ruckig follows the time-optimal output "
          "at 1 kHz within the same velocity, jerk and (its peak) acceleration limits, its "
          "torque re-checked after (it knows no dynamics)")
    print("\n| path (load) | time-optimal ms | jerk-limited ms (with it) | "
          "x time-optimal time: wall / CPU | duration: optimal / jerk-limited | "
          "re-check torque / velocity / jerk usage | "
          "ruckig duration (x optimal) | ruckig peak torque usage | ruckig from the path / behind "
          "the reference at the same time / at the end (rad) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, model, s, waypoints, limits in cases(quick)[:1 if quick else None]:
        path = JointPath(model.joint_names, waypoints, s)
        dynamics = select(model)
        optimal = time_optimal_scaling(model, path, limits, dynamics=dynamics)
        peak = np.abs(optimal.trajectory.accelerations).max(axis=0)
        jerk_limits = with_jerk(limits, peak / (optimal.duration / JERK_DIVISOR))
        smooth = jerk_limited.jerk_limited_scaling(model, path, jerk_limits,
                                                   dynamics=dynamics, optimal=optimal)
        pair = (lambda: time_optimal_scaling(model, path, limits, dynamics=dynamics),
                lambda: jerk_limited.jerk_limited_scaling(model, path, jerk_limits,
                                                          dynamics=dynamics))
        opt_ms, both_ms = best_of_alternating_ms(*pair, repeat)
        opt_cpu, both_cpu = best_of_alternating_ms(*pair, repeat, clock=time.process_time)
        check = jerk_limited.recheck(model, smooth.for_controller(), jerk_limits, density=20)
        line = (f"| {name} ({os.getloadavg()[0]:.1f}) | {opt_ms:.1f} | {both_ms:.1f} | "
                f"{both_ms / opt_ms:.2f} x / {both_cpu / opt_cpu:.2f} x | "
                f"{optimal.duration:.4f} s / {smooth.duration:.4f} s "
                f"({100 * (smooth.duration / optimal.duration - 1):+.1f} %) | "
                f"{check['torque']:.4f} / {check['velocity']:.4f} / {check['jerk']:.4f} |")
        if ruckig is None:
            print(line + " ruckig not installed | | |", flush=True)
            continue
        duration, q, qd, qdd, _, targets = ruckig_follow(
            model, optimal.for_controller(), limits, peak, jerk_limits.jerk)
        torque = usage(model, limits, q, qd, qdd)[0]
        m = min(len(q), len(targets[0]))
        lag = float(np.abs(q[:m] - targets[0][:m]).max())
        print(line + f" {duration:.4f} s ({duration / optimal.duration:.3f} x) | {torque:.3f} | "
              f"{path_distance(path, q):.4f} / {lag:.4f} / "
              f"{float(np.abs(q[-1] - waypoints[-1]).max()):.1e} |", flush=True)


def path_distance(path, q, samples: int = 200_001) -> float:
    """
    Return the largest distance (rad, joint-space 2-norm) of the states ``q`` from ``path``.

    The distance to the nearest of ``samples`` points of the path, uniform in s (their spacing,
    about 1e-5 of the path's length, bounds the error).
    """
    from scipy.spatial import cKDTree
    dense = path.sample(np.linspace(path.knots[0], path.knots[-1], samples))[0]
    return float(cKDTree(dense).query(q)[0].max())


def tool_speed_line(repeat: int) -> None:
    """Print the Puma path with a tool speed limit (half its free peak): time and re-check."""
    from robot_dynamics_ros.core.algorithms.kinematics import end_effector_twist
    from robot_dynamics_ros.core.trajectories.topp.from_parameters import constraint_list
    model = RobotModel.named("puma560")
    traj = JointTrajectory.from_yaml(PUMA_PATH)
    limits, dynamics = Limits.from_model(model), select(model)
    free = time_optimal_scaling(model, traj, limits, dynamics=dynamics).for_controller()
    q, qd, _ = resampled(free)
    bound = 0.5 * np.linalg.norm(end_effector_twist(model, q, qd)[:, :3], axis=1).max()
    constraints = constraint_list(limits, tool_speed=bound)
    result = time_optimal_scaling(model, traj, constraints, dynamics=dynamics)
    free_ms, ms = best_of_alternating_ms(
        lambda: time_optimal_scaling(model, traj, limits, dynamics=dynamics),
        lambda: time_optimal_scaling(model, traj, constraints, dynamics=dynamics), repeat)
    out = result.for_controller()
    q, qd, _ = out.sample(np.linspace(out.times[0], out.times[-1], 50 * out.num_points))
    speed = np.linalg.norm(end_effector_twist(model, q, qd)[:, :3], axis=1).max()
    print(f"\ntool speed limit {bound:.3f} m/s (half the free peak), Puma trajectory (full "
          f"model): {ms:.1f} ms ({ms / free_ms:.2f} x without it, {free_ms:.1f} ms), duration "
          f"{result.duration:.4f} s ({result.duration / free.duration:.3f} x), peak tool speed "
          f"{100 * (speed / bound - 1):+.3f} % of the limit at 50 samples per interval")


if __name__ == "__main__":
    sys.exit(main())
