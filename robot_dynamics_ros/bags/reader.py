"""
Reading bags as rosbag2 reads them: every message, in order, or an error that says why not.

``open_bag`` opens a rosbag2 directory (``metadata.yaml`` plus its MCAP or SQLite3 files, split
or not, compressed per file or per message with zstd) or a bare ``.mcap`` / ``.db3`` file with
rosbags and returns a :class:`BagReader`.  What it adds to rosbags (0.11.9):

* **Every message the storage holds.**  rosbags' DirectoryReader hands out a storage file's
  messages only for connections whose QoS profiles, parsed from the file, equal those parsed
  from metadata.yaml; rosbag2 of Foxy and Humble wrote the two differently (infinite durations as
  0 in one, as 2147483647 s in the other), so rosbags reads such a bag as empty while rosbag2
  plays it.  Here a storage connection belongs to the metadata topic of the same name and type,
  whatever its QoS text (rosbag2's SequentialReader matches topics by name as well).
* **Counts checked.**  Before reading a topic, the messages its storage files hold (SQLite3:
  counted; MCAP: the summary's statistics or chunk indexes) are compared with what metadata.yaml
  promises, and after reading, the messages read: fewer is a BagError naming the bag, the topic
  and both counts (``robot-dynamics bag recover`` rebuilds the metadata of a bag whose recording
  was cut short); more is a :class:`BagWarning`.
* **Names** of topics with or without the leading slash (rosbag2's own test bags have ``AAA``).
* **Errors**: a missing or unreadable bag, a metadata.yaml larger than ``MAX_METADATA_BYTES``,
  a damaged storage file: one :class:`~robot_dynamics_ros.core.errors.BagError` naming the bag
  (and where it is known the file, topic and message index), never a traceback.

Message order is rosbags' and rosbag2's: storage files in metadata order, each in time order.
"""
from __future__ import annotations

import warnings
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from rosbags.rosbag2 import Reader
from rosbags.rosbag2.reader import DirectoryReader

from ..core.errors import BagError

# metadata.yaml of a bag with 10,000 topics and 10,000 split files is ~4 MB; rosbags parses YAML
# at ~3 s per MB (a 40 MB one took 121 s to be refused), so anything larger is refused unread.
MAX_METADATA_BYTES = 8 * 1024 * 1024
STORAGE_IDS = {".mcap": "mcap", ".db3": "sqlite3"}


class BagWarning(UserWarning):
    """A bag is readable but not as its metadata says (e.g. more messages than listed)."""


def _decompress(data):
    from rosbags.rosbag2.reader import zstd      # rosbags' own zstd binding
    return zstd.decompress(data)


