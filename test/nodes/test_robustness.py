"""
Robustness: the defects found by fuzzing and load, and every bad message kind over DDS.

Issue 10's N1-N5, N7 and kp = 1e308, and every bad message kind fed to running nodes over DDS
with nothing wrong published.

The parameter and request checks run on nodes created in this process (a private rclpy Context,
no DDS traffic needed); the cost claims are checked by counting operations (names that count
their comparisons, sequences that count their reads), not by timing.  The DDS test runs the
gravity-compensation and inverse-dynamics nodes in one ``robot-dynamics bringup`` process, marks
every bad message with its own header stamp, and checks that no output carries such a stamp,
that every output is finite, and that the nodes still answer valid messages correctly.
"""
import math
import struct
import sys

import numpy as np
import pytest

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import TIMEOUT, NodeProcess, private_namespace
from counting import CountingName

from robot_dynamics_ros.core import RobotModel, gravity_torques, rnea

from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

MODEL = RobotModel.named("puma560")
NAMES = list(MODEL.joint_names)


@pytest.fixture(scope="module")
def local_nodes(ros_env):
    """Nodes in this process, on a private context: ``make(kind)``."""
    import rclpy

    from robot_dynamics_ros.nodes.bringup import node_descriptions
    context = rclpy.Context()
    rclpy.init(context=context)
    made = []

    def make(kind):
        d, = node_descriptions(nodes=kind, params_file="")
        node = d.node_class()(f"{kind}_{len(made)}", namespace=private_namespace("rb_local"),
                              context=context, parameter_overrides=[
                                  Parameter(k, value=v) for k, v in d.parameters.items()])
        made.append(node)
        assert node.start()             # (autostart: a managed node is active)
        return node
    yield make
    for node in made:
        node.destroy_node()
    rclpy.try_shutdown(context=context)


def refused(node, **values) -> str:
    """Try to set ``values`` on ``node``; return the reason given, or '' if accepted."""
    result = node.set_parameters_atomically([Parameter(k, value=v) for k, v in values.items()])
    return "" if result.successful else result.reason


# ------------------------------------------------------------------------------ N1: bounded work
def test_n1_scaler_work_is_bounded(local_nodes):
    node = local_nodes("trajectory_scaler")
    assert "samples" in refused(node, samples=2_000_000_000)
    assert "samples" in refused(node, samples=5_000_000)
    assert "grid_steps" in refused(node, grid_steps=100_000)
    assert refused(node, samples=20_000) == "" and refused(node, grid_steps=2_000) == ""
    assert refused(node, samples=1000, grid_steps=150) == ""
    # a trajectory longer than MAX_POINTS is refused before it is converted
    from robot_dynamics_ros.nodes.trajectory_scaler import MAX_POINTS
    msg = JointTrajectory(joint_names=NAMES,
                          points=[JointTrajectoryPoint()] * (MAX_POINTS + 1))
    with pytest.raises(ValueError, match=f"{MAX_POINTS + 1} points, more than"):
        node.scale(msg)


# ------------------------------------------------------------------------------ N2: payload
def test_n2_payload_is_validated_as_a_whole_at_every_change(local_nodes):
    node = local_nodes("gravity_compensation")
    assert node.get_parameter("payload.mass").value == 0.0
    # not physical (triangle inequality broken), with mass 0: refused now, not at the next change
    reason = refused(node, **{"payload.inertia": [1.0, 0.1, 0.1, 0.0, 0.0, 0.0]})
    assert "payload" in reason and "inertia" in reason, reason
    assert "payload" in refused(node, **{"payload.inertia": [-1.0, -1.0, -1.0, 0.0, 0.0, 0.0]})
    # so a later valid mass change is accepted, and applied
    assert refused(node, **{"payload.mass": 2.0, "payload.com": [0.0, 0.0, 0.1]}) == ""
    q = np.array([0.2, 0.7, -0.4, 0.1, 0.5, 0.3])
    np.testing.assert_allclose(node.dynamics.gravity_torques(q),
                               gravity_torques(MODEL.with_payload(2.0, [0.0, 0.0, 0.1]), q),
                               rtol=1e-12, atol=1e-12)
    assert "payload.mass" in refused(node, **{"payload.mass": 1e308})


# ------------------------------------------------------------------------------ N3: O(N) names
# CountingName (test_joint_names.py): a joint name that counts comparisons and hashes


def test_n3_service_joint_names_are_checked_in_linear_time():
    from robot_dynamics_ros.nodes.dynamics_service import DynamicsServiceNode
    n = 30_000
    names = [CountingName(f"joint{i}") for i in range(n)]
    CountingName.ops = 0
    with pytest.raises(ValueError, match="unknown joint"):
        DynamicsServiceNode.request_order(names, MODEL)
    assert CountingName.ops <= 10 * n, CountingName.ops      # quadratic: ~10^9


# ------------------------------------------------------------------------------ N4, N5
class CountingNames(list):
    """A message's name list that counts the names read from it."""

    reads = 0

    def __iter__(self):
        for name in super().__iter__():
            CountingNames.reads += 1
            yield name

    def __getitem__(self, i):
        CountingNames.reads += 1
        return super().__getitem__(i)


