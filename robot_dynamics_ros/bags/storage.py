"""
Opening bags for reading and writing them so that nothing half-written is ever left behind.

Bags are rosbag2 directories (``metadata.yaml`` plus MCAP or SQLite3 files, what ``ros2 bag``
reads and writes) handled by the ``rosbags`` library; a single ``.mcap`` file can be read too.

* :func:`open_bag` -- a rosbags ``Reader``, every way a bag can be unusable turned into a
  :class:`~robot_dynamics_ros.core.errors.BagError` that names the bag and what is wrong.
* :func:`output_bag` -- a rosbags ``Writer`` on a temporary directory next to the target, renamed
  to the target only when the bag is complete (an error or Ctrl-C in between removes it, unless
  ``keep_interrupted``: a recording stopped by Ctrl-C is a complete bag); an existing target is
  refused unless ``overwrite``.
* :func:`messages` -- the reader's messages with read errors (a truncated or corrupt storage file)
  turned into BagError as well.
"""
from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.rosbag2.errors import ReaderError, WriterError

from ..core.errors import BagError

STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
DEFAULT_STORAGE = "mcap"            # rosbag2's default since Iron
BAG_VERSION = 9                     # rosbag2 metadata version of Jazzy and Kilted
# What rosbags and the storage libraries raise on damaged files: ReaderError, and from deeper down
# anything from struct.error and sqlite3.DatabaseError to OverflowError (a garbage length).  Only
# the calls that read a bag are wrapped, so these are the file's fault.
_READ_ERRORS = (ReaderError, Exception)


@contextmanager
def open_bag(path):
    """Open the bag at ``path`` for reading (a rosbags Reader); BagError if it cannot be used."""
    path = Path(path)
    if not path.exists():
        raise BagError(f"bag {path}: no such file or directory")
    if path.is_dir() and not (path / "metadata.yaml").exists():
        raise BagError(f"bag {path}: not a rosbag2 bag (no metadata.yaml; a recording that was "
                       "killed before it finished has none)")
    try:
        reader = Reader(path)
        reader.open()
    except _READ_ERRORS as exc:
        raise BagError(f"bag {path}: cannot be read: {type(exc).__name__}: {exc}") from None
    try:
        yield reader
    finally:
        try:
            reader.close()
        except _READ_ERRORS:
            pass


def messages(reader, connections=None):
    """Yield (connection, timestamp ns, raw CDR bytes) in time order; BagError on damaged data."""
    iterator = reader.messages(connections=connections) if connections is not None \
        else reader.messages()
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            return
        except _READ_ERRORS as exc:
            raise BagError(f"bag {reader.path}: damaged data: {type(exc).__name__}: "
                           f"{exc}") from None
        yield item


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
               keep_interrupted: bool = False):
    """
    Yield an open rosbags Writer that becomes the bag ``path`` when the block completes.

    The bag is written to a temporary directory next to ``path`` and renamed when closed; an
    exception in the block removes it (a KeyboardInterrupt closes and keeps it if
    ``keep_interrupted``, then re-raises).  ``overwrite`` replaces an existing bag at ``path``.
    """
    path = check_output(path, overwrite)
    plugin = storage_plugin(storage)
    # staging/<name>: the storage file inside is named after the bag, as rosbag2 names it
    staging = path.parent / f".{path.name}.partial-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    partial = staging / path.name
    writer = Writer(partial, version=BAG_VERSION, storage_plugin=plugin)
    try:
        staging.mkdir()
        writer.open()
    except (WriterError, OSError) as exc:
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
