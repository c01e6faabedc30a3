"""
``bag recover``: a readable bag from what a killed recording left (rosbag2's ``ros2 bag reindex``).

A recorder killed outright (SIGKILL, out of memory) never closes its bag: there is no
metadata.yaml, an MCAP file has no summary and footer (rosbags refuses it) and may end in the
middle of a chunk, a SQLite3 file may hold a transaction that was never committed (a hot
journal) or pages still in its write-ahead log.  ``bag record`` writes into
``.NAME.partial-PID/NAME`` and makes its messages durable every 0.5 s (``storage.py``), so such a
directory holds everything but the last half second; rosbag2's recorder leaves the same kind of
directory under the bag's own name.

:func:`recover` keeps every whole message that reached the disk -- MCAP: every whole record,
a chunk cut off by the end of the file read record by record up to the cut (decompressed as far
as its zstd stream goes; a cut lz4 chunk is lost whole), whole chunks checked against their CRC;
SQLite3: a copy of the database with its journal or log, which SQLite rolls back or replays on
opening, read by SQLite until the first damaged or missing page, then the rest of the messages
table from every table page still in the file (``sqlite_pages.py``) -- and writes them, with
their topics, types, QoS profiles and message definitions, as a new bag (same storage) through
``output_bag``.  A directory whose files hold no whole message is an error (BagError), and no
output is written.  Messages compressed one by one with zstd (rosbag2's
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
import zlib
from contextlib import ExitStack
from io import BytesIO
from pathlib import Path
from typing import NamedTuple

from ..core.errors import BagError
from .reader import STORAGE_IDS, open_bag
from .sqlite_pages import SqliteFile
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
                        try:
                            connections[topic] = _add_connection(writer, topic)
                        except BagError as exc:     # a type without its definition
                            raise BagError(f"bag {directory}: {exc}") from None
                        topics[topic] = connections[topic]
                        counts[topic.name] = 0
                    if data[:4] == ZSTD_MAGIC:
                        data = _zstd(data)
                    writer.write(connections[topic], timestamp, data)
                    counts[topic.name] += 1
            if not sum(counts.values()):            # raised inside: no output left behind
                why = "; ".join(notes) or f"{', '.join(p.name for p in files)}: no message"
                raise BagError(f"bag {directory}: nothing to recover ({why})")
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
# Records a chunk may hold (MCAP specification, "Chunk"): schema, channel, message.
_CHUNK_OPCODES = (0x03, 0x04, 0x05)


def _salvage_mcap(path: Path, notes: list):
    """
    Messages of every whole record of an MCAP file (summary and footer not needed).

    A chunk is read record by record: a chunk cut off by the end of the file (a recorder killed
    while writing it, a file cut short) gives every whole record before the cut -- decompressed
    as far as the compressed bytes go (zstd and lz4 frames stream block by block).
    """
    data = path.read_bytes()
    if not data.startswith(MCAP_MAGIC):
        notes.append(f"{path.name}: not an MCAP file (no magic); skipped")
        return
    schemas, channels = {}, {}
    offset, count, problem = len(MCAP_MAGIC), 0, None
    while offset + _RECORD.size <= len(data):
        op, length = _RECORD.unpack_from(data, offset)
        body = offset + _RECORD.size
        if op in (0x02, 0x0F):                                  # data end, footer: done
            break
        if op == 0x00:
            problem = f"no record at byte {offset} (zeros)"
            break
        if op != 0x06 and body + length > len(data):
            problem = f"a record cut off at byte {offset}"
            break
        if op == 0x06:                                          # a chunk of records
            records, problem = _chunk_records(data[body:body + length], length, offset)
        else:
            records = [(op, data[body:body + length])]
        for inner_op, record in records:
            try:
                items = list(_mcap_record(inner_op, record, schemas, channels))
            except Exception as exc:  # noqa: BLE001 -- damaged bytes: struct, UTF-8, rosbags
                notes.append(f"{path.name}: a damaged record near byte {offset} skipped "
                             f"({type(exc).__name__}: {exc})")
                continue
            count += len(items)
            yield from items
        offset = body + length
        if problem is not None and offset >= len(data):
            break                                               # the chunk was cut off
        if problem is not None:                                 # a damaged chunk: go on
            notes.append(f"{path.name}: {problem}")
            problem = None
    else:
        if offset < len(data):
            problem = f"a record cut off at byte {offset}"
    if problem is not None:
        notes.append(f"{path.name}: {problem} of {len(data)} (after {count} messages): "
                     "the part never written is lost")


def _chunk_records(record: bytes, length: int, where: int):
    """Return (the whole (opcode, body) records of an MCAP chunk, what was wrong or None)."""
    head = struct.Struct("<QQQI")
    if len(record) < head.size + 4:
        return [], f"a chunk cut off in its header at byte {where}"
    _, _, size, crc = head.unpack_from(record, 0)
    (name_length,) = struct.unpack_from("<I", record, head.size)
    position = head.size + 4 + name_length
    if len(record) < position + 8:
        return [], f"a chunk cut off in its header at byte {where}"
    compression = record[head.size + 4:position].decode(errors="replace")
    (compressed_size,) = struct.unpack_from("<Q", record, position)
    compressed = record[position + 8:position + 8 + compressed_size]
    whole = len(record) == length and len(compressed) == compressed_size
    try:
        plain = _decompress(compressed, compression, whole)[:size]
    except Exception as exc:  # noqa: BLE001 -- a corrupt stream: nothing of it is trusted
        return [], f"a damaged chunk at byte {where} skipped ({type(exc).__name__}: {exc})"
    if whole and len(plain) == size and crc and zlib.crc32(plain) != crc:
        return [], f"a chunk at byte {where} skipped (its CRC does not match)"
    problem = None if whole and len(plain) == size else f"a chunk cut off at byte {where}"
    out, offset = [], 0
    while offset + _RECORD.size <= len(plain):
        op, record_length = _RECORD.unpack_from(plain, offset)
        end = offset + _RECORD.size + record_length
        if op not in _CHUNK_OPCODES or end > len(plain):
            problem = problem or f"a chunk at byte {where} damaged after {len(out)} records"
            break
        out.append((op, plain[offset + _RECORD.size:end]))
        offset = end
    return out, problem


def _decompress(compressed: bytes, compression: str, whole: bool) -> bytes:
    """Decompress a chunk's records, or as much as a cut-off stream holds (``whole`` False)."""
    if compression == "":
        return compressed
    if compression == "zstd":
        from rosbags.rosbag2.reader import zstd     # rosbags' binding (PEP 784's API)
        if whole:
            return zstd.decompress(compressed)
        return zstd.ZstdDecompressor().decompress(compressed)
    if compression == "lz4":
        # rosbags' lz4 binding decompresses whole frames: a cut-off lz4 chunk is lost whole
        # (streaming it would need lz4's own module, a dependency of rosbags, not of this package)
        from rosbags.rosbag2.storage_mcap import lz4_decompress
        if not whole:
            raise ValueError("an lz4 chunk cut off is not read (only whole lz4 chunks are)")
        return lz4_decompress(compressed)
    raise ValueError(f"unknown chunk compression '{compression}'")


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
    """
    Yield the messages of a SQLite3 file.

    SQLite's own reading of a copy first (it rolls back a hot journal or replays a write-ahead
    log on opening), then, where SQLite finds the file damaged or cut off, every later row of
    the pages still there (``sqlite_pages.py``).
    """
    copy = work / f"{len(list(work.iterdir()))}_{path.name}"
    for suffix in ("", "-journal", "-wal", "-shm"):
        if Path(f"{path}{suffix}").exists():
            shutil.copyfile(f"{path}{suffix}", f"{copy}{suffix}")
    count, last, topics, connection, damage = 0, None, {}, None, None
    try:
        connection = sqlite3.connect(copy)
        topics = _sqlite_topics(connection)
        for key, rowid, timestamp, data in connection.execute(
                "SELECT topic_id, id, timestamp, data FROM messages ORDER BY id"):
            last = rowid
            if key in topics:
                count += 1
                yield topics[key], timestamp, bytes(data)
    except sqlite3.DatabaseError as exc:
        damage = exc
    finally:
        if connection is not None:
            connection.close()
    if damage is None:
        return
    try:
        pages = SqliteFile(copy.read_bytes())
    except ValueError as exc:
        notes.append(f"{path.name}: {exc}")
        return
    topics = topics or _page_topics(pages)
    rows = _page_messages(pages, last)
    kept = 0
    for rowid in sorted(rows):
        key, timestamp, data = rows[rowid]
        if key in topics:
            kept += 1
            yield topics[key], timestamp, data
    notes.append(f"{path.name}: SQLite read {count} messages, then stopped ({damage}); "
                 f"{kept} more read page by page from its {pages.pages} whole pages")


