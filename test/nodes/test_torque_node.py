"""
The torque nodes' effort limits: clamp, warn and off over DDS, counted in the diagnostics.

gravity_compensation_node runs with ``effort_limits`` that make joint2's limit 10 N m, well
below the Puma's gravity torque at the test configuration (oracle: the core's g(q)):

* ``clamp`` (default): the published effort of joint2 is exactly +-10 on both outputs, the
  others g(q); counted per joint in /diagnostics (WARN, worst ratio |g2| / 10) and said at most
  once per second in the log;
* ``warn``: published as computed, counted; ``off``: published as computed, not counted;
* bad values are refused with the reason; a joint whose limit is unknown makes ``clamp``
  refuse the robot at configure naming the joint, unless ``effort_limits`` gives it.
"""
import math
import re
import time

import numpy as np
import pytest

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import NodeProcess, private_namespace

from robot_dynamics_ros.core import RobotModel, gravity_torques

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

MODEL = RobotModel.named("puma560")
NAMES = list(MODEL.joint_names)
NS = private_namespace("limits")
FQN = f"{NS}/gravity_compensation"
Q = np.array([0.0, -0.3, 0.2, 0.0, 0.4, 0.0])
G = gravity_torques(MODEL, Q)
LIMIT = 10.0


@pytest.fixture(scope="module")
def limited(ros_env, ros_client, tmp_path_factory):
    assert abs(G[1]) > 2 * LIMIT and np.all(np.abs(G) < MODEL.effort_limit)
    proc = NodeProcess.node("robot_dynamics_ros.nodes.gravity_compensation", ros_env,
                            tmp_path_factory.mktemp("limits"), "gravity_compensation", NS,
                            {"effort_limits": [0.0, LIMIT, 0.0, 0.0, 0.0, 0.0],
                             "diagnostics_period": 0.2})
    try:
        pub = ros_client.publisher(JointState, f"{NS}/joint_states")
        state = ros_client.collect(JointState, f"{NS}/gravity_effort")
        command = ros_client.collect(Float64MultiArray, f"{NS}/gravity_effort_command")
        reports = []
        mine = f"{FQN[1:]}: dynamics"
        ros_client.node.create_subscription(
            DiagnosticArray, "/diagnostics",
            lambda msg: reports.extend(s for s in msg.status if s.name == mine), 100)
        assert ros_client.wait_for_subscriber(pub), proc.log_text()
        yield proc, ros_client, pub, state, command, reports
    finally:
        proc.stop()
    assert proc.proc.returncode in (0, -15), proc.log_text()


def send(limited, sec):
    _, client, pub, state, _, _ = limited
    msg = JointState(name=NAMES, position=Q.tolist())
    msg.header.stamp.sec = sec
    out = client.publish_until(lambda: pub.publish(msg), lambda: [
        m for m in state.messages if m.header.stamp.sec == sec])
    assert out, limited[0].log_text()
    return np.array(out[0].effort)


def values(status) -> dict:
    return {kv.key: kv.value for kv in status.values}


def test_clamp_limits_both_outputs_counts_and_reports(limited):
    proc, client, pub, state, command, reports = limited
    began = time.monotonic()
    effort = send(limited, 1)
    expected = G.copy()
    expected[1] = np.copysign(LIMIT, G[1])
    np.testing.assert_allclose(effort, expected, rtol=1e-12, atol=1e-12)
    assert client.spin_until(lambda: any(np.allclose(m.data, expected, atol=1e-12)
                                         for m in command.messages))
    assert max(abs(m.data[1]) for m in command.messages) <= LIMIT      # never above
    # ~2.5 s of inputs at 50 Hz: every one counted, said in the log at most once per second
    msg = JointState(name=NAMES, position=Q.tolist())
    del reports[:]
    for k in range(125):
        msg.header.stamp.sec = 10 + k
        pub.publish(msg)
        client.spin_for(0.02)
    elapsed = time.monotonic() - began                  # (longer on a loaded machine)
    seen = len(reports)
    assert client.spin_until(lambda: len(reports) > seen)   # a report made after the last input
    warn = [r for r in reports if r.level == DiagnosticStatus.WARN]
    assert warn, [r.message for r in reports]
    text = warn[-1].message
    assert "above the effort limit (clamped), worst 'joint2'" in text, text
    ratio = float(re.search(r"at ([0-9.]+) x its limit", text).group(1))
    assert ratio == pytest.approx(abs(G[1]) / LIMIT, rel=1e-3)
    last = values(reports[-1])
    assert int(last["commands above effort limit: joint2"]) >= 100
    assert last["commands above effort limit: joint1"] == "0"
    assert last["effort limit policy"] == "clamp"
    lines = [m for m in client.logs_from("gravity_compensation", "above the effort limit in "
                                         "the last 1 s")]
    assert 2 <= len(lines) <= math.ceil(elapsed) + 1, (elapsed, [m.msg for m in lines])
    assert "clamped to the limit" in lines[-1].msg and "'joint2'" in lines[-1].msg


