"""
Tests of bag record / play with DDS: separate simulator, node, recorder and player processes.

* a recording of the simulator node holds exactly the motion the core's ``simulate`` gives, in
  both storage formats;
* a bag played (with --clock) into gravity_compensation and inverse_dynamics gives, recorded,
  the outputs that ``bag process`` computes offline from the same bag, and the core's torques;
* Ctrl-C (SIGINT) during a recording leaves a complete, readable bag and exit code 0;
* play's options: --rate, --start-offset, --topics, --remap, --loop.
"""
import os
import signal
import sys
import time

import numpy as np
import pytest
from rclpy.serialization import serialize_message

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import NodeProcess, private_namespace
from robot_dynamics_ros.bags import bag_info, load_joint_states, write_joint_states
from robot_dynamics_ros.bags.joint_state_cdr import JOINT_STATE, JointStateEncoder
from robot_dynamics_ros.bags.process import REFERENCE, process_bag
from robot_dynamics_ros.bags.storage import output_bag
from robot_dynamics_ros.bags.types import typestore
from robot_dynamics_ros.commands.demo import demo_trajectory
from robot_dynamics_ros.core import RobotModel, gravity_torques, simulate
from robot_dynamics_ros.ros_messages import trajectory_to_msg

CLI = [sys.executable, "-m", "robot_dynamics_ros.cli", "bag"]
NS = 1_000_000_000


def cli(env, log_dir, name, *args):
    """Start ``robot-dynamics bag ...`` as a process (its output in ``name``.log)."""
    return NodeProcess([*CLI, *map(str, args)], env, log_dir / f"{name}.log")


def wait_exit(process, timeout=60.0):
    try:
        process.proc.wait(timeout)
    finally:
        code = process.stop()
    return code


