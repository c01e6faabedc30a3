"""
Writing bags so that nothing half-written is left behind, and little is lost in a crash.

Bags are rosbag2 directories (``metadata.yaml`` plus an MCAP or SQLite3 file, what ``ros2 bag``
reads) written with the ``rosbags`` library; reading is ``reader.py``'s.

* :func:`output_bag` -- a :class:`BagWriter` on a temporary directory next to the target
  (``.NAME.partial-PID/NAME``), renamed to the target only when the bag is complete (an error or
  Ctrl-C in between removes it, unless ``keep_interrupted``: a recording stopped by Ctrl-C is a
  complete bag); an existing target is refused unless ``overwrite``.
* :class:`BagWriter` -- rosbags' Writer usable from several threads (a node's callbacks and
  the executor: the demo records from its spinner threads; Python's sqlite3 refuses a
  connection used outside the thread that made it), and with ``flush_period`` made durable at
  that interval: SQLite3 commits its open transaction, MCAP closes its chunk and hands it to the
  operating system.  A recorder killed with SIGKILL (no chance to close the bag) therefore loses
  at most ``flush_period`` seconds of messages; ``robot-dynamics bag recover`` makes a readable
  bag of what it left (``recover.py``).
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.enums import CompressionMode
from rosbags.rosbag2.errors import WriterError
from rosbags.rosbag2.storage_mcap import McapWriter

from ..core.errors import BagError

STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
DEFAULT_STORAGE = "mcap"            # rosbag2's default since Iron
BAG_VERSION = 9                     # rosbag2 metadata version of Jazzy and Kilted
RECORD_FLUSH_PERIOD = 0.5           # s: a killed recorder loses at most this (documented: 1 s)


def storage_plugin(storage: str) -> StoragePlugin:
    """Return the rosbags plugin of ``storage`` ("mcap" or "sqlite3")."""
    try:
        return STORAGES[storage]
    except KeyError:
        raise BagError(f"storage: '{storage}' is not one of {sorted(STORAGES)}") from None


def check_output(path, overwrite: bool) -> Path:
    """Refuse an output bag path that exists (unless ``overwrite``) or cannot be created."""
    path = Path(path)
    if path.exists() and not overwrite:
        raise BagError(f"output {path} exists already; pass --overwrite to replace it")
    if path.exists() and not path.is_dir():
        raise BagError(f"output {path} exists and is not a bag directory; not replacing it")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise BagError(f"output {path}: directory {parent} does not exist")
    return path


@contextmanager
def output_bag(path, storage: str = DEFAULT_STORAGE, overwrite: bool = False,
               keep_interrupted: bool = False, flush_period: float | None = None):
    """
    Yield an open :class:`BagWriter` that becomes the bag ``path`` when the block completes.

    The bag is written to a temporary directory next to ``path`` and renamed when closed; an
    exception in the block removes it (a KeyboardInterrupt closes and keeps it if
    ``keep_interrupted``, then re-raises).  ``overwrite`` replaces an existing bag at ``path``.
    ``flush_period`` (s): make what was written durable at that interval (recordings).
    """
    path = check_output(path, overwrite)
    plugin = storage_plugin(storage)
    # staging/<name>: the storage file inside is named after the bag, as rosbag2 names it
    staging = path.parent / f".{path.name}.partial-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    partial = staging / path.name
    try:
        staging.mkdir()
        writer = BagWriter(partial, plugin, flush_period)
    except (WriterError, OSError, sqlite3.Error) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise BagError(f"output {path}: cannot be created: {exc}") from None
    try:
        yield writer
    except KeyboardInterrupt:
        if not keep_interrupted:
            _discard(writer, partial)
            raise
        _finish(writer, partial, path, overwrite)
        raise
    except BaseException:
        _discard(writer, partial)
        raise
    _finish(writer, partial, path, overwrite)


def _discard(writer, partial: Path):
    try:
        writer.abort()
    except Exception:  # noqa: BLE001 -- the directory goes anyway
        pass
    shutil.rmtree(partial.parent, ignore_errors=True)


def _finish(writer, partial: Path, path: Path, overwrite: bool):
    """Close ``writer`` (metadata written) and move the complete bag to ``path``."""
    staging = partial.parent
    try:
        writer.close()
        if path.exists():
            if not overwrite:
                raise BagError(f"output {path} appeared while writing; the new bag was discarded")
            old = staging / f"{path.name}.replaced"
            os.replace(path, old)
        os.replace(partial, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


class BagWriter:
    """
    The rosbags Writer of a bag, flushed every ``flush_period`` seconds if given.

    With ``flush_period`` it is behind a lock: the flushing thread and the writers' threads
    take turns.  ``add_connection`` and ``write`` take rosbags' arguments; ``flush`` makes
    everything written so far durable; ``close`` and ``abort`` as rosbags'.  Without
    ``flush_period`` one thread is expected to write (the lock would cost 5 % of ``bag
    process``).
    """

    def __init__(self, path: Path, plugin: StoragePlugin, flush_period: float | None = None):
        self._writer = Writer(path, version=BAG_VERSION, storage_plugin=plugin)
        self._writer.open()
        self._lock = threading.Lock()
        if plugin == StoragePlugin.SQLITE3:
            _sqlite_for_any_thread(self._writer.storage)
        self._stop = threading.Event()
        self._flusher = None
        if flush_period is None:
            # one thread writes (process, write_joint_states): rosbags' write itself, no lock
            self.write = self._writer.write
        else:
            self._flusher = threading.Thread(target=self._flush_every, args=(flush_period,),
                                             name="bag-flush", daemon=True)
            self._flusher.start()

    @property
    def path(self) -> Path:
        return self._writer.path

    @property
    def connections(self) -> list:
        return self._writer.connections

    def add_connection(self, topic: str, msgtype: str, **kwargs):
        with self._lock:
            return self._writer.add_connection(topic, msgtype, **kwargs)

    def set_custom_data(self, key: str, value: str):
        """Set metadata.yaml's custom_data ``key`` (rosbag2 metadata version 6 and later)."""
        with self._lock:
            self._writer.set_custom_data(key, value)

    def write(self, connection, timestamp: int, data):
        with self._lock:
            self._writer.write(connection, timestamp, data)

    def write_rows(self, connection, timestamps, rows):
        """
        Write one message per row of ``rows`` ((N, size) uint8) at ``timestamps`` (N ns).

        The same bytes as ``write`` called for each row, in order (``test_storage.py``): into an
        MCAP bag (rosbags' McapWriter, uncompressed per message) the N message records are built
        at once with numpy instead of five small writes each in Python (the per-message writes
        were the most of ``bag process``'s time: doc/benchmarks.md, "Bags"); otherwise, or for
        a connection rosbags does not know (its error), one ``write`` a row.
        """
        with self._lock:
            storage, writer = self._writer.storage, self._writer
            if (not isinstance(storage, McapWriter) or writer.compression_mode ==
                    CompressionMode.MESSAGE or connection not in writer.connections):
                for timestamp, row in zip(timestamps.tolist(), rows):
                    writer.write(connection, timestamp, row.data)
                return
            times = np.asarray(timestamps, dtype=np.int64)
            if not len(times):
                return
            _mcap_records(storage, connection.id, times, rows)
            writer.counts[connection.id] += len(rows)
            writer.min_timestamp = min(writer.min_timestamp, int(times.min()))
            writer.max_timestamp = max(writer.max_timestamp, int(times.max()))

    def flush(self):
        """Make every message written so far durable (SQLite3: commit; MCAP: close the chunk)."""
        with self._lock:
            storage = self._writer.storage
            if storage is None:
                return
            if hasattr(storage, "conn"):                    # rosbags' Sqlite3Writer
                storage.conn.commit()
            elif storage.chunk.msgs:                        # rosbags' McapWriter
                storage.close_chunk()
                storage.bio.flush()

    def _flush_every(self, period: float):
        while not self._stop.wait(period):
            try:
                self.flush()
            except Exception:  # noqa: BLE001 -- a full disk: close() will say so
                return

    def _stop_flushing(self):
        self._stop.set()
        if self._flusher is not None and self._flusher is not threading.current_thread():
            self._flusher.join()

    def close(self):
        self._stop_flushing()
        with self._lock:
            self._writer.close()

    def abort(self):
        self._stop_flushing()
        with self._lock:
            self._writer.abort()


