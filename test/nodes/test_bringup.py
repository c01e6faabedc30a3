"""
Bringup: the node list shared by the launch file and `robot-dynamics bringup`, run for real.

* node_descriptions (no ROS needed) and the launch file, executed against minimal stand-ins for
  launch / launch_ros (not installable here) that record the actions it creates;
* `robot-dynamics bringup` as a child process with a parameter file: every node answers over DDS,
  the file's values and the command-line overrides are in effect, outputs match the core
  (`robot-dynamics demo`: test_ros_demo.py).
"""
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import ROOT, TIMEOUT, NodeProcess, private_namespace

from robot_dynamics_ros.core import RobotModel, gravity_torques, nonlinear_effects, rnea
from robot_dynamics_ros.nodes.bringup import (NODE_TYPES, TOPIC_ARGUMENTS, default_params_file,
                                              node_descriptions)

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

MODEL = RobotModel.named("puma560")
NAMES = list(MODEL.joint_names)
NS = private_namespace("bu")


# ------------------------------------------------------------------------------ the node list
def test_node_descriptions_defaults_and_arguments():
    ds = node_descriptions()
    assert [d.kind for d in ds] == ["inverse_dynamics", "gravity_compensation", "dynamics_service",
                                    "trajectory_scaler"]
    assert {d.namespace for d in ds} == {"/robot_dynamics"}
    managed = {"inverse_dynamics", "gravity_compensation"}
    assert all(d.parameters == {"robot_description": "puma560", "use_sim_time": False,
                                **({"autostart": True} if d.kind in managed else {})}
               for d in ds)
    assert all(d.parameters["autostart"] is False
               for d in node_descriptions(autostart="false") if d.kind in managed)
    assert Path(ds[0].params_file) == Path(
        default_params_file()) and Path(ds[0].params_file).is_file()
    for d in ds:
        assert d.executable == NODE_TYPES[d.kind][0]
        assert d.node_class().__module__ == NODE_TYPES[d.kind][1]
    setup_py = (ROOT / "setup.py").read_text()
    # every kind resolves and is installed
    for kind, (executable, module, *_) in NODE_TYPES.items():
        d, = node_descriptions(nodes=kind)
        assert d.node_class().__module__ == module
        assert f'"{executable} = robot_dynamics_ros.nodes.executables:main"' in setup_py
    sim, = node_descriptions(nodes="simulator", use_sim_time=True)   # /clock for the others
    assert sim.executable == "dynamics_simulator_node" and sim.parameters["publish_clock"]
    assert "simulator" not in [d.kind for d in node_descriptions()]      # not by default
    ds = node_descriptions("panda", "/arm/", "gravity_compensation, dynamics_service", "true", "")
    assert [(d.name, d.namespace, d.params_file) for d in ds] == [
        ("gravity_compensation", "/arm", ""), ("dynamics_service", "/arm", "")]
    assert ds[0].parameters == {"robot_description": "panda", "use_sim_time": True,
                                "autostart": True}
    assert all(d.remappings == () for d in ds)
    ds = node_descriptions(nodes="gravity_compensation", topics={
        "joint_states": "/joint_states", "gravity_effort_command": "/effort_controller/commands",
        "scaled_trajectory": "scaled_trajectory"})
    assert ds[0].remappings == (("joint_states", "/joint_states"),
                                ("gravity_effort_command", "/effort_controller/commands"))
    assert ds[0].cli_args() == ["--ros-args", "-r", "joint_states:=/joint_states",
                                "-r", "gravity_effort_command:=/effort_controller/commands"]
    for kwargs, message in [({"nodes": "gravity,dynamics_service"}, "unknown ['gravity']"),
                            ({"nodes": ""}, "none selected"),
                            ({"use_sim_time": "maybe"}, "use_sim_time"),
                            ({"params_file": "/nonexistent.yaml"}, "no such file"),
                            ({"robot": "no_such_robot"}, "robot: .*no_such_robot"),
                            ({"namespace": "a b"}, "namespace: '/a b' is not a valid"),
                            ({"topics": {"joint_states": "joint states"}},
                             "joint_states: 'joint states' is not a valid ROS topic name"),
                            ({"topics": {"wrench": "/wrench"}}, "topics: unknown ['wrench']")]:
        with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")
                           .replace("(", r"\(").replace(")", r"\)")):
            node_descriptions(**kwargs)


