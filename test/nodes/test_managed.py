"""
The managed torque nodes' lifecycle over DDS, through the services ``ros2 lifecycle`` calls.

gravity_compensation_node runs in its own process with ``autostart: false``; this process calls
its ``~/change_state`` and ``~/get_state`` (lifecycle_msgs, what ``ros2 lifecycle set/get``
use) and publishes joint states:

* unconfigured and inactive: nothing is published for any input, the node says so once per
  state in its log and its diagnostics are WARN with the state and how to activate it;
* configure loads the robot, activate publishes g(q) (the core's);
* deactivate publishes exactly one zero command after the last output, then nothing; a
  deactivation with no command since activation publishes nothing;
* reactivation works; cleanup then configure works; a configure that cannot succeed (unknown
  robot) fails with the reason and leaves the node unconfigured;
* inverse_dynamics refuses a reference while inactive (warning), drops its reference when
  deactivated.
"""
import time

import numpy as np
import pytest

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import TIMEOUT, NodeProcess, private_namespace

from robot_dynamics_ros.core import RobotModel, gravity_torques

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from lifecycle_msgs.msg import Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState, GetState  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

MODEL = RobotModel.named("puma560")
NAMES = list(MODEL.joint_names)
NS = private_namespace("lc")
Q = np.array([0.3, -0.8, 0.4, 0.2, -0.5, 0.1])


class Managed:
    """A managed node process and this process's lifecycle clients and topic collectors."""

    def __init__(self, client, proc, name, outputs):
        self.client, self.proc, self.fqn = client, proc, f"{NS}/{name}"
        self.change = client.node.create_client(ChangeState, f"{self.fqn}/change_state")
        self.get = client.node.create_client(GetState, f"{self.fqn}/get_state")
        self.state_out = client.collect(JointState, f"{NS}/{outputs[0]}")
        self.command_out = client.collect(Float64MultiArray, f"{NS}/{outputs[1]}")
        self.reports = []
        mine = f"{self.fqn[1:]}: dynamics"
        client.node.create_subscription(
            DiagnosticArray, "/diagnostics",
            lambda msg: self.reports.extend(s for s in msg.status if s.name == mine), 100)

    def set(self, transition: int) -> bool:
        return self.client.call(self.change, ChangeState.Request(
            transition=Transition(id=transition))).success

    def state(self) -> str:
        return self.client.call(self.get, GetState.Request()).current_state.label

    def report(self, predicate):
        del self.reports[:]
        self.client.spin_until(lambda: any(predicate(r) for r in self.reports))
        return next((r for r in self.reports if predicate(r)), None)


def joint_state(sec):
    msg = JointState(name=NAMES, position=Q.tolist())
    msg.header.stamp.sec = sec
    return msg


@pytest.fixture(scope="module")
def gravity(ros_env, ros_client, tmp_path_factory):
    proc = NodeProcess.node("robot_dynamics_ros.nodes.gravity_compensation", ros_env,
                            tmp_path_factory.mktemp("lc"), "gravity_compensation", NS,
                            {"autostart": False, "diagnostics_period": 0.2})
    try:
        node = Managed(ros_client, proc, "gravity_compensation",
                       ("gravity_effort", "gravity_effort_command"))
        node.pub = ros_client.publisher(JointState, f"{NS}/joint_states")
        assert ros_client.wait_for_subscriber(node.pub), proc.log_text()
        yield node
    finally:
        proc.stop()
    assert proc.proc.returncode in (0, -15), proc.log_text()


def stream(node, seconds, first_sec):
    """Publish joint states at ~50 Hz for ``seconds``; return the stamps used."""
    secs = []
    for k in range(int(seconds * 50)):
        secs.append(first_sec + k)
        node.pub.publish(joint_state(secs[-1]))
        node.client.spin_for(0.02)
    return secs


def settled(node, quiet: float = 0.3) -> int:
    """
    Return the number of commands received once none has arrived for ``quiet`` s (bounded).

    Commands the node published for earlier inputs may still be on their way (the tests before
    publish joint states that this node also receives); counting before they are in would
    count them as what a transition published.
    """
    end = time.monotonic() + TIMEOUT
    while time.monotonic() < end:
        count = len(node.command_out.messages)
        node.client.spin_for(quiet)
        if len(node.command_out.messages) == count:
            return count
    raise AssertionError(f"commands still arriving after {TIMEOUT} s")


