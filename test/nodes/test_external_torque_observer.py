"""
external_torque_observer_node over DDS (separate processes).

* A simulated collision: dynamics_simulator_node (Puma 560 with its friction, lockstep, 1 kHz,
  /clock) tracked by inverse_dynamics_node (computed torque) along a slow sinusoid on which every
  joint keeps sliding, a step wrench published to the simulator's ``applied_wrench`` (world
  axes) with a stamp that schedules it at 1 s of simulated time; the observer node (its friction
  known, effort from joint_states as applied since the previous state): its ``external_effort``
  reaches the applied J(q)^T F (computed here from the recorded joint states and the core's
  Jacobian) within 2 % after 5 / K_O, ``contact`` rises within the stated latency and not before,
  ``external_wrench`` is F in the tool's axes.  A wrench in an unknown frame is refused by the
  simulator by name.
* The lifecycle: unconfigured and inactive, the node publishes nothing; activated, it does.
* A bag played into the node gives what ``bag process --outputs observer`` gives offline.
"""
import re

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from bag_cli import cli, wait_exit
from observer_cases import GENTLE, puma, push_wrench, track, write_bag
from robot_dynamics_ros.bags import load_joint_states
from robot_dynamics_ros.bags.process import ProcessOptions, process_bag
from robot_dynamics_ros.core import JointTrajectory, jacobian, tool_pose
from robot_dynamics_ros.core.observer import ObserverOptions, detection_latency
from robot_dynamics_ros.messages.ros import trajectory_to_msg
from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import NodeProcess, private_namespace

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

SIM = "robot_dynamics_ros.nodes.simulator"
INVERSE_DYNAMICS = "robot_dynamics_ros.nodes.inverse_dynamics"
OBSERVER = "robot_dynamics_ros.nodes.external_torque_observer"
K = 50.0
DURATION = 2.0                       # s of simulated time
WRENCH_AT = 1.0                      # s of simulated time: the wrench's stamp
PUSH_AT = 0.5                        # the wrench is computed for the configuration here


def stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def reference():
    """GENTLE as waypoints every 20 ms (positions, velocities, accelerations)."""
    times = np.arange(0.0, DURATION + 0.3, 0.02)
    q, qd, qdd = (np.array(x) for x in zip(*(GENTLE.sample(t) for t in times)))
    return JointTrajectory(puma().joint_names, times, q, qd, qdd)


