"""JointState messages for the bag tests, as rosbags' types and as CDR bytes."""

import numpy as np

from robot_dynamics_ros.bags.joint_state_cdr import JOINT_STATE
from robot_dynamics_ros.bags.types import typestore

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