def test_lifecycle_from_unconfigured_to_active_and_back(gravity):
    node = gravity
    assert node.state() == "unconfigured"
    # not configured: inputs are not used, said once, nothing published, diagnostics say so
    stream(node, 0.5, 100)
    assert node.state_out.messages == [] and node.command_out.messages == []
    said = "'joint_states' received while unconfigured: not used, nothing published"
    assert node.client.spin_until(lambda: said in node.proc.log_text()), node.proc.log_text()
    assert node.proc.log_text().count(said) == 1
    report = node.report(lambda r: "unconfigured" in r.message)
    assert report is not None and report.level == DiagnosticStatus.WARN, node.reports[-1:]
    assert "ros2 lifecycle set" in report.message

    assert node.set(Transition.TRANSITION_CONFIGURE) and node.state() == "inactive"
    stream(node, 0.5, 200)
    assert node.state_out.messages == []
    report = node.report(lambda r: r.message.startswith("inactive"))
    assert report is not None and report.level == DiagnosticStatus.WARN
    assert {kv.key: kv.value for kv in report.values}["lifecycle state"] == "inactive"

    assert node.set(Transition.TRANSITION_ACTIVATE) and node.state() == "active"
    out = node.client.publish_until(lambda: node.pub.publish(joint_state(300)),
                                    lambda: node.state_out.messages)
    assert out, node.proc.log_text()
    np.testing.assert_allclose(out[-1].effort, gravity_torques(MODEL, Q), rtol=1e-12,
                               atol=1e-12)
    report = node.report(lambda r: "lifecycle state" in {kv.key for kv in r.values} and
                         {kv.key: kv.value for kv in r.values}["lifecycle state"] == "active")
    assert report is not None and report.level == DiagnosticStatus.OK, report


def test_deactivate_publishes_one_zero_command_then_nothing(gravity):
    node = gravity
    if node.state() != "active":
        assert node.set(Transition.TRANSITION_ACTIVATE)
    stream(node, 0.3, 400)
    assert node.client.spin_until(lambda: node.command_out.messages)
    assert node.set(Transition.TRANSITION_DEACTIVATE) and node.state() == "inactive"
    node.client.spin_for(0.5)
    before_state, before_command = len(node.state_out.messages), len(node.command_out.messages)
    stream(node, 0.5, 500)                  # inputs while inactive: nothing more
    assert len(node.state_out.messages) == before_state
    assert len(node.command_out.messages) == before_command
    # the last command is the zero command, published once; all before it are g(q)
    commands = [list(m.data) for m in node.command_out.messages]
    assert commands[-1] == [0.0] * 6
    assert [c for c in commands if c == [0.0] * 6] == [[0.0] * 6]
    np.testing.assert_allclose(commands[-2], gravity_torques(MODEL, Q), atol=1e-12)
    assert list(node.state_out.messages[-1].effort) == [0.0] * 6
    assert node.client.spin_until(lambda: "one zero command published" in
                                  node.proc.log_text())

    # reactivation works; a deactivation without commands since publishes nothing
    assert node.set(Transition.TRANSITION_ACTIVATE)
    count = len(node.command_out.messages)
    assert node.set(Transition.TRANSITION_DEACTIVATE)
    node.client.spin_for(0.5)
    assert len(node.command_out.messages) == count
    assert node.set(Transition.TRANSITION_ACTIVATE)
    out = node.client.publish_until(lambda: node.pub.publish(joint_state(600)),
                                    lambda: [m for m in node.state_out.messages
                                             if m.header.stamp.sec == 600])
    assert out


