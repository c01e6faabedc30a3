"""
Message types of bags: rosbags' type store for (de)serialising, rclpy classes for DDS.

rosbags needs each message's definition.  :func:`typestore` is rosbags' store of the types of the
ROS 2 distribution running (std_msgs, sensor_msgs, trajectory_msgs, rosgraph_msgs, ...: Jazzy's
or Kilted's, chosen in ``messages/distro.py``, the same type hashes for all of them); a type it
does not know (a package's own messages) is registered on demand from its ``.msg`` file in the
ament index (``share/<package>/msg/<Name>.msg`` under AMENT_PREFIX_PATH, where colcon and this
package's venv install them), with the types it uses.  :func:`message_class` is the rclpy class
of a type, for subscribing and publishing.
"""
from __future__ import annotations

import importlib
import os
import threading
from functools import lru_cache
from pathlib import Path

from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from ..core.errors import BagError
from ..messages.distro import bag_distribution

_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def typestore():
    """Return rosbags' type store of the running distribution (ensure_type adds custom types)."""
    return get_typestore(Stores(bag_distribution().rosbags_store))


def _msg_file(msgtype: str) -> Path | None:
    package, kind, name = msgtype.split("/")
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        candidate = Path(prefix) / "share" / package / kind / f"{name}.msg"
        if prefix and candidate.is_file():
            return candidate
    return None


def ensure_type(msgtype: str, what: str = "") -> str:
    """Make sure rosbags knows ``msgtype`` ('pkg/msg/Name'); BagError naming it if it cannot."""
    store = typestore()
    if msgtype in store.fielddefs:
        return msgtype
    with _LOCK:
        pending, seen = [msgtype], set()
        while pending:
            name = pending.pop()
            if name in store.fielddefs or name in seen:
                continue
            seen.add(name)
            path = _msg_file(name) if name.count("/") == 2 else None
            if path is None:
                raise BagError(f"{what}unknown message type '{name}': neither a ROS 2 "
                               f"{bag_distribution().name} type nor a .msg file in the ament "
                               "index (source the workspace that provides it)")
            types = get_types_from_msg(path.read_text(), name)
            missing = [t for fields in types.values() for t in _referenced(fields)
                       if t not in store.fielddefs and t not in types]
            if missing:
                pending.append(name)
                pending.extend(missing)
                seen.discard(name)
                continue
            store.register(types)
    return msgtype


def _referenced(fields) -> list[str]:
    """Type names a parsed message definition refers to (nested messages)."""
    out = []

    def walk(node):
        if isinstance(node, tuple):
            for item in node:
                walk(item)
        elif isinstance(node, str) and node.count("/") == 2:
            out.append(node)
    walk(fields)
    return out


def message_class(msgtype: str):
    """Return the rclpy message class of 'pkg/msg/Name' (BagError if its package is missing)."""
    try:
        package, kind, name = msgtype.split("/")
        return getattr(importlib.import_module(f"{package}.{kind}"), name)
    except (ValueError, ImportError, AttributeError):
        raise BagError(f"unknown message type '{msgtype}': its ROS package is not installed in "
                       "this environment") from None


def deserialize(raw, msgtype: str):
    """
    Decode one CDR message with rosbags, or with rclpy where rosbags refuses it.

    rosbags allows at most 3 bytes after the message (the 4-byte padding of a DDS payload);
    ``rclpy.serialization.serialize_message`` (which scripts use to write bags; rmw_fastrtps
    on Jazzy) returns 4 more bytes, of whatever was in memory, for every empty float64[] at the
    message's end (a JointState without effort, a trajectory point without effort), which the
    nodes' own decoding ignores.  The message's own bytes are right; the length is rclpy's (or
    its middleware's) mistake, not rosbags' nor ``messages/cdr.py``'s (``test_process.py``);
    bags recorded from DDS were not seen with it.  Those messages are decoded by rclpy as a
    node would (importing rclpy on first use, 0.2-0.4 s).  Field access is the same either way
    (``msg.header.stamp.sec``, ``msg.name``, ...).  Raises the decoder's error if neither can
    decode it.
    """
    try:
        return typestore().deserialize_cdr(raw, msgtype)
    except Exception as first:  # noqa: BLE001 -- rosbags' SerdeError and struct errors
        try:
            from rclpy.serialization import deserialize_message
            return deserialize_message(bytes(raw), message_class(msgtype))
        except Exception:  # noqa: BLE001 -- report rosbags' reason
            raise first from None
