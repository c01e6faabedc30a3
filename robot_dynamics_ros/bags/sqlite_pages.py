"""
The rows of a damaged or cut-off SQLite3 file, read page by page (``bag recover``).

SQLite writes whole pages, so a file cut short (a copy stopped, a disk filled) or with pages
zeroed still holds whole table pages; SQLite itself refuses such a file ("database disk image
is malformed") as soon as a query meets a missing page of the b-tree.  This reader follows the
documented file format (https://www.sqlite.org/fileformat.html, sections 1.3 "The Database
Header", 1.6 "B-tree Pages", 2.1 "Record Format") to read, without SQLite:

* the schema (the b-tree rooted at page 1) and the small tables reachable from their root pages
  (a rosbag2 bag's ``topics`` and ``message_definitions``), as far as their pages are there;
* every row of a table of a given shape from every table-leaf page in the file (a rosbag2
  ``messages`` row: id, topic_id, timestamp, data), whatever interior page is lost; pages on
  the free list are skipped, and a row id seen twice is kept once.

Payloads that spill into overflow pages are followed while those pages are there; a row whose
overflow chain is cut is lost.
"""
from __future__ import annotations

import struct

HEADER = b"SQLite format 3\x00"
LEAF, INTERIOR = 0x0D, 0x05         # table b-tree page types (file format 1.6)


class SqliteFile:
    """A SQLite3 file's bytes, read by page (only the pages wholly in the file)."""

    def __init__(self, data: bytes):
        if not data.startswith(HEADER) or len(data) < 100:
            raise ValueError("not a SQLite3 file (no header)")
        size = struct.unpack_from(">H", data, 16)[0]
        self.page_size = 65536 if size == 1 else size
        if self.page_size < 512 or self.page_size & (self.page_size - 1):
            raise ValueError(f"page size {self.page_size} in the header is not one SQLite uses")
        self.usable = self.page_size - data[20]
        self.data = data
        self.pages = len(data) // self.page_size
        self.free = self._free_pages()

    def page(self, number: int) -> bytes | None:
        """Return page ``number`` (1-based), or None if it is not wholly in the file."""
        if not 1 <= number <= self.pages:
            return None
        return self.data[(number - 1) * self.page_size:number * self.page_size]

    def _free_pages(self) -> set:
        """Return the pages of the free list (what it says of them while its pages are there)."""
        free, trunk = set(), struct.unpack_from(">I", self.data, 32)[0]
        while trunk and trunk not in free:
            page = self.page(trunk)
            if page is None:
                break
            free.add(trunk)
            following, count = struct.unpack_from(">II", page, 0)
            count = min(count, (self.usable - 8) // 4)
            free.update(struct.unpack_from(f">{count}I", page, 8))
            trunk = following
        return free

    def table(self, root: int) -> dict:
        """Return {rowid: values} of the table b-tree at ``root``, from the pages there."""
        rows, todo, seen = {}, [root], set()
        while todo:
            number = todo.pop()
            page = self.page(number)
            if page is None or number in seen:
                continue
            seen.add(number)
            start = 100 if number == 1 else 0
            kind = page[start]
            if kind == LEAF:
                rows.update(self.leaf_rows(number))
            elif kind == INTERIOR:
                try:
                    cells, right = struct.unpack_from(">HxxxI", page, start + 3)
                    pointers = struct.unpack_from(f">{cells}H", page, start + 12)
                    todo += [struct.unpack_from(">I", page, p)[0] for p in pointers] + [right]
                except struct.error:        # a damaged interior page: its children are lost
                    continue
        return rows

    def leaf_rows(self, number: int) -> dict:
        """Return {rowid: values} of table-leaf page ``number`` (empty if it is not one)."""
        page = self.page(number)
        start = 100 if number == 1 else 0
        if page is None or page[start] != LEAF:
            return {}
        rows = {}
        try:
            cells = struct.unpack_from(">H", page, start + 3)[0]
            for pointer in struct.unpack_from(f">{cells}H", page, start + 8):
                rowid, values = self._cell(page, pointer)
                if values is not None:
                    rows[rowid] = values
        except (struct.error, IndexError, ValueError):
            return rows                 # a page that does not parse: what came before it
        return rows

    def leaves(self):
        """Yield the numbers of the table-leaf pages in the file that are not free."""
        for number in range(1, self.pages + 1):
            start = 100 if number == 1 else 0
            if number not in self.free and self.data[(number - 1) * self.page_size + start] \
                    == LEAF:
                yield number

    def _cell(self, page: bytes, pointer: int):
        """(rowid, values) of the table-leaf cell at ``pointer``; values None if cut off."""
        size, pointer = varint(page, pointer)
        rowid, pointer = varint(page, pointer)
        rowid = rowid - (1 << 64) if rowid >= 1 << 63 else rowid
        local = self._local(size)
        payload = page[pointer:pointer + local]
        if local < size:
            payload = self._overflow(payload, struct.unpack_from(">I", page, pointer + local)[0],
                                     size)
            if payload is None:
                return rowid, None
        return rowid, record_values(payload)

    def _local(self, size: int) -> int:
        """Return the bytes of a payload of ``size`` kept on its leaf page (file format 1.6)."""
        usable = self.usable
        if size <= usable - 35:
            return size
        least = (usable - 12) * 32 // 255 - 23
        kept = least + (size - least) % (usable - 4)
        return kept if kept <= usable - 35 else least

    def _overflow(self, payload: bytes, number: int, size: int):
        parts, seen = [payload], set()
        total = len(payload)
        while total < size:
            page = self.page(number)
            if page is None or number in seen:
                return None
            seen.add(number)
            part = page[4:self.usable][:size - total]
            parts.append(part)
            total += len(part)
            number = struct.unpack_from(">I", page, 0)[0]
        return b"".join(parts)


def varint(data: bytes, offset: int):
    """(value, next offset) of the SQLite variable-length integer at ``offset``."""
    value = 0
    for k in range(8):
        byte = data[offset + k]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, offset + k + 1
    return (value << 8) | data[offset + 8], offset + 9


_INTEGERS = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def record_values(payload: bytes) -> list:
    """Return the values of a SQLite record (file format 2.1): None, int, float, bytes, str."""
    header, offset = varint(payload, 0)
    types = []
    while offset < header:
        kind, offset = varint(payload, offset)
        types.append(kind)
    values, offset = [], header
    for kind in types:
        if kind == 0:
            values.append(None)
        elif kind in _INTEGERS:
            width = _INTEGERS[kind]
            values.append(int.from_bytes(payload[offset:offset + width], "big", signed=True))
            offset += width
        elif kind == 7:
            values.append(struct.unpack_from(">d", payload, offset)[0])
            offset += 8
        elif kind in (8, 9):
            values.append(kind - 8)
        elif kind >= 12:
            width = (kind - 12) // 2
            chunk = payload[offset:offset + width]
            if len(chunk) != width:
                raise ValueError("a record cut off")
            values.append(bytes(chunk) if kind % 2 == 0 else chunk.decode(errors="replace"))
            offset += width
        else:
            raise ValueError(f"serial type {kind} is reserved")
    return values
