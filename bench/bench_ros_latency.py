"""
Throughput and latency of the torque outputs over DDS, in both ways users run the nodes.

    .venv/bin/python bench/bench_ros_latency.py [--rate 1000] [--duration 60]
        [--deployments launch,bringup] [--executor single|events] [--core-model]
        [--scaling-load] [--json FILE]

Deployments, with gravity compensation and inverse dynamics (feedforward on a held reference)
both on:

* ``launch``: as launch/robot_dynamics.launch.py starts them by default: both nodes in one
  process, the installed ``lib/robot_dynamics_ros/robot-dynamics bringup`` (one executor thread
  per node);
* ``split``: as the launch file starts them with ``split:=true``: each node in its own process
  (the installed executable ``lib/robot_dynamics_ros/<node>_node`` with its parameters);
* ``bringup``: both nodes in one ``python -m robot_dynamics_ros.commands.cli bringup`` process.

The harness is one process: a load generator publishing sensor_msgs/JointState at ``--rate``
from its own thread, and a receiver with raw subscriptions (no deserialisation) on the
EventsExecutor; it records, for every torque message, the JointState stamp the nodes copy into
their output and the time the receiver's callback got it (wall clock, the same as the stamp's),
so the latency includes the harness's dispatch: an upper bound.  Reported per output: sent,
received, lost, latency median / p99 / max, the largest gap between two consecutive outputs
(and between two sent joint states: a late generator sends a burst after its gap), and node CPU
per input message (from /proc/<pid>/stat over the counted window).  The harness runs without
Python's cyclic garbage collector: collecting its growing records held the GIL for ~15 ms, and
the burst the generator then sent overran the best-effort readers (depth 10) of the echo node
and the nodes alike.

Baseline in the same run: a bare echo node (subscribe JointState, publish it back, no dynamics)
on the same executor, in its own process, with the same harness; ``CPU ratio`` = node CPU per
message / echo CPU per message (goal <= 1.3; the bringup process holds two nodes, so its CPU is
compared with two echo messages).

``--scaling-load`` also starts the trajectory scaler (in the bringup process, or in its own
process for ``launch``) and, from a client process of its own, asks it for time-optimal scalings
of a 1000-point trajectory throughout the run: the largest output gap and the latencies show
whether long service work starves the torque outputs.  (The client is not the harness: taking a
response of thousands of points holds the harness's GIL for tens of milliseconds, which delayed
its receiver and its load generator in an earlier version.)

Goals (idle machine): 1 kHz for 60 s, 0 lost, p99 < 2 ms in both deployments; node CPU per
message <= 1.3x the echo node's.  Every process gets ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, a
private ROS_DOMAIN_ID and a temporary ROS_LOG_DIR; every wait is bounded; children are reaped.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test" / "support"))
from processes import cpu_seconds  # noqa: E402

NAMESPACE = os.environ.get("BENCH_NAMESPACE", f"/bench_{os.getpid()}")   # children: the parent's
WARMUP = 2.0
JOINT_NAMES = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]
Q = [0.3, 0.8, -1.0, 0.4, 0.5, -0.2]
QD = [0.2, -0.3, 0.1, 0.5, -0.4, 0.3]
OUTPUTS = {"gravity_compensation": "gravity_effort", "inverse_dynamics": "feedforward_effort"}


def ros_env(log_dir: str, executor: str) -> dict:
    env = dict(os.environ)
    env.update(ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_LOG_DIR=log_dir,
               PYTHONUNBUFFERED="1",
               ROS_DOMAIN_ID=env.get("BENCH_ROS_DOMAIN_ID", str(1 + (os.getpid() + 50) % 100)),
               RMW_IMPLEMENTATION="rmw_fastrtps_cpp", ROBOT_DYNAMICS_EXECUTOR=executor,
               BENCH_NAMESPACE=NAMESPACE)
    return env


def node_parameters(args) -> list[str]:
    # autostart: the torque nodes are managed (lifecycle) nodes; the launch file activates them
    params = {"robot_description": "puma560", "input_timeout": 0.0, "autostart": "true"}
    out = []
    for key, value in params.items():
        out += ["-p", f"{key}:={value}"]
    return out


# ------------------------------------------------------------------------------ child roles
def role_echo(args):
    """Run a bare echo node on the nodes' executor: the rclpy + DDS cost without dynamics."""
    import rclpy
    from sensor_msgs.msg import JointState

    from robot_dynamics_ros.nodes.executor import make_executor, spin
    rclpy.init()
    node = rclpy.create_node("echo", namespace=NAMESPACE)
    publisher = node.create_publisher(JointState, "echo", 10)
    qos = rclpy.qos.qos_profile_sensor_data
    node.create_subscription(JointState, "joint_states", publisher.publish, qos)
    executor = make_executor(node.context)
    executor.add_node(node)
    spin(executor, node.context)
    rclpy.try_shutdown()


