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


def _written(path, storage, rows_at_once):
    """Write 3 topics in alternating batches (as ``bag process`` does); return what was written."""
    rng = np.random.default_rng(5)
    template = JointStateTemplate([f"j{k}" for k in range(6)], ("position", "velocity", "effort"))
    with output_bag(path, storage) as writer:
        topics = [writer.add_connection(f"/t{k}", JOINT_STATE, typestore=typestore())
                  for k in range(3)]
        start = 1_700_000_000_000_000_000
        for batch in (1, 2_000, 7_000, 0, 9_000):      # past 1 MiB chunks, some in mid-batch
            stamps = start + np.sort(rng.integers(0, 10**9, size=batch))
            for topic in topics:
                rows = template.encode_many(stamps, **{f: rng.normal(size=(batch, 6))
                                                       for f in template.fields})
                if rows_at_once:
                    writer.write_rows(topic, stamps, rows)
                else:
                    for stamp, row in zip(stamps.tolist(), rows):
                        writer.write(topic, stamp, row.data)
    return path


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_write_rows_writes_the_bytes_of_one_write_per_row(tmp_path, storage):
    """The oracle: rosbags' own per-message ``write``; the files are compared byte for byte."""
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    ours = _written(tmp_path / "ours" / "bag", storage, rows_at_once=True)
    theirs = _written(tmp_path / "theirs" / "bag", storage, rows_at_once=False)
    if storage == "mcap":
        assert (ours / "bag.mcap").read_bytes() == (theirs / "bag.mcap").read_bytes()
    assert (ours / "metadata.yaml").read_text() == (theirs / "metadata.yaml").read_text()
    got, expected = independent_messages(ours), independent_messages(theirs)
    assert len(got) == len(expected) == 3 * 18_001
    for topic in ("/t0", "/t1", "/t2"):
        assert joint_state_rows(got, topic) == joint_state_rows(expected, topic)
