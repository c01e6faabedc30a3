"""
``bag recover``: a readable bag from what a killed recording left (rosbag2's ``ros2 bag reindex``).

A recorder killed outright (SIGKILL, out of memory) never closes its bag: there is no
metadata.yaml, an MCAP file has no summary and footer (rosbags refuses it) and may end in the
middle of a chunk, a SQLite3 file may hold a transaction that was never committed (a hot
journal) or pages still in its write-ahead log.  ``bag record`` writes into
``.NAME.partial-PID/NAME`` and makes its messages durable every 0.5 s (``storage.py``), so such a
directory holds everything but the last half second; rosbag2's recorder leaves the same kind of
directory under the bag's own name.

:func:`recover` reads every complete record of each storage file -- MCAP: the records before the
first one cut off, chunks checked against their CRC; SQLite3: a copy of the database with its
journal or log, which SQLite rolls back or replays on opening, read until the first damaged
page -- and writes them, with their topics, types, QoS profiles and message definitions, as a new
bag (same storage) through ``output_bag``.  Messages compressed one by one with zstd (rosbag2's
``--compression-mode message``) are stored decompressed; whole files compressed with zstd are
decompressed first.  The new bag is read back and compared with what was salvaged before the
recorder's partial directory is removed.
"""
from __future__ import annotations

import os
import re
import shutil
import sqlite3
import struct
import tempfile
from contextlib import ExitStack
from io import BytesIO
from pathlib import Path
from typing import NamedTuple

from ..core.errors import BagError
from .reader import STORAGE_IDS, open_bag
from .storage import output_bag
from .types import ensure_type, typestore

MCAP_MAGIC = b"\x89MCAP0\r\n"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_RECORD = struct.Struct("<BQ")                  # MCAP record: opcode, length
_PARTIAL = re.compile(r"\.(?P<name>.+)\.partial-(?P<pid>\d+)")


class Topic(NamedTuple):
    """A salvaged topic (one connection of the new bag)."""

    name: str
    msgtype: str
    serialization_format: str
    qos: tuple                      # rosbags Qos profiles
    msgdef: str                     # message definition ("" if the file has none)
    digest: str                     # type_description_hash ("" if the file has none)


class RecoverReport(NamedTuple):
    """What ``recover`` salvaged."""

    source: str
    output: str
    counts: dict                    # topic -> messages in the new bag
    notes: list                     # what could not be read, and where


def recover(source, output=None, overwrite: bool = False) -> RecoverReport:
    """Write the readable bag ``output`` from the crashed recording ``source`` (module doc)."""
    directory, default, staging = _locate(Path(source))
    output = Path(output) if output else default
    files = _storage_files(directory)
    storage = STORAGE_IDS[Path(files[0].name.removesuffix(".zstd")).suffix]
    notes, topics, counts = [], {}, {}
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bag-recover-")))
        with output_bag(output, storage, overwrite) as writer:
            connections = {}
            for path in files:
                for topic, timestamp, data in _salvage(path, work, notes):
                    if topic not in connections:
                        connections[topic] = _add_connection(writer, topic)
                        topics[topic] = connections[topic]
                        counts[topic.name] = 0
                    if data[:4] == ZSTD_MAGIC:
                        data = _zstd(data)
                    writer.write(connections[topic], timestamp, data)
                    counts[topic.name] += 1
    _check_written(output, counts)
    if staging is not None:
        shutil.rmtree(staging)
        notes.append(f"removed {staging} (everything in it is in {output})")
    return RecoverReport(str(directory), str(output), counts, notes)


def _locate(path: Path):
    """(directory of storage files, default output, the recorder's partial directory or None)."""
    if not path.exists():
        partials = sorted(path.parent.glob(f".{path.name}.partial-*")) if path.name else []
        if not partials:
            raise BagError(f"bag {path}: no such directory, and no interrupted recording of it "
                           f"(.{path.name}.partial-PID)")
        if len(partials) > 1:
            raise BagError(f"bag {path}: several interrupted recordings of it "
                           f"({', '.join(str(p) for p in partials)}); name the one to recover")
        path = partials[0]
    match = _PARTIAL.fullmatch(path.name)
    if match and (path / match["name"]).is_dir():
        pid = int(match["pid"])
        if pid != os.getpid() and _alive(pid):
            raise BagError(f"bag {path}: process {pid} is still recording into it")
        return path / match["name"], path.parent / match["name"], path
    if not path.is_dir():
        raise BagError(f"bag {path}: not a directory of storage files")
    return path, path.with_name(path.name + "_recovered"), None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _split_index(path: Path):
    """Sort key: rosbag2 numbers split files NAME_0, NAME_1, ..."""
    stem = path.name.split(".")[0]
    number = re.search(r"_(\d+)$", stem)
    return (int(number[1]) if number else -1, path.name)


