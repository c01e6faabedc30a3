"""
The executor the node executables and the bringup spin with: the one place it is chosen.

rclpy's EventsExecutor (``rclpy.experimental``, the default) or its SingleThreadedExecutor:
measured in bench/bench_ros_latency.py (doc/benchmarks.md, "ROS throughput"), the EventsExecutor
costs about
240 us of CPU per message for a bare echo node where the SingleThreadedExecutor costs 660 us, which
at 1 kHz is the difference between a third and two thirds of a core before any dynamics.  The
choice is made by :data:`DEFAULT`; ``ROBOT_DYNAMICS_EXECUTOR=single`` selects the other.

The EventsExecutor calls a timer callback that takes a parameter with a TimerInfo: the nodes'
timer callbacks take none (nodes/base.py).
"""
from __future__ import annotations

import os

SINGLE = "single"
EXECUTORS = (SINGLE, "events")
# The executor used unless ROBOT_DYNAMICS_EXECUTOR names another (for benchmarks and comparisons).
DEFAULT = "events"


def executor_kind() -> str:
    """Return the executor kind in use: ROBOT_DYNAMICS_EXECUTOR if set, else DEFAULT."""
    kind = os.environ.get("ROBOT_DYNAMICS_EXECUTOR", DEFAULT) or DEFAULT
    if kind not in EXECUTORS:
        raise ValueError(f"ROBOT_DYNAMICS_EXECUTOR: expected one of {list(EXECUTORS)}, "
                         f"got '{kind}'")
    return kind


# A node whose callback is a coroutine that waits (the trajectory proxy's goal awaits the
# controller's answers) names SINGLE in its class (``EXECUTOR``), whatever ROBOT_DYNAMICS_EXECUTOR
# says.  Why: rclpy 9.1.2's Future.__await__ yields until done, and the EventsExecutor resumes a
# blocked task at every spin_once (its spin() does not serve: :func:`spin`), so an ``async``
# callback awaiting a goal spins a whole core for the goal's duration (measured: 2.08 s of CPU in
# a 2 s goal; 0.09 s with SINGLE, which waits between its timers' wake-ups).  A thread pool
# (MultiThreadedExecutor, the callback blocking) also waits without spinning, but added 10 ms to
# the proxy's goals (bench/bench_proxy.py, medians 54-57 against 34-43 ms).


def make_executor(context=None, kind: str | None = None):
    """Create an executor of ``kind`` (default: :func:`executor_kind`) for ``context``."""
    kind = kind or executor_kind()
    if kind == "events":
        from rclpy.experimental import EventsExecutor
        return EventsExecutor(context=context)
    from rclpy.executors import SingleThreadedExecutor
    return SingleThreadedExecutor(context=context)


def spin(executor, context, stopped=lambda: False):
    """
    Spin ``executor`` until ``context`` shuts down (SIGINT, SIGTERM) or ``stopped()`` is true.

    One ``spin_once`` at a time: rclpy 9.1.2's ``EventsExecutor.spin()`` dispatches nothing, its
    ``spin_once`` works; for the SingleThreadedExecutor this is what ``spin()`` does.
    """
    from rclpy.executors import ExternalShutdownException
    try:
        while context.ok() and not stopped():
            executor.spin_once(timeout_sec=0.1)
    except ExternalShutdownException:
        pass
    except Exception:  # noqa: BLE001 -- e.g. RCLError "context is not valid": shut down meanwhile
        if context.ok():
            raise
