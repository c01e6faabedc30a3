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

Before the bag is closed the recorder drains its subscriptions (:meth:`Recorder.drain`): the
messages DDS has delivered but the executor has not handed over yet are written too.  A recorder
that falls behind on a loaded machine (SQLite3 inserts are slower than MCAP's buffered writes)
once lost the last 0.17 s of a run that way: the demo closed its bag with ~80 messages per topic
still queued.
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
        self._subscriptions = []            # (subscription, its message callback)

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
            callback = self._writer_for(topic)
            self._subscriptions.append((self.node.create_subscription(
                message_class(msgtype), topic, callback,
                subscription_profile(offered, self.qos_depth), raw=True), callback))
            self.node.get_logger().info(f"recording '{topic}' ({msgtype})")

    def drain(self, expected: dict | None = None, timeout: float = 10.0) -> dict:
        """
        Write every message still queued in the subscriptions; return what is still missing.

        Call it once the executor no longer spins the recorder's node (this thread takes the
        messages).  ``expected`` ({topic: messages}, e.g. what the caller published) makes it
        wait for messages still on their way, until ``timeout`` seconds pass without one;
        returns {topic: messages missing} (empty when everything expected was recorded).
        """
        expected = expected or {}
        quiet_since = time.monotonic()
        while True:
            if self._take_queued():
                quiet_since = time.monotonic()
            missing = {topic: count - self.counts.get(topic, 0)
                       for topic, count in expected.items() if self.counts.get(topic, 0) < count}
            if not missing or time.monotonic() - quiet_since > timeout:
                return missing
            time.sleep(0.01)

    def _take_queued(self) -> int:
        """Take and write what the subscriptions hold (as the executor would); return how many."""
        taken = 0
        for subscription, callback in self._subscriptions:
            with subscription.handle:
                while (message := subscription.handle.take_message(subscription.msg_type,
                                                                   True)) is not None:
                    callback(message[0])
                    taken += 1
        return taken

    def stop(self):
        """Unsubscribe from everything (before the writer is closed)."""
        for subscription, _ in self._subscriptions:
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
            recorder.drain()                # what DDS delivered before the stop is recorded too
    finally:
        if executor is not None:
            executor.shutdown(timeout_sec=1.0)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
    return RecordReport(str(bag), dict(recorder.counts) if recorder else {},
                        time.monotonic() - started, stop.is_set())