def test_a_step_wrench_on_the_simulator_is_estimated_and_flagged(ros_env, ros_client, tmp_path):
    model = puma()
    # (before any node starts: the first call of the core's kernel in this process may compile it)
    F = push_wrench(model, PUSH_AT)
    namespace = private_namespace("observer")
    q0, qd0, _ = GENTLE.sample(0.0)
    sim_params = {"robot_description": "puma560", "rate": 1000.0, "publish_rate": 1000.0,
                  # a quarter of real time: the test's reader takes four 1 kHz topics
                  "real_time_factor": 0.25, "publish_clock": True, "lockstep": True,
                  "command_timeout": 5.0, "initial_position": q0.tolist(),
                  "initial_velocity": qd0.tolist()}
    common = {"robot_description": "puma560", "use_sim_time": True, "input_timeout": 0.0,
              "autostart": True}
    controller = NodeProcess.node(INVERSE_DYNAMICS, ros_env, tmp_path, "inverse_dynamics",
                                  namespace, {**common, "mode": "computed_torque"})
    observer = NodeProcess.node(OBSERVER, ros_env, tmp_path, "external_torque_observer",
                                namespace, {**common, "gains": [K],
                                            "effort_timing": "interval", "qos_depth": 1000,
                                            "qos_overrides./" + namespace.strip("/")
                                            + "/joint_states.subscription.reliability":
                                            "reliable"})
    processes = [controller, observer]
    depth = 50_000                      # (never the reader's queue that drops a message)
    try:
        states = ros_client.collect(JointState, f"{namespace}/joint_states", depth)
        efforts = ros_client.collect(JointState, f"{namespace}/external_effort", depth)
        contacts = ros_client.collect(Bool, f"{namespace}/contact", depth)
        wrenches = ros_client.collect(WrenchStamped, f"{namespace}/external_wrench", depth)
        publisher = ros_client.publisher(JointTrajectoryMsg, f"{namespace}/reference_trajectory")
        assert ros_client.wait_for_subscriber(publisher, timeout=60.0), controller.log_text()
        # every output matched before the first joint state
        outputs = [f"{namespace}/{topic}"
                   for topic in ("external_effort", "contact", "external_wrench")]
        assert ros_client.spin_until(lambda: all(ros_client.node.count_publishers(topic)
                                                 for topic in outputs), timeout=60.0), \
            observer.log_text()
        ros_client.spin_for(0.5)
        publisher.publish(trajectory_to_msg(reference()))
        wrench_publisher = ros_client.publisher(WrenchStamped, f"{namespace}/applied_wrench")
        simulator = NodeProcess.node(SIM, ros_env, tmp_path, "dynamics_simulator", namespace,
                                     sim_params)
        processes.append(simulator)
        assert ros_client.wait_for_subscriber(wrench_publisher, timeout=60.0), \
            simulator.log_text()
        bad = WrenchStamped()
        bad.header.frame_id = "nowhere"
        wrench_publisher.publish(bad)
        # The wrench is scheduled by its stamp in simulated time (the simulator runs at a quarter
        # of real time here, so it gets there after the publisher has long matched); the test's own
        # reader of four 1 kHz topics may fall seconds behind on a loaded machine, so nothing
        # here waits on what it has read so far.
        msg = WrenchStamped()
        msg.header.frame_id = "world"
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(round(WRENCH_AT * 1e9), 10**9)
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = F[:3].tolist()
        msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = F[3:].tolist()
        wrench_publisher.publish(msg)

        def sim_time():
            return stamp_ns(states.messages[-1]) * 1e-9 if states.messages else 0.0
        assert ros_client.spin_until(lambda: sim_time() >= DURATION and len(efforts.messages)
                                     >= 0.8 * DURATION * 1000, timeout=180.0), \
            "\n".join(p.log_text()[-2000:] for p in processes)
        simulator.stop()                    # no more joint states: the outputs all arrive
        previous = -1
        for _ in range(60):                 # until the reader has taken what is queued (<= 30 s)
            ros_client.spin_for(0.5)
            count = len(states.messages) + len(efforts.messages)
            if count == previous:
                break
            previous = count
    finally:
        for p in processes:
            p.stop()
    assert "frame_id 'nowhere'" in simulator.log_text()
    # the estimate against J^T F at the recorded configurations
    # (only outputs whose input the test's reader also got: a busy reader may miss a few)
    q_of = {stamp_ns(m): np.array(m.position) for m in states.messages}
    outputs = [m for m in efforts.messages if stamp_ns(m) in q_of]
    assert len(outputs) >= 0.8 * len(efforts.messages)
    stamps = np.array([stamp_ns(m) for m in outputs])
    r = np.array([m.effort for m in outputs])
    applied = np.array([jacobian(model, q_of[s]).T @ F for s in stamps])
    onset = int(np.argmax(np.abs(r).max(axis=1) > 0.01 * np.abs(applied).max()))
    assert 0 < onset and stamps[onset] * 1e-9 > WRENCH_AT, "the wrench acted before its stamp"
    assert stamps[onset] * 1e-9 <= WRENCH_AT + 0.0025, \
        f"the wrench acted late: {stamps[onset]} ns (first recorded {stamps[0]} ns)"
    t_on = (stamps[onset] - 1_000_000) * 1e-9       # the step that ended at the onset stamp
    k = int(np.searchsorted(stamps, round((t_on + 5.0 / K) * 1e9)))
    residual_error = np.abs(r[k] - applied[k]).max() / np.abs(applied[k]).max()
    assert residual_error <= 0.02, f"{residual_error:.2%} of max |J^T F| after 5 / K_O"
    # contact: one rise, logged with its stamp; the Bool stream goes from False to True (a
    # reader that falls behind may miss some of those unstamped messages, so no index matching)
    rises = re.findall(r"contact at stamp (\d+)\.(\d{9}) s", observer.log_text())
    assert len(rises) == 1, observer.log_text()[-3000:]
    rise_ns = int(rises[0][0]) * 1_000_000_000 + int(rises[0][1])
    assert rise_ns > stamps[onset - 1]
    thresholds = 0.05 * model.effort_limit
    latency = min(detection_latency(abs(a), h, K, 1e-3)
                  for a, h in zip(applied[onset], thresholds))
    delay = rise_ns * 1e-9 - t_on
    assert delay <= latency + 1e-6, (delay, latency)
    flags = [m.data for m in contacts.messages]
    assert flags[0] is False and flags[-1] is True
    assert flags == sorted(flags)                    # False ... False, True ... True
    # the wrench: F in the tool's axes, from the same residual
    w = {stamp_ns(m): m for m in wrenches.messages}[int(stamps[k])]
    R = tool_pose(model, q_of[int(stamps[k])])[:3, :3]
    expected = np.concatenate([R.T @ F[:3], R.T @ F[3:]])
    got = np.array([w.wrench.force.x, w.wrench.force.y, w.wrench.force.z,
                    w.wrench.torque.x, w.wrench.torque.y, w.wrench.torque.z])
    wrench_error = np.abs(got - expected).max() / np.abs(expected).max()
    assert wrench_error <= 0.03, f"wrench {wrench_error:.2%} off"
    print(f"after 5 / K_O: residual {residual_error:.2%}, wrench {wrench_error:.2%}; contact "
          f"after {delay * 1e3:.1f} ms (bound {latency * 1e3:.1f} ms)")


