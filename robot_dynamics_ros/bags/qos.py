"""
QoS between rclpy and bags: what the publishers offered, recorded; what a player offers.

rosbag2 records each topic's publishers' QoS profiles in the metadata (``offered_qos_profiles``)
so a player can offer the same.  The recorder subscribes as ``ros2 bag record`` does: reliable
only if every publisher is reliable (a reliable subscription gets nothing from a best-effort
publisher), transient-local only if every publisher is (so late-joining data such as a latched
trajectory is recorded too).
"""
from __future__ import annotations

from rclpy.duration import Duration
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, LivelinessPolicy, QoSProfile,
                       ReliabilityPolicy)
from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness, QosReliability,
                                QosTime)

_HISTORY = {HistoryPolicy.KEEP_LAST: QosHistory.KEEP_LAST,
            HistoryPolicy.KEEP_ALL: QosHistory.KEEP_ALL}
_RELIABILITY = {ReliabilityPolicy.RELIABLE: QosReliability.RELIABLE,
                ReliabilityPolicy.BEST_EFFORT: QosReliability.BEST_EFFORT}
_DURABILITY = {DurabilityPolicy.VOLATILE: QosDurability.VOLATILE,
               DurabilityPolicy.TRANSIENT_LOCAL: QosDurability.TRANSIENT_LOCAL}
_LIVELINESS = {LivelinessPolicy.AUTOMATIC: QosLiveliness.AUTOMATIC,
               LivelinessPolicy.MANUAL_BY_TOPIC: QosLiveliness.MANUAL_BY_TOPIC}


def _time(duration: Duration) -> QosTime:
    sec, nsec = divmod(duration.nanoseconds, 1_000_000_000)
    return QosTime(sec=int(sec), nsec=int(nsec))


def to_bag(profile: QoSProfile) -> Qos:
    """Return an rclpy QoS profile as the rosbags one stored in the metadata."""
    return Qos(history=_HISTORY.get(profile.history, QosHistory.SYSTEM_DEFAULT),
               depth=int(profile.depth),
               reliability=_RELIABILITY.get(profile.reliability, QosReliability.SYSTEM_DEFAULT),
               durability=_DURABILITY.get(profile.durability, QosDurability.SYSTEM_DEFAULT),
               deadline=_time(profile.deadline), lifespan=_time(profile.lifespan),
               liveliness=_LIVELINESS.get(profile.liveliness, QosLiveliness.SYSTEM_DEFAULT),
               liveliness_lease_duration=_time(profile.liveliness_lease_duration),
               avoid_ros_namespace_conventions=bool(profile.avoid_ros_namespace_conventions))


def subscription_profile(offered, depth: int) -> QoSProfile:
    """Return the recorder's subscription QoS for publishers offering ``offered`` (rclpy)."""
    reliable = bool(offered) and all(p.reliability == ReliabilityPolicy.RELIABLE for p in offered)
    latched = bool(offered) and all(p.durability == DurabilityPolicy.TRANSIENT_LOCAL
                                    for p in offered)
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE if reliable
                      else ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if latched
                      else DurabilityPolicy.VOLATILE)


def publisher_profile(recorded, depth: int) -> QoSProfile:
    """Return the player's publisher QoS from a topic's recorded profiles (rosbags ``Qos``)."""
    reliable = bool(recorded) and all(q.reliability == QosReliability.RELIABLE for q in recorded)
    latched = bool(recorded) and all(q.durability == QosDurability.TRANSIENT_LOCAL
                                     for q in recorded)
    if not recorded:
        reliable = True                       # nothing recorded: the ROS default, reliable
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE if reliable
                      else ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if latched
                      else DurabilityPolicy.VOLATILE)
