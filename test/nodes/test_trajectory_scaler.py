"""
trajectory_scaler_node over DDS: topic and service round trips, good and bad trajectories.

Oracles: inverse dynamics recomputed in this process on the received trajectory (the limits hold,
the effort field equals RNEA of each point), the uniform law q(t / c) against the reference, and
the same core call made locally (the node adds transport, not arithmetic).
"""

import numpy as np
import pytest

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import TIMEOUT, NodeProcess, private_namespace

from robot_dynamics_ros.core import RobotModel, jacobian, rnea
from robot_dynamics_ros.core import Limits, uniform_scaling
from robot_dynamics_ros.core import JointTrajectory
from robot_dynamics_ros.messages.conversions import JointOrder, trajectory_from_msg
from robot_dynamics_ros.messages.ros import trajectory_to_msg

from robot_dynamics_interfaces.srv import ScaleTrajectory  # noqa: E402
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg  # noqa: E402
from locations import REPO

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

CONFIG = REPO / "config" / "trajectories"
MODEL = RobotModel.named("puma560")
REFERENCE = JointTrajectory.from_yaml(CONFIG / "puma560_path.yaml")
NS = private_namespace("ts") + "/robot_dynamics"
NODE = "trajectory_scaler"


@pytest.fixture(scope="module")
def scaler(ros_env, ros_client, tmp_path_factory):
    proc = NodeProcess.node("robot_dynamics_ros.nodes.trajectory_scaler", ros_env,
                            tmp_path_factory.mktemp("ts"), NODE, NS,
                            {"robot_description": "puma560", "method": "uniform",
                             "effort_margin": 0.9})
    try:
        client = ros_client.node.create_client(ScaleTrajectory, f"{NS}/{NODE}/scale_trajectory")
        assert client.wait_for_service(
            timeout_sec=TIMEOUT), "scale_trajectory not up:\n" + proc.log_text()
        yield proc, ros_client, client
    finally:
        proc.stop()
    assert proc.proc.returncode in (0, -15), proc.log_text()


def request(traj_msg, method=""):
    req = ScaleTrajectory.Request()
    req.trajectory, req.method = traj_msg, method
    return req


def received(msg):
    return (trajectory_from_msg(msg, JointOrder(MODEL.joint_names)),
            [list(p.effort) for p in msg.points])


def check_within_limits(traj, margin=0.9, tol=0.005):
    t = np.linspace(traj.times[0], traj.times[-1], 10 * max(traj.num_points, 100))
    tau = rnea(MODEL, *traj.sample(t))
    assert (np.abs(tau) <= margin * MODEL.effort_limit * (1 + tol)).all()


def test_service_uniform(scaler):
    _, client, srv = scaler
    answer = client.call(srv, request(trajectory_to_msg(REFERENCE)))
    assert answer.success, answer.message
    traj, effort = received(answer.trajectory)
    local = uniform_scaling(MODEL, REFERENCE, Limits.from_model(MODEL, 0.9))
    assert answer.scale_factor == pytest.approx(local.scale_factor, rel=1e-6)   # times go as ns
    assert answer.duration == pytest.approx(REFERENCE.duration * answer.scale_factor, rel=1e-6)
    c = answer.scale_factor
    np.testing.assert_allclose(traj.positions, REFERENCE.positions, atol=1e-12)
    np.testing.assert_allclose(traj.times, REFERENCE.times * c, atol=2e-9)
    np.testing.assert_allclose(traj.velocities, REFERENCE.velocities / c, atol=1e-9)
    np.testing.assert_allclose(np.array(effort),
                               rnea(MODEL, traj.positions, traj.velocities, traj.accelerations),
                               atol=1e-4)
    check_within_limits(traj)


def test_service_time_optimal(scaler):
    _, client, srv = scaler
    uniform = client.call(srv, request(trajectory_to_msg(REFERENCE)))
    answer = client.call(srv, request(trajectory_to_msg(REFERENCE), "time_optimal"))
    assert answer.success, answer.message
    traj, effort = received(answer.trajectory)
    assert traj.accelerations is None and len(effort[0]) == MODEL.n
    assert answer.duration < uniform.duration
    check_within_limits(traj)


