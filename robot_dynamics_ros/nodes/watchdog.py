"""
The input watchdog: per input, the last valid message and what became of the messages.

What the timeout warnings and the diagnostics read.

Outputs are event-driven (one per valid input message), so when inputs stop, outputs stop; the
watchdog (steady clock, independent of sim time) says so once per outage ("stopped publishing")
and once when inputs resume.  Rejected messages are logged by :class:`RejectionLog`: at most one
warning per ``warning_period`` per reason, counting the ones it did not print.

Every time here is ``time.monotonic()`` seconds.
"""
from __future__ import annotations

import time
from collections import Counter


class InputWatch:
    """
    One input topic: time of the last valid message, counts and compute time since the start.

    :meth:`accepted` is on the per-message path and does two additions; the rest is read by the
    watchdog timer and the diagnostics.
    """

    def __init__(self, topic: str):
        self.topic = topic
        self.last: float | None = None     # monotonic time of the last valid message
        self.stale = False                 # said "stopped publishing" and not yet "resumed"
        self.accepted_count = 0
        self.compute_seconds = 0.0         # summed over accepted messages
        self.compute_max = 0.0             # since the last diagnostics report (reset there)

    def accepted(self, started: float, now: float):
        """Record a valid message that arrived at ``started`` and was handled by ``now``."""
        self.last = now
        self.accepted_count += 1
        spent = now - started
        self.compute_seconds += spent
        if spent > self.compute_max:
            self.compute_max = spent

    def age(self, now: float) -> float | None:
        """Return how long ago the last valid message came, in s (None before the first)."""
        return None if self.last is None else now - self.last


class Watchdog:
    """The input timeout of a node: which watches are stale, said once per outage."""

    def __init__(self, logger):
        self._logger = logger
        self.watches: list[InputWatch] = []
        self.timeout = 0.0                 # s; 0 disables

    def watch(self, topic: str) -> InputWatch:
        """Start watching ``topic``."""
        watch = InputWatch(topic)
        self.watches.append(watch)
        return watch

    def fresh(self, watch: InputWatch, now: float) -> bool:
        """Tell whether ``watch`` had a valid message within the timeout (or none yet)."""
        timeout = self.timeout
        return not (timeout > 0.0 and watch.last is not None and now - watch.last > timeout)

    def resumed(self, watch: InputWatch):
        """Say that a stale input got a valid message again."""
        watch.stale = False
        self._logger.info(f"'{watch.topic}' resumed: publishing again")

    def check(self, now: float | None = None):
        """Warn once for each input that just went stale (the node's timer calls this)."""
        now = time.monotonic() if now is None else now
        for watch in self.watches:
            if not watch.stale and not self.fresh(watch, now):
                watch.stale = True
                self._logger.warning(
                    f"no valid message on '{watch.topic}' for more than input_timeout = "
                    f"{self.timeout:g} s: stopped publishing until it resumes")


class RejectionLog:
    """Warnings about rejected inputs, throttled per reason; counts every rejection by reason."""

    def __init__(self, logger):
        self._logger = logger
        self.period = 2.0                  # s between two warnings of the same reason
        self.counts: Counter = Counter()   # reason -> rejections since the start
        self._last: dict[str, list] = {}   # reason -> [time of the last warning, suppressed]

    def reject(self, kind: str, message: str, now: float | None = None):
        """Count a rejection of reason ``kind``; warn with ``message`` unless throttled."""
        now = time.monotonic() if now is None else now
        self.counts[kind] += 1
        entry = self._last.get(kind)
        if entry is not None and now - entry[0] < self.period:
            entry[1] += 1
            return
        suppressed = ""
        if entry and entry[1]:
            suppressed = f" ({entry[1]} more like this since the last warning)"
        self._last[kind] = [now, 0]
        self._logger.warning(f"rejected a message: {message}; nothing published from it"
                             f"{suppressed}")