def _launch_stand_ins():
    """Modules standing in for launch / launch_ros: they record what the launch file builds."""
    def record(kind):
        class Action:
            def __init__(self, *args, **kwargs):
                self.kind, self.args, self.kwargs = kind, args, kwargs
        return Action

    class LaunchConfiguration:
        def __init__(self, name):
            self.name = name

        def perform(self, context):
            return context.launch_configurations[self.name]

    mods = {name: types.ModuleType(name)
            for name in ("launch", "launch.actions", "launch.substitutions", "launch_ros",
                         "launch_ros.actions")}
    mods["launch"].LaunchDescription = lambda entities: list(entities)
    mods["launch.actions"].DeclareLaunchArgument = record("DeclareLaunchArgument")
    mods["launch.actions"].OpaqueFunction = record("OpaqueFunction")
    mods["launch.substitutions"].LaunchConfiguration = LaunchConfiguration
    mods["launch_ros.actions"].Node = record("Node")
    mods["launch_ros.actions"].LifecycleNode = record("LifecycleNode")
    return mods


def _launch_file(monkeypatch, tmp_path):
    """Run the launch file with the stand-ins: (its entities, its arguments' defaults, a URDF)."""
    import runpy

    from robot_dynamics_ros.core.model.urdf_export import urdf_text
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(urdf_text(MODEL))
    for name, module in _launch_stand_ins().items():
        monkeypatch.setitem(sys.modules, name, module)
    launch = runpy.run_path(str(ROOT / "launch" / "robot_dynamics.launch.py"))
    entities = launch["generate_launch_description"]()
    arguments = {e.args[0]: e.kwargs["default_value"]
                 for e in entities if e.kind == "DeclareLaunchArgument"}
    return entities, arguments, urdf


def test_launch_file_builds_the_same_node_list(monkeypatch, tmp_path):
    entities, arguments, urdf = _launch_file(monkeypatch, tmp_path)
    assert set(arguments) == {"robot", "namespace", "nodes", "use_sim_time", "params_file",
                              "root_link", "tip_link", "xacro_arguments", "strict_inertia",
                              "autostart", "split", *TOPIC_ARGUMENTS}
    assert arguments["split"] == "false"            # one process by default
    opaque, = [e for e in entities if e.kind == "OpaqueFunction"]
    for values in [arguments, dict(arguments, robot="stanford", namespace="lab",
                                   use_sim_time="true", nodes="dynamics_service"),
                   dict(arguments, robot=str(urdf), root_link="base_link", tip_link="tool0"),
                   dict(arguments, autostart="false")]:
        values = dict(values, split="true")         # each node in its own process
        context = types.SimpleNamespace(launch_configurations=values)
        nodes = opaque.kwargs["function"](context)
        expected = node_descriptions(values["robot"], values["namespace"], values["nodes"],
                                     values["use_sim_time"], values["params_file"],
                                     root_link=values["root_link"], tip_link=values["tip_link"],
                                     topics={name: values[name] for name in TOPIC_ARGUMENTS},
                                     autostart=values["autostart"])
        # the managed nodes as launch_ros LifecycleNode actions, the others as Node
        assert [n.kind for n in nodes] == [
            "LifecycleNode" if NODE_TYPES[d.kind].managed else "Node" for d in expected]
        assert [n.kwargs for n in nodes] == [
            {"package": "robot_dynamics_ros", "executable": d.executable, "name": d.name,
             "namespace": d.namespace, "parameters": [d.params_file, d.parameters],
             "output": "screen", "remappings": [("joint_states", "/joint_states")]}
            for d in expected]


# -------------------------------------------------------------------------- the bringup, for real
PARAMS = """\
/**:
  ros__parameters:
    robot_description: planar2        # overridden by --robot
    input_timeout: 0.9
    warning_period: 0.0
/**/gravity_compensation:
  ros__parameters:
    friction_compensation: true
"""