def test_a_bag_played_into_the_node_gives_what_bag_process_gives(ros_env, ros_client, tmp_path):
    """400 joint states of a tracking run with a wrench, played slowly to a reliable reader."""
    model = puma()
    run = track(model, GENTLE, 0.4, wrench=push_wrench(model, 0.2), wrench_on=0.2)
    stamps = 1_700_000_000 * 1_000_000_000 + np.rint(run.t * 1e9).astype(np.int64)
    source = tmp_path / "input"
    write_bag(source, model, run, stamps)
    namespace = private_namespace("observer_bag")
    node = NodeProcess.node(OBSERVER, ros_env, tmp_path, "external_torque_observer", namespace,
                            {"robot_description": "puma560", "input_timeout": 0.0,
                             "autostart": True, "gains": [K], "effort_timing": "interval",
                             # reliable and deep enough that a busy node drops nothing
                             "qos_depth": 1000,
                             f"qos_overrides.{namespace}/joint_states.subscription.reliability":
                             "reliable"})
    try:
        efforts = ros_client.collect(JointState, f"{namespace}/external_effort", 1000)
        assert ros_client.spin_until(
            lambda: ros_client.node.count_publishers(f"{namespace}/external_effort"),
            timeout=60.0), node.log_text()
        ros_client.spin_for(0.5)
        player = cli(ros_env, tmp_path, "play", "play", source, "--rate", 0.5,
                     "--wait-for-subscribers", 20, "--remap",
                     f"/joint_states:={namespace}/joint_states")
        assert ros_client.spin_until(lambda: not player.alive(), timeout=60.0)
        assert wait_exit(player) == 0, player.log_path.read_text()
        ros_client.spin_until(lambda: len(efforts.messages) >= stamps.size, timeout=10.0)
    finally:
        node.stop()
    observer = ObserverOptions(K, effort_timing="interval")
    process_bag(source, tmp_path / "offline", model,
                ProcessOptions(outputs=("observer",), namespace="", observer=observer))
    offline = load_joint_states(tmp_path / "offline", "/external_effort", require_position=False)
    online = {stamp_ns(m): list(m.effort) for m in efforts.messages}
    missing = [k for k, s in enumerate(stamps.tolist()) if s not in online]
    assert len(online) == offline.stamp.size == stamps.size, (len(online), missing)
    np.testing.assert_allclose([online[s] for s in offline.stamp.tolist()], offline.effort,
                               rtol=1e-9, atol=1e-9)
    assert np.abs(offline.effort[-1]).max() > 10.0            # (the wrench was seen)


def change_state(ros_client, client, transition: int) -> bool:
    from lifecycle_msgs.srv import ChangeState
    request = ChangeState.Request()
    request.transition.id = transition
    return ros_client.call(client, request).success


