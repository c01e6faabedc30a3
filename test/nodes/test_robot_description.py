"""
The nodes' robot_description over DDS: URDF path or text parameters, the /robot_description topic.

* a node given a URDF path (with ``tip_link``) or the URDF text itself (as robot_state_publisher's
  parameter) computes with that URDF's chain: gravity equal to the core's on the same URDF;
* with an empty ``robot_description`` the node subscribes to ``/robot_description`` (remapped to
  a private topic here; reliable, transient local): nothing is published and services answer
  ``success: false`` until a URDF arrives, said once; an invalid URDF is refused with the reason
  and the node keeps what it had; a later valid one replaces the model as a whole (new joints,
  new output order); a new model that the node's per-joint gains do not fit is refused;
* the bringup and launch arguments: ``robot`` as a URDF path or ``topic``, ``root_link``,
  ``tip_link``.
"""
import time

import numpy as np
import pytest

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import TIMEOUT, NodeProcess, private_namespace

from robot_dynamics_ros.nodes.bringup import node_descriptions
from robot_dynamics_ros.core import RobotModel, gravity_torques
from robot_dynamics_ros.core.model.urdf_export import urdf_text

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

NS = private_namespace("rd")
TOPIC = f"{NS}/robot_description_source"        # /robot_description, remapped for this session
PLANAR_URDF = urdf_text(RobotModel.named("planar2"), "planar2")
PUMA_URDF = urdf_text(RobotModel.named("puma560"), "puma560")
PLANAR = RobotModel.from_urdf(PLANAR_URDF)             # chain base_link -> link2 (default tip)
PUMA = RobotModel.from_urdf(PUMA_URDF)


def _params_file(path, name, values: dict) -> str:
    """Write a ROS parameter file (the URDF text as a YAML block literal) and return its path."""
    lines = [f"/**/{name}:", "  ros__parameters:"]
    for key, value in values.items():
        if isinstance(value, str) and "\n" in value:
            lines.append(f"    {key}: |")
            lines += [f"      {line}" for line in value.splitlines()]
        elif isinstance(value, str):
            lines.append(f"    {key}: '{value}'")
        else:
            lines.append(f"    {key}: {value}")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _node(ros_env, tmp, module, name, values, namespace=NS):
    params = _params_file(tmp / f"{name}.yaml", name, values)
    return NodeProcess.node(f"robot_dynamics_ros.nodes.{module}", ros_env, tmp, name, namespace,
                            extra_args=["--params-file", params, "-r",
                                        f"/robot_description:={TOPIC}"])


def _gravity_output(client, pub, out, names, q, sec):
    msg = JointState(name=list(names), position=[float(v) for v in q])
    msg.header.stamp.sec = sec
    find = lambda: next((m for m in out.messages if m.header.stamp.sec == sec), None)  # noqa: E731
    # generous: node processes start and compile their generated model slowly on a loaded machine
    return client.publish_until(lambda: pub.publish(msg), find, timeout=TIMEOUT * 3)


@pytest.fixture
def description(ros_client):
    """
    Give one test its own latched publisher on the session's /robot_description.

    Destroyed after the test: a latched sample left behind (an earlier test's last, invalid
    'puma560') reaches the nodes a later test starts, and one of them took it for its robot.
    """
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    publisher = ros_client.node.create_publisher(String, TOPIC, latched)
    yield publisher
    ros_client.node.destroy_publisher(publisher)


@pytest.fixture(scope="module")
def waiting_nodes(ros_env, ros_client, tmp_path_factory):
    """Gravity, service and inverse-dynamics nodes started without a robot."""
    tmp = tmp_path_factory.mktemp("rd")
    procs = [_node(ros_env, tmp, "gravity_compensation", "gravity", {"robot_description": ""}),
             _node(ros_env, tmp, "dynamics_service", "service", {"robot_description": ""}),
             _node(ros_env, tmp, "inverse_dynamics", "inverse",
                   {"robot_description": "", "kp": [50.0, 50.0], "kd": [10.0, 10.0]})]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.stop()
    for proc in procs:
        assert proc.proc.returncode in (0, -15), proc.log_path.read_text()