class BagReader:
    """An open bag (see the module docstring); use :func:`open_bag`."""

    def __init__(self, path: Path, reader: Reader):
        self.path, self.reader = path, reader
        storage = reader.storage
        self._directory = storage if isinstance(storage, DirectoryReader) else None
        self.connections = list(reader.connections)
        self._maps = []                 # per storage file: {storage connection id: connection}
        self._files = None
        self.held = Counter()           # connection id -> messages its storage files hold
        if self._directory is not None:
            self._match_storage_connections()
        else:
            self.held.update({c.id: c.msgcount for c in self.connections})

    def _match_storage_connections(self):
        """Map each storage file's connections onto metadata's by topic and type (not QoS)."""
        by_name: dict[tuple, list] = {}
        for c in self.connections:
            by_name.setdefault((c.topic, _type_name(c.msgtype)), []).append(c)
        unlisted = set()
        for storage in self._directory.storages:
            mapping = {}
            for x in storage.connections:
                key = (x.topic, _type_name(x.msgtype))
                candidates = by_name.get(key)
                if not candidates:                     # a topic metadata.yaml does not list
                    extra = x._replace(id=len(self.connections) + 1, owner=self._directory)
                    self.connections.append(extra)
                    unlisted.add(extra.id)
                    candidates = by_name[key] = [extra]
                target = next((y for y in candidates if y.ext == x.ext), candidates[0])
                mapping[x.id] = target
                self.held[target.id] += x.msgcount
            self._maps.append(mapping)
        # what metadata.yaml does not list, it does not promise: its count is what is there
        self.connections = [c._replace(msgcount=self.held[c.id]) if c.id in unlisted else c
                            for c in self.connections]
        for c in self.connections:
            if c.id in unlisted and c.msgcount:
                warnings.warn(f"bag {self.path}: topic '{c.topic}' ({c.msgtype}) has "
                              f"{c.msgcount} messages in the storage files but is not in "
                              "metadata.yaml (read all the same)", BagWarning, stacklevel=4)

    # -- what the bag is -------------------------------------------------------------------
    @property
    def storage_id(self) -> str:
        files = self.files
        return STORAGE_IDS.get(Path(files[0].removesuffix(".zstd")).suffix, "") if files else ""

    @property
    def files(self) -> list[str]:
        """Return the storage files, as metadata.yaml lists them (or the bare file)."""
        if self._directory is None:
            return [self.path.name]
        if self._files is None:
            from ruamel.yaml import YAML
            metadata = YAML(typ="safe").load((self.path / "metadata.yaml").read_text())
            self._files = [Path(p).name for p in
                           metadata["rosbag2_bagfile_information"]["relative_file_paths"]]
        return self._files

    @property
    def size_bytes(self) -> int:
        """Bytes of the storage files."""
        base = self.path if self._directory is not None else self.path.parent
        return sum((base / name).stat().st_size for name in self.files
                   if (base / name).is_file())

    @property
    def message_count(self) -> int:
        return self.reader.message_count

    @property
    def start_ns(self) -> int:
        """Start of the bag (metadata's starting time), int ns; 0 for an empty bag."""
        return self.reader.start_time if self.reader.message_count else 0

    @property
    def duration_ns(self) -> int:
        """Return metadata's duration (last message time - first), int ns."""
        return max(0, self.reader.duration - 1) if self.reader.message_count else 0

    @property
    def ros_distro(self) -> str:
        return self.reader.ros_distro or ""

    def count_problems(self, connections=None) -> list[tuple]:
        """List (connection, promised, held) where the storage holds another count."""
        wanted = self.connections if connections is None else connections
        return [(c, c.msgcount, self.held[c.id]) for c in wanted if self.held[c.id] != c.msgcount]

    # -- topics ----------------------------------------------------------------------------
    def has_topic(self, name: str) -> bool:
        """Tell whether the bag has topic ``name`` (with or without the leading slash)."""
        bare = name.lstrip("/")
        return any(c.topic.lstrip("/") == bare for c in self.connections)

    def topic(self, name: str, msgtype: str | None = None) -> list:
        """Return the connections of topic ``name`` (with or without the leading slash)."""
        found = [c for c in self.connections if c.topic == name]
        if not found:
            bare = name.lstrip("/")
            found = [c for c in self.connections if c.topic.lstrip("/") == bare]
        if not found:
            raise BagError(f"bag {self.path}: no topic '{name}' (its topics: "
                           f"{sorted({c.topic for c in self.connections})})")
        wrong = sorted({c.msgtype for c in found if msgtype and c.msgtype != msgtype})
        if wrong:
            raise BagError(f"bag {self.path}: topic '{found[0].topic}' has type {wrong[0]}, "
                           f"expected {msgtype}")
        return found

    # -- messages --------------------------------------------------------------------------
    def messages(self, connections=None):
        """
        Yield (connection, time ns, raw CDR bytes) of ``connections`` (default: all).

        Fewer messages than metadata.yaml promises for a topic: BagError, before the first
        message where the storage says so, else when reading ends.  Damaged data: BagError.
        """
        wanted = list(self.connections if connections is None else connections)
        for c, promised, held in self.count_problems(wanted):
            if held < promised:
                raise self._short(c, promised, held, "its storage files hold")
        read = Counter()
        items = self._items(wanted)
        while True:
            try:
                connection, timestamp, data = next(items)
            except StopIteration:
                break
            except BagError:
                raise
            except Exception as exc:  # noqa: BLE001 -- rosbags, apsw, zstd: the file's fault
                topics = sorted({c.topic for c in wanted})
                raise BagError(f"bag {self.path}: damaged data after message {sum(read.values())}"
                               f" (reading {', '.join(topics)}): {type(exc).__name__}: "
                               f"{exc}") from None
            read[connection.id] += 1
            yield connection, timestamp, data
        self._check_read(wanted, read)

    def _items(self, wanted):
        if self._directory is None:
            yield from self.reader.messages(connections=wanted)
            return
        ids = {c.id for c in wanted}
        compressed = self._directory.metadata.compression_mode == "message"
        for storage, mapping in zip(self._directory.storages, self._maps):
            chosen = [x for x in storage.connections if mapping[x.id].id in ids]
            if not chosen:
                continue
            for x, timestamp, data in storage.messages(chosen):
                yield mapping[x.id], timestamp, _decompress(data) if compressed else data

    def _check_read(self, wanted, read: Counter):
        for c in wanted:
            if read[c.id] < c.msgcount:
                raise self._short(c, c.msgcount, read[c.id], "reading gave")
            if read[c.id] > c.msgcount:
                warnings.warn(f"bag {self.path}: topic '{c.topic}': {read[c.id]} messages, "
                              f"more than the {c.msgcount} its metadata.yaml lists (all read)",
                              BagWarning, stacklevel=3)

    def _short(self, c, promised: int, held: int, what: str) -> BagError:
        return BagError(f"bag {self.path}: topic '{c.topic}': metadata.yaml promises {promised} "
                        f"messages but {what} {held}; refusing to read it as complete (if its "
                        f"recording was cut short: robot-dynamics bag recover {self.path})")