def _storage_files(directory: Path) -> list:
    files = [p for p in directory.iterdir() if p.is_file() and
             Path(p.name.removesuffix(".zstd")).suffix in STORAGE_IDS]
    if not files:
        raise BagError(f"bag {directory}: no .mcap or .db3 storage files to recover")
    kinds = {Path(p.name.removesuffix(".zstd")).suffix for p in files}
    if len(kinds) > 1:
        raise BagError(f"bag {directory}: both MCAP and SQLite3 files ({sorted(kinds)})")
    return sorted(files, key=_split_index)


def _zstd(data: bytes) -> bytes:
    from rosbags.rosbag2.reader import zstd     # rosbags' own zstd binding
    return zstd.decompress(data)


def _salvage(path: Path, work: Path, notes: list):
    """Yield (Topic, time ns, data) of every readable message of one storage file."""
    if path.name.endswith(".zstd"):
        from rosbags.rosbag2.reader import zstd
        plain = work / path.name.removesuffix(".zstd")
        try:
            with path.open("rb") as source, zstd.open(source, "rb") as data, \
                    plain.open("wb") as out:
                shutil.copyfileobj(data, out)
        except Exception as exc:  # noqa: BLE001 -- a cut-off zstd stream: keep what came out
            notes.append(f"{path.name}: decompressed up to {plain.stat().st_size} bytes "
                         f"({type(exc).__name__}: {exc})")
        path = plain
    if path.suffix == ".mcap":
        yield from _salvage_mcap(path, notes)
    else:
        yield from _salvage_sqlite(path, work, notes)


def _add_connection(writer, topic: Topic):
    kwargs = {"serialization_format": topic.serialization_format,
              "offered_qos_profiles": list(topic.qos)}
    if topic.msgdef and topic.digest:
        return writer.add_connection(topic.name, topic.msgtype, msgdef=topic.msgdef,
                                     rihs01=topic.digest, **kwargs)
    ensure_type(topic.msgtype, f"topic '{topic.name}': the file has no definition of its type; ")
    return writer.add_connection(topic.name, topic.msgtype, typestore=typestore(), **kwargs)


def _check_written(output: Path, counts: dict):
    """Read the new bag's counts back: they must be what was salvaged."""
    with open_bag(output) as bag:
        held = {}
        for c in bag.connections:
            held[c.topic] = held.get(c.topic, 0) + c.msgcount
    if held != {t: n for t, n in counts.items()}:
        raise BagError(f"output {output}: holds {held} messages, not the salvaged {counts}")


# ----------------------------------------------------------------------------------------- MCAP
def _salvage_mcap(path: Path, notes: list):
    """Messages of every complete record of an MCAP file (summary and footer not needed)."""
    from rosbags.rosbag2.storage_mcap import decompress
    data = path.read_bytes()
    if not data.startswith(MCAP_MAGIC):
        notes.append(f"{path.name}: not an MCAP file (no magic); skipped")
        return
    schemas, channels = {}, {}
    offset, count = len(MCAP_MAGIC), 0
    while offset + _RECORD.size <= len(data):
        op, length = _RECORD.unpack_from(data, offset)
        body = offset + _RECORD.size
        if op in (0x02, 0x0F) or body + length > len(data):     # footer, data end, cut off
            break
        record = data[body:body + length]
        offset = body + length
        if op != 0x06:
            for item in _mcap_record(op, record, schemas, channels):
                count += 1
                yield item
            continue
        try:                                                    # a chunk of records
            inner = _chunk_records(record, decompress)
        except Exception as exc:  # noqa: BLE001 -- CRC, size or compression error
            notes.append(f"{path.name}: a damaged chunk at byte {offset - length} skipped "
                         f"({type(exc).__name__}: {exc})")
            continue
        for op, record in inner:
            for item in _mcap_record(op, record, schemas, channels):
                count += 1
                yield item
    if offset + _RECORD.size <= len(data) and data[offset] not in (0x02, 0x0F):
        notes.append(f"{path.name}: ends in a record cut off at byte {offset} of {len(data)} "
                     f"(after {count} messages): the part never written is lost")