def test_the_lifecycle_publishes_only_while_active_and_refuses_a_bad_configuration(
        ros_env, ros_client, tmp_path):
    """Unconfigured, inactive, deactivated: nothing out; gains of the wrong count: no configure."""
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState
    model = puma()
    namespace = private_namespace("observer_lifecycle")
    node = NodeProcess.node(OBSERVER, ros_env, tmp_path, "external_torque_observer", namespace,
                            {"robot_description": "puma560", "input_timeout": 0.0,
                             "autostart": False, "gains": [40.0, 50.0]})
    try:
        efforts = ros_client.collect(JointState, f"{namespace}/external_effort", 100)
        states = ros_client.publisher(JointState, f"{namespace}/joint_states")
        client = ros_client.node.create_client(
            ChangeState, f"{namespace}/external_torque_observer/change_state")
        assert ros_client.wait_for_subscriber(states, timeout=60.0), node.log_text()
        stamp = [0]

        def publish():
            msg = JointState()
            stamp[0] += 10_000_000
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp[0], 1_000_000_000)
            msg.name = list(model.joint_names)
            msg.position, msg.velocity = [0.2] * 6, [0.1] * 6
            msg.effort = [1.0] * 6
            states.publish(msg)
        assert ros_client.publish_until(
            publish, lambda: "received while unconfigured" in node.log_text()), node.log_text()
        assert not efforts.messages
        assert not change_state(ros_client, client, Transition.TRANSITION_CONFIGURE)
        assert "gains: expected 1 or 6 values" in node.log_text()
        assert ros_client.set_parameters(f"{namespace}/external_torque_observer",
                                         {"gains": [50.0]})[0].successful
        assert change_state(ros_client, client, Transition.TRANSITION_CONFIGURE)
        publish()
        ros_client.spin_for(0.3)
        assert not efforts.messages                            # inactive
        assert change_state(ros_client, client, Transition.TRANSITION_ACTIVATE)
        assert ros_client.publish_until(publish, lambda: len(efforts.messages) >= 5,
                                        timeout=30.0), node.log_text()
        assert list(efforts.messages[0].effort) == [0.0] * 6     # the observer's first message
        assert change_state(ros_client, client, Transition.TRANSITION_DEACTIVATE)
        ros_client.spin_for(0.3)
        count = len(efforts.messages)
        for _ in range(10):
            publish()
            ros_client.spin_for(0.02)
        ros_client.spin_for(0.3)
        assert len(efforts.messages) == count
    finally:
        node.stop()


def test_effort_from_the_command_topic(ros_env, ros_client, tmp_path):
    """
    effort_source command: the latest Float64MultiArray is the torque since the previous state.

    A static arm whose command holds g(q) - tau_ext: the residual follows the closed form
    tau_ext (1 - exp(-K t)) at every message (joint_names reversed: the command and the outputs
    are in that order).  A command of the wrong length is refused by name.
    """
    from std_msgs.msg import Float64MultiArray

    from robot_dynamics_ros.core import gravity_torques
    model = puma()
    names = list(model.joint_names)[::-1]
    namespace = private_namespace("observer_command")
    node = NodeProcess.node(OBSERVER, ros_env, tmp_path, "external_torque_observer", namespace,
                            {"robot_description": "puma560", "input_timeout": 0.0,
                             "effort_source": "command", "joint_names": names, "gains": [K],
                             "subtract_friction": False, "qos_depth": 1000,
                             f"qos_overrides.{namespace}/joint_states.subscription.reliability":
                             "reliable"})
    q = np.array([0.2, 0.5, -0.7, 0.3, 0.4, 0.1])
    tau_ext = np.array([12.0, -30.0, 8.0, 2.5, -1.5, 0.7])
    try:
        efforts = ros_client.collect(JointState, f"{namespace}/external_effort", 1000)
        states = ros_client.publisher(JointState, f"{namespace}/joint_states", 1000)
        commands = ros_client.publisher(Float64MultiArray, f"{namespace}/effort_command")
        assert ros_client.wait_for_subscriber(states, timeout=60.0), node.log_text()
        assert ros_client.wait_for_subscriber(commands, timeout=60.0), node.log_text()
        commands.publish(Float64MultiArray(data=[1.0] * 5))
        commands.publish(Float64MultiArray(
            data=(gravity_torques(model, q) - tau_ext)[::-1].tolist()))
        # the node takes messages once it is active (after its warm-up in on_configure): the
        # refusal of the first command says it is, and the second (same topic, in order) is
        # then taken before any joint state is sent
        assert ros_client.spin_until(
            lambda: "effort_command: expected 6 efforts" in node.log_text(), timeout=30.0), \
            node.log_text()
        ros_client.spin_for(0.5)
        for k in range(60):
            msg = JointState()
            msg.header.stamp.sec, msg.header.stamp.nanosec = 100, k * 2_000_000
            msg.name, msg.position, msg.velocity = names, q[::-1].tolist(), [0.0] * 6
            states.publish(msg)
        assert ros_client.spin_until(lambda: len(efforts.messages) >= 60, timeout=30.0), \
            node.log_text()
    finally:
        node.stop()
    assert "effort_command: expected 6 efforts" in node.log_text()
    r = np.array([m.effort for m in efforts.messages])
    t = 2e-3 * np.arange(len(r))
    np.testing.assert_allclose(r[:, ::-1], np.outer(1.0 - np.exp(-K * t), tau_ext),
                               rtol=1e-9, atol=1e-9)


