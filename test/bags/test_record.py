"""
bag record over DDS: recordings of the simulator in both storages, Ctrl-C, and SIGKILL.

Oracles: the core's simulation of the same robot; the independent readers (foxglove's mcap,
plain sqlite3 against rosbag2's schema) decoding the recordings; the wall clock at the kill.
"""

import os
import signal
import threading
import time

import numpy as np
import pytest

from bag_cli import cli, wait_exit, wait_for_log
from independent_readers import independent_messages, joint_state_rows
from robot_dynamics_ros.bags import bag_info, load_joint_states
from robot_dynamics_ros.core import RobotModel, simulate
from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import NodeProcess, private_namespace

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)


def test_recordings_of_the_simulator_in_both_formats_are_the_core_simulation(
        ros_env, ros_client, tmp_path):
    model = RobotModel.named("puma560")
    q0 = [0.2, 0.5, -0.8, 0.3, 0.4, 0.1]
    namespace = private_namespace("rec")
    topic = f"{namespace}/joint_states"
    sim = NodeProcess.node("robot_dynamics_ros.nodes.simulator", ros_env, tmp_path,
                           "dynamics_simulator", namespace,
                           {"robot_description": "puma560", "publish_rate": 200.0,
                            "publish_clock": True, "initial_position": q0,
                            "command_timeout": 0.01})
    recorders = {}
    try:
        assert ros_client.spin_until(lambda: ros_client.node.count_publishers(topic) > 0,
                                     timeout=30.0), sim.log_text()
        for storage in ("mcap", "sqlite3"):
            recorders[storage] = cli(ros_env, tmp_path, f"record_{storage}", "record",
                                     tmp_path / storage, "--topics", topic, "--storage", storage)
        for recorder in recorders.values():
            wait_for_log(recorder, f"recording '{topic}'")
        time.sleep(1.5)
        for recorder in recorders.values():
            recorder.proc.send_signal(signal.SIGINT)
        for recorder in recorders.values():
            assert wait_exit(recorder) == 0, recorder.log_path.read_text()
    finally:
        sim.stop()
    for storage in recorders:
        info = bag_info(tmp_path / storage, check=True)
        assert info.storage == storage and info.topics[0].count > 50
        states = load_joint_states(tmp_path / storage, topic)
        t = states.stamp * 1e-9                       # simulated time (the node's /clock)
        reference = simulate(model, q0, np.zeros(6), round(t[-1], 3))
        rows = np.rint(t / 1e-3).astype(int)
        np.testing.assert_allclose(states.position, reference.q[rows], atol=1e-9)
        np.testing.assert_allclose(states.velocity, reference.qd[rows], atol=1e-9)
        np.testing.assert_allclose(states.effort, 0.0, atol=0.0)      # no command: zero torque
        rows = joint_state_rows(independent_messages(tmp_path / storage), topic)
        assert rows["stamp"] == states.stamp.tolist() and rows["time"] == states.time.tolist()
        np.testing.assert_array_equal(rows["position"], states.position)
        np.testing.assert_array_equal(rows["velocity"], states.velocity)


def test_ctrl_c_during_recording_leaves_a_readable_bag(ros_env, tmp_path):
    namespace = private_namespace("ctrl_c")
    sim = NodeProcess.node("robot_dynamics_ros.nodes.simulator", ros_env, tmp_path,
                           "dynamics_simulator", namespace,
                           {"robot_description": "planar2", "publish_rate": 500.0})
    recorder = cli(ros_env, tmp_path, "record", "record", tmp_path / "interrupted", "--topics",
                   f"{namespace}/joint_states")
    try:
        wait_for_log(recorder, f"recording '{namespace}/joint_states'")
        time.sleep(1.0)
        recorder.proc.send_signal(signal.SIGINT)
        assert wait_exit(recorder, 20.0) == 0, recorder.log_path.read_text()
    finally:
        sim.stop()
        recorder.stop()
    log = recorder.log_path.read_text()
    assert "(interrupted)" in log and "Traceback" not in log
    info = bag_info(tmp_path / "interrupted", check=True)
    states = load_joint_states(tmp_path / "interrupted", f"{namespace}/joint_states")
    assert info.message_count == states.stamp.size > 100
    assert sorted(os.listdir(tmp_path)) == sorted(["interrupted", "record.log",
                                                   "dynamics_simulator.log"])


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_a_recorder_killed_outright_loses_at_most_a_second(ros_env, tmp_path, storage):
    namespace = private_namespace(f"kill_{storage}")
    topic = f"{namespace}/joint_states"
    sim = NodeProcess.node("robot_dynamics_ros.nodes.simulator", ros_env, tmp_path,
                           "dynamics_simulator", namespace,
                           {"robot_description": "planar2", "publish_rate": 200.0})
    recorder = cli(ros_env, tmp_path, "record", "record", tmp_path / "killed", "--topics", topic,
                   "--storage", storage)
    try:
        wait_for_log(recorder, f"recording '{topic}'")
        time.sleep(3.0)
        killed = time.time_ns()
        recorder.proc.send_signal(signal.SIGKILL)
        wait_exit(recorder, 20.0)
    finally:
        sim.stop()
        recorder.stop()
    assert not (tmp_path / "killed").exists()
    result = cli(ros_env, tmp_path, "recover", "recover", tmp_path / "killed")
    assert wait_exit(result) == 0, result.log_path.read_text()
    states = load_joint_states(tmp_path / "killed", topic)
    assert states.time.size > 200                     # 3 s at 200 Hz, less at most 1 s
    assert killed - states.time[-1] < 1_000_000_000, (killed - states.time[-1]) * 1e-9
    assert not list(tmp_path.glob(".killed.partial-*"))


