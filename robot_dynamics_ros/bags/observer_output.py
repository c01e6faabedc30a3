"""
The ``observer`` output of ``bag process``: the external-torque observer's residual, offline.

For every joint state with velocity and effort (the effort taken as the measured or applied joint
torque, as the node's ``effort_source: joint_states``), the residual r of
``core.observer.MomentumObserver`` -- what external_torque_observer_node publishes on
``external_effort`` for the same messages: the same options, the same time base (header stamps,
in seconds since the first accepted one, from integer nanoseconds), the same refusals (a stamp
not after the previous accepted one).  The observer's state is carried from one chunk to the
next.
"""
from __future__ import annotations

import numpy as np

from ..core.observer import MomentumObserver, ObserverOptions

TOPIC = "external_effort"
FIELDS = ("effort",)


def stamp_seconds(stamp_ns, origin_ns: int):
    """Seconds since ``origin_ns`` from integer nanoseconds (exact difference, then scaled)."""
    return (stamp_ns - origin_ns) * 1e-9


class ObserverOutput:
    """The observer's state over one bag; :meth:`rows` takes one chunk."""

    def __init__(self, model, options: ObserverOptions):
        self.observer = MomentumObserver(model, options)
        self.origin_ns = None

    def rows(self, stamp_ns: np.ndarray, q, qd, effort) -> tuple[np.ndarray, np.ndarray]:
        """
        Return (accepted, r) for a chunk of valid joint states with velocity and effort.

        ``stamp_ns`` (N,) int64 header stamps; ``accepted`` (N,) bool, r (N, n) (NaN rows where
        not accepted).
        """
        if stamp_ns.size and self.origin_ns is None:
            self.origin_ns = int(stamp_ns[0])
        t = stamp_seconds(np.asarray(stamp_ns, dtype=np.int64), self.origin_ns or 0)
        r, accepted = self.observer.update_many(t, q, qd, effort)
        return accepted, r