def wait_for_log(process, text, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if text in process.log_text():
            return
        assert process.alive(), process.log_text()
        time.sleep(0.05)
    raise AssertionError(f"'{text}' not in:\n{process.log_text()}")


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


def input_bag(path, model, duration=1.5, rate=200.0):
    """Write a bag of joint states of a simulated run at ``rate`` Hz and, first, a reference."""
    traj = demo_trajectory(model, duration)
    run = simulate(model, traj.positions[0], np.zeros(model.n), duration,
                   torque=lambda t, q, qd: gravity_torques(model, q) + 5.0 * np.sin(3 * t))
    keep = slice(None, None, round(1.0 / (rate * run.dt)))
    start = 10 * NS
    stamps = start + np.rint(run.t[keep] * 1e9).astype(np.int64)
    rows = JointStateEncoder(model.joint_names, ("position", "velocity", "effort")).encode(
        stamps, position=run.q[keep], velocity=run.qd[keep], effort=run.tau[keep])
    with output_bag(path) as writer:
        reference = writer.add_connection("/reference_trajectory", REFERENCE,
                                          typestore=typestore())
        states = writer.add_connection("/joint_states", JOINT_STATE, typestore=typestore())
        reference_raw = bytes(serialize_message(trajectory_to_msg(traj)))
        writer.write(reference, start - 50_000_000, reference_raw)
        for stamp, row in zip(stamps.tolist(), rows):
            writer.write(states, stamp, row.data)
    return traj


def test_playback_into_the_nodes_equals_offline_processing(ros_env, tmp_path):
    model = RobotModel.named("puma560")
    source = tmp_path / "input"
    input_bag(source, model, duration=1.0, rate=50.0)
    namespace = private_namespace("online")
    # The nodes' joint_states subscriptions are best effort by default (they accept sensor-data
    # publishers too); a best-effort reader drops what arrives before it has matched the player,
    # so for a bag played the moment subscribers appear, the QoS override makes them reliable.
    params = {"robot_description": "puma560", "use_sim_time": True, "input_timeout": 0.0,
              f"qos_overrides.{namespace}/joint_states.subscription.reliability": "reliable"}
    nodes = [NodeProcess.node(f"robot_dynamics_ros.nodes.{module}", ros_env, tmp_path, module,
                              namespace, params)
             for module in ("gravity_compensation", "inverse_dynamics")]
    outputs = [f"{namespace}/gravity_effort", f"{namespace}/feedforward_effort"]
    recorder = cli(ros_env, tmp_path, "record", "record", tmp_path / "online", "--topics",
                   *outputs)
    try:
        wait_for_log(nodes[0], "gravity compensation for")
        wait_for_log(nodes[1], "inverse dynamics for")
        wait_for_log(recorder, "recording to")
        # the recorder subscribes once it has discovered each node's publisher; a message the
        # node publishes before that match is not recorded (once 44 of 51 arrived under load)
        for topic in outputs:
            wait_for_log(recorder, f"recording '{topic}'")
        time.sleep(1.0)
        # slowly (80 ms between messages): the clock leads each message by 40 ms, so even a
        # node slowed down by a busy machine handles every message at its recorded time
        player = cli(ros_env, tmp_path, "play", "play", source, "--clock", "--rate", 0.25,
                     "--wait-for-subscribers", 20, "--remap",
                     f"/joint_states:={namespace}/joint_states",
                     f"/reference_trajectory:={namespace}/reference_trajectory",
                     # both nodes: a new process's graph may show only the first one at first
                     # (a fresh-clone CI run: gravity missed the first 16 of 51 messages)
                     "--min-subscribers", f"{namespace}/joint_states:=2")
        assert wait_exit(player) == 0, player.log_path.read_text()
        # the nodes' answers to the last messages are still on their way on a loaded machine
        # (once the last one came after 0.5 s)
        time.sleep(3.0)
        recorder.proc.send_signal(signal.SIGINT)
        assert wait_exit(recorder) == 0, recorder.log_path.read_text()
    finally:
        for node in nodes:
            node.stop()
        recorder.stop()
    process_bag(source, tmp_path / "offline", model, outputs=["gravity", "feedforward"],
                reference_topic="/reference_trajectory", namespace="")
    for topic, output in zip(outputs, ("/gravity_effort", "/feedforward_effort")):
        online = load_joint_states(tmp_path / "online", topic, require_position=False)
        offline = load_joint_states(tmp_path / "offline", output, require_position=False)
        assert online.stamp.size == offline.stamp.size >= 50, (topic, online.stamp.size)
        np.testing.assert_array_equal(online.stamp, offline.stamp)
        np.testing.assert_allclose(online.effort, offline.effort, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(online.position, offline.position, atol=1e-12)
        np.testing.assert_allclose(online.velocity, offline.velocity, atol=1e-12)
    states = load_joint_states(source)
    gravity = load_joint_states(tmp_path / "online", outputs[0], require_position=False)
    np.testing.assert_allclose(gravity.effort, gravity_torques(model, states.position), atol=1e-9)


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


def test_play_options_rate_offset_topics_remap_loop(ros_env, tmp_path):
    model = RobotModel.named("planar2")
    t = np.arange(0.0, 1.0, 0.01)
    write_joint_states(tmp_path / "in", model.joint_names, t, np.zeros((100, 2)))
    namespace = private_namespace("play")
    recorder = cli(ros_env, tmp_path, "record", "record", tmp_path / "out", "--topics",
                   f"{namespace}/a", f"{namespace}/b")
    try:
        wait_for_log(recorder, "recording to")
        fast = cli(ros_env, tmp_path, "fast", "play", tmp_path / "in", "--rate", 2.0,
                   "--start-offset", 0.5, "--topics", "/joint_states", "--remap",
                   f"/joint_states:={namespace}/a", "--wait-for-subscribers", 20)
        assert wait_exit(fast) == 0, fast.log_path.read_text()
        looped = cli(ros_env, tmp_path, "loop", "play", tmp_path / "in", "--loop", "--remap",
                     f"/joint_states:={namespace}/b", "--wait-for-subscribers", 20)
        wait_for_log(looped, "playing")
        time.sleep(2.5)
        looped.proc.send_signal(signal.SIGINT)
        assert wait_exit(looped) == 0, looped.log_path.read_text()
        time.sleep(0.3)
        recorder.proc.send_signal(signal.SIGINT)
        assert wait_exit(recorder) == 0, recorder.log_path.read_text()
    finally:
        recorder.stop()
    assert "played 50 messages in 0.2 s" in fast.log_path.read_text()    # half the bag, 2x speed
    a = load_joint_states(tmp_path / "out", f"{namespace}/a")
    np.testing.assert_array_equal(a.stamp, np.rint(t[50:] * 1e9).astype(np.int64))
    intervals = np.diff(a.time) * 1e-9
    assert np.median(intervals) == pytest.approx(0.005, abs=1e-3)
    b = load_joint_states(tmp_path / "out", f"{namespace}/b")
    assert b.stamp.size > 150 and "(interrupted)" in looped.log_path.read_text()   # > one pass