def test_n5_absurd_sizes_are_refused_before_any_per_joint_work():
    from robot_dynamics_ros.messages.conversions import (JointOrder, MessageRejected,
                                                         joint_state_arrays)

    class Message:
        name = CountingNames(f"j{i}" for i in range(100_000))
        position = velocity = [0.0] * 100_000

    CountingNames.reads = 0
    with pytest.raises(MessageRejected, match="100000 joint names, more than") as info:
        joint_state_arrays(Message, JointOrder(NAMES))
    assert info.value.kind == "too large" and CountingNames.reads == 0


def test_n4_log_lines_are_capped():
    from robot_dynamics_ros.nodes.errors import MAX_MESSAGE_CHARS, describe
    from robot_dynamics_ros.messages.conversions import JointOrder, MessageRejected
    unknown = [f"unknown_joint_{i}" for i in range(1000)]          # under the size limit
    with pytest.raises(MessageRejected) as info:
        JointOrder(NAMES).indices(unknown + NAMES[:5], "joint_states")
    kind, text = describe(info.value)
    assert kind == "joint names" and "missing joint(s) ['joint6']" in text
    assert len(text) < 600
    kind, text = describe(ValueError("x" * 1_000_000))
    assert len(text) < MAX_MESSAGE_CHARS + 100


# ------------------------------------------------------------------------------ N7, kp
def test_n7_margin_errors_name_the_parameters(local_nodes):
    node = local_nodes("trajectory_scaler")
    for name in ("effort_margin", "velocity_margin"):
        for value in (0.0, -0.5, 1.5):
            reason = refused(node, **{name: value})
            assert name in reason and "_scale" not in reason, reason


def test_absurd_gains_are_refused(local_nodes):
    node = local_nodes("inverse_dynamics")
    assert "kp" in refused(node, kp=[1e308] * 6)
    assert "kd" in refused(node, kd=[1e308] * 6)
    assert "kp" in refused(node, kp=[float("nan")] * 6)
    assert "input_timeout" in refused(node, input_timeout=1e308)
    assert "warning_period" in refused(node, warning_period=math.inf)
    assert refused(node, kp=[1e6] * 6, kd=[1e4] * 6) == ""


# ------------------------------------------------------------------------------ over DDS
def joint_state(sec, names=NAMES, position=None, velocity=None):
    if position is None:
        position = [0.1] * 6
    msg = JointState(name=list(names), position=list(position))
    if velocity is not None:
        msg.velocity = list(velocity)
    msg.header.stamp.sec = sec
    return msg


BAD_JOINT_STATES = {                                   # stamp -> (message, reason in the log)
    101: (joint_state(101, position=[0.1] * 5 + [float("nan")]), "is nan"),
    102: (joint_state(102, velocity=[0.0] * 5 + [float("inf")]), "is inf"),
    103: (joint_state(103, position=[0.1] * 5), "6 names but 5 positions"),
    104: (joint_state(104, velocity=[0.0] * 3), "6 names but 3 velocities"),
    105: (joint_state(105, names=NAMES[:5], position=[0.1] * 5), "missing joint(s) ['joint6']"),
    106: (joint_state(106, names=NAMES[:5] + ["joint1"]), "joint 'joint1' appears twice"),
    107: (joint_state(107, names=[f"j{i}" for i in range(5000)], position=[0.0] * 5000),
          "5000 joint names, more than"),
    108: (joint_state(108, position=[1e200] * 6, velocity=[1e200] * 6), "beyond 1e+06"),
    109: (joint_state(109, names=[], position=[]), "missing joint(s)"),
    # bytes that are no JointState (a raw publisher, a damaged bag), carrying stamp 110 where a
    # JointState has its stamp: the nodes take joint_states serialized
    110: (b"\x00\x01\x00\x00" + struct.pack("<iI", 110, 0) + b"\xff" * 24,
          "bytes that are not a serialized sensor_msgs/JointState"),
}


def reference(stamp_sec=0, names=NAMES, times=(0.0, 1.0), positions=None, velocities=True):
    msg = JointTrajectory(joint_names=list(names))
    msg.header.stamp.sec = stamp_sec
    for k, t in enumerate(times):
        row = positions[k] if positions else [0.1 * k] * len(names)
        p = JointTrajectoryPoint(positions=list(row))
        if velocities:
            p.velocities = [0.0] * len(names)
        p.time_from_start.sec, p.time_from_start.nanosec = int(t), int(round((t % 1) * 1e9))
        msg.points.append(p)
    return msg


BAD_REFERENCES = [
    (reference(positions=[[0.0] * 5 + [float("nan")], [0.0] * 6]),
     "positions of joint 'joint6' at point 0 is nan"),
    (reference(positions=[[1e308] * 6, [0.0] * 6]),
     "positions of joint 'joint1' at point 0 is 1e+308, beyond"),
    (reference(positions=[[0.0] * 6, [2e6] * 6]),
     "positions of joint 'joint1' at point 1 is 2e+06, beyond"),
    (reference(times=(1.0, 1.0)), "not after point"),
    (reference(stamp_sec=5), "ends in the past"),
    (reference(names=NAMES[:5]), "missing joint(s) ['joint6']"),
]


