"""Giving freed memory back: glibc's malloc_trim returns a large freed heap to the system."""
import ctypes.util

import pytest

from robot_dynamics_ros.nodes.memory import release_freed_memory


def _resident_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS"))


@pytest.mark.skipif(ctypes.util.find_library("c") is None, reason="no C library to call")
def test_a_freed_heap_of_small_blocks_goes_back():
    """
    Many small blocks (what rclpy's conversion of a large request leaves) stay resident.

    Once freed, glibc keeps them until malloc_trim (generous bound: half of them come back).
    """
    if not release_freed_memory():
        pytest.skip("not glibc: nothing to call")
    before = _resident_mb()
    blocks = [bytearray(600) for _ in range(300_000)]         # ~200 MB in small allocations
    keep = blocks[::1000]                                     # a few survive, as in the node
    grown = _resident_mb() - before
    del blocks
    freed = _resident_mb()
    assert release_freed_memory()
    trimmed = _resident_mb()
    assert grown > 100 and freed - trimmed > 0.5 * grown, (before, grown, freed, trimmed)
    assert len(keep) == 300
