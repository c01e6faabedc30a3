"""
How the nodes report errors: the core's one table of error kinds, and the guards that apply it.

A topic message that cannot be used is dropped with a throttled warning and counted by reason
(``kind``) in diagnostics; a service request gets ``success: false`` and the ``message``.  Both
say what kind of problem it was in the words of ``core.errors.ERROR_SUMMARIES`` (the table the
command line uses too), so a too-short trajectory reads the same whether it came by topic, by
service or from a file.  Error texts are cut to :data:`MAX_MESSAGE_CHARS` (issue 10, N4: no
single bad input may write a megabyte of log).
"""
from __future__ import annotations

import functools
from typing import Callable

from ..core.errors import RobotDynamicsError, error_summary
from ..messages.conversions import MessageRejected

MAX_MESSAGE_CHARS = 600


def capped(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` cut to ``limit`` characters (saying how many were left out)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def describe(exc: BaseException) -> tuple[str, str]:
    """Say what ``exc`` is: (reason kind for diagnostics, message for logs and responses)."""
    if isinstance(exc, (RobotDynamicsError, ValueError)):
        # plain ValueError: numpy's and the message packages' checks of the input's values
        summary = error_summary(exc) if isinstance(exc, RobotDynamicsError) else "invalid input"
        kind = exc.kind if isinstance(exc, MessageRejected) else summary
        return kind, capped(f"{summary}: {exc}")
    return "internal error", capped(f"internal error {type(exc).__name__}: {exc}")


def service_guard(logger, name: str, compute: Callable) -> Callable:
    """
    Make a service callback around ``compute(request, response)`` that never raises.

    On success ``response.success`` is true and ``message`` empty; on any exception both say what
    was wrong (:func:`describe`) and a warning names the service.
    """
    @functools.wraps(compute)
    def callback(request, response):
        try:
            compute(request, response)
            response.success, response.message = True, ""
        except Exception as exc:  # noqa: BLE001 -- a request must never crash the node
            response.success, response.message = False, describe(exc)[1]
            logger.warning(f"{name} request refused: {response.message}")
        return response
    return callback


def topic_guard(callback: Callable) -> Callable:
    """
    Wrap a subscription callback method: an exception becomes ``self.reject(kind, message)``.

    So a bad message never reaches the executor (never kills the node) and is reported and
    counted by reason.
    """
    @functools.wraps(callback)
    def guarded(self, msg):
        try:
            return callback(self, msg)
        except Exception as exc:  # noqa: BLE001 -- a callback must never take the node down
            kind, message = describe(exc)
            self.reject(kind, message)
        return None
    return guarded