def test_nodes_wait_for_robot_description_then_follow_it(waiting_nodes, ros_client, description):
    from robot_dynamics_interfaces.srv import GetGravityTorques
    gravity, service, inverse = waiting_nodes
    client = ros_client
    pub = client.publisher(JointState, f"{NS}/joint_states")
    out = client.collect(JointState, f"{NS}/gravity_effort")
    # three node processes start at once: allow for a slow start on a loaded machine
    assert client.wait_for_subscriber(pub, TIMEOUT * 3), gravity.log_text()
    srv = client.node.create_client(GetGravityTorques, f"{NS}/get_gravity_torques")

    # 1. No model: nothing published, said once; the service says why.
    state = JointState(name=["joint1", "joint2"], position=[0.1, 0.2])
    said = "no robot model yet: nothing is published"
    assert client.publish_until(lambda: pub.publish(state), lambda: said in gravity.log_text()), \
        gravity.log_text()
    for _ in range(5):                      # more inputs: still nothing, and not said again
        pub.publish(state)
        client.spin_for(0.1)
    client.spin_for(0.5)
    assert out.messages == []
    assert gravity.log_text().count(said) == 1
    answer = client.call(srv, GetGravityTorques.Request(position=[0.1, 0.2]))
    assert not answer.success and "no robot model yet" in answer.message

    # 2. An invalid URDF is refused with the reason; still nothing.
    description.publish(String(data=PLANAR_URDF.replace("</robot>", "")))
    assert client.spin_until(lambda: "refused" in gravity.log_text()), gravity.log_text()
    assert "malformed XML" in gravity.log_text() and "still no robot model" in gravity.log_text()

    # 3. A valid URDF: the node computes with it.
    description.publish(String(data=PLANAR_URDF))
    q = np.array([0.4, -0.7])
    got = _gravity_output(client, pub, out, PLANAR.joint_names, q, 3001)
    assert got is not None, gravity.log_text()
    np.testing.assert_allclose(got.effort, gravity_torques(PLANAR, q), rtol=1e-12, atol=1e-12)
    # each node builds its own model, in its own process: the service node has one once it says
    # so, not when the gravity node has (a loaded CI run asked it while it was still building)
    assert client.spin_until(lambda: "'planar2' (2 joints) from /robot_description"
                             in service.log_text(), TIMEOUT * 3), service.log_text()
    answer = client.call(srv, GetGravityTorques.Request(position=q.tolist()))
    assert answer.success, answer.message
    np.testing.assert_allclose(answer.effort, gravity_torques(PLANAR, q), rtol=1e-12, atol=1e-12)
    assert client.spin_until(lambda: "from /robot_description" in inverse.log_text()), \
        inverse.log_text()

    # 4. Another valid URDF replaces the model as a whole (6 joints now), built in a worker thread
    # while the planar model keeps computing; the switch is said ...
    description.publish(String(data=PUMA_URDF))
    assert client.spin_until(lambda: "replacing 'planar2'" in gravity.log_text()), \
        gravity.log_text()
    q6 = np.array([0.1, 0.5, -0.3, 0.2, 0.4, -0.6])
    got = _gravity_output(client, pub, out, PUMA.joint_names, q6, 3002)
    assert got is not None, gravity.log_text()
    assert list(got.name) == list(PUMA.joint_names)
    np.testing.assert_allclose(got.effort, gravity_torques(PUMA, q6), rtol=1e-12, atol=1e-12)
    assert "replacing 'planar2'" in gravity.log_text()
    # ... except where the node's per-joint gains (2 of them) do not fit it: refused, kept.
    assert client.spin_until(lambda: "kp: expected 6 gains" in inverse.log_text()), \
        inverse.log_text()
    assert "keeping robot 'planar2'" in inverse.log_text()

    # 5. An invalid one now: refused, the puma stays.
    description.publish(String(data="puma560"))
    assert client.spin_until(lambda: "not URDF XML text" in gravity.log_text()), gravity.log_text()
    assert "keeping robot 'puma560'" in gravity.log_text()
    got = _gravity_output(client, pub, out, PUMA.joint_names, q6, 3003)
    assert got is not None and np.allclose(got.effort, gravity_torques(PUMA, q6), rtol=1e-12)


