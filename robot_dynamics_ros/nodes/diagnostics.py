"""
Diagnostics: each node's state as diagnostic_msgs/DiagnosticArray on ``/diagnostics``.

What rqt_robot_monitor and diagnostic_aggregator read (``diagnostic_updater`` is not on the
package index, so the array is published directly, once per ``diagnostics_period`` on the steady
clock).  One DiagnosticStatus per node, named after the node, ``hardware_id`` the robot, with:

* per input topic: message rate since the last report, age of the last valid message, accepted
  messages, compute time per message (mean and max since the last report);
* rejected messages by reason (since the start, and how many since the last report);
* the model in use: robot, joints, implementation, payload mass, gravity;
* what the node adds (:class:`Extra`): a managed node its lifecycle state and the inputs it did
  not use while not active, a torque node its effort-limit counts.

Level: WARN while a managed node is not active (its message says the state and how to activate
it, as controller_manager reports controllers that are not active); ERROR without a model; WARN
when an input is stale (no valid message for longer than ``input_timeout``), messages were
rejected or commands exceeded an effort limit since the last report; ERROR when the node says it
cannot do its job now (``Extra.errors``: the observer that cannot estimate, the simulator whose
state diverged); OK otherwise.
"""
from __future__ import annotations

import time
from typing import NamedTuple

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR


class Extra(NamedTuple):
    """
    What a node adds to its status: values, problems (WARN), why it is not active, errors.

    ``errors``: what keeps the node from doing its job now (the observer that cannot estimate,
    the simulator whose state diverged): any makes the level ERROR.
    """

    values: list = []               # (key, value) pairs
    problems: list = []             # short texts; any makes the level WARN
    not_active: str = ""            # a managed node that is not active: its message
    errors: list = []               # short texts; any makes the level ERROR


def _value(key: str, value) -> KeyValue:
    if isinstance(value, float):
        value = f"{value:.6g}"
    return KeyValue(key=key, value=str(value))


class DiagnosticsReporter:
    """Builds a node's DiagnosticStatus from its watchdog and rejection counts."""

    def __init__(self, name: str, watchdog, rejections):
        self.name = name
        self.watchdog = watchdog
        self.rejections = rejections
        self._last_time = time.monotonic()
        self._last_counts: dict = {}             # watch topic -> (accepted, compute seconds)
        self._last_rejected = 0

    def status(self, dynamics, now: float | None = None, extra: Extra = Extra()) \
            -> DiagnosticStatus:
        """Return the status now, and start the next reporting interval."""
        now = time.monotonic() if now is None else now
        elapsed = max(now - self._last_time, 1e-9)
        self._last_time = now
        values, problems = [], []
        for watch in self.watchdog.watches:
            values += self._input_values(watch, now, elapsed)
            if watch.last is not None and not self.watchdog.fresh(watch, now):
                problems.append(f"no valid '{watch.topic}' for {now - watch.last:.1f} s")
        rejected = sum(self.rejections.counts.values())
        for kind, count in sorted(self.rejections.counts.items()):
            values.append(_value(f"rejected: {kind}", count))
        new_rejections = rejected - self._last_rejected
        self._last_rejected = rejected
        if new_rejections:
            problems.append(f"{new_rejections} message(s) rejected")
        values += [_value(key, value) for key, value in extra.values]
        problems += extra.problems
        if dynamics is not None:
            model = dynamics.model
            mass = float(model.payload["mass"]) if model.payload else 0.0
            values += [_value("robot", model.name), _value("joints", model.n),
                       _value("dynamics", dynamics.implementation),
                       _value("payload mass [kg]", mass),
                       _value("gravity [m/s^2]", " ".join(f"{g:g}" for g in model.gravity))]
        if extra.errors:
            level, message = ERROR, "; ".join(extra.errors + problems)
        elif extra.not_active:
            level, message = WARN, extra.not_active
        elif dynamics is None:
            level, message = ERROR, "no robot model"
        else:
            level, message = (WARN, "; ".join(problems)) if problems else (OK, "running")
        return DiagnosticStatus(level=level, name=self.name, message=message,
                                hardware_id=dynamics.model.name if dynamics else "",
                                values=values)

    def _input_values(self, watch, now: float, elapsed: float) -> list:
        accepted, compute = self._last_counts.get(watch.topic, (0, 0.0))
        new = watch.accepted_count - accepted
        spent = watch.compute_seconds - compute
        self._last_counts[watch.topic] = (watch.accepted_count, watch.compute_seconds)
        age = watch.age(now)
        values = [_value(f"{watch.topic}: rate [Hz]", new / elapsed),
                  _value(f"{watch.topic}: age of last valid message [s]",
                         "none yet" if age is None else age),
                  _value(f"{watch.topic}: accepted messages", watch.accepted_count),
                  _value(f"{watch.topic}: compute time mean [us]",
                         spent / new * 1e6 if new else 0.0),
                  _value(f"{watch.topic}: compute time max [us]", watch.compute_max * 1e6)]
        watch.compute_max = 0.0
        return values


def diagnostic_array(stamp, status: DiagnosticStatus) -> DiagnosticArray:
    """Wrap one status in the array published on /diagnostics."""
    array = DiagnosticArray(status=[status])
    array.header.stamp = stamp
    return array
