"""
``bag record``: record topics to a new bag until Ctrl-C or a duration, as ``ros2 bag record``.

Messages are stored as they arrive: raw CDR (no deserialisation), stamped with the recorder's
clock (system time, or /clock with ``use_sim_time``), with each topic's type and its publishers'
QoS in the metadata.  A topic that has no publisher yet is subscribed as soon as one appears
(checked every ``discovery_period``).  The bag is written to a temporary directory and renamed
when it is closed: on Ctrl-C (SIGINT) or SIGTERM, or at the end of ``duration``, every message
received so far is in a properly closed, readable bag; an error removes it.  What was written is
made durable every ``RECORD_FLUSH_PERIOD`` (0.5 s): a recorder killed outright (SIGKILL, power
cut of the process) leaves ``.NAME.partial-PID/NAME`` with everything but the last half second,
which ``robot-dynamics bag recover`` turns into a readable bag.
"""
from __future__ import annotations

import threading
import time
from typing import NamedTuple

from ..core.errors import BagError
from .interrupt import stop_on_signals
from .joint_states import topic_name
from .qos import subscription_profile, to_bag
from .storage import DEFAULT_STORAGE, RECORD_FLUSH_PERIOD, check_output, output_bag
from .types import ensure_type, typestore

QOS_DEPTH = 1000                    # subscription history: a burst is not lost while writing


class RecordReport(NamedTuple):
    """What a recording holds."""

    path: str
    counts: dict                    # topic -> messages recorded
    seconds: float
    interrupted: bool               # stopped by Ctrl-C / SIGTERM


class Recorder:
    """Subscribes (raw) to topics as their publishers appear and writes what arrives."""

    def __init__(self, node, writer, topics, qos_depth: int = QOS_DEPTH):
        self.node, self.writer = node, writer
        self.wanted = [topic_name(t) for t in topics]
        self.qos_depth = qos_depth
        self.connections: dict = {}
        self.counts = {t: 0 for t in self.wanted}
        self._subscriptions = []

    def discover(self):
        """Subscribe to every wanted topic that now has a publisher."""
        from rclpy.serialization import serialize_message  # noqa: F401 (rclpy is up)
        from .types import message_class
        for topic in self.wanted:
            if topic in self.connections:
                continue
            publishers = self.node.get_publishers_info_by_topic(topic)
            if not publishers:
                continue
            types = sorted({p.topic_type for p in publishers})
            if len(types) > 1:
                raise BagError(f"topic '{topic}' has publishers of several types {types}: "
                               "cannot record it")
            msgtype = types[0]
            ensure_type(msgtype, f"topic '{topic}': ")
            offered = [p.qos_profile for p in publishers]
            self.connections[topic] = self.writer.add_connection(
                topic, msgtype, typestore=typestore(),
                offered_qos_profiles=[to_bag(q) for q in offered])
            self._subscriptions.append(self.node.create_subscription(
                message_class(msgtype), topic, self._writer_for(topic),
                subscription_profile(offered, self.qos_depth), raw=True))
            self.node.get_logger().info(f"recording '{topic}' ({msgtype})")

    def stop(self):
        """Unsubscribe from everything (before the writer is closed)."""
        for subscription in self._subscriptions:
            self.node.destroy_subscription(subscription)
        self._subscriptions.clear()
        self.wanted = []

    def _writer_for(self, topic: str):
        connection, clock, write = self.connections[topic], self.node.get_clock(), \
            self.writer.write

        def on_message(raw: bytes):
            write(connection, clock.now().nanoseconds, raw)
            self.counts[topic] += 1
        return on_message


def record(bag, topics, storage: str = DEFAULT_STORAGE, duration: float | None = None,
           overwrite: bool = False, use_sim_time: bool = False,
           discovery_period: float = 0.5, qos_depth: int = QOS_DEPTH, ready=None,
           ros_args=None) -> RecordReport:
    """
    Record ``topics`` into the new bag ``bag`` until Ctrl-C / SIGTERM or ``duration`` seconds.

    ``ready`` (optional) is called once the recorder node is up (for tests and tools).  Returns a
    :class:`RecordReport`; the bag is complete and readable however the recording ended.
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions
    if not topics:
        raise BagError("record: no topics given")
    if duration is not None and not duration > 0.0:
        raise BagError(f"duration: must be > 0, got {duration}")
    check_output(bag, overwrite)
    context = rclpy.Context()
    # Ctrl-C and SIGTERM only set a flag that the loop checks between callbacks, so no message
    # is ever cut in half in the storage file (an exception mid-write could do that).
    # (explicit arguments: never the command line's, which rclpy would read as remap rules)
    rclpy.init(args=list(ros_args or ["robot-dynamics"]), context=context,
               signal_handler_options=SignalHandlerOptions.NO)
    stop = threading.Event()
    started = time.monotonic()
    node = executor = None
    recorder = None
    try:
        node = rclpy.create_node("robot_dynamics_bag_recorder", context=context,
                                 parameter_overrides=[rclpy.parameter.Parameter(
                                     "use_sim_time", value=bool(use_sim_time))])
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        with stop_on_signals(stop), output_bag(bag, storage, overwrite,
                                               flush_period=RECORD_FLUSH_PERIOD) as writer:
            recorder = Recorder(node, writer, topics, qos_depth)
            recorder.discover()
            node.create_timer(discovery_period, recorder.discover)
            if ready is not None:
                ready()
            end = None if duration is None else started + duration
            while not stop.is_set() and (end is None or time.monotonic() < end):
                executor.spin_once(timeout_sec=0.05 if end is None
                                   else max(0.0, min(0.05, end - time.monotonic())))
    finally:
        if executor is not None:
            executor.shutdown(timeout_sec=1.0)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
    return RecordReport(str(bag), dict(recorder.counts) if recorder else {},
                        time.monotonic() - started, stop.is_set())