# ----------------------------------------------------------------- issue 31: O1, O2 (this process)
def observer_node(tag, **parameters):
    from local_node import local_node

    from robot_dynamics_ros.nodes.external_torque_observer import ExternalTorqueObserverNode
    values = {"robot_description": "puma560", "input_timeout": 0.0, "autostart": True,
              "gains": [K], "effort_timing": "interval", **parameters}
    return local_node(ExternalTorqueObserverNode, tag, **values)


def static_state(model, ns, q=(0.2, 0.5, -0.7, 0.3, 0.4, 0.1), tau=None):
    """Return a JointState at rest at ``q`` stamped ``ns``, effort g(q) (or ``tau``)."""
    from robot_dynamics_ros.core import gravity_torques
    msg = JointState(name=list(model.joint_names), position=list(q), velocity=[0.0] * 6)
    msg.effort = list(gravity_torques(model, np.array(q)) if tau is None else tau)
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(ns), 1_000_000_000)
    return msg


def at_rest(node, model, period_ns, q=(0.2, 0.5, -0.7, 0.3, 0.4, 0.1)):
    """
    Return (base, feed): ``feed(ks)`` gives ``node`` states at rest stamped base + k period_ns.

    ``base``: 10 s before the node's clock (the stamps of every sample fed stay in its past).
    """
    base = node.get_clock().now().nanoseconds - 10_000_000_000

    def feed(ks):
        for k in ks:
            node.on_joint_states(static_state(model, base + k * period_ns, q))
    return base, feed


def outputs_of(node):
    from local_node import record
    return record(node, node.effort_output, node.wrench_output, node.contact_output)


def diagnostic_level(node):
    return node.diagnostics.status(node.dynamics, extra=node.diagnostic_extra()).level


def test_o1_a_far_future_or_negative_stamp_is_refused_on_its_own(ros_env):
    """
    Issue 31, O1: a far-future or negative stamp is refused on its own.

    One joint_states stamped 2^31 - 1 s (or with negative seconds) silenced the
    observer for good (every later stamp "not after the previous sample's").  Now each is
    refused on its own (ahead of the node's clock by more than 1 s, or negative) and every valid
    message after it is answered; while refused the diagnostics are ERROR.
    """
    from diagnostic_msgs.msg import DiagnosticStatus
    model = puma()
    with observer_node("o1_stamps") as node:
        out = outputs_of(node)
        _, feed = at_rest(node, model, 1_000_000)
        feed(range(5))
        for bad in ((2 ** 31 - 1) * 1_000_000_000, -5 * 1_000_000_000):
            msg = static_state(model, 0)
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(bad, 1_000_000_000)
            node.on_joint_states(msg)
        assert diagnostic_level(node) == DiagnosticStatus.ERROR
        assert node.rejections.counts["stamp"] == 2
        feed(range(5, 305))
        assert len(out.messages["external_effort"]) == 305
        assert diagnostic_level(node) == DiagnosticStatus.OK
        r = np.array([m.effort for m in out.messages["external_effort"]])
        np.testing.assert_allclose(r, 0.0, atol=1e-9)       # at rest, effort g(q): no torque


