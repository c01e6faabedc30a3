"""
Processes seen from outside: what a node process costs (for tests and benches alike).

test/nodes/test_trajectory_proxy.py, bench/bench_proxy.py and bench/bench_ros_latency.py read
a node's CPU time from Linux's /proc, which counts every thread of the process, rclpy's
executor and DDS's included.
"""
from __future__ import annotations

import os
from pathlib import Path


def cpu_seconds(pid: int, gone: float | None = None) -> float:
    """
    Return the CPU time (user + system) process ``pid`` has used so far [s] (/proc).

    ``gone``: returned where the process has ended (a bench's crashed node); None raises.
    """
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        if gone is None:
            raise
        return gone
    # after the command name in brackets, which may hold spaces: utime, stime are fields 14, 15
    fields = text.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
