"""
Speed and accuracy of the simulator (robot_dynamics_ros.core.simulate).

    python3 bench/bench_simulation.py [--quick]

* Real-time factor (simulated seconds per wall-clock second) at 1 kHz with RK4 on the Puma 560,
  full model (rotors, viscous and stick-slip Coulomb friction), from the public call
  ``simulate(model, q0, qd0, duration, torque=...)`` as the docs show it (the steps in the core's
  compiled kernels, the same for every robot: a fixed torque's run in one call, one call per
  step under a controller), the same run as plain Python
  (``compiled=False``), and the rigid model;
  next to a loop of Pinocchio's ``aba`` (the rigid model: Pinocchio has no rotor gyroscopic
  terms) with the same classical RK4 written on numpy arrays, Pinocchio's recommended Python
  usage, and a loop of MuJoCo's ``mj_step`` with its RK4 on the rigid Puma read from the package's
  URDF export, timed in the same run.  The rigid runs are checked to agree.  Target (issues 22,
  27): real-time factor >= 50 in every phase, moving and while friction holds joints.
* Start-up: building a ``Simulator`` of the Puma in a fresh process (compiling the core's kernels
  with numba, or loading them from the disk cache), with an empty cache (cold), again (warm),
  and without compiling.
* Energy drift per simulated second of an unforced, frictionless RK4 run at 1 kHz (2 s) on each
  shipped robot.
* Agreement with scipy's solve_ivp (DOP853, rtol = atol = 1e-12, on the core's forward dynamics)
  after 1 s on a random 6-joint robot with full inertia tensors and rotors (target 1e-6 rad).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "support"))

from random_robots import random_robot_dict, random_state  # noqa: E402
from reference_models import pinocchio_model  # noqa: E402
from robot_dynamics_ros.core import (RobotModel, forward_dynamics, gravity_torques,  # noqa: E402
                                     shipped_robots, simulate)
from robot_dynamics_ros.core.simulation import kinetic_energy, mechanical_energy  # noqa: E402

TARGET_RTF = 50.0
Q0 = np.array([0.0, 0.6, -1.2, 0.3, 0.6, 0.1])
QD0 = np.array([0.5, -0.4, 0.6, 1.0, -0.8, 1.2])


def real_time_factors(runs: dict, repeat: int) -> dict:
    """
    Return simulated seconds per wall-clock second of each run: the best of ``repeat`` timings.

    ``runs`` maps a label to (run, duration); the runs take turns (round robin), so on a shared,
    noisy machine every row, and so every ratio between rows, sees the same spread of loads.
    """
    best = {label: float("inf") for label in runs}
    for _ in range(repeat):
        for label, (run, duration) in runs.items():
            start = time.perf_counter()
            run(duration)
            best[label] = min(best[label], time.perf_counter() - start)
    return {label: duration / best[label] for label, (_, duration) in runs.items()}


def pinocchio_rk4(pm, q0, qd0, duration: float, dt: float = 1e-3):
    """Run the classical RK4 on pinocchio.aba (numpy arrays), zero torque; return q, qd."""
    import pinocchio as pin
    data = pm.createData()
    tau = np.zeros(pm.nv)
    q, v = q0.copy(), qd0.copy()
    half, sixth = 0.5 * dt, dt / 6.0
    for _ in range(int(round(duration / dt))):
        a1 = pin.aba(pm, data, q, v, tau).copy()
        v2 = v + half * a1
        a2 = pin.aba(pm, data, q + half * v, v2, tau).copy()
        v3 = v + half * a2
        a3 = pin.aba(pm, data, q + half * v2, v3, tau).copy()
        v4 = v + dt * a3
        a4 = pin.aba(pm, data, q + dt * v3, v4, tau).copy()
        q = q + sixth * (v + 2.0 * (v2 + v3) + v4)
        v = v + sixth * (a1 + 2.0 * (a2 + a3) + a4)
    return q, v


def feedforward_table(model, duration: float, dt: float = 1e-3):
    """Return (q0, a controller that plays back the demo trajectory's RNEA torques per step)."""
    from robot_dynamics_ros.core.trajectories.demo import demo_trajectory
    from robot_dynamics_ros.core import rnea
    traj = demo_trajectory(model, 4.0)              # (within the effort limits)
    times = np.arange(int(round(duration / dt)) + 1) * dt
    table = rnea(model, *traj.sample(times))
    return traj.positions[0], lambda t, q, qd: table[int(round(t / dt))]


def mujoco_rk4(model, q0, qd0):
    """
    Return a function running MuJoCo's RK4 at 1 kHz on the rigid ``model`` (its URDF), or None.

    The robot from the package's URDF export (MuJoCo's URDF reader), no contacts, no joint
    damping, friction or armature: the rigid model's dynamics; a Python loop of ``mj_step``, the
    library's Python usage.  The function returns the final (q, qd).
    """
    try:
        import mujoco
    except ImportError:
        return None
    from robot_dynamics_ros.core.model.urdf_export import urdf_text
    spec = mujoco.MjSpec.from_string(urdf_text(model))
    spec.option.timestep = 1e-3
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    spec.option.gravity = model.gravity
    # (the Puma's first link has no mass, only inertia about its axis; MuJoCo wants a mass:
    # 1e-9 kg, which changes no torque above 1e-8 N m)
    spec.compiler.boundmass = 1e-9
    for joint in spec.joints:                # the rigid model's run has no joint limits either
        joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
    mj = spec.compile()
    data = mujoco.MjData(mj)

    def run(duration: float):
        mujoco.mj_resetData(mj, data)
        data.qpos[:], data.qvel[:] = q0, qd0
        step = mujoco.mj_step
        for _ in range(int(round(duration / 1e-3))):
            step(mj, data)
        return data.qpos.copy(), data.qvel.copy()
    return run


def speed(duration: float, repeat: int) -> None:
    puma = RobotModel.named("puma560")
    rigid = puma.rigid()
    free = {"joint_limits": False, "effort_limits": False}
    q_start, feedforward = feedforward_table(puma, duration)
    holding = gravity_torques(puma, q_start)       # at rest: friction holds every joint
    simulate(puma, Q0, QD0, 0.01)                  # (loads the compiled kernels once)
    simulate(rigid, Q0, QD0, 0.01, **free)
    simulate(puma, Q0, QD0, 0.01, compiled=False)
    pm = pinocchio_model(rigid)
    mj = mujoco_rk4(rigid, Q0, QD0)
    pin_label = "Pinocchio aba + the same RK4 (numpy), rigid, unforced"
    mj_label = "MuJoCo mj_step (RK4), rigid, unforced"
    runs = {
        "full model, moving (demo trajectory's torques)":
            (lambda d: simulate(puma, q_start, np.zeros(6), d, torque=feedforward), duration),
        "full model, falling, friction holds some joints":
            (lambda d: simulate(puma, Q0, QD0, d), duration),
        "full model, at rest, friction holds every joint":
            (lambda d: simulate(puma, q_start, np.zeros(6), d, torque=0.9 * holding), duration),
        "full model, moving, plain Python (compiled=False)":
            (lambda d: simulate(puma, q_start, np.zeros(6), d, torque=feedforward,
                                compiled=False), duration / 4),
        "full model, moving, semi-implicit Euler":
            (lambda d: simulate(puma, q_start, np.zeros(6), d, torque=feedforward,
                                integrator="semi_implicit_euler"), duration),
        "rigid model, unforced":
            (lambda d: simulate(rigid, Q0, QD0, d, **free), duration),
    }
    if pm is not None:
        runs[pin_label] = (lambda d: pinocchio_rk4(pm, Q0, QD0, d), duration)
    if mj is not None:
        runs[mj_label] = (mj, duration)
    load = os.getloadavg()[0]
    rows = real_time_factors(runs, repeat)
    check = 1.0 if duration >= 0.5 else duration       # (--quick: as short as the runs)
    ours = simulate(rigid, Q0, QD0, check, **free)
    if pm is not None:
        q_pin, _ = pinocchio_rk4(pm, Q0, QD0, check)
        print(f"rigid Puma, {check:g} s at 1 kHz: |q_ours - q_pinocchio| = "
              f"{np.abs(ours.q[-1] - q_pin).max():.1e} rad")
    if mj is not None:
        q_mj, _ = mj(check)
        print(f"rigid Puma, {check:g} s at 1 kHz: |q_ours - q_mujoco| = "
              f"{np.abs(ours.q[-1] - q_mj).max():.1e} rad")
    print(f"\nReal-time factor of the Puma 560 at 1 kHz, RK4 unless said (best of {repeat} runs "
          f"of {duration:g} s, taking turns; load average {load:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores):")
    for label, rtf in rows.items():
        print(f"  {label:<56} {rtf:7.1f}   ({1e6 / (rtf * 1000):6.1f} us per step)")
    moving = rows["full model, moving (demo trajectory's torques)"]
    sticking = min(rows["full model, falling, friction holds some joints"],
                   rows["full model, at rest, friction holds every joint"])
    python = rows["full model, moving, plain Python (compiled=False)"]
    print(f"  compiled / plain Python (full, moving) = {moving / python:.2f}")
    for label, reference in ((pin_label, "Pinocchio"), (mj_label, "MuJoCo")):
        if label in rows:
            print(f"  ours (full, moving) / {reference} (rigid) = {moving / rows[label]:.2f}; "
                  f"ours (full, sticking) / {reference} = {sticking / rows[label]:.2f}; "
                  f"ours (rigid) / {reference} (rigid) = "
                  f"{rows['rigid model, unforced'] / rows[label]:.2f}")
    worst = min(moving, sticking)
    print(f"target: real-time factor >= {TARGET_RTF:g} with RK4 on the full Puma 560 in every "
          f"phase (moving, sticking): {worst:.1f} ({'met' if worst >= TARGET_RTF else 'MISSED'})")


STARTUP = """
import sys, time
start = time.perf_counter()
from robot_dynamics_ros.core import RobotModel
from robot_dynamics_ros.core.simulation import Simulator
imported = time.perf_counter()
model = RobotModel.named("puma560")
sim = Simulator(model, [0.0] * 6, compiled=sys.argv[1] == "compiled")
print(imported - start, time.perf_counter() - imported, sim.dynamics.compiled)
"""


def startup(quick=False) -> None:
    """Print the time a fresh process needs to build the Puma's Simulator, cold and warm."""
    print("\nStart-up of Simulator(puma560) in a fresh process (the package imported first):")
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="bench-simulation-cache-") as cache:
        env = dict(os.environ, ROBOT_DYNAMICS_ROS_CACHE_DIR=cache)
        rows = (("compiled, empty cache (cold)", "compiled"),
                ("compiled, cache filled (warm)", "compiled"),
                ("plain Python (compiled=False)", "python"))
        for label, mode in rows[2:] if quick else rows:
            out = subprocess.run([sys.executable, "-c", STARTUP, mode], env=env, cwd=root,
                                 check=True, capture_output=True, text=True).stdout.split()
            imports, build, compiled = float(out[0]), float(out[1]), out[2] == "True"
            print(f"  {label:<32} {build:5.2f} s (compiled: {compiled}; imports before it "
                  f"{imports:.2f} s)")


