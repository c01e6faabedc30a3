"""
The one table from the core's errors to what the nodes say, and the guards that apply it.

A topic message that cannot be used is dropped with a throttled warning and counted by reason
(``kind``) in diagnostics; a service request gets ``success: false`` and the ``message``.  Both
words come from :data:`ERROR_TABLE` (first matching class wins), so a too-short trajectory reads
the same whether it came by topic or by service.  Error texts are cut to :data:`MAX_MESSAGE_CHARS`
(issue 10, N4: no single bad input may write a megabyte of log).
"""
from __future__ import annotations

import functools
from typing import Callable, NamedTuple

from ..core import (InfeasibleError, InputError, RobotDescriptionError, SingularityError,
                    TrajectoryError)
from ..ros_messages import MessageRejected

MAX_MESSAGE_CHARS = 600


class ErrorWording(NamedTuple):
    """How one class of errors is reported: its reason ``kind`` and the words before the text."""

    kind: str
    prefix: str


ERROR_TABLE: tuple[tuple[type, ErrorWording], ...] = (
    (RobotDescriptionError, ErrorWording("robot description", "invalid robot description")),
    (TrajectoryError, ErrorWording("trajectory", "invalid trajectory")),
    (InfeasibleError, ErrorWording("infeasible", "infeasible within the limits")),
    (SingularityError, ErrorWording("singular", "singular configuration")),
    (InputError, ErrorWording("input", "invalid input")),
    (ValueError, ErrorWording("input", "invalid input")),
)
INTERNAL = ErrorWording("internal", "internal error")


def capped(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` cut to ``limit`` characters (saying how many were left out)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def describe(exc: BaseException) -> tuple[str, str]:
    """(reason kind, message) for ``exc``: the table's words, or an internal error."""
    for cls, wording in ERROR_TABLE:
        if isinstance(exc, cls):
            kind = exc.kind if isinstance(exc, MessageRejected) else wording.kind
            return kind, capped(f"{wording.prefix}: {exc}")
    return INTERNAL.kind, capped(f"{INTERNAL.prefix} {type(exc).__name__}: {exc}")


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
