"""
``bag play``: publish a bag's messages with their recorded timing, as ``ros2 bag play``.

Messages are published as stored (raw CDR, no deserialisation) on their topics (``remap``:
{from: to}), each with its publishers' recorded QoS (reliable / transient local only if every
recorded publisher was), at the recorded intervals divided by ``rate``, starting
``start_offset`` seconds into the bag, once or ``loop``-ing.  Timing: the player sleeps until
shortly before each message is due and waits the last fraction of a millisecond actively, so a
1 kHz bag keeps its intervals to tens of microseconds on an idle machine (``bench_bags``).

With ``clock`` (Hz) it publishes the bag's time on /clock (rosgraph_msgs/Clock) at that rate and,
for every message, its recorded time shortly before it (half the interval to the previous message,
at most ``CLOCK_LEAD``): /clock and the message travel on different topics, and the lead makes a
node with ``use_sim_time`` see the clock first, so it handles each message at its recorded time
(where ``bag process`` samples references).  ``wait_for_subscribers`` waits (up to
that many seconds) until every topic has matched all the subscribers the graph shows (and at
least ``min_subscribers`` of it) before starting, so that reliable subscribers that are still
matching miss nothing.  Ctrl-C / SIGTERM
stop it cleanly.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import NamedTuple

from ..core.errors import BagError
from .interrupt import stop_on_signals
from .joint_states import topic_name
from .qos import publisher_profile
from .reader import open_bag
from .types import message_class

QOS_DEPTH = 1000
SPIN_WAIT = 0.0008                  # s before a message is due: wait actively from here on
ACK_TIMEOUT = 5.0                   # s at most for the last messages to be acknowledged
CLOCK_LEAD = 0.05                   # s: a message's time is on /clock at most this much earlier


class PlayReport(NamedTuple):
    """What was played."""

    published: dict                 # topic (after remapping) -> messages
    seconds: float
    lateness: list                  # s each message was published after it was due
    interrupted: bool


def _pairs(items, option: str, form: str) -> list:
    """Split ``a:=b`` strings into (a, b); BagError naming ``option`` for anything else."""
    pairs = []
    for item in items or ():
        left, sep, right = item.partition(":=")
        if not sep or not left or not right:
            raise BagError(f"{option}: expected {form}, got '{item}'")
        pairs.append((left, right))
    return pairs


def parse_remaps(items) -> dict:
    """Return {from: to} from ``from:=to`` strings (BagError for anything else)."""
    return {topic_name(source): topic_name(target)
            for source, target in _pairs(items, "--remap", "from:=to")}


def parse_min_subscribers(items) -> dict:
    """Return {topic: count} from ``topic:=count`` strings, count >= 1 (BagError otherwise)."""
    out = {}
    for topic, count in _pairs(items, "--min-subscribers", "topic:=count"):
        if not count.isdigit() or int(count) < 1:
            raise BagError(f"--min-subscribers: count of '{topic}' must be an integer >= 1, "
                           f"got '{count}'")
        out[topic_name(topic)] = int(count)
    return out


@dataclass(frozen=True)
class PlayOptions:
    """
    How ``play`` plays a bag (the command line's options; see the module docstring).

    ``topics``: only these (with or without the leading slash; default all).  ``remap``:
    {bag topic: played topic}.  ``clock``: publish /clock at that rate (Hz).
    ``wait_for_subscribers``: seconds to wait for subscribers first; ``min_subscribers``:
    {played topic: count} to wait for there (the graph of a new process may not show every
    subscriber yet when the first ones have matched).  ``ros_args``: rclpy's arguments.
    """

    rate: float = 1.0
    loop: bool = False
    topics: tuple | None = None
    clock: float | None = None
    start_offset: float = 0.0
    remap: dict = field(default_factory=dict)
    wait_for_subscribers: float = 0.0
    min_subscribers: dict = field(default_factory=dict)
    ros_args: tuple | None = None

    def check(self):
        """Refuse (BagError) an option out of range, before the bag is opened."""
        if not self.rate > 0.0:
            raise BagError(f"rate: must be > 0, got {self.rate}")
        if self.clock is not None and not self.clock > 0.0:
            raise BagError(f"clock: must be > 0 Hz, got {self.clock}")
        if self.start_offset < 0.0:
            raise BagError(f"start_offset: must be >= 0, got {self.start_offset}")


def _played_connections(bag, options: PlayOptions):
    """Return the bag's connections to play and {connection id: played topic}."""
    connections = bag.connections
    if options.topics:
        chosen = {c.id for topic in options.topics for c in bag.topic(topic)}
        connections = [c for c in connections if c.id in chosen]
    remap = {}
    for source, target in options.remap.items():
        for c in bag.topic(source) if bag.has_topic(source) else ():
            remap[c.id] = target
    return connections, {c.id: remap.get(c.id, c.topic) for c in connections}


def play(bag, options: PlayOptions = PlayOptions(), stop=None, ready=None) -> PlayReport:
    """
    Play ``bag`` (see the module docstring); ``stop`` (threading.Event) ends it early.

    ``ready`` (optional) is called when the first message is about to be played.
    """
    import rclpy
    from rclpy.signals import SignalHandlerOptions
    options.check()
    stop = stop or threading.Event()
    with open_bag(bag) as reader:
        connections, targets = _played_connections(reader, options)
        classes = {c.id: message_class(c.msgtype) for c in connections}
        context = rclpy.Context()
        rclpy.init(args=list(options.ros_args or ["robot-dynamics"]), context=context,
                   signal_handler_options=SignalHandlerOptions.NO)
        node = None
        try:
            node = rclpy.create_node("robot_dynamics_bag_player", context=context)
            publishers, by_topic = {}, {}
            for c in connections:
                target = targets[c.id]
                if target not in by_topic:
                    by_topic[target] = node.create_publisher(
                        classes[c.id], target,
                        publisher_profile(c.ext.offered_qos_profiles, QOS_DEPTH))
                publishers[c.id] = (target, by_topic[target])
            clock_publisher = None
            if options.clock is not None:
                from rosgraph_msgs.msg import Clock
                clock_publisher = node.create_publisher(Clock, "/clock", 10)
            with stop_on_signals(stop):
                _wait_for_subscribers(node, list(by_topic.values()),
                                      options.wait_for_subscribers, stop,
                                      options.min_subscribers)
                player = _Player(publishers, clock_publisher, options.rate, options.clock, stop)
                if ready is not None:
                    ready()
                offset = round(options.start_offset * 1e9)
                began = time.monotonic()
                while not stop.is_set():
                    player.run(reader.messages(connections), offset)
                    if not options.loop or stop.is_set():
                        break
                seconds = time.monotonic() - began
                # reliable readers still acknowledging the last messages would lose them if the
                # publishers went away now (once the last of 50 was missing); bounded
                if not stop.is_set():
                    _wait_for_acknowledgements(list(by_topic.values()), ACK_TIMEOUT)
            return PlayReport(player.counts, seconds, player.lateness,
                              stop.is_set())
        finally:
            if node is not None:
                node.destroy_node()
            rclpy.try_shutdown(context=context)


class _Player:
    def __init__(self, publishers, clock_publisher, rate, clock_hz, stop):
        self.publishers, self.clock_publisher = publishers, clock_publisher
        self.rate, self.stop = rate, stop
        self.clock_period = None if clock_hz is None else 1.0 / clock_hz
        self.counts = {target: 0 for target, _ in publishers.values()}
        self.lateness = []

    def run(self, items, offset: int):
        """
        Publish ``items`` (connection, time, raw) paced, from ``offset`` ns after the first on.

        The first message read sets the bag's time (metadata's starting time can be wrong, as
        in rosbag2's own split test bag); with no offset nothing is skipped, not even a message
        stamped before the first (split files are read one after the other).
        """
        began = time.monotonic()
        next_clock, previous_due = began, began
        clock = self.clock_publisher is not None
        start = None
        for connection, stamp, raw in items:
            if start is None:
                start = stamp + offset
            if offset and stamp < start:
                continue
            due = began + (stamp - start) * 1e-9 / self.rate
            message_clock = due - min(CLOCK_LEAD, 0.5 * (due - previous_due)) if clock else due
            previous_due = due
            while True:                       # sleep (publishing /clock) until nearly due
                now = time.monotonic()
                if clock and now >= message_clock:
                    self._clock(stamp)        # (from here on the clock holds the message's time)
                    message_clock = next_clock = float("inf")
                if clock and now >= next_clock:
                    # time passes on /clock between sparse messages; when the next message's
                    # time is due within a period anyway, the clock waits for it (so a node
                    # still busy with the previous message does not see a later time)
                    if message_clock - now > self.clock_period:
                        self._clock(start + round((now - began) * self.rate * 1e9))
                    next_clock = now + self.clock_period
                wake = min(due - SPIN_WAIT, next_clock, message_clock) if clock else \
                    due - SPIN_WAIT
                if now >= due - SPIN_WAIT or self.stop.is_set():
                    break
                self.stop.wait(max(0.0, wake - now))
            if self.stop.is_set():
                return
            if clock and message_clock != float("inf"):   # (due within the active wait below)
                self._clock(stamp)
            next_clock = min(next_clock, time.monotonic() + (self.clock_period or 0.0))
            while time.monotonic() < due:     # the last fraction of a millisecond: wait actively
                pass
            target, publisher = self.publishers[connection.id]
            publisher.publish(bytes(raw))
            self.lateness.append(time.monotonic() - due)
            self.counts[target] += 1

    def _clock(self, stamp: int):
        from rosgraph_msgs.msg import Clock
        msg = Clock()
        msg.clock.sec, msg.clock.nanosec = divmod(int(stamp), 1_000_000_000)
        self.clock_publisher.publish(msg)


def _wait_for_acknowledgements(publishers, timeout: float):
    """Wait (up to ``timeout`` s in all) until reliable subscribers acknowledged everything."""
    from rclpy.duration import Duration
    end = time.monotonic() + timeout
    for publisher in publishers:
        left = max(0.0, end - time.monotonic())
        publisher.wait_for_all_acked(Duration(nanoseconds=round(left * 1e9)))


def _wait_for_subscribers(node, publishers, timeout: float, stop, min_subscribers: dict):
    """
    Wait until every topic has matched ``min_subscribers`` (default 1) and all the graph shows.

    With several subscribers on one topic (say two nodes on joint_states), "one has matched"
    is not enough: the other would miss the first messages.
    """
    end = time.monotonic() + timeout
    while timeout > 0.0 and not stop.is_set() and time.monotonic() < end:
        if all(max(1, min_subscribers.get(p.topic_name, 1), node.count_subscribers(p.topic_name))
               <= p.get_subscription_count() for p in publishers):
            # let the subscribers' side finish matching too (0.2 s lost a first message under load)
            time.sleep(1.0)
            return
        time.sleep(0.02)
