"""``bag info``: what a bag holds (topics, types, counts, duration, storage), as ros2 bag info."""
from __future__ import annotations

from typing import NamedTuple

from .storage import messages, open_bag


class TopicSummary(NamedTuple):
    """One topic of a bag."""

    name: str
    msgtype: str
    count: int
    serialization: str
    qos_profiles: int               # publishers' QoS profiles recorded with it


class BagInfo(NamedTuple):
    """What ``bag info`` prints."""

    path: str
    storage: str
    files: list
    size_bytes: int
    message_count: int
    start_ns: int
    end_ns: int
    topics: list

    @property
    def duration(self) -> float:
        return max(0, self.end_ns - self.start_ns) * 1e-9


def bag_info(path, check: bool = False) -> BagInfo:
    """Summarise the bag at ``path``; ``check`` reads every message (finds damaged data)."""
    with open_bag(path) as reader:
        if check:
            for _ in messages(reader):
                pass
        files = [p for p in sorted(reader.path.glob("*")) if p.name != "metadata.yaml"] \
            if reader.path.is_dir() else [reader.path]
        storage = files[0].suffix.lstrip(".") if files else ""
        storage = {"db3": "sqlite3"}.get(storage, storage)
        topics = [TopicSummary(c.topic, c.msgtype, c.msgcount, c.ext.serialization_format,
                               len(c.ext.offered_qos_profiles)) for c in reader.connections]
        count = reader.message_count
        return BagInfo(str(path), storage, [p.name for p in files],
                       sum(p.stat().st_size for p in files), count,
                       reader.start_time if count else 0, reader.end_time - 1 if count else 0,
                       topics)


def format_info(info: BagInfo) -> str:
    """Return the bag summary as text, laid out like ``ros2 bag info``."""
    lines = [f"Files:             {', '.join(info.files)}",
             f"Bag size:          {info.size_bytes / 1024:.1f} KiB",
             f"Storage id:        {info.storage}",
             f"Duration:          {info.duration:.9f}s",
             f"Start:             {info.start_ns * 1e-9:.9f}",
             f"End:               {info.end_ns * 1e-9:.9f}",
             f"Messages:          {info.message_count}",
             f"Topic information: {len(info.topics)} topic(s)"]
    width = max((len(t.name) for t in info.topics), default=0)
    for t in sorted(info.topics, key=lambda t: t.name):
        lines.append(f"  Topic: {t.name:<{width}} | Type: {t.msgtype} | Count: {t.count} | "
                     f"Serialization Format: {t.serialization}")
    return "\n".join(lines)