@pytest.fixture(scope="module")
def bringup(ros_env, ros_client, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bringup")
    params = tmp / "params.yaml"
    params.write_text(PARAMS)
    argv = [sys.executable, "-m", "robot_dynamics_ros.commands.cli", "bringup", "--robot",
            "puma560", "--namespace", NS, "--params-file", str(
                params), "--joint-states", f"{NS}/joint_states",
            "--ros-args", "-p", "qos_depth:=5"]
    proc = NodeProcess(argv, ros_env, tmp / "bringup.log")
    try:
        yield proc, ros_client
    finally:
        proc.stop()
    assert proc.proc.returncode in (0, -15), proc.log_text()


def test_all_nodes_up_with_file_and_argument_parameters(bringup):
    proc, client = bringup
    wanted = {("inverse_dynamics", NS), ("gravity_compensation", NS), ("dynamics_service", NS)}
    assert client.spin_until(lambda: wanted <= set(      # three nodes start: a loaded machine
        client.node.get_node_names_and_namespaces()), 3 * TIMEOUT), proc.log_text()
    for node in ("inverse_dynamics", "gravity_compensation", "dynamics_service"):
        robot, timeout, depth = client.get_parameters(
            f"{NS}/{node}", "robot_description", "input_timeout", "qos_depth")
        assert (robot, timeout, depth) == ("puma560", 0.9, 5), node
    assert client.get_parameters(f"{NS}/gravity_compensation", "friction_compensation") == [True]
    assert client.get_parameters(f"{NS}/inverse_dynamics", "mode") == ["feedforward"]


def test_torque_nodes_are_active_before_the_other_nodes_are_built(bringup):
    # the bringup spins the managed torque nodes first, then builds the service and the scaler
    # (whose start-up, loading its passes, would otherwise delay the first torque outputs)
    proc, client = bringup
    assert client.spin_until(lambda: "trajectory_scaler for 'puma560'" in proc.log_text()), \
        proc.log_text()
    log = proc.log_text()
    active = max(log.index(f"{node}]: active: publishing")
                 for node in ("inverse_dynamics", "gravity_compensation"))
    assert active < log.index("dynamics services for 'puma560'") < \
        log.index("trajectory_scaler for 'puma560'"), log


def test_bringup_nodes_answer(bringup):
    from robot_dynamics_interfaces.srv import GetMassMatrix
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    proc, client = bringup
    # a constant-acceleration reference (exact under quintic interpolation), starting on receipt
    p0 = np.array([0.0, 0.4, -0.5, 0.1, 0.2, 0.0])
    v0 = np.full(6, 0.05)
    a = np.array([0.1, -0.1, 0.2, 0.3, -0.2, 0.1])
    traj = JointTrajectory(joint_names=NAMES)
    for t in (0.0, 30.0, 60.0):
        traj.points.append(JointTrajectoryPoint(
            positions=(p0 + v0 * t + 0.5 * a * t * t).tolist(), velocities=(v0 + a * t).tolist(),
            accelerations=a.tolist()))
        traj.points[-1].time_from_start.sec = int(t)
    ref_pub = client.publisher(JointTrajectory, f"{NS}/reference_trajectory")
    state_pub = client.publisher(JointState, f"{NS}/joint_states")
    ff = client.collect(JointState, f"{NS}/feedforward_effort")
    gravity = client.collect(JointState, f"{NS}/gravity_effort")
    q, qd = np.array([0.3, 0.8, -1.0, 0.4, 0.5, -0.2]), np.array([0.2, -0.3, 0.1, 0.5, -0.4, 0.3])
    state = JointState(name=NAMES[::-1], position=q[::-1].tolist(), velocity=qd[::-1].tolist())
    state.header.stamp.sec = 77

    def publish():
        if not ff.messages:
            ref_pub.publish(traj)
        state_pub.publish(state)
    assert client.publish_until(publish, lambda: ff.messages and gravity.messages), proc.log_text()
    out = gravity.messages[-1]
    assert out.header.stamp.sec == 77
    friction = nonlinear_effects(MODEL, q, qd) - nonlinear_effects(MODEL.without_friction(), q, qd)
    np.testing.assert_allclose(out.effort, gravity_torques(
        MODEL, q) + friction, rtol=1e-10, atol=1e-10)
    out = ff.messages[-1]
    pos, vel = np.array(out.position), np.array(out.velocity)
    # the sampling instant, the same for every joint
    t = (vel - v0) / a
    assert np.ptp(t) < 1e-9 and 0.0 <= t[0] < 30.0
    np.testing.assert_allclose(pos, p0 + v0 * t[0] + 0.5 * a * t[0] ** 2, atol=1e-9)
    np.testing.assert_allclose(out.effort, rnea(MODEL, pos, vel, a), rtol=1e-9, atol=1e-9)
    mm = client.node.create_client(GetMassMatrix, f"{NS}/get_mass_matrix")
    answer = client.call(mm, GetMassMatrix.Request(position=q.tolist()))
    assert answer.success and answer.size == 6, answer.message
    assert proc.alive()


def test_bringup_feeds_both_torque_nodes_from_one_subscription(bringup):
    """
    One joint_states subscription in the bringup feeds both torque nodes (share_joint_states).

    Each node still checks the message for itself: without velocities gravity compensation
    (friction_compensation: true in the parameter file) rejects it while inverse dynamics
    (feedforward) publishes; the next complete message reaches both.
    """
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    proc, client = bringup
    topic = f"{NS}/joint_states"
    assert client.spin_until(lambda: client.node.get_subscriptions_info_by_topic(topic))
    client.spin_until(lambda: False, timeout=0.5)           # discovery settles
    subscribers = [(i.node_namespace, i.node_name)
                   for i in client.node.get_subscriptions_info_by_topic(topic)]
    assert subscribers == [(NS, "inverse_dynamics")], subscribers
    traj = JointTrajectory(joint_names=NAMES, points=[
        JointTrajectoryPoint(positions=[0.1] * 6), JointTrajectoryPoint(positions=[0.2] * 6)])
    traj.points[1].time_from_start.sec = 60
    ref_pub = client.publisher(JointTrajectory, f"{NS}/reference_trajectory")
    state_pub = client.publisher(JointState, topic)
    ff = client.collect(JointState, f"{NS}/feedforward_effort")
    gravity = client.collect(JointState, f"{NS}/gravity_effort")
    q = [0.3, 0.8, -1.0, 0.4, 0.5, -0.2]
    no_velocity = JointState(name=NAMES, position=q)
    no_velocity.header.stamp.sec = 78
    complete = JointState(name=NAMES, position=q, velocity=[0.1] * 6)
    complete.header.stamp.sec = 79

    def stamped(collector, sec):
        return [m for m in collector.messages if m.header.stamp.sec == sec]

    def publish_without_velocity():
        ref_pub.publish(traj)
        state_pub.publish(no_velocity)
    assert client.publish_until(publish_without_velocity, lambda: stamped(ff, 78)), \
        proc.log_text()
    assert client.publish_until(lambda: state_pub.publish(complete),
                                lambda: stamped(ff, 79) and stamped(gravity, 79)), proc.log_text()
    assert not stamped(gravity, 78)
    np.testing.assert_allclose(stamped(gravity, 79)[-1].effort, gravity_torques(MODEL, q) + (
        nonlinear_effects(MODEL, q, [0.1] * 6)
        - nonlinear_effects(MODEL.without_friction(), q, [0.1] * 6)), rtol=1e-10, atol=1e-10)
    assert "no velocity" in proc.log_text()
    assert proc.alive()


def _cli(*args, env, timeout=60):
    return subprocess.run([sys.executable, "-m", "robot_dynamics_ros.commands.cli", *args],
                          env=env, cwd=str(ROOT), capture_output=True, text=True, timeout=timeout)


def test_bringup_rejects_bad_arguments(ros_env):
    result = _cli("bringup", "--nodes", "gravity,dynamics_service", "--duration", "1", env=ros_env)
    assert result.returncode == 2 and "unknown ['gravity']" in result.stderr, result
    result = _cli("bringup", "--robot", "no_such_robot", "--duration", "1", env=ros_env)
    assert result.returncode == 2 and "no_such_robot" in result.stderr, result
    result = _cli("bringup", "--nodes", "gravity_compensation", "--duration", "1", "--namespace",
                  private_namespace("bad"), "--ros-args", "-p", "input_timeout:=1", env=ros_env)
    assert result.returncode == 2 and "input_timeout" in result.stderr, result
    assert "Traceback" not in result.stderr, result


def test_launch_file_runs_the_nodes_in_one_bringup_process_by_default(monkeypatch, tmp_path):
    """split:=false (the default): one `robot-dynamics bringup`, the same node list."""
    import argparse

    from robot_dynamics_ros.commands import bringup as bringup_command
    entities, arguments, urdf = _launch_file(monkeypatch, tmp_path)
    opaque, = [e for e in entities if e.kind == "OpaqueFunction"]
    parser = argparse.ArgumentParser()
    bringup_command.add_arguments(parser)
    for values in [arguments, dict(arguments, robot="stanford", namespace="lab",
                                   use_sim_time="true", nodes="dynamics_service,simulator"),
                   dict(arguments, robot=str(urdf), root_link="base_link", tip_link="tool0",
                        strict_inertia="true", joint_states="/arm/joint_states"),
                   dict(arguments, autostart="false", params_file="")]:
        context = types.SimpleNamespace(launch_configurations=values)
        node, = opaque.kwargs["function"](context)
        assert node.kind == "Node" and node.kwargs["executable"] == "robot-dynamics"
        argv = node.kwargs["arguments"]
        assert argv[0] == "bringup"
        args = parser.parse_args(argv[1:])
        model = {"xacro_arguments": values["xacro_arguments"],
                 "strict_inertia": values["strict_inertia"]}
        expected = node_descriptions(values["robot"], values["namespace"], values["nodes"],
                                     values["use_sim_time"], values["params_file"],
                                     root_link=values["root_link"], tip_link=values["tip_link"],
                                     topics={name: values[name] for name in TOPIC_ARGUMENTS},
                                     model=model, autostart=values["autostart"])
        # what the bringup command builds from those arguments is the launch file's node list
        assert node_descriptions(
            args.robot, args.namespace, args.nodes, args.use_sim_time, args.params_file,
            root_link=args.root_link, tip_link=args.tip_link,
            topics=bringup_command.topic_values(args),
            model=bringup_command._model_settings(args), autostart=args.autostart) == expected
    context = types.SimpleNamespace(launch_configurations=dict(arguments, split="maybe"))
    with pytest.raises(ValueError, match="split"):
        opaque.kwargs["function"](context)