def test_cleanup_releases_and_configure_again(gravity):
    node = gravity
    if node.state() == "active":
        assert node.set(Transition.TRANSITION_DEACTIVATE)
    assert node.set(Transition.TRANSITION_CLEANUP) and node.state() == "unconfigured"
    assert node.client.spin_until(lambda: "unconfigured: robot released" in
                                  node.proc.log_text())
    assert not node.set(Transition.TRANSITION_ACTIVATE)          # not from unconfigured
    assert node.set(Transition.TRANSITION_CONFIGURE)
    assert node.set(Transition.TRANSITION_ACTIVATE) and node.state() == "active"
    out = node.client.publish_until(lambda: node.pub.publish(joint_state(700)),
                                    lambda: [m for m in node.state_out.messages
                                             if m.header.stamp.sec == 700])
    np.testing.assert_allclose(out[0].effort, gravity_torques(MODEL, Q), atol=1e-12)


def test_configure_that_cannot_succeed_fails_with_the_reason(ros_env, ros_client, tmp_path):
    proc = NodeProcess.node("robot_dynamics_ros.nodes.gravity_compensation", ros_env, tmp_path,
                            "bad_robot", NS, {"autostart": False,
                                              "robot_description": "no_such_robot"})
    try:
        node = Managed(ros_client, proc, "bad_robot", ("bad_effort", "bad_command"))
        assert node.state() == "unconfigured"
        assert not node.set(Transition.TRANSITION_CONFIGURE)
        assert node.state() == "unconfigured"
        assert ros_client.spin_until(lambda: "configure failed" in proc.log_text())
        assert "no_such_robot" in proc.log_text() and proc.alive()
    finally:
        proc.stop()


def test_inverse_dynamics_refuses_a_reference_while_inactive(ros_env, ros_client, tmp_path):
    proc = NodeProcess.node("robot_dynamics_ros.nodes.inverse_dynamics", ros_env, tmp_path,
                            "inverse_dynamics", NS, {"autostart": False})
    try:
        node = Managed(ros_client, proc, "inverse_dynamics",
                       ("feedforward_effort", "effort_command"))
        reference = ros_client.publisher(JointTrajectory, f"{NS}/reference_trajectory")
        states = ros_client.publisher(JointState, f"{NS}/joint_states")
        assert node.set(Transition.TRANSITION_CONFIGURE)
        msg = JointTrajectory(joint_names=NAMES, points=[
            JointTrajectoryPoint(positions=Q.tolist()),
            JointTrajectoryPoint(positions=(Q + 0.1).tolist())])
        msg.points[1].time_from_start.sec = 100
        said = "'reference_trajectory' received while inactive: refused, not kept"
        ros_client.publish_until(lambda: reference.publish(msg), lambda: said in proc.log_text())
        assert said in proc.log_text(), proc.log_text()
        assert node.set(Transition.TRANSITION_ACTIVATE)
        ros_client.publish_until(lambda: states.publish(joint_state(800)),
                                 lambda: "waiting for a reference_trajectory" in proc.log_text())
        assert node.state_out.messages == []             # the refused reference was not kept
        out = ros_client.publish_until(
            lambda: (reference.publish(msg), states.publish(joint_state(801))),
            lambda: node.state_out.messages)
        assert out, proc.log_text()
        assert node.set(Transition.TRANSITION_DEACTIVATE)
        assert ros_client.spin_until(lambda: "reference cleared: deactivated" in
                                     proc.log_text())
        assert node.set(Transition.TRANSITION_ACTIVATE)
        count = len(node.state_out.messages)
        for sec in range(900, 910):
            states.publish(joint_state(sec))
            ros_client.spin_for(0.02)
        assert len(node.state_out.messages) == count          # no reference: no output
    finally:
        proc.stop()
    assert proc.proc.returncode in (0, -15), proc.log_text()


def test_shutdown_from_active_stops_as_deactivate_and_finalizes(gravity):
    node = gravity
    assert node.state() == "active"                    # and it commanded (the test before)
    count = settled(node)
    assert node.set(Transition.TRANSITION_ACTIVE_SHUTDOWN)
    assert node.state() == "finalized" and node.proc.alive()
    assert node.client.spin_until(lambda: len(node.command_out.messages) > count)
    stream(node, 0.3, 1000)                            # finalized: inputs give nothing more
    assert [list(m.data) for m in node.command_out.messages[count:]] == [[0.0] * 6]