class _GatedWriter:
    """A BagWriter whose writes wait for a permit each (``open()`` lets every write through)."""

    def __init__(self, writer):
        self.writer, self.permits = writer, threading.Semaphore(0)
        self.entered = threading.Event()
        self.add_connection = writer.add_connection

    def open(self):
        self.permits.release(1_000_000)

    def write(self, connection, timestamp, data):
        self.entered.set()
        self.permits.acquire()
        self.writer.write(connection, timestamp, data)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_a_recorder_behind_its_publisher_drains_the_queue_before_the_bag_is_closed(
        ros_env, tmp_path, storage):
    """
    What DDS delivered but the executor did not hand over yet is written at the close.

    The storage is held up deterministically: the writer blocks at the first message while
    the publisher sends all of them; the spinning stops after that first one (as the demo stops
    its executors when the run is over).  Every message must be in the bag, in order, decoded by
    the independent readers (the demo once lost the last 0.17 s of its run with SQLite3).
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    from robot_dynamics_ros.bags.record import Recorder
    from robot_dynamics_ros.bags.storage import RECORD_FLUSH_PERIOD, output_bag
    topic, count = f"{private_namespace(f'drain_{storage}')}/joint_states", 300
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    try:
        source, sink = (rclpy.create_node(name, context=context) for name in ("source", "sink"))
        publisher = source.create_publisher(JointState, topic, QoSProfile(
            depth=count, reliability=ReliabilityPolicy.RELIABLE))
        executor.add_node(sink)
        with output_bag(tmp_path / "bag", storage, flush_period=RECORD_FLUSH_PERIOD) as writer:
            gated = _GatedWriter(writer)
            recorder = Recorder(sink, gated, [topic], qos_depth=count)
            end = time.monotonic() + 20.0
            while not recorder.connections and time.monotonic() < end:
                recorder.discover()
                time.sleep(0.05)
            while publisher.get_subscription_count() == 0 and time.monotonic() < end:
                time.sleep(0.05)
            stopping = threading.Event()

            def spin():
                while not stopping.is_set():
                    executor.spin_once(timeout_sec=0.05)
            spinner = threading.Thread(target=spin)
            spinner.start()
            for k in range(count):
                publisher.publish(JointState(name=["j"], position=[0.001 * k]))
            assert gated.entered.wait(20.0)
            stopping.set()
            gated.permits.release()                     # the first message is written ...
            spinner.join(20.0)
            assert recorder.counts[topic] == 1          # ... and the spinning has stopped
            gated.open()
            assert recorder.drain({topic: count}) == {}
            recorder.stop()
    finally:
        executor.shutdown(timeout_sec=1.0)
        rclpy.try_shutdown(context=context)
    assert recorder.counts[topic] == count
    rows = joint_state_rows(independent_messages(tmp_path / "bag"), topic)
    np.testing.assert_array_equal(np.ravel(rows["position"]), 0.001 * np.arange(count))


PUBLISHER = """
import sys, time
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
rclpy.init()
node = rclpy.create_node("busy_test_publisher")
pub = node.create_publisher(JointState, sys.argv[1],
                            QoSProfile(depth=2000, reliability=ReliabilityPolicy.RELIABLE))
deadline = time.monotonic() + 20.0
while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
    time.sleep(0.01)
print("matched", flush=True)
sys.stdin.readline()                  # the test's main thread is busy from now on
start = time.monotonic()
for i in range(int(sys.argv[2])):     # 500 Hz, on the clock
    delay = start + i / 500.0 - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    msg = JointState(name=["j"], position=[float(i)])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(i * 2_000_000, 1_000_000_000)
    pub.publish(msg)
print("published", flush=True)
sys.stdin.readline()
rclpy.shutdown()
"""


def test_the_recorder_thread_keeps_up_with_500_hz_while_the_main_thread_is_busy(
        ros_env, tmp_path):
    """A 2 s CPU-bound call in the recording process: the bag still holds every message."""
    import subprocess
    import sys

    import rclpy
    from robot_dynamics_ros.bags.record import Recorder, RecorderThread
    from robot_dynamics_ros.bags.storage import output_bag
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    topic, count = f"{private_namespace('busy')}/joint_states", 1500     # 3 s at 500 Hz
    publisher = subprocess.Popen([sys.executable, "-c", PUBLISHER, topic, str(count)],
                                 env=ros_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True)
    context = rclpy.Context()
    rclpy.init(args=["test"], context=context)
    node = rclpy.create_node("busy_test_recorder", context=context)
    try:
        with output_bag(tmp_path / "busy", "mcap") as writer:
            recorder = Recorder(node, writer, [topic])
            recorder.expect(topic, "sensor_msgs/msg/JointState",
                            QoSProfile(depth=2000, reliability=ReliabilityPolicy.RELIABLE))
            thread = RecorderThread(recorder, context).start()
            assert publisher.stdout.readline().strip() == "matched"
            publisher.stdin.write("go\n")
            publisher.stdin.flush()
            busy_until, spins = time.monotonic() + 2.0, 0
            while time.monotonic() < busy_until:       # Python holding the GIL, 2 s
                spins += sum(i * i for i in range(1000))
            written_while_busy = recorder.counts[topic]     # (the thread ran meanwhile)
            assert publisher.stdout.readline().strip() == "published"
            thread.stop()
            missing = recorder.drain({topic: count}, timeout=10.0)
            recorder.stop()
        assert missing == {} and recorder.counts[topic] == count
        assert written_while_busy > 0
    finally:
        publisher.stdin.write("done\n")
        publisher.stdin.close()
        publisher.wait(timeout=20.0)
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    rows = joint_state_rows(independent_messages(tmp_path / "busy"), topic)
    assert [p[0] for p in rows["position"]] == [float(i) for i in range(count)]