def role_harness(args):
    """Load generator (thread) + receiver (EventsExecutor); write the records as JSON."""
    import rclpy
    from rclpy.experimental import EventsExecutor
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    # The generator thread must get the GIL back within a fraction of a period after its sleep,
    # not after CPython's default 5 ms switch interval while the receiver's callbacks hold it: a
    # late generator sends a burst, which best-effort readers of depth 10 may drop.
    sys.setswitchinterval(0.0002)
    # The records grow to 10^5 tuples: CPython's cyclic collector, triggered by the allocations,
    # then walks them all while holding the GIL (a 15 ms stall of the generator, bursts after it,
    # measured).  The harness makes no reference cycles worth collecting: no collector here.
    gc.disable()
    rclpy.init()
    node = rclpy.create_node("bench_harness", namespace=NAMESPACE)
    topics = args.topics.split(",")
    records = {t: [] for t in topics}
    stamp_at = struct.Struct("<iI")     # CDR: 4-byte encapsulation header, then header.stamp
    for topic in topics:
        # (rclpy 9.1.2's EventsExecutor cannot pass the rmw message info, so the receive time is
        # taken in the callback: it includes the harness's dispatch, an upper bound)
        def callback(raw, store=records[topic]):
            sec, nanosec = stamp_at.unpack_from(raw, 4)
            store.append((sec * 1_000_000_000 + nanosec, time.time_ns()))
        node.create_subscription(JointState, topic, callback, 1000, raw=True)
    states = node.create_publisher(JointState, "joint_states", 10)
    reference = node.create_publisher(JointTrajectory, "reference_trajectory", 10)
    executor = EventsExecutor(context=node.context)
    executor.add_node(node)
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline and not (
            all(node.count_publishers(f"{NAMESPACE}/{t}") for t in topics)
            and states.get_subscription_count() >= args.subscribers):
        executor.spin_once(timeout_sec=0.05)
    traj = JointTrajectory(joint_names=JOINT_NAMES)
    for t, q in ((0, Q), (100_000, [v + 0.5 for v in Q])):
        point = JointTrajectoryPoint(positions=q, velocities=[0.0] * 6, accelerations=[0.0] * 6)
        point.time_from_start.sec = t
        traj.points.append(point)
    for _ in range(5):
        reference.publish(traj)
        executor.spin_once(timeout_sec=0.1)
    # The graph lists a node's endpoints before the middleware has matched them, and a node may
    # still be loading its model: publish until every output has answered once (bounded), so
    # that the counted window measures the running nodes, not their start.
    probe = JointState(name=JOINT_NAMES, position=Q, velocity=QD)
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline and not all(records.values()):
        probe.header.stamp = node.get_clock().now().to_msg()
        states.publish(probe)
        executor.spin_once(timeout_sec=0.01)
    for store in records.values():
        store.clear()
    result = {"sent": [], "rate": 0.0}
    done = threading.Event()

    def generate():
        msg = JointState(name=JOINT_NAMES, position=Q, velocity=QD)
        period = 1.0 / args.rate
        total = int(round((args.warmup + args.duration) * args.rate))
        counted_from = int(round(args.warmup * args.rate))
        start = time.monotonic()
        times = []
        for k in range(total):
            delay = start + k * period - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            now = time.time_ns()
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
            states.publish(msg)
            if k >= counted_from:
                result["sent"].append(now)
                times.append(time.monotonic())
        result["rate"] = (len(times) - 1) / (times[-1] - times[0])
        result["send_gap_ms"] = float(np.diff(times).max() * 1e3)
        done.set()

    print("READY", flush=True)
    threading.Thread(target=generate, daemon=True).start()
    while not done.is_set():
        executor.spin_once(timeout_sec=0.05)
    end = time.monotonic() + min(3.0, 2.0 * args.warmup)     # the last outputs in flight
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
    Path(args.out).write_text(json.dumps({"records": records, **result}))
    rclpy.try_shutdown()


