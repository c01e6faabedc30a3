"""
The bag writer of recordings: written from several threads while a flusher commits, then closed.

Oracle: the independent readers (foxglove's ``mcap``, plain ``sqlite3`` against rosbag2's
schema): after ``close`` every message written is in the file, each exactly once, whatever the
periodic commits (SQLite3) or chunk closes (MCAP) did in between.
"""
import threading

import numpy as np
import pytest

from independent_readers import independent_messages, joint_state_rows
from robot_dynamics_ros.bags.storage import output_bag
from robot_dynamics_ros.bags.types import typestore
from robot_dynamics_ros.messages.cdr import JOINT_STATE, JointStateTemplate

THREADS, PER_THREAD = 4, 400


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_messages_written_from_threads_during_flushes_are_all_in_the_closed_bag(
        tmp_path, storage):
    template = JointStateTemplate(["j"], ("position",))
    with output_bag(tmp_path / "bag", storage, flush_period=0.001) as writer:
        topics = [writer.add_connection(f"/t{k}", JOINT_STATE, typestore=typestore())
                  for k in range(THREADS)]

        def write(k):
            stamps = k * 1_000_000 + np.arange(PER_THREAD, dtype=np.int64)
            rows = template.encode_many(stamps, position=stamps[:, None] * 1.0)
            for stamp, row in zip(stamps.tolist(), rows):
                writer.write(topics[k], stamp, row.data)
        threads = [threading.Thread(target=write, args=(k,)) for k in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    messages = independent_messages(tmp_path / "bag")
    assert len(messages) == THREADS * PER_THREAD
    for k in range(THREADS):
        rows = joint_state_rows(messages, f"/t{k}")
        assert rows["stamp"] == rows["time"] == list(k * 1_000_000 + np.arange(PER_THREAD))
