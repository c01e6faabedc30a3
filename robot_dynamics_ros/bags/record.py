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

The recorder runs in its own thread on its own executor (:class:`RecorderThread`), taking every
queued message each time it runs, with subscriptions deep enough for seconds of 500 Hz joint
states (:data:`QOS_DEPTH`): whatever else keeps its process busy delays the writing, never loses
a message.  Before the bag is closed the recorder drains its subscriptions
(:meth:`Recorder.drain`): the messages DDS has delivered but the thread has not taken yet are
written too.  A recorder
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

# Subscription history: 4 s of 500 Hz joint states (or 2 s at 1 kHz) wait in DDS while the
# recorder's thread cannot run (a process busy elsewhere: Python runs one thread at a time).
QOS_DEPTH = 2000


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

    def expect(self, topic: str, msgtype: str, profile):
        """
        Subscribe to ``topic`` of ``msgtype`` now, with the QoS ``profile``, before a publisher.

        For a publisher about to start (the demo's simulator): the subscription exists, and is
        matched, before its first message; ``profile`` is also what the metadata records.
        """
        from .types import message_class
        topic = topic_name(topic)
        if topic in self.connections:
            return
        ensure_type(msgtype, f"topic '{topic}': ")
        self.connections[topic] = self.writer.add_connection(
            topic, msgtype, typestore=typestore(), offered_qos_profiles=[to_bag(profile)])
        callback = self._writer_for(topic)
        self._subscriptions.append((self.node.create_subscription(
            message_class(msgtype), topic, callback, profile, raw=True), callback))
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

    def take_queued(self) -> int:
        """Write what the subscriptions hold now, all of it (from the recorder's one thread)."""
        return self._take_queued()

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


class RecorderThread:
    """
    Runs a :class:`Recorder` on its own executor in its own thread, as rosbag2's recorder does.

    The thread waits for messages with the GIL released; each time it runs it takes every
    message queued on every subscription at once (not one per wake-up), so other work in the
    process (the demo's nodes, a numba compilation, a caller's computation) delays the writing
    but loses nothing while the subscriptions' history (:data:`QOS_DEPTH`) holds the backlog.
    After :meth:`stop`, :meth:`Recorder.drain` writes what is still queued.
    """

    def __init__(self, recorder: Recorder, context):
        from rclpy.executors import SingleThreadedExecutor
        self.recorder = recorder
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(recorder.node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bag_recorder", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> "RecorderThread":
        """Start the thread (returns self)."""
        self._thread.start()
        return self

    def _run(self):
        try:
            while not self._stop.is_set() and self.executor.context.ok():
                if not self.recorder.take_queued():
                    # (discovery timer and message events; waits with the GIL released)
                    self.executor.spin_once(timeout_sec=0.02)
        except BaseException as exc:  # noqa: BLE001 -- re-raised by stop() in the caller
            if self.executor.context.ok():
                self.error = exc

    def stop(self):
        """Stop the thread (then drain in the caller); raise what stopped it, if anything."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(timeout=10.0)
        self.executor.remove_node(self.recorder.node)
        self.executor.shutdown(timeout_sec=1.0)
        if self.error is not None:
            raise self.error


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
    node = thread = None
    recorder = None
    try:
        node = rclpy.create_node("robot_dynamics_bag_recorder", context=context,
                                 parameter_overrides=[rclpy.parameter.Parameter(
                                     "use_sim_time", value=bool(use_sim_time))])
        with stop_on_signals(stop), output_bag(bag, storage, overwrite,
                                               flush_period=RECORD_FLUSH_PERIOD) as writer:
            recorder = Recorder(node, writer, topics, qos_depth)
            recorder.discover()
            node.create_timer(discovery_period, recorder.discover)
            thread = RecorderThread(recorder, context).start()
            if ready is not None:
                ready()
            end = None if duration is None else started + duration
            while not stop.is_set() and (end is None or time.monotonic() < end):
                stop.wait(0.05 if end is None else max(0.0, min(0.05, end - time.monotonic())))
            running, thread = thread, None
            running.stop()
            recorder.drain()                # what DDS delivered before the stop is recorded too
    finally:
        if thread is not None:              # (an error on the way: stop it, keep that error)
            try:
                thread.stop()
            except Exception:  # noqa: BLE001 -- the first error is the one reported
                pass
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
    return RecordReport(str(bag), dict(recorder.counts) if recorder else {},
                        time.monotonic() - started, stop.is_set())