def test_o1_the_observer_re_anchors_after_max_interval_of_refused_stamps(ros_env):
    """
    Refused stamps spanning more than max_interval re-anchor the observer.

    A stamp ahead within the bound (0.5 s) that got in: the later, correct stamps are refused
    only until they span more than max_interval (0.1 s at 1 kHz: about 100 messages), then the
    observer restarts from zero there (counted, said) and answers every message again.
    """
    model = puma()
    with observer_node("o1_anchor") as node:
        out = outputs_of(node)
        base, feed = at_rest(node, model, 1_000_000)
        feed(range(10))
        node.on_joint_states(static_state(model, node.get_clock().now().nanoseconds
                                          + 500_000_000))
        assert len(out.messages["external_effort"]) == 11
        feed(range(10, 400))
        refused = node.rejections.counts["stamp"]
        assert 100 <= refused <= 102, refused
        assert node.reanchors == 1
        assert len(out.messages["external_effort"]) == 11 + 390 - refused
        stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
                  for m in out.messages["external_effort"]]
        assert stamps[-1] == base + 399 * 1_000_000 and stamps[11:] == sorted(stamps[11:])


def test_o2_an_absurd_command_is_refused_and_a_non_finite_residual_is_never_published(ros_env):
    """
    Issue 31, O2: an absurd command is refused; a non-finite residual is never published.

    With effort_source command, a command of 1e308 was taken (only NaN / inf were
    checked) and the residual went to 1e307 and inf for good.  Now the command gets the bound of
    a joint state's effort (refused, the previous command kept); and a residual that is not
    finite anyway resets the observer with one error, publishes nothing, and the diagnostics say
    ERROR until the next estimate.
    """
    from diagnostic_msgs.msg import DiagnosticStatus
    from std_msgs.msg import Float64MultiArray

    from robot_dynamics_ros.core import gravity_torques
    model = puma()
    q = np.array([0.2, 0.5, -0.7, 0.3, 0.4, 0.1])
    tau_ext = np.array([12.0, -30.0, 8.0, 2.5, -1.5, 0.7])
    with observer_node("o2_command", effort_source="command", subtract_friction=False) as node:
        out = outputs_of(node)
        node.on_command(Float64MultiArray(data=(gravity_torques(model, q) - tau_ext).tolist()))
        node.on_command(Float64MultiArray(data=[1e308] * 6))
        node.on_command(Float64MultiArray(data=[0.0] * 5 + [2e6]))
        assert node.rejections.counts["out of range"] == 2
        _, feed = at_rest(node, model, 2_000_000, q)
        feed(range(60))
        r = np.array([m.effort for m in out.messages["external_effort"]])
        t = 2e-3 * np.arange(60)
        np.testing.assert_allclose(r, np.outer(1.0 - np.exp(-K * t), tau_ext), rtol=1e-9,
                                   atol=1e-9)
        # a residual that is not finite all the same (forced here): reset, said once, not sent
        from local_node import Logged
        node.get_logger = lambda logger=Logged(): logger
        update = node.setup.observer.update
        node.setup.observer.update = lambda *args: [float("nan")] * 6
        count = out.count()
        feed(range(60, 63))
        assert out.count() == count and node.resets == 3
        errors = [text for level, text in node.get_logger().lines if level == "error"]
        assert len(errors) == 1 and "not finite" in errors[0], errors
        assert diagnostic_level(node) == DiagnosticStatus.ERROR
        node.setup.observer.update = update
        feed(range(63, 70))
        r = np.array([m.effort for m in out.messages["external_effort"][60:]])
        np.testing.assert_allclose(r, np.outer(1.0 - np.exp(-K * 2e-3 * np.arange(7)), tau_ext),
                                   rtol=1e-9, atol=1e-9)        # restarted from zero
        assert diagnostic_level(node) != DiagnosticStatus.ERROR
        assert all(np.isfinite(m.effort).all() for m in out.messages["external_effort"])
