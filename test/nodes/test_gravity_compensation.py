"""
gravity_compensation_node over DDS: the node runs in its own process, this process publishes.

Oracles: g(q) from the core; friction from the difference of two core models (with and without
friction); the payload from RobotModel.with_payload.
"""
import time

import numpy as np
import pytest

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import TIMEOUT, NodeProcess, private_namespace

from robot_dynamics_ros.core import (RobotModel, forward_kinematics, gravity_torques,
                                     nonlinear_effects)

from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

MODEL = RobotModel.named("puma560")
NAMES = list(MODEL.joint_names)
NS = private_namespace("gc")
NODE = "gravity_compensation"
FQN = f"{NS}/{NODE}"
RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def gc(ros_env, ros_client, tmp_path_factory):
    proc = NodeProcess.node("robot_dynamics_ros.nodes.gravity_compensation", ros_env,
                            tmp_path_factory.mktemp("gc"), NODE, NS,
                            {"robot_description": "puma560", "input_timeout": 0.4,
                             "warning_period": 0.0})
    try:
        client = ros_client
        pub = client.publisher(JointState, f"{NS}/joint_states")
        state = client.collect(JointState, f"{NS}/gravity_effort")
        command = client.collect(Float64MultiArray, f"{NS}/gravity_effort_command")
        assert client.wait_for_subscriber(
            pub), "gravity node did not subscribe:\n" + proc.log_text()
        yield proc, client, pub, state, command
    finally:
        proc.stop()
    assert proc.proc.returncode in (0, -15), proc.log_text()


class Stamps:
    """Unique stamps identify each published message in the outputs."""

    sec = 1000

    @classmethod
    def next(cls):
        cls.sec += 1
        return cls.sec


def joint_state(names, position, velocity=(), sec=None):
    msg = JointState()
    msg.header.stamp.sec = Stamps.next() if sec is None else sec
    msg.name = list(names)
    msg.position = [float(v) for v in position]
    msg.velocity = [float(v) for v in velocity]
    return msg


def send(gc, msg):
    """Publish ``msg`` (repeatedly, until answered) and return the JointState output for it."""
    _, client, pub, state, _ = gc
    sec = msg.header.stamp.sec

    def find():
        return next((m for m in state.messages if m.header.stamp.sec == sec), None)
    out = client.publish_until(lambda: pub.publish(msg), find)
    assert out is not None, f"no output for stamp {sec}:\n" + gc[0].log_text()
    return out


def random_q():
    return RNG.uniform(MODEL.lower, MODEL.upper)


def test_gravity_matches_core_and_command_has_same_order(gc):
    _, client, _, _, command = gc
    q = random_q()
    out = send(gc, joint_state(NAMES, q))
    assert list(out.name) == NAMES
    np.testing.assert_allclose(out.effort, gravity_torques(MODEL, q), rtol=1e-12, atol=1e-12)
    assert np.abs(out.effort).max() > 1.0          # a real load, not zeros
    # the command message is published right after the state message
    assert client.spin_until(lambda: any(np.allclose(
        m.data, out.effort, atol=1e-12) for m in command.messages))


def test_reordered_and_superset_names(gc):
    q = random_q()
    names = ["gripper_finger"] + NAMES[::-1]
    position = [0.7] + list(q[::-1])
    out = send(gc, joint_state(names, position, velocity=[0.0] * 7))
    assert list(out.name) == NAMES
    np.testing.assert_allclose(out.effort, gravity_torques(MODEL, q), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad, reason", [
    (lambda q: joint_state(NAMES, [*q[:2], float("nan"), *q[3:]]),
     "position of joint 'joint3' is nan"),
    (lambda q: joint_state(NAMES, q, velocity=[0, 0, 0, float(
        "inf"), 0, 0]), "velocity of joint 'joint4' is inf"),
    (lambda q: joint_state(NAMES[:5], q[:5]), "missing joint(s) ['joint6']"),
    (lambda q: joint_state(NAMES, q[:5]), "6 names but 5 positions"),
    (lambda q: joint_state(NAMES + ["joint1"], [*q, 0.0]), "joint 'joint1' appears twice"),
])
def test_bad_messages_are_rejected_with_reason(gc, bad, reason):
    proc, client, pub, state, _ = gc
    q = random_q()
    bad_msg = bad(q)
    pub.publish(bad_msg)
    # a good message published after the bad one is processed after it (same reliable writer)
    send(gc, joint_state(NAMES, q))
    assert not [m for m in state.messages if m.header.stamp.sec == bad_msg.header.stamp.sec]
    assert client.spin_until(lambda: client.logs_from(NODE, reason)), \
        f"no warning containing {reason!r}:\n" + proc.log_text()
    assert proc.alive()


