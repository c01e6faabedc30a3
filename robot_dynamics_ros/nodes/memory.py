"""
Giving freed memory back to the system after a large input.

A request of a few hundred thousand trajectory points becomes hundreds of megabytes of Python
objects in rclpy's conversion; when they are freed, glibc keeps most of that heap (fragmented
between the few objects that outlive the request), so the node's resident memory stays far
above what it uses.  ``malloc_trim(0)`` returns the free pages to the system (measured: 1.0 GB
-> 0.2 GB after a million-point request; bench/bench_oversize_request.py).  Elsewhere than glibc
there is nothing to call, and nothing happens.

:class:`MemoryTrimmer` runs it once, shortly after the callback that took the large input has
returned (while that callback runs, the executor still holds the input).
"""
from __future__ import annotations

import ctypes
import ctypes.util

from rclpy.clock import Clock, ClockType

TRIM_DELAY = 0.05               # s (steady clock) after the large input's callback


def _malloc_trim():
    """Return glibc's malloc_trim, or None where there is none."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


_TRIM = _malloc_trim()


def release_freed_memory() -> bool:
    """Give the heap's free pages back to the system; False where that is not possible."""
    return _TRIM is not None and bool(_TRIM(0) >= 0)


class MemoryTrimmer:
    """Calls :func:`release_freed_memory` once after :meth:`soon` (a node's timer)."""

    def __init__(self, node):
        self._timer = node.create_timer(TRIM_DELAY, self._trim,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._timer.cancel()
        self.trims = 0

    def soon(self):
        """Trim once, after the current callback (call it when a large input came in)."""
        self._timer.reset()

    def _trim(self):
        self._timer.cancel()
        release_freed_memory()
        self.trims += 1
