"""Reader for GNU gettext binary message catalogs (.mo files).

Format (GNU gettext manual, "The Format of GNU MO Files"):
    offset 0   magic 0x950412de (the byte order of the file follows from how it reads)
    offset 4   file format revision (major revision 0 or 1 are understood)
    offset 8   N, number of strings
    offset 12  O, offset of the table with original strings
    offset 16  T, offset of the table with translated strings
    (hash table size/offset follow; not needed for reading)
Each table holds N (length, offset) pairs of 32-bit integers pointing at NUL-terminated
strings. An original may be "msgctxt\\x04msgid" (context) and/or "msgid\\0msgid_plural";
its translation is then "msgstr[0]\\0msgstr[1]...". Entry with an empty msgid is the header.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import List, Optional

MAGIC = 0x950412DE


class MoFormatError(ValueError):
    """A .mo file is malformed; the message names the file and what was wrong."""


@dataclass(frozen=True)
class MoEntry:
    msgid: str             # singular source string, context stripped
    msgstr: str            # singular (msgstr[0]) translation
    context: Optional[str]  # msgctxt when present
    plural: bool            # True when the entry had plural forms


@dataclass
class MoCatalog:
    path: str
    charset: str
    entries: List[MoEntry]
    skipped_undecodable: int


_CHARSET_RE = re.compile(r"charset=([A-Za-z0-9_\-.:]+)", re.IGNORECASE)


def _charset_from_header(header: bytes) -> str:
    m = _CHARSET_RE.search(header.decode("ascii", errors="replace"))
    if not m or m.group(1).upper() == "CHARSET":
        return "utf-8"
    return m.group(1)


def parse_mo(data: bytes, path: str = "<bytes>") -> MoCatalog:
    """Parses the bytes of a .mo file. Raises MoFormatError on any structural problem."""
    if len(data) < 20:
        raise MoFormatError(f"{path}: expected at least 20 bytes of .mo header, found {len(data)}")
    for endian in ("<", ">"):
        if struct.unpack(endian + "I", data[:4])[0] == MAGIC:
            break
    else:
        raise MoFormatError(
            f"{path}: expected .mo magic 0x950412de, found 0x{struct.unpack('<I', data[:4])[0]:08x}")
    revision, n, orig_off, trans_off = struct.unpack(endian + "4I", data[4:20])
    if (revision >> 16) not in (0, 1):
        raise MoFormatError(f"{path}: expected major revision 0 or 1, found {revision >> 16}")
    for name, off in (("original", orig_off), ("translation", trans_off)):
        if off + 8 * n > len(data):
            raise MoFormatError(
                f"{path}: {name} table of {n} entries at offset {off} runs past the end of the "
                f"file ({len(data)} bytes)")

    def read_table(off: int) -> List[bytes]:
        out = []
        for i in range(n):
            length, start = struct.unpack(endian + "2I", data[off + 8 * i: off + 8 * i + 8])
            if start + length > len(data):
                raise MoFormatError(
                    f"{path}: string {i} at offset {start} with length {length} runs past the "
                    f"end of the file ({len(data)} bytes)")
            out.append(data[start:start + length])
        return out

    originals = read_table(orig_off)
    translations = read_table(trans_off)

    charset = "utf-8"
    for o, t in zip(originals, translations):
        if o == b"":
            charset = _charset_from_header(t)
            break
    try:
        "".encode(charset)
    except LookupError:
        raise MoFormatError(f"{path}: header names unknown charset {charset!r}")

    entries: List[MoEntry] = []
    skipped = 0
    for o, t in zip(originals, translations):
        if o == b"":
            continue  # the header entry
        try:
            src = o.decode(charset)
            tgt = t.decode(charset)
        except UnicodeDecodeError:
            skipped += 1
            continue
        context = None
        if "\x04" in src:
            context, src = src.split("\x04", 1)
        plural = "\x00" in src
        src = src.split("\x00", 1)[0]
        tgt = tgt.split("\x00", 1)[0]
        entries.append(MoEntry(src, tgt, context, plural))
    return MoCatalog(path, charset, entries, skipped)


def read_mo(path: str) -> MoCatalog:
    with open(path, "rb") as f:
        return parse_mo(f.read(), path)