@pytest.mark.parametrize("edit, reason", [
    (lambda m: (setattr(m.points[3].time_from_start, "sec", 0)
                or setattr(m.points[3].time_from_start, "nanosec", 0)),
     "not after point"),
    (lambda m: m.joint_names.__setitem__(2, "elbow"), "elbow"),
    (lambda m: m.points[5].positions.__setitem__(1, float("nan")),
     "trajectory: positions of joint 'joint2' at point 5 is nan"),
    (lambda m: m.points[3].positions.__setitem__(0, 1e308),
     "trajectory: positions of joint 'joint1' at point 3 is 1e+308, beyond 1e+06"),
    (lambda m: m.points[5].positions.__setitem__(1, 5.0), "above its upper limit"),
])
def test_service_rejects_malformed(scaler, edit, reason):
    _, client, srv = scaler
    msg = trajectory_to_msg(REFERENCE)
    edit(msg)
    answer = client.call(srv, request(msg))
    assert not answer.success and reason in answer.message, answer.message
    assert len(answer.trajectory.points) == 0


def with_extra_joint(msg):
    """Return the reference with a seventh joint 'gripper' the Puma model does not have."""
    msg.joint_names.append("gripper")
    for p in msg.points:
        p.positions = list(p.positions) + [0.0]
        p.velocities = list(p.velocities) + [0.0]
        p.accelerations = list(p.accelerations) + [0.0]
    return msg


@pytest.mark.parametrize("method", ["uniform", "time_optimal"])
def test_service_rejects_unknown_joint(scaler, method):
    """A joint unknown to the model is refused (its motion would be silently dropped)."""
    _, client, srv = scaler
    answer = client.call(srv, request(with_extra_joint(trajectory_to_msg(REFERENCE)), method))
    assert not answer.success and "unknown joint(s) ['gripper']" in answer.message, answer.message
    assert len(answer.trajectory.points) == 0


def test_service_time_optimal_refuses_positions_only(scaler):
    """
    Linear interpolation has velocity jumps at the waypoints.

    time_optimal refuses it with the reason, uniform scales it.
    """
    _, client, srv = scaler
    linear = JointTrajectory(REFERENCE.joint_names, REFERENCE.times, REFERENCE.positions)
    answer = client.call(srv, request(trajectory_to_msg(linear), "time_optimal"))
    assert not answer.success and "needs velocities" in answer.message, answer.message
    answer = client.call(srv, request(trajectory_to_msg(linear), "uniform"))
    assert answer.success, answer.message


def test_service_rejects_unknown_method(scaler):
    _, client, srv = scaler
    answer = client.call(srv, request(trajectory_to_msg(REFERENCE), "fastest"))
    assert not answer.success and "method" in answer.message


def test_topic_round_trip(scaler):
    _, client, _ = scaler
    got = client.collect(JointTrajectoryMsg, f"{NS}/scaled_trajectory")
    pub = client.publisher(JointTrajectoryMsg, f"{NS}/reference_trajectory")
    assert client.wait_for_subscriber(pub)
    msg = trajectory_to_msg(REFERENCE)
    assert client.publish_until(lambda: pub.publish(msg), lambda: got.messages, timeout=TIMEOUT)
    traj, effort = received(got.messages[0])
    assert traj.duration > REFERENCE.duration
    check_within_limits(traj)
    # a bad trajectory on the topic: a warning with the reason, nothing published
    got.clear()
    bad = trajectory_to_msg(REFERENCE)
    bad.points[5].positions[1] = 5.0
    pub.publish(bad)
    assert client.spin_until(lambda: client.logs_from(NODE, "above its upper limit"))
    client.spin_for(0.3)
    assert got.messages == []


