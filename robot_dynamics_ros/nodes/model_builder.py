"""
Building a node's model from ``/robot_description`` off the executor's thread.

Loading a URDF and generating its straight-line model takes from milliseconds to seconds (a long
chain: doc/urdf.md); done in the subscription callback it would stop every output of
the node meanwhile.  :class:`ModelBuilder` does the work in one worker thread and hands the
result back to the executor through a timer that runs only while a build is under way (rclpy's
EventsExecutor has no guard conditions), so the node keeps computing with its old model until the
new one is ready and switches in its own thread, between two callbacks.  Only the
latest description counts: one that arrives while another is being built replaces the waiting
one (a publisher flooding the topic costs one build at a time, never a queue).
"""
from __future__ import annotations

import threading
from typing import Callable, NamedTuple

from rclpy.clock import Clock, ClockType

POLL_PERIOD = 0.02       # s: how soon a finished build is taken over (only while one is under way)


class Built(NamedTuple):
    """The outcome of one build: the text, and ``result`` or the ``error`` raised."""

    text: str
    result: object
    error: BaseException | None


class ModelBuilder:
    """One worker thread running ``build(text)`` for the latest text (see the module docstring)."""

    def __init__(self, node, build: Callable[[str], object], deliver: Callable[[Built], None]):
        self._build, self._deliver = build, deliver
        self._condition = threading.Condition()
        self._waiting: str | None = None
        self._done: list[Built] = []
        self._stopped = False
        self._busy = 0                 # submitted and not yet handed over (executor thread only)
        self._poll = node.create_timer(POLL_PERIOD, self._hand_over,
                                       clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._poll.cancel()
        self._thread = threading.Thread(target=self._run, name="model_builder", daemon=True)
        self._thread.start()

    def submit(self, text: str) -> None:
        """Build a model from ``text`` (replacing any text still waiting); executor thread."""
        with self._condition:
            if self._waiting is None:
                self._busy += 1
            self._waiting = text
            self._condition.notify()
        self._poll.reset()

    @property
    def busy(self) -> bool:
        """Tell whether a submitted text has not been handed over as a model yet (executor)."""
        return self._busy > 0

    def stop(self) -> None:
        """Stop the worker (a build in progress finishes; its result is dropped)."""
        with self._condition:
            self._stopped = True
            self._condition.notify()

    def _run(self) -> None:
        while True:
            with self._condition:
                while self._waiting is None and not self._stopped:
                    self._condition.wait()
                if self._stopped:
                    return
                text, self._waiting = self._waiting, None
            try:
                built = Built(text, self._build(text), None)
            except Exception as exc:  # noqa: BLE001 -- reported by the node, never fatal
                # without its traceback: its frames hold the text (up to the size bound, e.g. a
                # 50 MB description refused), in a cycle that only the garbage collector would
                # free (issue 31, D1); the node reports the message, not where it was raised
                built = Built(text, None, exc.with_traceback(None))
            with self._condition:
                if self._stopped:
                    return
                self._done.append(built)
            del text, built         # (this frame waits next: it must not keep them meanwhile)

    def _hand_over(self) -> None:
        """Deliver finished builds in the executor's thread (the timer's callback)."""
        with self._condition:
            done, self._done = self._done, []
            self._busy -= len(done)
            idle = self._busy == 0
        if idle:
            self._poll.cancel()
        for built in done:
            self._deliver(built)
