"""Ctrl-C and SIGTERM as a flag: recording and playback stop between messages, never inside one."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager


@contextmanager
def stop_on_signals(stop: threading.Event):
    """
    Within the block, SIGINT and SIGTERM set ``stop`` instead of raising.

    rclpy's own handlers are not installed (``SignalHandlerOptions.NO``) and the loops check
    ``stop`` between messages, so an interrupt can never cut a message in half in a storage file.
    Outside the main thread (where handlers cannot be set) nothing changes.
    """
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, lambda *_: stop.set())
                    for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