def _mcap_records(storage, channel: int, times: np.ndarray, rows: np.ndarray):
    """
    Append MCAP message records (op 0x05) to rosbags' pending chunk, as its ``write`` would.

    A record: op (1 byte), uint64 length, uint16 channel id, uint32 sequence (0), uint64 log and
    publish time (both the timestamp), the data (MCAP specification, "Message").  Its chunk is
    closed after the write that takes it past 1 MiB, as rosbags' ``McapWriter.write`` does.
    """
    size = rows.shape[1]
    record = np.dtype([("op", "u1"), ("length", "<u8"), ("channel", "<u2"), ("sequence", "<u4"),
                       ("log_time", "<u8"), ("publish_time", "<u8"), ("data", "u1", (size,))])
    out = np.zeros(len(rows), dtype=record)
    out["op"], out["length"], out["channel"] = 0x05, record.itemsize - 9, channel
    out["log_time"] = out["publish_time"] = times
    out["data"] = rows
    storage.message_start_time = min(storage.message_start_time, int(times.min()))
    storage.message_end_time = max(storage.message_end_time, int(times.max()))
    storage.channel_stats[channel] += len(rows)
    start = 0
    while start < len(rows):
        chunk = storage.chunk
        position = chunk.bio.tell()
        # records until the one that ends past 1 MiB, that one included (then the chunk closes)
        fit = max(0, (2**20 - position) // record.itemsize) + 1
        stop = min(len(rows), start + fit)
        part = times[start:stop]
        chunk.message_start_time = min(chunk.message_start_time, int(part.min()))
        chunk.message_end_time = max(chunk.message_end_time, int(part.max()))
        offsets = position + record.itemsize * np.arange(stop - start)
        chunk.msgs[channel].extend(zip(part.tolist(), offsets.tolist()))
        chunk.bio.write(out[start:stop].tobytes())
        if chunk.bio.tell() > 2**20:
            storage.close_chunk()
        start = stop


def _sqlite_for_any_thread(storage):
    """
    Reopen rosbags' SQLite3 connection so that any thread may use it (under BagWriter's lock).

    rosbags opens it with Python's default ``check_same_thread``: a recorder whose callbacks run
    in another thread than the one that opened the bag failed with "SQLite objects created in a
    thread can only be used in that same thread" (the demo with ``--storage sqlite3``).  The
    schema rosbags created is committed; nothing else was written yet.
    """
    storage.conn.commit()
    storage.conn.close()
    storage.conn = sqlite3.connect(f"file:{storage.path}", uri=True, check_same_thread=False)
    storage.cursor = storage.conn.cursor()
