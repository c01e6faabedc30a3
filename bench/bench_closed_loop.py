"""
Closed-loop tracking: the simulated Puma 560 under computed torque from inverse_dynamics_node.

    python3 bench/bench_closed_loop.py [--plot doc/images/closed_loop.png]

dynamics_simulator_node (1 kHz RK4, lockstep, /clock) and inverse_dynamics_node (mode
computed_torque, Kp = 100, Kd = 20, use_sim_time) run as separate processes over DDS, as the
tests run them, on the demo trajectory (quintic out-and-back, 2 s).  Three controllers:

* the exact model (the Puma without Coulomb friction, in both);
* the same with every link mass 10 % too large in the controller;
* the shipped Puma with its Coulomb friction in both: the computed-torque law compensates
  friction at the *measured* velocity, so at every start from rest it cannot know the direction
  of breakaway, and the arm lags until the feedback has built up.

Prints the maximum and RMS tracking error of each and plots the error over time.
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
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DURATION = 2.0


def _param(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(str(float(v)) for v in value) + "]"
    return str(value)


def _node(module, name, namespace, params, env, log_dir):
    argv = [sys.executable, "-m", f"robot_dynamics_ros.nodes.{module}", "--ros-args",
            "-r", f"__node:={name}", "-r", f"__ns:={namespace}"]
    for key, value in params.items():
        argv += ["-p", f"{key}:={_param(value)}"]
    log = open(Path(log_dir) / f"{name}.log", "wb")
    return subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)


def run(controller_robot: str, plant_robot: str, tag: str, env, log_dir,
        duration: float = DURATION):
    """Return (t, max |q_ref - q| over joints) of one closed-loop run."""
    import rclpy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
    from robot_dynamics_ros.core.trajectories.demo import demo_trajectory
    from robot_dynamics_ros.core import RobotModel
    from robot_dynamics_ros.messages.ros import trajectory_to_msg
    traj = demo_trajectory(RobotModel.named(plant_robot), duration)
    namespace = f"/closed_loop_{os.getpid()}_{tag}"
    context = rclpy.Context()
    rclpy.init(context=context, args=["bench"])
    node = rclpy.create_node("closed_loop_bench", context=context)
    states = []
    node.create_subscription(JointState, f"{namespace}/joint_states", states.append, 10000)
    publisher = node.create_publisher(JointTrajectoryMsg, f"{namespace}/reference_trajectory", 10)
    # A silent publisher on the effort input lets the lockstep simulator start (it waits for a
    # publisher on every input) and hold, before the controller exists.
    node.create_publisher(Float64MultiArray, f"{namespace}/effort_command", 10)
    # The simulator first, holding its initial state (time stands still) until the controller
    # speaks, so that this node receives every joint state: a simulator started last ran ahead
    # in lockstep while this node was still discovering it, and the first states were missed.
    processes = [_node("simulator", "dynamics_simulator", namespace,
                       {"robot_description": plant_robot, "rate": 1000.0,
                        "publish_rate": 1000.0, "real_time_factor": 0.0,
                        "publish_clock": True, "lockstep": True, "command_timeout": 1.0,
                        "hold_until_command": True,
                        "initial_position": list(traj.positions[0])}, env, log_dir)]
    try:
        executor = rclpy.executors.SingleThreadedExecutor(context=context)
        executor.add_node(node)
        end = time.monotonic() + 60.0
        while not states and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        processes.append(_node("inverse_dynamics", "inverse_dynamics", namespace,
                               {"robot_description": controller_robot,
                                "mode": "computed_torque", "use_sim_time": True,
                                "input_timeout": 0.0, "autostart": True}, env, log_dir))
        end = time.monotonic() + 60.0
        while publisher.get_subscription_count() == 0 and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        time.sleep(0.5)
        publisher.publish(trajectory_to_msg(traj))
        end = time.monotonic() + 300.0
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
            if states and states[-1].header.stamp.sec + 1e-9 * states[-1].header.stamp.nanosec \
                    >= duration:
                break
    finally:
        for p in processes:
            p.terminate()
            p.wait(10)
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    t = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in states])
    q = np.array([m.position for m in states])
    q_ref, _, _ = traj.sample(t)
    return t, np.abs(q_ref - q).max(axis=1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--plot", help="write the tracking errors over time to this PNG")
    parser.add_argument("--quick", action="store_true",
                        help="the exact model only, 1 s: a check that the benchmark runs")
    args = parser.parse_args(argv)
    duration = 1.0 if args.quick else DURATION
    from robot_dynamics_ros.core import RobotModel
    work = Path(tempfile.mkdtemp(prefix="bench-closed-loop-"))
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               ROS_DOMAIN_ID=os.environ.get("BENCH_ROS_DOMAIN_ID", str(1 + os.getpid() % 100)),
               ROS_LOG_DIR=str(work / "roslog"))
    os.environ.update({k: env[k] for k in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_DOMAIN_ID",
                                           "ROS_LOG_DIR")})
    spec = RobotModel.named("puma560").without_friction().to_dict()
    exact = work / "puma560_no_coulomb.yaml"
    exact.write_text(yaml.safe_dump(spec))
    for joint in spec["joints"]:
        joint["link"]["mass"] *= 1.1
    heavy = work / "puma560_no_coulomb_masses_plus_10pct.yaml"
    heavy.write_text(yaml.safe_dump(spec))
    cases = [("exact model", str(exact), str(exact)),
             ("link masses 10 % too large", str(heavy), str(exact)),
             ("exact, with Coulomb friction", "puma560", "puma560")][:1 if args.quick else 3]
    results = {}
    print(f"Computed-torque tracking of the demo trajectory ({duration:g} s), simulated Puma 560, "
          "1 kHz:")
    for k, (label, controller, plant) in enumerate(cases):
        t, error = run(controller, plant, f"case{k}", env, work, duration)
        results[label] = (t, error)
        print(f"  {label:<30} max {error.max():.2e} rad, RMS {np.sqrt(np.mean(error ** 2)):.2e} "
              f"rad ({t.size} states)")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 4))
        for (label, (t, error)), style in zip(results.items(), ("-", "-", ":")):
            ax.semilogy(t, np.maximum(error, 1e-9), style, label=label)
        ax.axhline(1e-3, color="grey", lw=0.8, ls="--")
        ax.set_xlabel("simulated time [s]")
        ax.set_ylabel("max over joints |q_ref - q| [rad]")
        ax.set_title("Puma 560: simulator + inverse_dynamics (computed torque, Kp 100, Kd 20)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
