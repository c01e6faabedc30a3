"""
``bag info``: what a bag holds, laid out as ``ros2 bag info`` lays it out.

Times are integers of nanoseconds throughout (a float has 15-16 significant digits, a stamp 19):
``Start`` is metadata's starting time and ``End`` that plus its duration, as rosbag2 prints them.
Service event topics (``<service>/_service_event`` of a ``*/srv/*_Event`` type, which rosbag2
records for services) are listed as services, not counted among the messages, as rosbag2 does.
When the storage files hold another number of messages than metadata.yaml lists for a topic,
that is said (``problems``), and ``--check`` reads every message.
"""
from __future__ import annotations

import time
from typing import NamedTuple

from .reader import open_bag


class TopicSummary(NamedTuple):
    """One topic of a bag."""

    name: str
    msgtype: str
    count: int
    serialization: str
    qos_profiles: int               # publishers' QoS profiles recorded with it


class BagInfo(NamedTuple):
    """What ``bag info`` prints (times and durations in int ns)."""

    path: str
    storage: str
    ros_distro: str
    files: list
    size_bytes: int
    message_count: int              # of every topic, service events included
    start_ns: int
    end_ns: int
    topics: list
    problems: list                  # texts: counts that differ from metadata.yaml's

    @property
    def duration_ns(self) -> int:
        return max(0, self.end_ns - self.start_ns)

    @property
    def duration(self) -> float:
        """Seconds (for display and arithmetic; the exact value is ``duration_ns``)."""
        return self.duration_ns * 1e-9


def is_service_event(topic: str, msgtype: str) -> bool:
    """Tell whether a topic carries a service's events (rosbag2_cpp::is_service_event_topic)."""
    return topic.endswith("/_service_event") and "/srv/" in msgtype \
        and msgtype.endswith("_Event")


def bag_info(path, check: bool = False) -> BagInfo:
    """Summarise the bag at ``path``; ``check`` reads every message (finds damaged data)."""
    with open_bag(path) as bag:
        if check:
            for _ in bag.messages():
                pass
        problems = [f"topic '{c.topic}': metadata.yaml lists {promised} messages, its storage "
                    f"files hold {held}" for c, promised, held in bag.count_problems()]
        topics = [TopicSummary(c.topic, c.msgtype, c.msgcount, c.ext.serialization_format,
                               len(c.ext.offered_qos_profiles)) for c in bag.connections]
        return BagInfo(str(path), bag.storage_id, bag.ros_distro, bag.files, bag.size_bytes,
                       bag.message_count, bag.start_ns, bag.start_ns + bag.duration_ns, topics,
                       problems)


def seconds_text(ns: int) -> str:
    """``sec.nnnnnnnnn`` of an int number of nanoseconds, exactly (no float on the way)."""
    sign = "-" if ns < 0 else ""
    sec, nanosec = divmod(abs(int(ns)), 1_000_000_000)
    return f"{sign}{sec}.{nanosec:09d}"


def _time_point(ns: int) -> str:
    """As rosbag2 prints a time: local date and time, then (sec.nanosec)."""
    sec, nanosec = divmod(int(ns), 1_000_000_000)
    local = time.localtime(sec)
    return (f"{time.strftime('%b %e %Y %H:%M:%S', local)}.{nanosec:09d} "
            f"({seconds_text(ns)})")


def _size(size: int) -> str:
    """Bytes as rosbag2 prints them (B, KiB, MiB, ... with one decimal)."""
    value, units = float(size), ("B", "KiB", "MiB", "GiB", "TiB")
    index = 0
    while value >= 1024 and index < len(units) - 1:
        value /= 1024
        index += 1
    return f"{value:.{0 if index == 0 else 1}f} {units[index]}"


def format_info(info: BagInfo) -> str:
    """Return the bag summary as text, laid out like ``ros2 bag info``."""
    indent = " " * 19
    services = [t for t in info.topics if is_service_event(t.name, t.msgtype)]
    topics = sorted((t for t in info.topics if t not in services), key=lambda t: t.name)
    lines = ["Files:             " + ("\n" + indent).join(info.files),
             f"Bag size:          {_size(info.size_bytes)}",
             f"Storage id:        {info.storage}",
             f"ROS Distro:        {info.ros_distro or 'unknown'}",
             f"Duration:          {seconds_text(info.duration_ns)}s",
             f"Start:             {_time_point(info.start_ns)}",
             f"End:               {_time_point(info.end_ns)}",
             f"Messages:          {info.message_count - sum(t.count for t in services)}"]
    entries = [f"Topic: {t.name} | Type: {t.msgtype} | Count: {t.count} | "
               f"Serialization Format: {t.serialization}" for t in topics]
    lines.append("Topic information: " + f"\n{indent}".join(entries))
    lines.append(f"Service:           {len(services)}")
    entries = [f"Service: {t.name.removesuffix('/_service_event')} | "
               f"Type: {t.msgtype.removesuffix('_Event')} | Event Count: {t.count} | "
               f"Serialization Format: {t.serialization}"
               for t in sorted(services, key=lambda t: t.name)]
    lines.append("Service information: " + f"\n{indent}  ".join(entries))
    lines.extend(f"Problem:           {text}" for text in info.problems)
    return "\n".join(lines)
