"""
An oversize trajectory sent to trajectory_scaler_node: how fast it is refused, and its memory.

    flock /work/bench.lock .venv/bin/python bench/bench_oversize_request.py [--points 1000000]

The node runs in its own process; this process sends it a trajectory of ``--points`` points
(100x its MAX_POINTS), three times, by service (``~/scale_trajectory``) and then by topic
(``reference_trajectory``), and samples the node's resident memory (VmRSS) before, during (peak)
and 2 s after each refusal.

* By topic the node reads the point count from the serialized bytes and refuses before any
  conversion (``messages.serialized.trajectory_size``).
* By service the node reads it from the C message rmw deserialized the request into, before rclpy
  would convert it to Python objects (``nodes/bounded_requests.py``).  The reference timed in the
  same run is that conversion (``rclpy.serialization.deserialize_message`` of the same request in
  this process): what a plain rclpy service would spend before the node's callback could refuse.
  After each large request the node gives the freed heap back (``nodes/memory.py``, glibc
  malloc_trim).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

NAMES = [f"joint{i}" for i in range(1, 7)]      # the Puma's


def resident_mb(pid: int) -> float:
    """Return the resident memory of process ``pid`` [MB]."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


def wait(predicate, pid, timeout=300.0):
    """Spin-wait for ``predicate()``, sampling ``pid``'s memory; return (seconds, peak MB)."""
    start, peak = time.perf_counter(), resident_mb(pid)
    while not predicate() and time.perf_counter() - start < timeout:
        peak = max(peak, resident_mb(pid))
        time.sleep(0.01)
    return time.perf_counter() - start, peak


def trajectory(points: int):
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    msg = JointTrajectory(joint_names=NAMES)
    msg.points = [JointTrajectoryPoint(positions=[0.0] * 6, velocities=[0.0] * 6)
                  for _ in range(points)]
    for k, p in enumerate(msg.points):
        p.time_from_start.sec = k
    return msg


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-trim", action="store_true",
                        help="the node without giving freed memory back (for comparison)")
    parser.add_argument("--service-only", action="store_true")
    parser.add_argument("--quick", action="store_true",
                        help="20,000 points (2x MAX_POINTS), once each way: a check that the "
                             "benchmark runs, not a measurement")
    args = parser.parse_args()
    if args.quick:
        args.points, args.repeats = 20_000, 1
    import rclpy
    from rclpy.serialization import deserialize_message, serialize_message
    from robot_dynamics_interfaces.srv import ScaleTrajectory
    from trajectory_msgs.msg import JointTrajectory

    log = Path(tempfile.mkdtemp()) / "node.log"
    start_node = ("import sys; import robot_dynamics_ros.nodes.memory as m; "
                  + ("m.release_freed_memory = lambda: False; " if args.no_trim else "")
                  + "from robot_dynamics_ros.nodes.trajectory_scaler import main; main()")
    node_proc = subprocess.Popen(
        [sys.executable, "-c", start_node, "--ros-args", "-r", "__node:=trajectory_scaler",
         "-r", "__ns:=/bench_oversize"], stdout=open(log, "w"), stderr=subprocess.STDOUT)
    rclpy.init()
    node = rclpy.create_node("bench_oversize_client")
    try:
        client = node.create_client(ScaleTrajectory, "/bench_oversize/trajectory_scaler/"
                                                     "scale_trajectory")
        pub = node.create_publisher(JointTrajectory, "/bench_oversize/reference_trajectory", 10)
        assert client.wait_for_service(timeout_sec=60.0), log.read_text()
        while pub.get_subscription_count() == 0:
            rclpy.spin_once(node, timeout_sec=0.1)
        time.sleep(1.0)
        request = ScaleTrajectory.Request(trajectory=trajectory(args.points))
        raw = serialize_message(request)
        start = time.perf_counter()
        deserialize_message(raw, ScaleTrajectory.Request)
        reference = time.perf_counter() - start
        del raw
        pid = node_proc.pid
        print(("node WITHOUT memory trimming; " if args.no_trim else "")
              + f"{args.points} points ({args.points // 10_000}x MAX_POINTS); rclpy's conversion "
              f"of the request alone, in this process: {reference:.2f} s; load "
              f"{os.getloadavg()[0]:.2f}")
        print(f"node before: {resident_mb(pid):.0f} MB")
        for k in range(args.repeats):
            future = client.call_async(request)        # (this process serialises it first)
            sent = time.perf_counter()

            def answered():
                rclpy.spin_once(node, timeout_sec=0.0)
                return future.done()
            seconds, peak = wait(answered, pid)
            time.sleep(2.0)
            print(f"service {k + 1}: refused {seconds:.2f} s after sending "
                  f"({seconds / reference:.2f} x rclpy's conversion): "
                  f"'{future.result().message[:60]}...'; node peak {peak:.0f} MB, 2 s later "
                  f"{resident_mb(pid):.0f} MB")
            assert time.perf_counter() > sent
        message = request.trajectory
        for k in range(0 if args.service_only else args.repeats):
            pub.publish(message)                        # (returns once this process sent it)
            seconds, peak = wait(lambda: log.read_text().count(
                "reference_trajectory: 6 joint names and") > k, pid)
            time.sleep(2.0)
            print(f"topic {k + 1}: refused {seconds:.2f} s after publish() returned; node peak "
                  f"{peak:.0f} MB, 2 s later {resident_mb(pid):.0f} MB")
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        node_proc.terminate()
        node_proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