def test_services_asked_while_the_model_is_built_say_so(ros_env, monkeypatch):
    """
    Between a URDF's arrival and its model, a service answers that the model is being built.

    In this process on a private context, the build held until released: before the URDF the
    answer is "waiting for a URDF", while it is built "building it from the URDF received",
    then the model answers.
    """
    import threading

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from robot_dynamics_interfaces.srv import GetGravityTorques
    from robot_dynamics_ros.nodes import base
    from robot_dynamics_ros.nodes.dynamics_service import DynamicsServiceNode
    release, build = threading.Event(), base.model_from_topic

    def held(text, options):
        release.wait(TIMEOUT)
        return build(text, options)
    monkeypatch.setattr(base, "model_from_topic", held)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = DynamicsServiceNode("service", namespace=f"{NS}_building", context=context,
                               parameter_overrides=[Parameter("robot_description", value="")])
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    service = next(s for s in node.services if s.srv_name.endswith("get_gravity_torques"))

    def ask():
        return service.callback(GetGravityTorques.Request(position=[0.4, -0.7]),
                                GetGravityTorques.Response())
    try:
        assert "no robot model yet: (no robot yet: waiting for /robot_description)" in \
            ask().message
        node._on_robot_description(String(data=PLANAR_URDF))     # as the subscription does
        answer = ask()
        assert not answer.success and answer.message.endswith(
            "no robot model yet: building it from the URDF received on /robot_description")
        release.set()
        end = time.monotonic() + TIMEOUT * 3
        while node.dynamics is None and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        answer = ask()
        assert answer.success, answer.message
        np.testing.assert_allclose(answer.effort, gravity_torques(PLANAR, [0.4, -0.7]),
                                   rtol=1e-12, atol=1e-12)
    finally:
        release.set()
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.mark.parametrize("form", ["path", "text"])
def test_robot_description_parameter_takes_a_urdf(ros_env, ros_client, tmp_path, form):
    urdf = tmp_path / "puma.urdf"
    urdf.write_text(PUMA_URDF)
    model = RobotModel.from_urdf(urdf, tip_link="tool0")
    values = {"robot_description": str(urdf) if form == "path" else PUMA_URDF, "tip_link": "tool0"}
    namespace = f"{NS}_{form}"
    proc = _node(ros_env, tmp_path, "gravity_compensation", "gravity", values, namespace)
    try:
        client = ros_client
        pub = client.publisher(JointState, f"{namespace}/joint_states")
        out = client.collect(JointState, f"{namespace}/gravity_effort")
        assert client.wait_for_subscriber(pub, TIMEOUT * 3), proc.log_text()
        q = np.array([0.3, -0.2, 0.5, 0.1, -0.4, 0.7])
        got = _gravity_output(client, pub, out, model.joint_names, q, 4000 + len(form))
        assert got is not None, proc.log_text()
        np.testing.assert_allclose(got.effort, gravity_torques(model, q), rtol=1e-12, atol=1e-12)
    finally:
        proc.stop()
    assert proc.proc.returncode in (0, -15), proc.log_path.read_text()


def test_bad_urdf_parameter_stops_the_node_with_the_reason(ros_env, tmp_path):
    proc = _node(ros_env, tmp_path, "gravity_compensation", "gravity",
                 {"robot_description": PUMA_URDF, "tip_link": "no_such_link"}, f"{NS}_bad")
    try:
        proc.proc.wait(TIMEOUT * 3)
    finally:
        proc.stop()
    assert proc.proc.returncode == 2
    assert "tip_link 'no_such_link': no such link" in proc.log_path.read_text()