def test_include_effort_false_leaves_effort_empty_both_ways(scaler):
    """For the joint_trajectory_controllers that refuse effort (Humble, Iron; see doc/nodes.md)."""
    _, client, srv = scaler
    fqn = f"{NS}/{NODE}"
    got = client.collect(JointTrajectoryMsg, f"{NS}/scaled_trajectory")
    pub = client.publisher(JointTrajectoryMsg, f"{NS}/reference_trajectory")
    assert client.wait_for_subscriber(pub)
    with_effort = client.call(srv, request(trajectory_to_msg(REFERENCE)))
    assert all(len(p.effort) == MODEL.n for p in with_effort.trajectory.points)
    assert all(r.successful for r in client.set_parameters(fqn, {"include_effort": False}))
    try:
        answer = client.call(srv, request(trajectory_to_msg(REFERENCE)))
        assert answer.success and all(len(p.effort) == 0 for p in answer.trajectory.points)
        for field in ("positions", "velocities", "accelerations"):
            assert [list(getattr(p, field)) for p in answer.trajectory.points] == \
                [list(getattr(p, field)) for p in with_effort.trajectory.points]
        got.clear()
        msg = trajectory_to_msg(REFERENCE)
        assert client.publish_until(lambda: pub.publish(msg), lambda: got.messages)
        assert all(len(p.effort) == 0 for p in got.messages[-1].points)
    finally:
        assert all(r.successful for r in client.set_parameters(fqn, {"include_effort": True}))


def test_oversize_trajectory_is_refused_by_size(scaler):
    """On the topic from its bytes, by service from the C message: neither is converted."""
    proc, client, srv = scaler
    pub = client.publisher(JointTrajectoryMsg, f"{NS}/reference_trajectory")
    assert client.wait_for_subscriber(pub)
    big = JointTrajectoryMsg(joint_names=list(MODEL.joint_names))
    big.points = [trajectory_to_msg(REFERENCE).points[0]] * 10_001
    words = "reference_trajectory: 6 joint names and 10001 points, more than the 1024 and 10000"
    assert client.publish_until(lambda: pub.publish(big), lambda: words in proc.log_text(),
                                period=1.0), proc.log_text()
    answer = client.call(srv, request(big))
    assert not answer.success and "10001 points, more than the 1024 and 10000 accepted (refused "\
        "unconverted)" in answer.message, answer.message
    assert client.call(srv, request(trajectory_to_msg(REFERENCE))).success


PANDA = RobotModel.named("panda")
PANDA_LIMITS = REPO / "test" / "data" / "moveit" / "panda_moveit_config" / "config" / \
    "joint_limits.yaml"


def test_moveit_joint_limits_parameter(ros_env, ros_client, tmp_path):
    """The moveit_resources Panda joint_limits.yaml: acceleration and jerk limits hold after."""
    proc = NodeProcess.node("robot_dynamics_ros.nodes.trajectory_scaler", ros_env, tmp_path,
                            "panda_scaler", NS, {"robot_description": "panda",
                                                 "joint_limits": str(PANDA_LIMITS)})
    try:
        srv = ros_client.node.create_client(ScaleTrajectory, f"{NS}/panda_scaler/scale_trajectory")
        assert srv.wait_for_service(timeout_sec=TIMEOUT), proc.log_text()
        assert "jerk for 7 joint(s)" in proc.log_text()
        middle = (PANDA.lower + PANDA.upper) / 2
        t = np.array([0.0, 0.3, 0.6])
        q = middle + 0.3 * np.outer(t, np.ones(7))
        reference = JointTrajectory(PANDA.joint_names, t, q, np.zeros_like(q), np.zeros_like(q))
        acceleration = np.array([3.75, 1.875, 2.5, 3.125, 3.75, 5.0, 5.0])
        # uniform: the exact largest jerk of its segments; time_optimal: the jerk-limited law
        # (every joint has a jerk limit), within the re-check's 0.1 %
        for method, tolerance in (("uniform", 1e-9), ("time_optimal", 1e-3)):
            answer = ros_client.call(srv, request(trajectory_to_msg(reference), method))
            assert answer.success, answer.message
            out = trajectory_from_msg(answer.trajectory, JointOrder(PANDA.joint_names))
            assert out.interpolation == "quintic", method      # accelerations given: continuous
            jerk = out.segment_jerk_max().max()
            assert jerk <= 300.0 * (1 + tolerance), method
            _, _, qdd = out.sample(np.linspace(0.0, out.duration, 10_000))
            assert (np.abs(qdd) <= acceleration * 1.001).all(), method
            assert jerk >= 0.999 * 300.0 or (np.abs(qdd).max(axis=0) >= 0.99 * acceleration).any()
        assert "no jerk limit" not in proc.log_text()
    finally:
        proc.stop()