def test_warnings_are_throttled_per_kind(gc):
    proc, client, pub, _, _ = gc
    assert all(r.successful for r in client.set_parameters(FQN, {"warning_period": 30.0}))
    q = random_q()
    for _ in range(10):
        pub.publish(joint_state(NAMES, [*q[:4], float("nan"), q[5]]))
    send(gc, joint_state(NAMES, q))
    assert len(client.logs_from(NODE, "joint 'joint5' is nan")) <= 1
    assert all(r.successful for r in client.set_parameters(FQN, {"warning_period": 0.0}))
    pub.publish(joint_state(NAMES, [*q[:4], float("nan"), q[5]]))
    send(gc, joint_state(NAMES, q))
    assert client.spin_until(lambda: client.logs_from(
        NODE, "more like this since the last warning"))
    counted = client.logs_from(NODE, "more like this")[-1].msg
    assert int(counted.split("(")[-1].split()[0]) >= 9, counted


def test_payload_changes_at_run_time(gc):
    proc, client, _, _, _ = gc
    q = random_q()
    results = client.set_parameters(FQN, {"payload.mass": 2.5, "payload.com": [0.0, 0.0, 0.1]})
    assert all(r.successful for r in results), results
    heavy = MODEL.with_payload(2.5, [0.0, 0.0, 0.1])
    out = send(gc, joint_state(NAMES, q))
    np.testing.assert_allclose(out.effort, gravity_torques(heavy, q), rtol=1e-12, atol=1e-12)
    assert not np.allclose(out.effort, gravity_torques(MODEL, q), atol=1e-3)

    for values, reason in [({"payload.mass": -1.0}, "payload.mass out of range"),
                           ({"payload.com": [0.0, 0.1]}, "payload.com: expected exactly 3 values"),
                           ({"payload.inertia": [1.0, 0.1, 0.1, 0.0, 0.0, 0.0]}, "payload")]:
        result, = client.set_parameters(FQN, values)
        assert not result.successful and reason in result.reason, (values, result)
    result, = client.set_parameters(FQN, {"payload.mass": "heavy"})
    assert not result.successful                                 # wrong type, refused by rclpy
    # rejected changes left the 2.5 kg payload in place, and the node is alive
    out = send(gc, joint_state(NAMES, q))
    np.testing.assert_allclose(out.effort, gravity_torques(heavy, q), rtol=1e-12, atol=1e-12)
    assert all(r.successful for r in client.set_parameters(FQN, {"payload.mass": 0.0}))
    out = send(gc, joint_state(NAMES, q))
    np.testing.assert_allclose(out.effort, gravity_torques(MODEL, q), rtol=1e-12, atol=1e-12)
    assert proc.alive()


def _potential_energy_gradient(q, g):
    """
    dU/dq of U(q) = -sum m_i g . c_i (Siciliano et al., eq. 7.36) for the gravity vector ``g``.

    The centres of mass c_i from forward kinematics, the gradient by central differences: an
    oracle independent of the recursion that computes g(q).
    """
    def energy(x):
        frames = forward_kinematics(MODEL, x)[1:]
        com = np.einsum("nij,nj->ni", frames[:, :3, :3], MODEL.com) + frames[:, :3, 3]
        return -np.sum(MODEL.mass * (com @ g))
    eps = 1e-6
    return np.array([(energy(q + eps * e) - energy(q - eps * e)) / (2 * eps)
                     for e in np.eye(MODEL.n)])


def test_gravity_parameter_at_run_time_for_a_wall_mounted_arm(gc):
    proc, client, _, _, _ = gc
    q = random_q()
    assert client.get_parameters(FQN, "gravity") == [list(MODEL.gravity)]   # the robot's
    wall = np.array([9.81, 0.0, 0.0])              # the root x axis points up
    assert all(r.successful for r in client.set_parameters(FQN, {"gravity": wall.tolist()}))
    try:
        out = send(gc, joint_state(NAMES, q))
        np.testing.assert_allclose(out.effort, _potential_energy_gradient(q, wall), atol=1e-5)
        assert not np.allclose(out.effort, gravity_torques(MODEL, q), atol=1e-2)
        for value, words in [([9.81, 0.0], "gravity: expected exactly 3 values, got 2"),
                             ([1e4, 0.0, 0.0], "gravity[0]: 10000.0 is outside")]:
            result, = client.set_parameters(FQN, {"gravity": value})
            assert not result.successful and words in result.reason, result.reason
        out = send(gc, joint_state(NAMES, q))      # refused changes changed nothing
        np.testing.assert_allclose(out.effort, _potential_energy_gradient(q, wall), atol=1e-5)
    finally:
        assert all(r.successful for r in client.set_parameters(
            FQN, {"gravity": list(MODEL.gravity)}))
    out = send(gc, joint_state(NAMES, q))
    np.testing.assert_allclose(out.effort, gravity_torques(MODEL, q), rtol=1e-12, atol=1e-12)