def role_scaling(args):
    """Ask the trajectory scaler for time-optimal scalings, one after the other, for --duration."""
    import rclpy
    from rclpy.experimental import EventsExecutor
    from robot_dynamics_interfaces.srv import ScaleTrajectory
    rclpy.init()
    node = rclpy.create_node("bench_scaling_client", namespace=NAMESPACE)
    client = node.create_client(ScaleTrajectory, f"{NAMESPACE}/trajectory_scaler/scale_trajectory")
    executor = EventsExecutor(context=node.context)
    executor.add_node(node)
    request = scaling_request()
    ready = client.wait_for_service(timeout_sec=30.0)
    print("READY" if ready else "no scale_trajectory service", flush=True)
    seconds, failed = [], 0
    end = time.monotonic() + args.warmup + args.duration
    while ready and time.monotonic() < end:
        started = time.monotonic()
        future = client.call_async(request)
        while not future.done() and time.monotonic() < started + 300.0:
            executor.spin_once(timeout_sec=0.1)
        if future.done():
            seconds.append(time.monotonic() - started)
            failed += not future.result().success
    Path(args.out).write_text(json.dumps({"scaling_seconds": seconds, "failed": failed}))
    rclpy.try_shutdown()


def scaling_request():
    """Make a ScaleTrajectory request: time-optimal scaling of a 1000-point Puma trajectory."""
    from robot_dynamics_interfaces.srv import ScaleTrajectory

    from robot_dynamics_ros.core import JointTrajectory
    from robot_dynamics_ros.messages.ros import trajectory_to_msg
    t = np.linspace(0.0, 10.0, 1000)
    phase = 2 * np.pi * t[:, None] / 10.0 + np.arange(6)[None, :]
    q = 0.3 * np.sin(phase)
    qd = 0.3 * np.cos(phase) * 2 * np.pi / 10.0
    return ScaleTrajectory.Request(trajectory=trajectory_to_msg(JointTrajectory(
        JOINT_NAMES, t, q, qd)), method="time_optimal")


# ------------------------------------------------------------------------------ orchestration
def installed_executable(name: str) -> str:
    """Find the node executable as ros2launch / ros2run do: <prefix>/lib/robot_dynamics_ros/."""
    return str(Path(sys.prefix) / "lib" / "robot_dynamics_ros" / name)