def test_warn_publishes_as_computed_and_counts_off_does_not_count(limited):
    proc, client, _, _, _, reports = limited
    assert all(r.successful for r in client.set_parameters(FQN, {"effort_limit_policy": "warn"}))
    np.testing.assert_allclose(send(limited, 500), G, rtol=1e-12, atol=1e-12)
    report = client.spin_until(lambda: any("not clamped" in r.message for r in reports))
    assert report, [r.message for r in reports[-3:]]
    assert all(r.successful for r in client.set_parameters(FQN, {"effort_limit_policy": "off"}))
    send(limited, 501)
    client.spin_for(0.5)
    counted = values(reports[-1])["commands above effort limit: joint2"]
    send(limited, 502)
    np.testing.assert_allclose(send(limited, 503), G, rtol=1e-12, atol=1e-12)
    client.spin_for(0.5)
    assert values(reports[-1])["commands above effort limit: joint2"] == counted
    assert reports[-1].level == DiagnosticStatus.OK
    assert all(r.successful for r in client.set_parameters(FQN, {"effort_limit_policy": "clamp"}))


def test_bad_limit_parameters_are_refused_with_the_reason(limited):
    _, client, _, _, _, _ = limited
    for change, words in [({"effort_limit_policy": "saturate"}, "is not one of"),
                          ({"effort_limits": [1.0, 2.0]}, "effort_limits: expected 6 values"),
                          ({"effort_limits": [1.0, -2.0, 0.0, 0.0, 0.0, 0.0]},
                           "effort_limits[1]: -2.0 is outside")]:
        result, = client.set_parameters(FQN, change)
        assert not result.successful and words in result.reason, (change, result.reason)
    np.testing.assert_allclose(send(limited, 600)[1], np.copysign(LIMIT, G[1]))


def _urdf_without_effort_limit() -> str:
    """Return the Puma as URDF text whose joint3 gives no effort limit (an unknown limit)."""
    from robot_dynamics_ros.core.model.urdf_export import urdf_text
    text = urdf_text(MODEL, "puma560")
    return text.replace('velocity="8.0" effort="89.4"', 'velocity="8.0"', 1)


@pytest.mark.parametrize("given, policy, words", [
    ([], "clamp", "joint 'joint3'.*unknown.*effort_limits parameter"),
    ([0.0, 0.0, 50.0, 0.0, 0.0, 0.0], "clamp", ""),
    ([], "warn", ""),
])
def test_unknown_limit_and_clamp_refused_at_configure_naming_the_joint(
        ros_env, given, policy, words):
    import rclpy

    from robot_dynamics_ros.nodes.gravity_compensation import GravityCompensationNode
    urdf = _urdf_without_effort_limit()
    assert RobotModel.from_urdf(urdf).unknown_limits == {"joint3": ("effort",)}
    context = rclpy.Context()
    rclpy.init(context=context)
    node = None
    try:
        node = GravityCompensationNode(
            "unknown_limit", namespace=private_namespace("unknown"), context=context,
            parameter_overrides=[Parameter("autostart", value=True),
                                 Parameter("robot_description", value=urdf),
                                 Parameter("effort_limits", value=given),
                                 Parameter("effort_limit_policy", value=policy)])
        started = node.start()
        assert started == (not words), node.configure_error
        if words:
            assert re.search(words, node.configure_error), node.configure_error
            assert node.lifecycle_state == "unconfigured" and node.dynamics is None
        elif policy == "clamp":
            np.testing.assert_array_equal(node.limiter.limits, [*MODEL.effort_limit[:2], 50.0,
                                                                *MODEL.effort_limit[3:]])
        else:       # warn: that joint is not checked; switching to clamp is refused, named

            assert node.limiter.unchecked == ("joint3",)
            result = node.set_parameters([Parameter("effort_limit_policy", value="clamp")])[0]
            assert not result.successful and "joint 'joint3'" in result.reason
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown(context=context)


def test_l1_limits_above_the_description_need_allow_above_description(ros_env):
    """
    Issue 31, L1: limits above the description's need allow_above_description.

    effort_limits took values up to 1e9, so clamp could be set far above the
    robot's limits without a word.  Now a limit above the description's is refused naming the
    joint and the way to allow it; a lower one is taken as before; 1e9 is beyond any bound.
    """
    from local_node import local_node

    from robot_dynamics_ros.nodes.gravity_compensation import GravityCompensationNode
    own = MODEL.effort_limit
    with local_node(GravityCompensationNode, "l1_limits", autostart=True,
                    robot_description="puma560") as node:
        above = [0.0, 2.0 * own[1], 0.0, 0.0, 0.0, 0.0]
        result = node.set_parameters([Parameter("effort_limits", value=above)])[0]
        assert not result.successful
        assert "'joint2'" in result.reason and "allow_above_description" in result.reason
        np.testing.assert_array_equal(node.limiter.limits, own)
        below = [0.0, 0.5 * own[1], 0.0, 0.0, 0.0, 0.0]
        assert node.set_parameters([Parameter("effort_limits", value=below)])[0].successful
        assert node.limiter.limits[1] == 0.5 * own[1]
        assert not node.set_parameters([Parameter("effort_limits", value=[1e9] * 6)])[0].successful
        result = node.set_parameters_atomically([Parameter("allow_above_description", value=True),
                                                 Parameter("effort_limits", value=above)])
        assert result.successful, result.reason
        assert node.limiter.limits[1] == 2.0 * own[1]