def energy_drift(duration=2.0) -> None:
    print(f"\nEnergy drift of an unforced, frictionless run, RK4 at 1 kHz, {duration:g} s:")
    print(f"  {'robot':<10} {'drift [J/s]':>12} {'max |E - E0| [J]':>18} {'max kinetic [J]':>16}")
    for name in shipped_robots():
        model = RobotModel.named(name).without_friction()
        rng = np.random.default_rng(1)
        q0, qd0 = 0.5 * rng.uniform(model.lower, model.upper), rng.uniform(-1.0, 1.0, model.n)
        run = simulate(model, q0, qd0, duration, joint_limits=False, effort_limits=False)
        energy = mechanical_energy(model, run.q, run.qd)
        drift = (energy[-1] - energy[0]) / duration
        print(f"  {name:<10} {drift:12.1e} {np.abs(energy - energy[0]).max():18.1e} "
              f"{kinetic_energy(model, run.q, run.qd).max():16.1f}")


def agreement(duration=1.0, steps=(1e-3, 1e-4)) -> None:
    rng = np.random.default_rng(3)
    model = RobotModel.from_dict(random_robot_dict(6, rng, convention="modified",
                                                   with_motors=True))
    q0, qd0, _ = random_state(model, rng)
    n, zeros = model.n, np.zeros(model.n)

    def rhs(t, x):
        return np.concatenate([x[n:], forward_dynamics(model, x[:n], x[n:], zeros)])
    ref = solve_ivp(rhs, (0.0, duration), np.concatenate([q0, qd0]), method="DOP853",
                    rtol=1e-12, atol=1e-12)
    print(f"\nAgreement with solve_ivp (DOP853, rtol = atol = 1e-12) after {duration:g} s, "
          "random 6-joint "
          "robot with full inertias and rotors:")
    for integrator in ("rk4", "semi_implicit_euler"):
        for dt in steps:
            run = simulate(model, q0, qd0, duration, dt=dt, integrator=integrator,
                           joint_limits=False, effort_limits=False)
            err = np.abs(run.q[-1] - ref.y[:n, -1]).max()
            print(f"  {integrator:<20} dt = {dt:g} s: max |q - q_ref| = {err:.1e} rad")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="tiny runs, no numba compilation in a fresh process (a check that "
                             "the benchmark runs, not a measurement)")
    args = parser.parse_args(argv)
    speed(0.1 if args.quick else 2.0, 1 if args.quick else 5)
    startup(args.quick)
    energy_drift(0.1 if args.quick else 2.0)
    if args.quick:
        agreement(0.1, (1e-3,))
    else:
        agreement()
    return 0


if __name__ == "__main__":
    sys.exit(main())
