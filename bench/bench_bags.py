"""
Speed of the bag tools: ``bag process`` against rosbags alone, its memory, ``bag play``'s timing.

    python3 bench/bench_bags.py [--quick] [--memory] [--play]

* ``bag process`` on 100,000 Puma 560 joint states at 1 kHz (position, velocity, effort) with a
  reference trajectory, all three outputs (gravity_effort, feedforward_effort, effort_residual),
  MCAP: total time against the time rosbags alone needs to read and deserialise the same joint
  states (rosbags' own ``Reader.messages`` + ``Typestore.deserialize_cdr``), the two timed in
  turns, best of the repeats of each, and ``robot-dynamics bag process`` run from the command line
  (a fresh process, start to end: imports, the robot, the kernels loaded).  Target (issues 11
  and 27): at most 2x, both.  Also messages per second, and CPU seconds beside the wall time.
* Writing: 3 x 100,000 encoded JointStates into MCAP with ``BagWriter.write_rows`` against
  rosbags' ``write`` per message, the path it replaces (wall and CPU).
* ``--memory``: peak resident memory (VmHWM of a child process) of ``bag process`` on
  100,000 and on 1,000,000 joint states, next to rosbags alone reading the same bag.
* ``--play``: ``bag play`` of 5,000 joint states at 1 kHz, recorded by ``bag record`` in another
  process: the recorded inter-arrival intervals against the bag's 1 ms (median and p99 of
  |interval - 1 ms|), and the player's own lateness after each message was due.

The machine has 2 cores shared with other work: check ``uptime`` and re-run when it is quiet.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robot_dynamics_ros.bags import write_joint_states  # noqa: E402
from robot_dynamics_ros.messages.cdr import FIELDS, JOINT_STATE, JointStateTemplate  # noqa: E402
from robot_dynamics_ros.bags.process import REFERENCE, ProcessOptions, process_bag  # noqa: E402
from robot_dynamics_ros.bags.storage import output_bag  # noqa: E402
from robot_dynamics_ros.bags.types import typestore  # noqa: E402
from robot_dynamics_ros.core import JointTrajectory, RobotModel, rnea  # noqa: E402

TARGET_RATIO = 2.0
CHUNK = 50_000


def reference_cdr(traj: JointTrajectory) -> bytes:
    """
    Return the trajectory as a JointTrajectory message's CDR bytes, the message's length exactly.

    Serialised with rosbags, not rclpy: rclpy's ``serialize_message`` (rmw_fastrtps) returns 4
    bytes more than the message for each empty float64[] at its end (here the points' effort),
    which rosbags refuses (it allows 3 bytes of padding), so that the bag tools fell back to
    rclpy and the command's run paid rclpy's import (0.2-0.4 s; ``bags/types.py``).
    """
    store = typestore()
    types = store.types
    header = types["std_msgs/msg/Header"](
        stamp=types["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id="")
    points = []
    for k, t in enumerate(traj.times.tolist()):
        sec = int(t // 1)
        points.append(types["trajectory_msgs/msg/JointTrajectoryPoint"](
            positions=traj.positions[k], velocities=traj.velocities[k],
            accelerations=traj.accelerations[k], effort=np.zeros(0),
            time_from_start=types["builtin_interfaces/msg/Duration"](
                sec=sec, nanosec=int(round((t - sec) * 1e9)))))
    msg = types[REFERENCE](header=header, joint_names=list(traj.joint_names), points=points)
    return bytes(store.serialize_cdr(msg, REFERENCE))


def make_bag(path: Path, count: int, with_reference: bool = True):
    """Write ``count`` Puma joint states at 1 kHz (a smooth motion, its torques), a reference."""
    model = RobotModel.named("puma560")
    template = JointStateTemplate(model.joint_names, ("position", "velocity", "effort"))
    duration = count * 1e-3
    knots = np.linspace(0.0, duration, 11)
    traj = JointTrajectory(model.joint_names, knots,
                           [0.3 * np.sin(0.7 * k + np.arange(6)) for k in knots],
                           np.zeros((11, 6)), np.zeros((11, 6)))
    with output_bag(path, overwrite=True) as writer:
        states = writer.add_connection("/joint_states", JOINT_STATE, typestore=typestore())
        if with_reference:
            reference = writer.add_connection("/reference_trajectory", REFERENCE,
                                              typestore=typestore())
            writer.write(reference, 0, reference_cdr(traj))
        for start in range(0, count, CHUNK):
            k = np.arange(start, min(count, start + CHUNK))
            t = k * 1e-3
            q, qd, qdd = traj.sample(t)
            effort = rnea(model, q, qd, qdd)
            stamps = 1_000_000 + k * 1_000_000
            rows = template.encode_many(stamps, position=q, velocity=qd, effort=effort)
            for stamp, row in zip(stamps.tolist(), rows):
                writer.write(states, stamp, row.data)


class Clock:
    """Wall seconds and CPU seconds (this process, or its children) of the block it times."""

    def __init__(self, children: bool = False):
        self.children = children

    def _cpu(self) -> float:
        if self.children:
            use = resource.getrusage(resource.RUSAGE_CHILDREN)
            return use.ru_utime + use.ru_stime
        return time.process_time()

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), self._cpu()
        return self

    def __exit__(self, *_):
        self.wall, self.cpu = time.perf_counter() - self.wall, self._cpu() - self.cpu


def rosbags_alone(path: Path) -> Clock:
    """Time rosbags (its Reader, nothing of the package) reading and deserialising."""
    from rosbags.rosbag2 import Reader
    store = typestore()
    with Clock() as clock:
        with Reader(path) as reader:
            connections = [c for c in reader.connections if c.topic == "/joint_states"]
            for connection, _, raw in reader.messages(connections=connections):
                store.deserialize_cdr(raw, connection.msgtype)
    return clock


def processing(path: Path, out: Path) -> Clock:
    with Clock() as clock:
        process_bag(path, out, RobotModel.named("puma560"),
                    ProcessOptions(overwrite=True, reference_topic="/reference_trajectory"))
    return clock


def command_line(path: Path, out: Path) -> Clock:
    """Time `robot-dynamics bag process` in a fresh process, start to end."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    # an install has its bytecode: without it every run compiled the package's modules from
    # source (0.3-0.5 s of a command's start where PYTHONDONTWRITEBYTECODE is set); the first of
    # the repeats writes it
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with Clock(children=True) as clock:
        subprocess.run([sys.executable, "-m", "robot_dynamics_ros.commands.cli", "bag", "process",
                        str(path), str(out), "--robot", "puma560", "--reference",
                        "/reference_trajectory", "--overwrite", "--no-progress"],
                       env=env, check=True, capture_output=True)
    return clock


def speed(workdir: Path, count: int, repeat: int):
    bag = workdir / "joint_states"
    make_bag(bag, count)
    # in turns, so that the load of a shared machine weighs on both alike
    times = [(rosbags_alone(bag), processing(bag, workdir / "processed"),
              command_line(bag, workdir / "processed_cli")) for _ in range(repeat)]
    best = [min(t[k].wall for t in times) for k in range(3)]
    cpu = [min(t[k].cpu for t in times) for k in range(3)]
    baseline, ours, cli = best
    ratio = ours / baseline
    print(f"bag process, {count:,} Puma joint states at 1 kHz + a reference, MCAP, outputs "
          f"gravity + feedforward + residual (best of {repeat}; wall, and CPU seconds):")
    print(f"  rosbags alone (read + deserialise): {baseline:6.2f} s "
          f"({count / baseline:9,.0f} messages/s), CPU {cpu[0]:.2f} s")
    print(f"  bag process (read, dynamics, write 3 outputs): {ours:6.2f} s "
          f"({count / ours:9,.0f} messages/s) = {ratio:.2f} x rosbags alone; CPU {cpu[1]:.2f} s "
          f"= {cpu[1] / cpu[0]:.2f} x")
    print(f"  robot-dynamics bag process from the command line (a fresh process, start to end): "
          f"{cli:6.2f} s = {cli / baseline:.2f} x rosbags alone; CPU {cpu[2]:.2f} s = "
          f"{cpu[2] / cpu[0]:.2f} x (on a busy machine the CPU ratio is the one to read: "
          "the wall time is what the scheduler gave)")
    print(f"target: at most {TARGET_RATIO:g} x: in-process "
          f"{'met' if ratio <= TARGET_RATIO else 'MISSED'}, command line "
          f"{'met' if cli / baseline <= TARGET_RATIO else 'MISSED'}")


def writing(workdir: Path, count: int, repeat: int):
    """
    Time ``BagWriter.write_rows`` against rosbags' ``write`` per message (what it replaces).

    ``count`` encoded Puma JointStates on each of 3 topics, in chunks of 10,000 as ``bag
    process`` writes them, into an MCAP bag; in turns, best of the repeats (wall and CPU).
    """
    model = RobotModel.named("puma560")
    template = JointStateTemplate(model.joint_names, ("position", "velocity", "effort"))
    rng = np.random.default_rng(1)
    stamps = 1_000_000 + np.arange(count, dtype=np.int64) * 1_000_000
    rows = template.encode_many(stamps, **{f: rng.normal(size=(count, 6)) for f in FIELDS})

    def run(at_once: bool) -> Clock:
        with Clock() as clock, output_bag(workdir / "writing", overwrite=True) as writer:
            topics = [writer.add_connection(f"/out{k}", JOINT_STATE, typestore=typestore())
                      for k in range(3)]
            for start in range(0, count, 10_000):
                part = slice(start, start + 10_000)
                for topic in topics:
                    if at_once:
                        writer.write_rows(topic, stamps[part], rows[part])
                    else:
                        for stamp, row in zip(stamps[part].tolist(), rows[part]):
                            writer.write(topic, stamp, row.data)
        return clock
    times = [(run(False), run(True)) for _ in range(repeat)]
    theirs, ours = (min(t[k].wall for t in times) for k in range(2))
    cpu_theirs, cpu_ours = (min(t[k].cpu for t in times) for k in range(2))
    print(f"writing {3 * count:,} messages into MCAP (best of {repeat}): rosbags' write per "
          f"message {theirs:.2f} s (CPU {cpu_theirs:.2f} s), write_rows {ours:.2f} s (CPU "
          f"{cpu_ours:.2f} s) = {ours / theirs:.2f}x (CPU {cpu_ours / cpu_theirs:.2f}x)")


CHILD = """
import sys
sys.path.insert(0, {root!r})
mode, bag, out = sys.argv[1:4]
if mode == "imports":
    from robot_dynamics_ros.bags.process import process_bag
    from robot_dynamics_ros.core import RobotModel
    RobotModel.named("puma560")
elif mode == "process":
    from robot_dynamics_ros.bags.process import ProcessOptions, process_bag
    from robot_dynamics_ros.core import RobotModel
    process_bag(bag, out, RobotModel.named("puma560"),
                ProcessOptions(overwrite=True, reference_topic="/reference_trajectory"))
else:
    from rosbags.rosbag2 import Reader
    from robot_dynamics_ros.bags.types import typestore
    store = typestore()
    with Reader(bag) as reader:
        states = [c for c in reader.connections if c.topic == "/joint_states"]
        for connection, _, raw in reader.messages(connections=states):
            store.deserialize_cdr(raw, connection.msgtype)
# VmHWM: the peak of this program's own memory (ru_maxrss would include the parent's from before
# the exec, which Linux keeps)
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM")))
"""


def peak_memory_mib(mode: str, bag: Path, out: Path) -> float:
    result = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT)), mode, str(bag),
                             str(out)], capture_output=True, text=True, check=True)
    return int(result.stdout.split()[-1]) / 1024.0


