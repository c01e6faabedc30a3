"""Latency and throughput of the dynamics nodes over DDS (separate processes, loopback only).

    .venv/bin/python bench/bench_ros_latency.py [--rate 1000] [--duration 10] [--executor single|events]

A publisher process sends sensor_msgs/JointState at ``--rate`` Hz for ``--duration`` s (after a
1 s warm-up that is not counted) to gravity_compensation_node and inverse_dynamics_node (each in
its own process, feedforward mode on a held reference).  A receiver process records, for every
torque message, the publish time (the JointState stamp, which the nodes copy into their output)
and the time its DDS reader received it (rmw ``received_timestamp``, so the receiver's own Python
executor is not counted).  Reported: messages sent / received / lost, latency median, p90, p99
and max.  Target: nothing lost at 1 kHz, median < 0.5 ms, p99 < 2 ms.

Baseline, in the same run: an echo node (subscribe JointState, publish a copy, no dynamics) in its
own phase with the same publisher, receiver and executor; the ratios of the medians show how much
of the latency is the dynamics and how much is rclpy + DDS.  Then the node callback is profiled
in-process (no DDS): per-stage cost (validation, dynamics, message building, publish) and
(de)serialisation of the messages.

``--profile-dir DIR`` runs the node processes under cProfile (stats per node in DIR; cProfile
slows them, so take latencies from a run without it).

What bounds the figures (2 shared cores): per message a node spends ~35 us (gravity) / ~80 us
(inverse dynamics: ~30 us of it sampling the reference) in its callback, but ~250-450 us of CPU
in all, the rest being rclpy's Python executor (wait-set rebuild per message) and Fast DDS
(take, and a synchronous publish to a matched reader costs ~70-100 us).  The echo baseline has
the same rclpy + DDS path without dynamics.  At 1 kHz the two nodes, the receiver and the
publisher together keep ~1.3 of the 2 cores busy, so the tail (p99, max) and any loss come from
CPU contention (more so when other work shares the machine), not from the dynamics.

Environment: ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, a private ROS_DOMAIN_ID and a temporary
ROS_LOG_DIR are set for every process.  Every wait is bounded; children are always reaped.
"""
from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
NAMESPACE = f"/bench_{os.getpid()}"
WARMUP = 1.0
JOINT_NAMES = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]
Q = [0.3, 0.8, -1.0, 0.4, 0.5, -0.2]
QD = [0.2, -0.3, 0.1, 0.5, -0.4, 0.3]


def ros_env(log_dir: str) -> dict:
    env = dict(os.environ)
    env.update(ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_LOG_DIR=log_dir, PYTHONUNBUFFERED="1",
               ROS_DOMAIN_ID=env.get("BENCH_ROS_DOMAIN_ID", str(1 + (os.getpid() + 50) % 100)),
               RMW_IMPLEMENTATION="rmw_fastrtps_cpp")
    return env


def make_executor(kind: str, context=None):
    """'single' (what the node executables use) or 'events' (rclpy.experimental.EventsExecutor,
    C++ dispatch; in rclpy 9.1.2 its spin() dispatches nothing and it can spin a core after
    shutdown, which is why the nodes do not use it)."""
    if kind == "events":
        from rclpy.experimental import EventsExecutor
        return EventsExecutor(context=context)
    from rclpy.executors import SingleThreadedExecutor
    return SingleThreadedExecutor(context=context)


# ------------------------------------------------------------------------------ child roles
def role_node(args):
    """A dynamics node (or the echo baseline) on the chosen executor."""
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from rclpy.parameter import Parameter
    rclpy.init()
    if args.node == "echo":
        from sensor_msgs.msg import JointState
        node = rclpy.create_node("echo", namespace=NAMESPACE if not args.namespace else args.namespace)
        pub = node.create_publisher(JointState, "echo", args.qos_depth)
        node.create_subscription(JointState, "joint_states", pub.publish, args.qos_depth)
    else:
        from robot_dynamics_ros.bringup import NODE_TYPES
        _, module, cls = NODE_TYPES[args.node]
        import importlib
        node_class = getattr(importlib.import_module(module), cls)
        node = node_class(args.node, namespace=args.namespace,
                          parameter_overrides=[Parameter("robot_description", value="puma560"),
                                               Parameter("input_timeout", value=0.0),
                                               Parameter("qos_depth", value=args.qos_depth)])
    executor = make_executor(args.executor)
    executor.add_node(node)
    profiler = None
    if args.profile:
        import cProfile
        profiler = cProfile.Profile()
        profiler.enable()
    try:
        while rclpy.ok():                 # (EventsExecutor.spin() dispatches nothing in rclpy 9.1.2)
            executor.spin_once(timeout_sec=0.5)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)
        rclpy.try_shutdown()


