"""JointState messages and bags for the bag tests: rosbags' types, CDR bytes, simulated runs."""

import numpy as np

from robot_dynamics_ros.bags.storage import output_bag
from robot_dynamics_ros.bags.types import typestore
from robot_dynamics_ros.core import gravity_torques, simulate
from robot_dynamics_ros.messages.cdr import JOINT_STATE

NS = 1_000_000_000


def serialized(msg, msgtype=JOINT_STATE):
    """Return rosbags' CDR serialization of a message."""
    return bytes(typestore().serialize_cdr(msg, msgtype))


def ts_joint_state(stamp_ns, names, position=(), velocity=(), effort=(), frame_id=""):
    """Return a rosbags sensor_msgs/JointState stamped ``stamp_ns`` nanoseconds."""
    types = typestore().types
    sec, nanosec = divmod(int(stamp_ns), NS)
    return types[JOINT_STATE](
        header=types["std_msgs/msg/Header"](
            stamp=types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec),
            frame_id=frame_id),
        name=list(names), position=np.asarray(position, float),
        velocity=np.asarray(velocity, float), effort=np.asarray(effort, float))


def raw_bag(path, topics, storage="mcap"):
    """Write a bag of ``topics``: {topic: (msgtype, [(time ns, raw bytes), ...])}."""
    with output_bag(path, storage) as writer:
        for topic, (msgtype, items) in topics.items():
            connection = writer.add_connection(topic, msgtype, typestore=typestore())
            for t, raw in items:
                writer.write(connection, t, raw)


def puma_run(puma, duration=1.0, payload=None):
    """Simulate the Puma under a PD + gravity controller about a moving set point."""
    model = puma if payload is None else puma.with_payload(payload, [0.0, 0.0, 0.05])

    def controller(t, q, qd):
        target = 0.3 * np.sin(2.0 * t + np.arange(6))
        return gravity_torques(model, q) + 40.0 * (target - q) - 4.0 * qd
    return simulate(model, np.zeros(6), np.zeros(6), duration, torque=controller)
