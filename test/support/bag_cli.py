"""`robot-dynamics bag` as a process in the DDS tests, and bounded waits on it."""

import sys
import time

from ros_fixtures import NodeProcess

CLI = [sys.executable, "-m", "robot_dynamics_ros.commands.cli", "bag"]


def cli(env, log_dir, name, *args):
    """Start ``robot-dynamics bag ...`` as a process (its output in ``name``.log)."""
    return NodeProcess([*CLI, *map(str, args)], env, log_dir / f"{name}.log")


def wait_exit(process, timeout=60.0):
    """Wait (bounded) for the process to end; return its exit code."""
    try:
        process.proc.wait(timeout)
    finally:
        code = process.stop()
    return code


def wait_for_log(process, text, timeout=60.0):
    """Wait (bounded) until ``text`` appears in the process's output."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if text in process.log_text():
            return
        assert process.alive(), process.log_text()
        time.sleep(0.05)
    raise AssertionError(f"'{text}' not in:\n{process.log_text()}")