def role_receiver(args):
    """Record (stamp, rmw receive time) of every output message; write JSON, exit."""
    import rclpy
    from sensor_msgs.msg import JointState
    rclpy.init()
    node = rclpy.create_node("bench_receiver", namespace=args.namespace)
    topics = args.topics.split(",")
    records = {t: [] for t in topics}
    stamp_at = struct.Struct("<iI")     # CDR (little endian): 4-byte encapsulation, then header.stamp
    for topic in topics:
        store = records[topic]

        def callback(raw, info, store=store):
            sec, nanosec = stamp_at.unpack_from(raw, 4)
            store.append((sec * 1_000_000_000 + nanosec, info["received_timestamp"]))
        # raw: no deserialisation, so the receiver takes as little CPU from the nodes as possible
        node.create_subscription(JointState, topic, callback, 1000, raw=True)
    executor = make_executor(args.harness_executor)
    executor.add_node(node)
    deadline = time.monotonic() + 20.0
    while time.monotonic() < deadline and not all(node.count_publishers(f"{args.namespace}/{t}") for t in topics):
        executor.spin_once(timeout_sec=0.05)
    print("READY", flush=True)
    end = time.monotonic() + args.run_for
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
    Path(args.out).write_text(json.dumps(records))
    rclpy.try_shutdown()


def role_publisher(args):
    """Reference once, then JointState at args.rate: warm-up, then the counted window."""
    import rclpy
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    rclpy.init()
    node = rclpy.create_node("bench_publisher", namespace=args.namespace)
    states = node.create_publisher(JointState, "joint_states", args.qos_depth)
    reference = node.create_publisher(JointTrajectory, "reference_trajectory", 10)
    executor = make_executor("single")
    executor.add_node(node)
    deadline = time.monotonic() + 20.0
    while time.monotonic() < deadline and states.get_subscription_count() < args.subscribers:
        executor.spin_once(timeout_sec=0.05)
    traj = JointTrajectory(joint_names=JOINT_NAMES)
    for t, q in ((0, Q), (1000, [v + 0.5 for v in Q])):
        point = JointTrajectoryPoint(positions=q, velocities=[0.0] * 6, accelerations=[0.0] * 6)
        point.time_from_start.sec = t
        traj.points.append(point)
    for _ in range(3):
        reference.publish(traj)
        executor.spin_once(timeout_sec=0.1)
    msg = JointState(name=JOINT_NAMES, position=Q, velocity=QD)
    period = 1.0 / args.rate
    sent, publish_times = [], []
    start = time.monotonic()
    k = 0
    total = int(round((WARMUP + args.duration) * args.rate))
    warmup_count = int(round(WARMUP * args.rate))
    while k < total:
        target = start + k * period
        delay = target - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        now = time.time_ns()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
        states.publish(msg)
        if k >= warmup_count:
            sent.append(now)
            publish_times.append(time.monotonic())
        k += 1
    achieved = (len(publish_times) - 1) / (publish_times[-1] - publish_times[0])
    Path(args.out).write_text(json.dumps({"sent": sent, "rate": achieved}))
    rclpy.try_shutdown()


# ------------------------------------------------------------------------------ orchestration
def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Children:
    def __init__(self, env, log_dir):
        self.env, self.log_dir, self.procs = env, Path(log_dir), []

    def start(self, name, *role_args, stdout=None):
        log = open(self.log_dir / f"{name}.log", "wb")
        proc = subprocess.Popen([sys.executable, __file__, *role_args], env=self.env, cwd=str(ROOT),
                                stdout=stdout or log, stderr=log)
        self.procs.append((name, proc, log))
        return proc

    def stop_all(self):
        for _, proc, _ in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for name, proc, log in self.procs:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
            log.close()
        self.procs.clear()


