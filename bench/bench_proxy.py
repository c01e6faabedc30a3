"""
The time trajectory_proxy_node adds to a FollowJointTrajectory goal of 300 waypoints.

    flock /work/bench.lock .venv/bin/python bench/bench_proxy.py [--points 300] [--goals 20]

This process holds a stand-in joint_trajectory_controller (an action server that records when
each goal reaches it and succeeds at once) and a client sending MoveIt-shaped goals (the Panda,
``--points`` waypoints with positions, velocities and accelerations). The proxy runs in its own
process, as it would beside MoveIt. Timed for each goal: from ``send_goal_async`` to the goal's
arrival at the controller, sent directly to the controller (the reference, in the same run) and
sent through the proxy, for each scaling method. The proxy's added time is the difference of the
medians; its target is at most 50 ms (issue 32). Also measured: the proxy process's CPU time
per goal (/proc, less sensitive to a loaded machine than the wall-clock times; it includes the
proxy's idle timers), and, for scale, the core's own scaling of the same trajectory in this
process (the proxy's share of arithmetic).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "support"))
from processes import cpu_seconds  # noqa: E402

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", os.environ.get("BENCH_ROS_DOMAIN_ID",
                                                      str(1 + (os.getpid() + 30) % 100)))
NS = f"/bench_proxy_{os.getpid()}"
CONTROLLER = f"{NS.strip('/')}/arm_controller"
TARGET_MS = 50.0
TIMEOUT = 60.0


def moveit_goal(points: int):
    """Return a Panda goal as MoveIt sends it (positions, velocities, accelerations; t0 = 0)."""
    import numpy as np
    from control_msgs.action import FollowJointTrajectory
    from robot_dynamics_ros.core import JointTrajectory, RobotModel
    from robot_dynamics_ros.messages.ros import trajectory_to_msg
    model = RobotModel.named("panda")
    q0 = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    dq = np.array([0.8, 0.3, -0.5, 0.4, 0.6, -0.3, 0.9])
    duration = 2.0
    u = np.linspace(0.0, 1.0, points)
    s = 10 * u**3 - 15 * u**4 + 6 * u**5             # minimum-jerk blend, at rest at both ends
    ds = (30 * u**2 - 60 * u**3 + 30 * u**4) / duration
    dds = (60 * u - 180 * u**2 + 120 * u**3) / duration**2
    traj = JointTrajectory(model.joint_names, u * duration, q0 + np.outer(s, dq),
                           np.outer(ds, dq), np.outer(dds, dq))
    goal = FollowJointTrajectory.Goal()
    goal.trajectory = trajectory_to_msg(traj, effort=False)
    return model, traj, goal


class Bench:
    """The stand-in controller and the client, in one node of this process."""

    def __init__(self, node, executor):
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionServer, GoalResponse
        self.node, self.executor, self.arrived = node, executor, None
        self.action = FollowJointTrajectory

        def on_goal(_):
            self.arrived = time.perf_counter()
            return GoalResponse.ACCEPT

        def execute(goal_handle):
            goal_handle.succeed()
            return FollowJointTrajectory.Result()
        self.server = ActionServer(node, FollowJointTrajectory,
                                   f"/{CONTROLLER}/follow_joint_trajectory", execute,
                                   goal_callback=on_goal)

    def spin_until(self, predicate, what: str):
        end = time.monotonic() + TIMEOUT
        while not predicate():
            assert time.monotonic() < end, f"timed out waiting for {what}"
            self.executor.spin_once(timeout_sec=0.005)

    def client(self, action_name: str):
        from rclpy.action import ActionClient
        client = ActionClient(self.node, self.action, action_name)
        self.spin_until(client.server_is_ready, action_name)
        return client

    def time_goal(self, client, goal) -> float:
        """Send ``goal``; return seconds until the controller got it (waits for the result)."""
        self.arrived = None
        start = time.perf_counter()
        sent = client.send_goal_async(goal)
        self.spin_until(lambda: self.arrived is not None, "the goal at the controller")
        seconds = self.arrived - start
        self.spin_until(sent.done, "the goal's acceptance")
        handle = sent.result()
        assert handle.accepted, "goal rejected"
        result = handle.get_result_async()
        self.spin_until(result.done, "the result")
        assert result.result().status == 4, result.result().result.error_string   # SUCCEEDED
        return seconds


def start_proxy(method: str, log: Path):
    argv = [sys.executable, "-m", "robot_dynamics_ros.nodes.trajectory_proxy", "--ros-args",
            "-r", "__node:=proxy", "-r", f"__ns:={NS}", "-p", "robot_description:=panda",
            "-p", f"method:={method}", "-p", f"controller_name:={CONTROLLER}"]
    return subprocess.Popen(argv, stdout=open(log, "w"), stderr=subprocess.STDOUT)


def paired_ms(bench, direct, via, goal, goals: int, pid: int):
    """
    Return the medians [ms] of direct, through the proxy, and their per-goal difference.

    And the proxy process's CPU time per goal [ms] (less sensitive to the machine's load than
    the wall-clock times: what the proxy spends, whoever else runs).
    """
    bench.time_goal(direct, goal)                    # first ones: discovery, caches
    bench.time_goal(via, goal)
    cpu = cpu_seconds(pid)
    pairs = [(bench.time_goal(direct, goal), bench.time_goal(via, goal)) for _ in range(goals)]
    cpu = (cpu_seconds(pid) - cpu) / goals
    return tuple(1e3 * statistics.median(x) for x in
                 ([d for d, _ in pairs], [v for _, v in pairs], [v - d for d, v in pairs])) \
        + (1e3 * cpu,)


def core_ms(model, traj, method: str, repeats: int = 5) -> float:
    """Return the core's own scaling time of ``traj`` [ms] (the scaler's defaults)."""
    from robot_dynamics_ros.core import Limits, time_optimal_scaling, uniform_scaling
    from robot_dynamics_ros.core.algorithms.route import select
    from robot_dynamics_ros.core.trajectories.topp.from_parameters import constraint_list
    limits, dynamics = Limits.from_model(model), select(model)      # as the node does
    times = []
    for _ in range(repeats + 1):                     # (the first: loading the kernels)
        start = time.perf_counter()
        if method == "uniform":
            uniform_scaling(model, traj, limits, samples=1000)
        else:
            time_optimal_scaling(model, traj, constraint_list(limits), grid_steps=150,
                                 dynamics=dynamics)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times[1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--points", type=int, default=300)
    parser.add_argument("--goals", type=int, default=20)
    parser.add_argument("--quick", action="store_true",
                        help="30 points, 2 goals, uniform only: a check that it runs")
    args = parser.parse_args()
    methods = ("uniform", "time_optimal")
    if args.quick:
        args.points, args.goals, methods = 30, 2, ("uniform",)
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    rclpy.init()
    node = rclpy.create_node("bench_proxy_client")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    bench = Bench(node, executor)
    model, traj, goal = moveit_goal(args.points)
    logs = Path(tempfile.mkdtemp())
    try:
        direct = bench.client(f"/{CONTROLLER}/follow_joint_trajectory")
        print(f"{args.points}-point Panda goal, median of {args.goals} goals each way, "
              f"alternating; load {os.getloadavg()[0]:.2f}")
        for method in methods:
            proxy = start_proxy(method, logs / f"{method}.log")
            try:
                client = bench.client(f"{NS}/proxy/follow_joint_trajectory")
                ref, via, added, cpu = paired_ms(bench, direct, client, goal, args.goals,
                                                 proxy.pid)
                client.destroy()
            except AssertionError:
                print((logs / f"{method}.log").read_text()[-2000:])
                raise
            finally:
                proxy.terminate()
                proxy.wait(10)
            print(f"{method}: direct to the controller {ref:.2f} ms, through the proxy "
                  f"{via:.2f} ms ({via / ref:.1f} x direct), added {added:.2f} ms = "
                  f"{added / TARGET_MS:.2f} x the {TARGET_MS:.0f} ms target; the proxy's CPU "
                  f"time per goal {cpu:.1f} ms; the core's scaling alone, in this process: "
                  f"{core_ms(model, traj, method):.2f} ms")
        print(f"load after: {os.getloadavg()[0]:.2f}")
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