def test_tool_speed_and_payload_parameters(ros_env, ros_client, tmp_path):
    """tool_speed and payload build the constraint list: both methods keep the tool's speed."""
    load = tmp_path / "load.yaml"
    load.write_text("mass: 2.0\ncom: [0.0, 0.0, 0.1]\n")
    proc = NodeProcess.node("robot_dynamics_ros.nodes.trajectory_scaler", ros_env, tmp_path,
                            "tool_scaler", NS, {"robot_description": "puma560",
                                                "tool_speed": 1.5, "payload": str(load)})
    try:
        srv = ros_client.node.create_client(ScaleTrajectory, f"{NS}/tool_scaler/scale_trajectory")
        assert srv.wait_for_service(timeout_sec=TIMEOUT), proc.log_text()
        carried = MODEL.with_payload(2.0, (0.0, 0.0, 0.1))
        for method in ("uniform", "time_optimal"):
            answer = ros_client.call(srv, request(trajectory_to_msg(REFERENCE), method))
            assert answer.success, answer.message
            out, effort = received(answer.trajectory)
            t = np.linspace(0.0, out.duration, 20 * out.num_points)
            q, qd, qdd = out.sample(t)
            speed = np.linalg.norm((jacobian(MODEL, q) @ qd[..., None])[:, :3, 0], axis=1)
            assert 1.5 * 0.99 <= speed.max() <= 1.5 * 1.001, method
            assert (np.abs(rnea(carried, q, qd, qdd)) <= MODEL.effort_limit * 1.001).all()
            if method == "uniform":            # its points keep their accelerations
                np.testing.assert_allclose(np.array(effort), rnea(
                    carried, out.positions, out.velocities, out.accelerations), atol=1e-4)
    finally:
        proc.stop()


def test_controller_name_sets_the_output_topic(ros_env, ros_client, tmp_path):
    """
    A moveit_controllers.yaml's controller: the output goes to its /<name>/joint_trajectory.

    The file's default controller (controller_name empty), as MoveIt reads it; a remapping of
    scaled_trajectory still wins over the controller's topic.
    """
    ns = private_namespace("tsc")                         # (not the module's scaler's input)
    controller = f"{ns.strip('/')}/arm_controller"        # private to this session
    controllers = tmp_path / "moveit_controllers.yaml"
    controllers.write_text(
        "moveit_simple_controller_manager:\n  controller_names: [other, " + controller + "]\n"
        "  other: {type: FollowJointTrajectory, joints: []}\n"
        f"  {controller}:\n    type: FollowJointTrajectory\n    default: true\n"
        f"    joints: [{', '.join(MODEL.joint_names)}]\n")
    remapped = f"{ns}/remapped_output"
    nodes = [("file_scaler", {"moveit_controllers": str(controllers)}, (),
              f"/{controller}/joint_trajectory"),
             ("remapped_scaler", {"controller_name": controller},
              ("-r", f"scaled_trajectory:={remapped}"), remapped)]
    for name, params, remap, topic in nodes:
        proc = NodeProcess.node("robot_dynamics_ros.nodes.trajectory_scaler", ros_env, tmp_path,
                                name, ns, {"robot_description": "puma560", **params},
                                extra_args=remap)
        try:
            got = ros_client.collect(JointTrajectoryMsg, topic)
            pub = ros_client.publisher(JointTrajectoryMsg, f"{ns}/reference_trajectory")
            assert ros_client.wait_for_subscriber(pub), proc.log_text()
            msg = trajectory_to_msg(REFERENCE)
            assert ros_client.publish_until(lambda: pub.publish(msg), lambda: got.messages), \
                f"nothing on {topic}:\n" + proc.log_text()
            traj, _ = received(got.messages[0])
            np.testing.assert_allclose(traj.positions, REFERENCE.positions, atol=1e-12)
            assert traj.duration > REFERENCE.duration      # scaled, not echoed
        finally:
            proc.stop()
        assert proc.proc.returncode in (0, -15), proc.log_text()