def test_bringup_arguments(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(PUMA_URDF)
    urdf = node_descriptions(str(path), nodes="gravity_compensation", params_file="",
                             root_link="base_link", tip_link="tool0")
    assert urdf[0].parameters == {"robot_description": str(path), "root_link": "base_link",
                                  "tip_link": "tool0", "use_sim_time": False,
                                  "autostart": True}
    # refused before anything starts
    with pytest.raises(ValueError, match="robot: .*missing.urdf: cannot read"):
        node_descriptions(str(tmp_path / "missing.urdf"), params_file="")
    topic = node_descriptions("topic", nodes="gravity_compensation", params_file="")
    assert topic[0].parameters["robot_description"] == ""
    with pytest.raises(ValueError, match="robot: empty"):
        node_descriptions("", params_file="")


def test_corpus_descriptions_as_parameter_and_topic(ros_env, ros_client, tmp_path, monkeypatch,
                                                    description):
    """A vendor xacro path with ``xacro_arguments``, and a vendor URDF on the latched topic."""
    from urdf_corpus import BY_NAME, ament_prefix, expanded, source_path
    prefix = ament_prefix(tmp_path / "ament")
    env = dict(ros_env, AMENT_PREFIX_PATH=prefix + ":" + ros_env.get("AMENT_PREFIX_PATH", ""))
    ur5e, xarm6 = BY_NAME["ur5e"], BY_NAME["xarm6"]
    arguments = " ".join(f"{k}:={v}" for k, v in ur5e.arguments.items())
    param = _node(env, tmp_path, "gravity_compensation", "xacro_param",
                  {"robot_description": str(source_path(ur5e, prefix)),
                   "xacro_arguments": arguments, "tip_link": ur5e.tip},
                  namespace=f"{NS}_xp")
    topic = _node(env, tmp_path, "gravity_compensation", "from_topic",
                  {"robot_description": ""}, namespace=f"{NS}_xt")
    try:
        client = ros_client
        text = expanded(xarm6, prefix)
        description.publish(String(data=text))
        for proc, ns, model in (
                (param, f"{NS}_xp", RobotModel.from_urdf(expanded(ur5e, prefix),
                                                         tip_link=ur5e.tip)),
                (topic, f"{NS}_xt", RobotModel.from_urdf(text))):
            pub = client.publisher(JointState, f"{ns}/joint_states")
            out = client.collect(JointState, f"{ns}/gravity_effort")
            assert client.wait_for_subscriber(pub, TIMEOUT * 3), proc.log_text()
            q = np.linspace(-0.5, 0.6, model.n)
            got = _gravity_output(client, pub, out, model.joint_names, q, 4001)
            assert got is not None, proc.log_text()
            np.testing.assert_allclose(got.effort, gravity_torques(model, q), rtol=1e-12,
                                       atol=1e-12)
        assert "physically inconsistent inertia" in topic.log_text()    # the xArm6's quirk, said
    finally:
        for proc in (param, topic):
            proc.stop()


def _resident_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS"))


def test_d1_memory_of_a_large_refused_description_returns(ros_env):
    """
    Issue 31, D1: the memory of a large refused description returns.

    One 50 MB /robot_description raised a node's memory by 100 MB for good, also
    after a valid description replaced it (the refused text was held by the traceback kept with
    the builder's error, in a cycle that only the garbage collector frees, and by the builder's
    frame).  Here a 20 MB text (refused: larger than a URDF may be), then a valid URDF, given
    to the node's callback in this process (its rclpy message dropped, as after a callback):
    the resident memory comes back to within a quarter of the text's size of what it was, with
    the garbage collector off (the free pages given back by malloc_trim, nodes/memory.py, which
    the node schedules after a text that large).
    """
    import gc

    from local_node import local_node

    from robot_dynamics_ros.nodes.gravity_compensation import GravityCompensationNode

    def feed(node, text):
        node._on_robot_description(String(data=text))
        del text                                    # (as the executor drops the message)
        end = time.monotonic() + 60.0
        while node._model_builder.busy and time.monotonic() < end:
            time.sleep(0.01)
            node._model_builder._hand_over()        # (the timer's callback: no executor here)
        assert not node._model_builder.busy
        if node.trimmer is not None and not node.trimmer._timer.is_canceled():
            node.trimmer._trim()                    # (its timer's callback, as above)

    size_mb = 20
    with local_node(GravityCompensationNode, "d1_memory", autostart=True,
                    robot_description="") as node:
        feed(node, PUMA_URDF)
        feed(node, PLANAR_URDF)
        assert node.base_model.n == PLANAR.n
        gc.collect()
        gc.disable()
        try:
            before = _resident_mb()
            feed(node, "<robot name='big'><!-- " + "x" * (size_mb << 20) + " --></robot>")
            assert node.base_model.n == PLANAR.n                # refused, the model kept
            feed(node, PUMA_URDF)
            assert node.base_model.n == PUMA.n
            after = _resident_mb()
        finally:
            gc.enable()
        assert node.trimmer.trims == 1           # after the large text, not the small ones
    assert after - before < 0.25 * size_mb, (before, after)
