"""
bag play over DDS: playback into the nodes equals offline processing.

Also rate, offset, topic selection, remapping and looping, and rosbag2's own talker bags (which
rosbags alone reads as empty) played whole, as rosbag2's test_sequential_reader reads them.
"""

import re
import signal
import time

import numpy as np
import pytest
from rclpy.serialization import serialize_message

from bag_cli import cli, wait_exit, wait_for_log
from robot_dynamics_ros.bags import load_joint_states, write_joint_states
from robot_dynamics_ros.messages.cdr import JOINT_STATE, JointStateTemplate
from robot_dynamics_ros.bags.process import REFERENCE, ProcessOptions, process_bag
from robot_dynamics_ros.bags.storage import output_bag
from robot_dynamics_ros.bags.types import typestore
from robot_dynamics_ros.core.trajectories.demo import demo_trajectory
from robot_dynamics_ros.core import RobotModel, gravity_torques, simulate
from robot_dynamics_ros.messages.ros import trajectory_to_msg
from locations import DATA
from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import NodeProcess, private_namespace

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

NS = 1_000_000_000


def input_bag(path, model, duration=1.5, rate=200.0):
    """Write a bag of joint states of a simulated run at ``rate`` Hz and, first, a reference."""
    traj = demo_trajectory(model, duration)
    run = simulate(model, traj.positions[0], np.zeros(model.n), duration,
                   torque=lambda t, q, qd: gravity_torques(model, q) + 5.0 * np.sin(3 * t))
    keep = slice(None, None, round(1.0 / (rate * run.dt)))
    start = 10 * NS
    stamps = start + np.rint(run.t[keep] * 1e9).astype(np.int64)
    rows = JointStateTemplate(model.joint_names, ("position", "velocity", "effort")).encode_many(
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
        wait_for_log(nodes[0], "active: publishing")
        wait_for_log(nodes[1], "active: publishing")
        wait_for_log(recorder, "recording to")
        # the recorder subscribes once it has discovered each node's publisher; a message the
        # node publishes before that match is not recorded (once 44 of 51 arrived under load)
        for topic in outputs:
            wait_for_log(recorder, f"recording '{topic}'")
        time.sleep(1.0)
        # slowly (80 ms between messages). inverse_dynamics samples the reference at each joint
        # state's stamp, so when a loaded node handles a message no longer matters (it sampled
        # at its clock once: /clock had moved on by the time it got to 2 of the 51 messages)
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
    process_bag(source, tmp_path / "offline", model,
                ProcessOptions(outputs=("gravity", "feedforward"),
                               reference_topic="/reference_trajectory", namespace=""))
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
    played = re.search(r"played 50 messages in ([0-9.]+) s", fast.log_path.read_text())
    # half the bag at 2x: its last message is due 0.245 s in (wall time: later on a loaded machine)
    assert played and 0.2 <= float(played.group(1)) < 2.0, fast.log_path.read_text()
    a = load_joint_states(tmp_path / "out", f"{namespace}/a")
    np.testing.assert_array_equal(a.stamp, np.rint(t[50:] * 1e9).astype(np.int64))
    intervals = np.diff(a.time) * 1e-9
    assert np.median(intervals) == pytest.approx(0.005, abs=1e-3)
    b = load_joint_states(tmp_path / "out", f"{namespace}/b")
    assert b.stamp.size > 150 and "(interrupted)" in looped.log_path.read_text()   # > one pass


def test_rosbag2s_talker_bags_play_every_message(ros_env, ros_client, tmp_path):
    from std_msgs.msg import String
    talker = DATA / "bags" / "rosbag2" / "rosbag2_py" / "test" / "resources"
    for storage in ("mcap", "sqlite3"):
        namespace = private_namespace(f"talker_{storage}")
        received = ros_client.collect(String, f"{namespace}/topic")
        player = cli(ros_env, tmp_path, f"talker_{storage}", "play", talker / storage / "talker",
                     "--topics", "topic", "--rate", 20.0, "--remap", f"/topic:={namespace}/topic",
                     "--wait-for-subscribers", 20)
        assert wait_exit(player) == 0, player.log_path.read_text()
        assert "played 10 messages" in player.log_path.read_text()
        assert ros_client.spin_until(lambda: len(received.messages) == 10, timeout=10.0), \
            [m.data for m in received.messages]
        assert [m.data for m in received.messages] == [f"Hello, world! {k}" for k in range(10)]