def run_phase(label, node_argvs, topics, args, env, tmp, scaling=False) -> dict:
    """Start the node processes and the harness; return per-output results."""
    procs, logs = [], []

    def start(name, argv, stdout=None):
        log = open(Path(tmp) / f"{label}_{name}.log", "wb")
        logs.append(log)
        proc = subprocess.Popen(argv, env=env, cwd=str(ROOT), stdout=stdout or log, stderr=log)
        procs.append((name, proc))
        return proc

    out_file = Path(tmp) / f"{label}.json"
    # joint_states subscriptions to wait for: one per node process; the bringup's torque nodes
    # share one (and the echo node has one).
    joint_state_readers = len(topics) if label == "split" else 1
    try:
        node_procs = [(name, start(name, argv)) for name, argv in node_argvs]
        harness = start("harness", [sys.executable, __file__, "--role", "harness", "--topics",
                                    ",".join(topics), "--out", str(out_file), "--rate",
                                    str(args.rate), "--duration", str(args.duration),
                                    "--warmup", str(args.warmup),
                                    "--subscribers", str(joint_state_readers)],
                        stdout=subprocess.PIPE)
        line = harness.stdout.readline().decode().strip()
        if line != "READY":
            raise RuntimeError(f"harness not ready ({line!r}); logs in {tmp}")
        scaling_file = Path(tmp) / f"{label}_scaling.json"
        if scaling:
            client = start("scaling", [sys.executable, __file__, "--role", "scaling", "--out",
                                       str(scaling_file), "--duration", str(args.duration),
                                       "--warmup", str(args.warmup)],
                           stdout=subprocess.PIPE)
            line = client.stdout.readline().decode().strip()
            if line != "READY":
                raise RuntimeError(f"scaling client not ready ({line!r}); logs in {tmp}")
        time.sleep(args.warmup)
        nan = float("nan")                                  # (a node that died)
        cpu_before = {name: cpu_seconds(p.pid, gone=nan) for name, p in node_procs}
        t0 = time.monotonic()
        time.sleep(args.duration)
        cpu = {name: cpu_seconds(p.pid, gone=nan) - cpu_before[name] for name, p in node_procs}
        window = time.monotonic() - t0
        harness.wait(args.duration + 60.0)
        data = json.loads(out_file.read_text())
        scalings = {"scaling_seconds": []}
        if scaling:
            client.wait(args.duration + 360.0)
            scalings = json.loads(scaling_file.read_text())
    finally:
        for _, proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for _, proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        for log in logs:
            log.close()
    sent = set(data["sent"])
    messages = args.rate * window
    results = {}
    for topic in topics:
        got = [(s, r) for s, r in data["records"][topic] if s in sent]
        latency = np.array([(r - s) * 1e-6 for s, r in got])
        stamps = np.sort(np.array([s for s, _ in got], dtype=np.int64))
        gap = float(np.diff(stamps).max() * 1e-6) if stamps.size > 1 else float("nan")
        owner = [name for name, _ in node_procs
                 if OUTPUTS.get(name) == topic or len(node_procs) == 1]
        received = {s for s, _ in got}
        cpu_us = sum(cpu[name] for name in owner) / messages * 1e6 if owner else float("nan")
        results[f"{label}: {topic}"] = {
            "sent": len(sent), "received": len(received), "lost": len(sent - received),
            "median_ms": float(np.median(latency)) if latency.size else float("nan"),
            "p99_ms": float(np.percentile(latency, 99)) if latency.size else float("nan"),
            "max_ms": float(latency.max()) if latency.size else float("nan"),
            "max_gap_ms": gap, "rate_hz": data["rate"], "send_gap_ms": data["send_gap_ms"],
            "cpu_us_per_msg": cpu_us,
            "scalings": len(scalings["scaling_seconds"]),
            "scaling_s": float(np.mean(scalings["scaling_seconds"] or [0.0]))}
    return results