def test_friction_compensation(gc):
    proc, client, _, _, _ = gc
    assert all(r.successful for r in client.set_parameters(FQN, {"friction_compensation": True}))
    try:
        q, qd = random_q(), RNG.uniform(-1.0, 1.0, MODEL.n)
        out = send(gc, joint_state(NAMES, q, qd))
        friction = (nonlinear_effects(MODEL, q, qd)
                    - nonlinear_effects(MODEL.without_friction(), q, qd))
        np.testing.assert_allclose(out.effort, gravity_torques(MODEL, q) + friction,
                                   rtol=1e-10, atol=1e-10)
        assert np.abs(friction).min() > 0.1
        # without velocities, friction cannot be computed: rejected
        no_velocity = joint_state(NAMES, q)
        client.publish_until(lambda: gc[2].publish(no_velocity),
                             lambda: client.logs_from(NODE, "no velocity"), timeout=TIMEOUT)
        assert client.logs_from(NODE, "no velocity"), proc.log_text()
        assert not [m for m in gc[3].messages if m.header.stamp.sec ==
                    no_velocity.header.stamp.sec]
        # a finite but huge velocity (its friction torque would overflow): refused, never published
        huge = joint_state(NAMES, q, [1e308, *qd[1:]])
        words = "velocity of joint 'joint1' is 1e+308, beyond"
        client.publish_until(lambda: gc[2].publish(huge), lambda: client.logs_from(NODE, words))
        assert client.logs_from(NODE, words), proc.log_text()
        send(gc, joint_state(NAMES, q, qd))
        assert not [m for m in gc[3].messages if m.header.stamp.sec == huge.header.stamp.sec]
        assert proc.alive()
    finally:
        client.set_parameters(FQN, {"friction_compensation": False})


def test_bad_common_parameters_are_rejected(gc):
    _, client, _, _, _ = gc
    result, = client.set_parameters(FQN, {"input_timeout": -1.0})
    assert not result.successful and "input_timeout" in result.reason
    result, = client.set_parameters(FQN, {"robot_description": "panda"})
    assert not result.successful                                 # read-only
    result, = client.set_parameters(FQN, {"qos_depth": 3})
    assert not result.successful


@pytest.mark.parametrize("param, words", [
    # YAML/CLI '1' instead of '1.0'
    ("input_timeout:=1", ["input_timeout", "INTEGER", "DOUBLE"]),
    ("joint_names:=[joint1,joint2]", ["joint_names", "joint3"]),
])
def test_bad_parameter_at_start_is_a_clear_configuration_error(ros_env, param, words):
    """With autostart (its robot and joint_names are read-only: configure cannot succeed)."""
    import subprocess
    import sys
    result = subprocess.run([sys.executable, "-m", "robot_dynamics_ros.nodes.gravity_compensation",
                             "--ros-args", "-r", f"__ns:={NS}_bad", "-p", param,
                             "-p", "autostart:=true"],
                            env=ros_env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "configuration error" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert all(w in result.stderr for w in words), result.stderr


def test_input_timeout_stops_and_says_so_once(gc):
    proc, client, pub, state, _ = gc
    q = random_q()
    send(gc, joint_state(NAMES, q))                   # active now
    fresh = time.time()                               # (earlier outages may still be in /rosout)
    client.spin_for(0.2)                              # the answer to a repeat of it, if any
    before = len(state.messages)
    client.spin_for(1.5)                              # > 3 x input_timeout (0.4 s) without input
    stale = [m for m in client.logs_from(NODE, "stopped publishing")
             if m.stamp.sec + 1e-9 * m.stamp.nanosec > fresh]
    assert len(stale) == 1, [m.msg for m in client.rosout.messages]
    assert "input_timeout = 0.4 s" in stale[0].msg
    assert len(state.messages) == before
    send(gc, joint_state(NAMES, q))                   # inputs resume: outputs resume, said once
    assert client.spin_until(lambda: [m for m in client.logs_from(NODE, "resumed")
                                      if m.stamp.sec + 1e-9 * m.stamp.nanosec > fresh])
    assert proc.alive()