def _type_name(msgtype: str) -> str:
    """``pkg/msg/Name`` of a type also written ``pkg/Name`` (as Dashing-era bags have it)."""
    parts = msgtype.split("/")
    return f"{parts[0]}/msg/{parts[1]}" if len(parts) == 2 else msgtype


def _check_path(path: Path):
    """Refuse (BagError) what is no bag, before rosbags looks at it."""
    if not path.exists():
        partial = sorted(path.parent.glob(f".{path.name}.partial-*")) if path.name else []
        hint = (f" (a recording into it was interrupted and left {partial[0]}: "
                f"robot-dynamics bag recover {partial[0]})") if partial else ""
        raise BagError(f"bag {path}: no such file or directory{hint}")
    if path.is_dir():
        metadata = path / "metadata.yaml"
        if not metadata.exists():
            raise BagError(f"bag {path}: not a rosbag2 bag (no metadata.yaml; a recording that "
                           f"was killed before it finished has none: robot-dynamics bag recover "
                           f"{path} rebuilds it)")
        size = metadata.stat().st_size
        if size > MAX_METADATA_BYTES:
            raise BagError(f"bag {path}: metadata.yaml is {size / 2**20:.1f} MiB, more than the "
                           f"{MAX_METADATA_BYTES / 2**20:.0f} MiB a bag's metadata takes; "
                           "not read")
    elif path.suffix not in STORAGE_IDS:
        raise BagError(f"bag {path}: neither a rosbag2 directory nor a .mcap or .db3 file")


@contextmanager
def open_bag(path):
    """Open the bag at ``path`` for reading (a :class:`BagReader`); BagError if it cannot be."""
    path = Path(path)
    _check_path(path)
    try:
        reader = Reader(path)
        reader.open()
    except Exception as exc:  # noqa: BLE001 -- ReaderError, and from deeper down anything
        raise BagError(f"bag {path}: cannot be read: {type(exc).__name__}: {exc}") from None
    try:
        try:
            bag = BagReader(path, reader)
        except Exception as exc:  # noqa: BLE001 -- storage connections rosbags could not parse
            raise BagError(f"bag {path}: cannot be read: {type(exc).__name__}: {exc}") from None
        yield bag
    finally:
        try:
            reader.close()
        except Exception:  # noqa: BLE001 -- closing a damaged file: nothing left to do
            pass