def ratio(value: float, reference: float) -> str:
    """Return value / reference, or "n/a" if the reference used no CPU clock tick (--quick)."""
    return f"{value / reference:.2f}" if reference > 0 else "n/a"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--deployments", default="launch,split")
    parser.add_argument("--executor", choices=("single", "events"), default=None,
                        help="executor of the nodes and the echo node (default: the nodes')")
    parser.add_argument("--scaling-load", action="store_true",
                        help="time-optimal scalings of 1000 points throughout the run")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--warmup", type=float, default=WARMUP, help="seconds before counting")
    parser.add_argument("--quick", action="store_true",
                        help="200 Hz for 0.5 s, bringup only: a check that the benchmark runs, "
                             "not a measurement")
    parser.add_argument("--role", choices=("main", "echo", "harness", "scaling"),
                        default="main")
    parser.add_argument("--topics")
    parser.add_argument("--out")
    parser.add_argument("--subscribers", type=int, default=1)
    args = parser.parse_args(argv)
    if args.quick:
        args.rate, args.duration, args.warmup, args.deployments = 200.0, 0.5, 0.5, "bringup"
    if args.role == "echo":
        role_echo(args)
        return 0
    if args.role == "harness":
        role_harness(args)
        return 0
    if args.role == "scaling":
        role_scaling(args)
        return 0

    from robot_dynamics_ros.nodes.executor import executor_kind
    executor = args.executor or executor_kind()
    tmp = tempfile.mkdtemp(prefix="bench-ros-latency-")
    env = ros_env(tmp, executor)
    ros_args = ["--ros-args", "-r", f"__ns:={NAMESPACE}"] + node_parameters(args)
    print(f"JointState at {args.rate:g} Hz for {args.duration:g} s "
          f"(after {args.warmup:g} s warm-up); "
          f"nodes on the {executor} executor, compiled "
          f"model; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f} at the start; "
          f"logs in {tmp}")
    results = {}
    results.update(run_phase("echo", [("echo", [sys.executable, __file__, "--role", "echo"])],
                             ["echo"], args, env, tmp))
    kinds = list(OUTPUTS)
    for deployment in args.deployments.split(","):
        if deployment == "split":
            argvs = [(kind, [installed_executable(f"{kind}_node"), *ros_args,
                             "-r", f"__node:={kind}"]) for kind in kinds]
            if args.scaling_load:
                argvs.append(("trajectory_scaler", [installed_executable("trajectory_scaler_node"),
                                                    *ros_args, "-r", "__node:=trajectory_scaler"]))
        else:
            nodes = ",".join(kinds + (["trajectory_scaler"] if args.scaling_load else []))
            command = [installed_executable("robot-dynamics")] if deployment == "launch" else \
                [sys.executable, "-m", "robot_dynamics_ros.commands.cli"]
            argvs = [(deployment, [*command, "bringup",
                                   "--namespace", NAMESPACE, "--nodes", nodes, "--params-file",
                                   "", "--joint-states", "joint_states", "--ros-args",
                                   *node_parameters(args)])]
        phase = run_phase(deployment, argvs, [OUTPUTS[k] for k in kinds], args, env, tmp,
                          scaling=args.scaling_load)
        if deployment != "split":          # one process, both nodes: CPU shared by the outputs
            for r in phase.values():
                r["cpu_us_per_msg"] /= 2.0
        results.update(phase)
    echo = results["echo: echo"]
    print(f"{'output':<34}{'sent':>7}{'recv':>7}{'lost':>6}{'median ms':>10}{'p99 ms':>8}"
          f"{'max ms':>8}{'max gap ms':>11}{'(sent)':>7}{'CPU us/msg':>11}{'CPU ratio':>10}")
    for name, r in results.items():
        print(f"{name:<34}{r['sent']:>7}{r['received']:>7}{r['lost']:>6}{r['median_ms']:>10.3f}"
              f"{r['p99_ms']:>8.3f}{r['max_ms']:>8.2f}{r['max_gap_ms']:>11.2f}"
              f"{r['send_gap_ms']:>7.2f}{r['cpu_us_per_msg']:>11.0f}"
              f"{ratio(r['cpu_us_per_msg'], echo['cpu_us_per_msg']):>10}")
    print("(max gap: the largest gap between two outputs; (sent): between two joint states sent)")
    if args.scaling_load:
        for name, r in results.items():
            if r["scalings"]:
                print(f"{name}: {r['scalings']} time-optimal scalings of 1000 points answered, "
                      f"{r['scaling_s']:.2f} s each on average")
    nodes = {k: r for k, r in results.items() if not k.startswith("echo")}
    met = all(r["lost"] == 0 and r["p99_ms"] < 2.0 for r in nodes.values())
    cpu_met = all(r["cpu_us_per_msg"] <= 1.3 * echo["cpu_us_per_msg"] for r in nodes.values())
    launch = {k: r for k, r in nodes.items() if k.startswith("launch")}    # (issue 27)
    launch_met = all(r["lost"] == 0 and r["cpu_us_per_msg"] <= 1.1 * echo["cpu_us_per_msg"]
                     for r in launch.values())
    print(f"goal 0 lost and p99 < 2 ms: {'met' if met else 'NOT met'}; "
          f"node CPU <= 1.3x echo: {'met' if cpu_met else 'NOT met'}; "
          + (f"default launch CPU <= 1.1x echo and 0 lost: {'met' if launch_met else 'NOT met'}; "
             if launch else "") +
          f"load {os.getloadavg()[0]:.2f} at the end")
    if args.json:
        Path(args.json).write_text(json.dumps({"executor": executor, "results": results,
                                               "load": os.getloadavg()}, indent=1))
    silent = [name for name, r in results.items() if r["received"] == 0]
    if silent:                      # a deployment that answers nothing is broken, not slow
        print(f"error: nothing received from {', '.join(silent)} (see the logs in {tmp})",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