def _sqlite_topics(connection) -> dict:
    """Return {topic id: Topic} of a bag's SQLite3 file."""
    from rosbags.rosbag2.metadata import parse_qos
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
    return topics


def _page_tables(pages: SqliteFile) -> dict:
    """Return {table name: (root page, [column names])} from the schema's pages."""
    tables = {}
    for values in pages.table(1).values():
        if len(values) == 5 and values[0] == "table" and isinstance(values[3], int):
            inside = str(values[4]).partition("(")[2].rpartition(")")[0]
            tables[values[1]] = (values[3], [c.split()[0] for c in inside.split(",")
                                             if c.split()])
    return tables


def _page_topics(pages: SqliteFile) -> dict:
    """Return {topic id: Topic} read page by page (what of the topics table is there)."""
    from rosbags.rosbag2.metadata import parse_qos
    tables = _page_tables(pages)
    definitions = {}
    if "message_definitions" in tables:
        root, names = tables["message_definitions"]
        for values in pages.table(root).values():
            row = dict(zip(names, values))
            definitions[row.get("topic_type")] = row.get("encoded_message_definition") or ""
    topics = {}
    if "topics" in tables:
        root, names = tables["topics"]
        for rowid, values in pages.table(root).items():
            row = dict(zip(names, values))
            topics[rowid] = Topic(row.get("name"), row.get("type"),
                                  row.get("serialization_format"),
                                  tuple(parse_qos(row.get("offered_qos_profiles") or "")),
                                  definitions.get(row.get("type"), ""),
                                  row.get("type_description_hash") or "")
    return topics


def _page_messages(pages: SqliteFile, after) -> dict:
    """Return {id: (topic id, time, data)} of the messages rows after id ``after``, by page."""
    rows = {}
    for number in pages.leaves():
        for rowid, values in pages.leaf_rows(number).items():
            if (after is None or rowid > after) and rowid not in rows and len(values) == 4 \
                    and isinstance(values[1], int) and isinstance(values[2], int) \
                    and isinstance(values[3], bytes) and values[0] in (None, rowid):
                rows[rowid] = (values[1], values[2], values[3])
    return rows