def run_phase(nodes, topics, args, env, tmp) -> dict:
    """Start ``nodes``, the receiver for ``topics`` and the publisher; return the results."""
    children = Children(env, tmp)
    received_file, sent_file = Path(tmp) / f"received_{nodes[0]}.json", Path(tmp) / f"sent_{nodes[0]}.json"
    try:
        for n in nodes:
            children.start(n, "--role", "node", "--node", n, "--namespace", NAMESPACE, "--executor", args.executor,
                           "--qos-depth", str(args.qos_depth),
                           *(["--profile", str(Path(args.profile_dir) / f"{n}.prof")] if args.profile_dir else []))
        receiver = children.start("receiver", "--role", "receiver", "--namespace", NAMESPACE,
                                  "--harness-executor", args.harness_executor,
                                  "--topics", ",".join(topics), "--out", str(received_file),
                                  "--run-for", str(WARMUP + args.duration + 8.0), stdout=subprocess.PIPE)
        line = receiver.stdout.readline().decode().strip()
        if line != "READY":
            raise RuntimeError(f"receiver not ready ({line!r}); see logs in {tmp}")
        node_procs = [(name, proc) for name, proc, _ in children.procs if name in nodes]
        cpu_before = {name: cpu_seconds(proc.pid) for name, proc in node_procs}
        publisher = children.start("publisher", "--role", "publisher", "--namespace", NAMESPACE,
                                   "--rate", str(args.rate), "--duration", str(args.duration),
                                   "--subscribers", str(len(nodes)), "--out", str(sent_file),
                                   "--qos-depth", str(args.qos_depth))
        publisher.wait(WARMUP + args.duration + 30.0)
        n_messages = args.rate * (WARMUP + args.duration)
        cpu_us = {name: (cpu_seconds(proc.pid) - cpu_before[name]) / n_messages * 1e6 for name, proc in node_procs}
        receiver.wait(30.0)
        sent = json.loads(sent_file.read_text())
        received = json.loads(received_file.read_text())
    finally:
        children.stop_all()
    out = {}
    sent_set = set(sent["sent"])
    for topic, node in zip(topics, nodes):
        latencies = np.array([(recv - stamp) * 1e-6 for stamp, recv in received[topic] if stamp in sent_set])
        got = {stamp for stamp, _ in received[topic] if stamp in sent_set}
        out[topic] = {"sent": len(sent_set), "received": len(got), "lost": len(sent_set - got),
                      "median_ms": float(np.median(latencies)) if latencies.size else float("nan"),
                      "p90_ms": float(np.percentile(latencies, 90)) if latencies.size else float("nan"),
                      "p99_ms": float(np.percentile(latencies, 99)) if latencies.size else float("nan"),
                      "max_ms": float(latencies.max()) if latencies.size else float("nan"),
                      "rate_hz": sent["rate"], "node_cpu_us_per_msg": cpu_us[node]}
    return out


