"""
The nodes' timers and callbacks on both executors (nodes/executor.py), in this process.

rclpy's EventsExecutor calls a timer callback that has a parameter with a TimerInfo (the
SingleThreadedExecutor only when the parameter is annotated so): the input watchdog's timer once
crashed every node on it as soon as an input had arrived.  Here a node gets one valid message,
then the executor runs its timers until the watchdog says the input went stale (bounded).
"""
import time

import pytest

from ros_fixtures import *  # noqa: F401,F403

from robot_dynamics_ros.nodes.executor import EXECUTORS, make_executor

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

NAMES = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]


@pytest.mark.parametrize("kind", EXECUTORS)
def test_node_timers_run_on_the_executor(ros_env, kind):
    import rclpy
    from rclpy.context import Context
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState

    from robot_dynamics_ros.nodes.gravity_compensation import GravityCompensationNode
    context = Context()
    rclpy.init(context=context)
    node = executor = None
    try:
        node = GravityCompensationNode(
            "timers", namespace=f"/rdt_timers_{kind}", context=context,
            parameter_overrides=[Parameter("input_timeout", value=0.1),
                                 Parameter("diagnostics_period", value=0.1),    # both timers
                                 Parameter("autostart", value=True)])
        assert node.start() and node.active
        node.on_joint_states(JointState(name=NAMES, position=[0.1] * 6))
        watch = node.joint_states_watch
        assert watch.accepted_count == 1
        executor = make_executor(context, kind)
        executor.add_node(node)
        end = time.monotonic() + 10.0
        while time.monotonic() < end and not watch.stale:
            executor.spin_once(timeout_sec=0.05)
        assert watch.stale, "the watchdog timer did not find the input stale"
    finally:
        if executor is not None:
            executor.shutdown(timeout_sec=2.0)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