def memory(workdir: Path):
    base = peak_memory_mib("imports", workdir, workdir)
    print(f"\nPeak resident memory (MiB, child process; importing the modules alone: {base:.0f}):")
    for count in (100_000, 1_000_000):
        bag = workdir / f"js_{count}"
        make_bag(bag, count)
        size = sum(p.stat().st_size for p in bag.iterdir()) / 2 ** 20
        ours = peak_memory_mib("process", bag, workdir / f"out_{count}")
        alone = peak_memory_mib("read", bag, workdir / "unused")
        print(f"  {count:>9,} joint states (bag {size:6.0f} MiB): bag process {ours:6.0f}, "
              f"rosbags alone {alone:6.0f}")
        shutil.rmtree(bag)
        shutil.rmtree(workdir / f"out_{count}", ignore_errors=True)


def play_timing(workdir: Path):
    model = RobotModel.named("puma560")
    count = 5000
    t = np.arange(count) * 1e-3
    bag = workdir / "play_1khz"
    write_joint_states(bag, model.joint_names, t, np.zeros((count, 6)), np.zeros((count, 6)),
                       np.zeros((count, 6)), overwrite=True)
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               ROS_DOMAIN_ID=os.environ.get("BENCH_ROS_DOMAIN_ID", str(1 + os.getpid() % 100)),
               ROS_LOG_DIR=tempfile.mkdtemp(prefix="bench-bags-roslog-"))
    cli = [sys.executable, "-m", "robot_dynamics_ros.commands.cli", "bag"]
    recorded = workdir / "played"
    shutil.rmtree(recorded, ignore_errors=True)
    recorder = subprocess.Popen([*cli, "record", str(recorded), "--topics", "/bench_js"],
                                env=env, stdout=subprocess.PIPE, text=True)
    try:
        recorder.stdout.readline()                       # "recording to ..."
        os.environ.update({k: env[k] for k in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_DOMAIN_ID",
                                               "ROS_LOG_DIR")})
        from robot_dynamics_ros.bags.play import PlayOptions, play
        report = play(bag, PlayOptions(remap={"/joint_states": "/bench_js"},
                                       wait_for_subscribers=30.0))
        late = np.array(report.lateness) * 1e6
        print(f"\nbag play at 1 kHz, 5,000 messages in {report.seconds:.3f} s: published after "
              f"they were due by median {np.median(late):.0f} us, p99 "
              f"{np.percentile(late, 99):.0f} us, max {late.max():.0f} us")
        time.sleep(0.5)
    finally:
        recorder.send_signal(signal.SIGINT)
        recorder.wait(30)
    from robot_dynamics_ros.bags import load_joint_states
    states = load_joint_states(recorded, "/bench_js")
    intervals = np.diff(states.time) * 1e-9
    deviation = np.abs(intervals - 1e-3) * 1e6
    print(f"received by bag record in another process ({states.time.size} of {count}): "
          f"|interval - 1 ms| median {np.median(deviation):.0f} us, "
          f"p99 {np.percentile(deviation, 99):.0f} us, max {deviation.max():.0f} us")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 messages, one repeat")
    parser.add_argument("--memory", action="store_true", help="peak memory up to 1e6 messages")
    parser.add_argument("--play", action="store_true", help="bag play timing at 1 kHz")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="bench-bags-"))
    try:
        speed(workdir, 20_000 if args.quick else 100_000, 1 if args.quick else 3)
        writing(workdir, 20_000 if args.quick else 100_000, 1 if args.quick else 3)
        if args.memory:
            memory(workdir)
        if args.play:
            play_timing(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"(load average {os.getloadavg()[0]:.1f}; peak memory of this process "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