def profile_callbacks(n_calls: int = 3000) -> dict:
    """Per-stage cost of the node callbacks, in-process, no subscriber (microseconds per message)."""
    import rclpy
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from robot_dynamics_ros.nodes.gravity_compensation import GravityCompensationNode
    from robot_dynamics_ros.nodes.inverse_dynamics import InverseDynamicsNode
    from robot_dynamics_ros.ros_messages import joint_state_arrays

    context = rclpy.Context()
    rclpy.init(context=context)
    gc = GravityCompensationNode("gc_profile", context=context)
    idn = InverseDynamicsNode("id_profile", context=context)
    traj = JointTrajectory(joint_names=JOINT_NAMES, points=[
        JointTrajectoryPoint(positions=Q, velocities=[0.0] * 6, accelerations=[0.0] * 6),
        JointTrajectoryPoint(positions=[v + 0.5 for v in Q], velocities=[0.0] * 6, accelerations=[0.0] * 6)])
    traj.points[1].time_from_start.sec = 1000
    idn.on_reference(traj)
    msg = JointState(name=JOINT_NAMES, position=Q, velocity=QD)
    raw = serialize_message(msg)

    def per_call(fn):
        fn()
        t = time.perf_counter()
        for _ in range(n_calls):
            fn()
        return (time.perf_counter() - t) / n_calls * 1e6

    q = np.array(Q)
    tau = gc.dynamics.gravity_torques(q)
    ref = idn.reference.trajectory
    result = {
        "deserialize JointState": per_call(lambda: deserialize_message(raw, JointState)),
        "serialize JointState": per_call(lambda: serialize_message(msg)),
        "validate + match names": per_call(lambda: joint_state_arrays(msg, gc.input_order, True)),
        "gravity g(q)": per_call(lambda: gc.dynamics.gravity_torques(q)),
        "sample reference": per_call(lambda: ref.sample(1.0)),
        "RNEA": per_call(lambda: idn.dynamics.rnea(q, q, q)),
        "publish both outputs": per_call(lambda: gc.outputs.publish(msg.header.stamp, tau)),
        "gravity callback total": per_call(lambda: gc.on_joint_states(msg)),
        "inverse dynamics callback total": per_call(lambda: idn.on_joint_states(msg)),
    }
    gc.destroy_node()
    idn.destroy_node()
    rclpy.try_shutdown(context=context)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--executor", choices=("single", "events"), default="single",
                        help="executor of the node processes (default: single, as the node executables)")
    parser.add_argument("--qos-depth", type=int, default=10,
                        help="qos_depth of the nodes and the publisher (default: the nodes' default, 10)")
    parser.add_argument("--harness-executor", choices=("single", "events"), default="single",
                        help="executor of the receiver (it does not affect the measured times, only its throughput)")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--profile-dir", help="run the node processes under cProfile, stats into this folder")
    parser.add_argument("--profile", help=argparse.SUPPRESS)
    parser.add_argument("--json", help="also write the results to this file")
    # internal roles
    parser.add_argument("--role", choices=("main", "node", "receiver", "publisher"), default="main")
    parser.add_argument("--node")
    parser.add_argument("--namespace", default=NAMESPACE)
    parser.add_argument("--topics")
    parser.add_argument("--out")
    parser.add_argument("--run-for", type=float)
    parser.add_argument("--subscribers", type=int, default=1)
    args = parser.parse_args(argv)
    if args.role != "main":
        {"node": role_node, "receiver": role_receiver, "publisher": role_publisher}[args.role](args)
        return 0

    tmp = tempfile.mkdtemp(prefix="bench-ros-latency-")
    env = ros_env(tmp)
    os.environ.update({k: env[k] for k in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_LOG_DIR", "ROS_DOMAIN_ID")})
    print(f"JointState at {args.rate:g} Hz for {args.duration:g} s (after {WARMUP:g} s warm-up) -> nodes in "
          f"separate processes ({args.executor} executor, qos_depth {args.qos_depth}) -> receiver; latency = DDS receipt of the torque "
          f"- publish stamp; {os.cpu_count()} CPUs; logs in {tmp}")
    results = run_phase(["gravity_compensation", "inverse_dynamics"], ["gravity_effort", "feedforward_effort"],
                        args, env, tmp)
    if not args.no_baseline:
        results.update({"echo (baseline: no dynamics)": v for v in
                        run_phase(["echo"], ["echo"], args, env, tmp).values()})
    print(f"{'output':<30}{'sent':>7}{'recv':>7}{'lost':>6}{'median ms':>11}{'p90 ms':>8}{'p99 ms':>8}"
          f"{'max ms':>8}{'pub Hz':>8}{'node CPU us/msg':>17}")
    for topic, r in results.items():
        print(f"{topic:<30}{r['sent']:>7}{r['received']:>7}{r['lost']:>6}{r['median_ms']:>11.3f}"
              f"{r['p90_ms']:>8.3f}{r['p99_ms']:>8.3f}{r['max_ms']:>8.2f}{r['rate_hz']:>8.1f}"
              f"{r['node_cpu_us_per_msg']:>17.0f}")
    base = results.get("echo (baseline: no dynamics)")
    if base:
        print("median / baseline median: " + ", ".join(
            f"{t} {r['median_ms'] / base['median_ms']:.2f}x" for t, r in results.items() if r is not base))
    target = all(r["lost"] == 0 and r["median_ms"] < 0.5 and r["p99_ms"] < 2.0
                 for t, r in results.items() if r is not base)
    print(f"target (no loss, median < 0.5 ms, p99 < 2 ms): {'met' if target else 'NOT met'}")
    profile = profile_callbacks()
    print("callback cost in-process (us per message, no DDS transfer; compare 'node CPU us/msg' above,"
          " whose rest is rclpy's executor, rmw and (de)serialisation):")
    for stage, us in profile.items():
        print(f"  {stage:<34}{us:8.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"latency": results, "profile_us": profile}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