def _chunk_records(record: bytes, decompress):
    """Return the (opcode, body) records inside an MCAP chunk, decompressed, CRC checked."""
    _, _, size, crc = struct.unpack_from("<QQQI", record, 0)
    (name_length,) = struct.unpack_from("<I", record, 28)
    compression = record[32:32 + name_length].decode()
    position = 32 + name_length
    (compressed_size,) = struct.unpack_from("<Q", record, position)
    compressed = record[position + 8:position + 8 + compressed_size]
    if len(compressed) != compressed_size:
        raise ValueError("compressed records cut off")
    plain = decompress(compressed, compression, size, crc)
    out, offset = [], 0
    while offset + _RECORD.size <= len(plain):
        op, length = _RECORD.unpack_from(plain, offset)
        out.append((op, plain[offset + _RECORD.size:offset + _RECORD.size + length]))
        offset += _RECORD.size + length
    return out


def _mcap_record(op: int, record: bytes, schemas: dict, channels: dict):
    """Remember a schema or channel; yield (Topic, time, data) for a message."""
    from rosbags.rosbag2.storage_mcap import get_qos, read_bytes, read_string
    if op == 0x03:                                              # schema
        stream = BytesIO(record)
        key = struct.unpack("<H", stream.read(2))[0]
        schemas[key] = (read_string(stream), read_string(stream), read_string(stream))
    elif op == 0x04:                                            # channel
        stream = BytesIO(record)
        key, schema = struct.unpack("<HH", stream.read(4))
        topic, encoding, metadata = read_string(stream), read_string(stream), read_bytes(stream)
        name, _, text = schemas.get(schema, ("", "", ""))
        channels[key] = Topic(topic, name, encoding, tuple(get_qos(metadata)), text,
                              _metadata_value(metadata, "type_description_hash") or "")
    elif op == 0x05:                                            # message
        channel, _, log_time, _ = struct.unpack_from("<HIQQ", record, 0)
        if channel in channels:
            yield channels[channel], log_time, record[22:]


def _metadata_value(metadata: bytes, key: str) -> str | None:
    from rosbags.rosbag2.storage_mcap import read_string
    stream = BytesIO(metadata)
    while stream.tell() < len(metadata):
        name, value = read_string(stream), read_string(stream)
        if name == key:
            return value
    return None


# -------------------------------------------------------------------------------------- SQLite3
def _salvage_sqlite(path: Path, work: Path, notes: list):
    """Messages of a SQLite3 file, from a copy that SQLite rolls back or replays on opening."""
    from rosbags.rosbag2.metadata import parse_qos
    copy = work / f"{len(list(work.iterdir()))}_{path.name}"
    for suffix in ("", "-journal", "-wal", "-shm"):
        if Path(f"{path}{suffix}").exists():
            shutil.copyfile(f"{path}{suffix}", f"{copy}{suffix}")
    count, connection = 0, None
    try:
        connection = sqlite3.connect(copy)
        columns = {row[1] for row in connection.execute("PRAGMA table_info(topics)")}
        definitions = {}
        if connection.execute("SELECT name FROM sqlite_master WHERE type='table' AND "
                              "name='message_definitions'").fetchone():
            definitions = {row[0]: row[1] for row in connection.execute(
                "SELECT topic_type, encoded_message_definition FROM message_definitions")}
        wanted = [c if c in columns else "''" for c in ("offered_qos_profiles",
                                                        "type_description_hash")]
        topics = {}
        for key, name, msgtype, fmt, qos, digest in connection.execute(
                f"SELECT id, name, type, serialization_format, {wanted[0]}, {wanted[1]} "
                "FROM topics"):
            topics[key] = Topic(name, msgtype, fmt, tuple(parse_qos(qos or "")),
                                definitions.get(msgtype, ""), digest or "")
        for key, timestamp, data in connection.execute(
                "SELECT topic_id, timestamp, data FROM messages ORDER BY timestamp, id"):
            if key in topics:
                count += 1
                yield topics[key], timestamp, bytes(data)
    except sqlite3.DatabaseError as exc:
        notes.append(f"{path.name}: damaged after {count} messages ({exc}); the rest is lost")
    finally:
        if connection is not None:
            connection.close()