def logs(client, ns, text):
    """/rosout messages of the nodes in namespace ``ns`` that contain ``text``."""
    return [m for m in client.rosout.messages if m.name.startswith(ns[1:] + ".") and text in m.msg]


@pytest.fixture(scope="module")
def bringup(ros_env, ros_client, tmp_path_factory):
    ns = private_namespace("rb_dds")
    tmp = tmp_path_factory.mktemp("robustness")
    argv = [sys.executable, "-m", "robot_dynamics_ros.commands.cli", "bringup", "--namespace", ns,
            "--nodes", "inverse_dynamics,gravity_compensation", "--params-file", "",
            "--joint-states", f"{ns}/joint_states", "--ros-args", "-p", "warning_period:=0.0",
            "-p", "input_timeout:=0.0", "-p", "friction_compensation:=true"]
    proc = NodeProcess(argv, ros_env, tmp / "bringup.log")
    try:
        yield proc, ros_client, ns
    finally:
        proc.stop()
    assert proc.proc.returncode in (0, -15), proc.log_text()


def test_every_bad_message_kind_is_rejected_and_nothing_wrong_is_published(bringup):
    proc, c, ns = bringup
    states = c.publisher(JointState, f"{ns}/joint_states")
    refs = c.publisher(JointTrajectory, f"{ns}/reference_trajectory")
    gravity = c.collect(JointState, f"{ns}/gravity_effort", depth=1000)
    feedforward = c.collect(JointState, f"{ns}/feedforward_effort", depth=1000)
    assert c.wait_for_subscriber(states, 3 * TIMEOUT) and c.wait_for_subscriber(refs), \
        proc.log_text()                                 # the bringup's nodes start first
    good = reference(times=(0.0, 1000.0))
    first = joint_state(1, velocity=[0.0] * 6)
    assert c.publish_until(lambda: (refs.publish(good), states.publish(first)),
                           lambda: gravity.messages and feedforward.messages), proc.log_text()
    for msg, reason in BAD_REFERENCES:
        assert c.publish_until(lambda: refs.publish(msg), lambda: logs(c, ns, reason),
                               timeout=TIMEOUT), (reason, proc.log_text())
    for stamp, (msg, reason) in BAD_JOINT_STATES.items():
        assert c.publish_until(lambda: states.publish(msg), lambda: logs(c, ns, reason),
                               timeout=TIMEOUT), (reason, proc.log_text())
    # the nodes are alive and answer a valid message correctly, with the good reference kept
    q, qd = np.array([0.3, 0.8, -1.0, 0.4, 0.5, -0.2]), np.array([0.2, -0.3, 0.1, 0.5, -0.4, 0.3])
    last = joint_state(999, position=q, velocity=qd)

    def both_answered():
        return [m for m in gravity.messages if m.header.stamp.sec == 999] and [
            m for m in feedforward.messages if m.header.stamp.sec == 999]
    assert c.publish_until(lambda: states.publish(last), both_answered), proc.log_text()
    assert proc.alive()
    outputs = gravity.messages + feedforward.messages
    assert not [m for m in outputs if m.header.stamp.sec in BAD_JOINT_STATES]
    assert all(np.isfinite(m.effort).all() for m in outputs)
    friction = MODEL.viscous * qd + MODEL.coulomb * np.sign(qd)
    out = [m for m in gravity.messages if m.header.stamp.sec == 999][0]
    np.testing.assert_allclose(out.effort, gravity_torques(MODEL, q) + friction,
                               rtol=1e-10, atol=1e-10)
    out = [m for m in feedforward.messages if m.header.stamp.sec == 999]
    assert out, "no feedforward output for the valid message"
    # the good reference (cubic from 0 to 0.1 over T = 1000 s, at rest at both ends), not a bad
    # one: its phase u = t / T from the position, 0.1 (3u^2 - 2u^3), gives velocity and
    # acceleration
    pos, vel = np.array(out[0].position), np.array(out[0].velocity)
    T = 1000.0
    u = [r.real for r in np.roots([-2.0, 3.0, 0.0, -pos[1] / 0.1]) if abs(r.imag) < 1e-9
         and -1e-9 <= r.real <= 1.0 + 1e-9][0]
    np.testing.assert_allclose(pos, 0.1 * (3 * u ** 2 - 2 * u ** 3), atol=1e-12)
    np.testing.assert_allclose(vel, 0.1 * (6 * u - 6 * u ** 2) / T, atol=1e-12)
    qdd = np.full(6, 0.1 * (6.0 - 12.0 * u) / T ** 2)
    np.testing.assert_allclose(out[0].effort, rnea(MODEL, pos, vel, qdd), rtol=1e-9, atol=1e-9)
    # every log line is short, whatever came in
    assert max(len(m.msg) for m in logs(c, ns, "")) < 1000
