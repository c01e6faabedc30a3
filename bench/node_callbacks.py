"""
In-process CPU cost of the nodes' joint_states callbacks (no DDS traffic), for bench_observer.

Each node is created in this process, configured and activated (``autostart``), and its
``on_joint_states`` called with the same serialized JointState (the bytes a raw subscription
hands it; the stamp advanced by 1 ms per call), publishing included (nothing subscribes: the
nodes' DDS participants stay on loopback, in BENCH_ROS_DOMAIN_ID's domain).  The CPU time of
each call is taken with ``time.thread_time_ns``; the median over the calls is returned per node.
"""
from __future__ import annotations

import os
import statistics
import time

import numpy as np


def _message(names, k: int, rng) -> bytes:
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    msg = JointState()
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(10 ** 9 + k * 10 ** 6, 10 ** 9)
    msg.name = list(names)
    msg.position = rng.uniform(-1.0, 1.0, len(names)).tolist()
    msg.velocity = rng.uniform(-1.0, 1.0, len(names)).tolist()
    msg.effort = rng.uniform(-5.0, 5.0, len(names)).tolist()
    return bytes(serialize_message(msg))


def _reference(model):
    from robot_dynamics_ros.core import JointTrajectory
    from robot_dynamics_ros.messages.ros import trajectory_to_msg
    times = np.linspace(0.0, 60.0, 7)
    positions = np.outer(np.sin(times / 10.0), np.ones(model.n)) * 0.5
    return trajectory_to_msg(JointTrajectory(model.joint_names, times, positions))


def node_rows(calls: int, robot: str = "puma560") -> dict:
    """Return {node kind: median CPU us per joint_states message}."""
    import rclpy
    from rclpy.parameter import Parameter

    from robot_dynamics_ros.nodes.external_torque_observer import ExternalTorqueObserverNode
    from robot_dynamics_ros.nodes.gravity_compensation import GravityCompensationNode
    from robot_dynamics_ros.nodes.inverse_dynamics import InverseDynamicsNode
    # the nodes' DDS participants: loopback only, the caller's domain as the other DDS benches
    os.environ.update(ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_DOMAIN_ID=os.environ.get(
        "BENCH_ROS_DOMAIN_ID", str(1 + os.getpid() % 100)))
    rclpy.init()
    rng = np.random.default_rng(0)
    rows = {}
    try:
        kinds = {"gravity_compensation": (GravityCompensationNode, {}),
                 "inverse_dynamics": (InverseDynamicsNode, {"mode": "computed_torque"}),
                 "external_torque_observer": (ExternalTorqueObserverNode, {})}
        for kind, (node_class, params) in kinds.items():
            overrides = [Parameter(k, value=v) for k, v in
                         {"robot_description": robot, "autostart": True, **params}.items()]
            node = node_class(f"bench_{kind}", parameter_overrides=overrides)
            try:
                assert node.start(), node.configure_error
                if kind == "inverse_dynamics":
                    node.on_reference(_reference(node.base_model))
                names = node.joint_names
                messages = [_message(names, k, rng) for k in range(calls + 50)]
                for raw in messages[:50]:                   # warm-up
                    node.on_joint_states(raw)
                times = []
                for raw in messages[50:]:
                    started = time.thread_time_ns()
                    node.on_joint_states(raw)
                    times.append(time.thread_time_ns() - started)
                assert not node.rejections.counts, dict(node.rejections.counts)
                rows[kind] = statistics.median(times) * 1e-3
            finally:
                node.destroy_node()
    finally:
        rclpy.try_shutdown()
    return rows
