"""Cleaning rules for user-interface text pairs (gettext messages, package descriptions).

Every rule treats the source and the target the same way:
- accelerator marks: `_File`, `Sa_ve`, `&File`, `~File` lose the mark on both sides (a mark is
  one '_', '&' or '~' before a letter or digit, in a word holding no other such mark; an
  underscore word that occurs on both sides, like `file_name`, is an identifier and stays;
  '&name;' entities and '&&' stay).
- placeholders: printf directives (%s, %2$d, %-10lu; the position is ignored), Python
  %(name)s, Qt %1, brace fields {0} {name} {} {0:.2f}, and $VAR / ${VAR}: the pair is dropped
  unless both sides hold the same multiset.
- markup: tags are kept where both sides hold the same multiset of tag names (<b>, </b>,
  <a href=...> as 'a'); a pair whose tags differ is dropped.
- long texts: split at blank lines into paragraphs, then into sentences, where both sides give
  the same number of pieces; otherwise kept whole (and the length limit may drop it).
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import List, Tuple

_PRINTF = (r"%(?:\d+\$)?[-+#0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?"
           r"(?:hh|h|ll|l|L|q|j|z|t|I64|I32)?[diouxXeEfFgGaAcspnmCS]")
_PLACEHOLDER_RE = re.compile(
    r"%%"
    r"|%\([A-Za-z_][A-Za-z0-9_]*\)[-+#0]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]"
    r"|" + _PRINTF +
    r"|%\d{1,2}(?![\d$])"
    r"|\{\{?[A-Za-z0-9_.]*(?::[^{}]*)?\}?\}"
    r"|\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*")
_POSITION_RE = re.compile(r"^%\d+\$")
_TAG_RE = re.compile(r"</?([A-Za-z][A-Za-z0-9:-]*)(?:\s[^<>]*)?/?>")


def placeholders(text: str) -> Counter:
    out: Counter = Counter()
    for m in _PLACEHOLDER_RE.finditer(text):
        tok = m.group(0)
        if tok == "%%":
            continue
        out[_POSITION_RE.sub("%", tok)] += 1
    return out


def without_placeholders(text: str) -> str:
    return _PLACEHOLDER_RE.sub("", text)


def is_format_only(text: str) -> bool:
    """True when no letter is left once placeholders and tags are removed ("%s: %s")."""
    return not any(ch.isalpha() for ch in _TAG_RE.sub("", without_placeholders(text)))


def tags(text: str) -> Counter:
    return Counter(("/" if m.group(0).startswith("</") else "") + m.group(1).lower()
                   for m in _TAG_RE.finditer(text))


# ---------------------------------------------------------------- accelerators

_WORD_RE = re.compile(r"[\w&~]+")


def _accel_positions(text: str, other: str, mark: str) -> List[int]:
    out = []
    for m in _WORD_RE.finditer(text):
        word = m.group(0)
        if word.count(mark) != 1:
            continue
        i = word.index(mark)
        if i + 1 >= len(word) or not word[i + 1].isalnum():
            continue
        start = m.start() + i
        if mark == "&":
            if re.match(r"&(?:[A-Za-z]+|#\d+|#x[0-9A-Fa-f]+);", text[start:]):
                continue  # an entity
            if start > 0 and text[start - 1] == "&":
                continue
        if mark == "~" and start > 0 and text[start - 1] in "/\\":
            continue
        if mark == "_" and re.search(r"(?<!\w)" + re.escape(word) + r"(?!\w)", other):
            continue  # the same identifier on both sides
        if mark == "_" and word.isupper():
            continue  # CONSTANT_NAME
        out.append(start)
    return out


def strip_accelerators(src: str, tgt: str) -> Tuple[str, str, bool]:
    """Removes accelerator marks from both sides; returns (src, tgt, whether any was found)."""
    found = False
    for mark in ("_", "&", "~"):
        ps, pt = _accel_positions(src, tgt, mark), _accel_positions(tgt, src, mark)
        if not ps and not pt:
            continue
        if mark == "&" and not ps:
            continue  # a target '&' alone is the word 'and', not a mark
        found = True
        src = "".join(ch for i, ch in enumerate(src) if i not in set(ps))
        tgt = "".join(ch for i, ch in enumerate(tgt) if i not in set(pt))
    return src, tgt, found


# ---------------------------------------------------------------- sentences

# The abbreviations after which "." ends no sentence: schema/sentence_abbreviations.txt, the list
# the runtime's sentence splitter (runtime/src/sentences.cc) is built with too.
ABBREVIATIONS_FILE = Path(__file__).resolve().parents[3] / "schema" / "sentence_abbreviations.txt"
_ABBREV_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz.") | frozenset(
    chr(c) for c in range(0xE0, 0xFF) if c != 0xF7)


def _read_abbreviations(path: Path) -> frozenset:
    words = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        word = line.strip()
        if not word or word.startswith("#"):
            continue
        if not set(word) <= _ABBREV_CHARS:
            raise ValueError(f"{path}:{n}: {word!r}: an abbreviation is made of a-z, '.' and "
                             "U+00E0-U+00FE but U+00F7 (the runtime compares only those)")
        words.add(word)
    return frozenset(words)


_ABBREV = _read_abbreviations(ABBREVIATIONS_FILE)
_BOUNDARY_RE = re.compile(r"([.!?…])([\"'»«“”’)\]]*)\s+(?=[\"'„“«»‚(\[]*[A-ZÄÖÜÀ-ÖØ-Þ0-9])")


def split_sentences(text: str) -> List[str]:
    """Splits normalised text after . ! ? … followed by a space and an upper-case letter or
    digit; not after a known abbreviation, a single letter or a number ("z. B.", "1.")."""
    out, start = [], 0
    for m in _BOUNDARY_RE.finditer(text):
        if m.group(1) == ".":
            before = text[start:m.start()].rsplit(None, 1)
            word = before[-1] if before else ""
            bare = word.lstrip("(\"'„“«").lower()
            if len(bare) <= 1 or bare in _ABBREV or bare[-1:].isdigit() or "." in bare[-2:]:
                continue
        out.append(text[start:m.end(2)].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def normalize_ws(text: str) -> str:
    return " ".join(text.split())


_PARA_RE = re.compile(r"\n[ \t]*\n")


def split_pair(src: str, tgt: str) -> List[Tuple[str, str]]:
    """Paragraphs, then sentences, paired where both sides give the same count; whitespace
    normalised. Returns at least one pair (the whole texts when nothing pairs up)."""
    ps, pt = _PARA_RE.split(src.strip()), _PARA_RE.split(tgt.strip())
    if len(ps) != len(pt):
        ps, pt = [src], [tgt]
    out = []
    for a, b in zip(ps, pt):
        a, b = normalize_ws(a), normalize_ws(b)
        sa, sb = split_sentences(a), split_sentences(b)
        if len(sa) == len(sb) and len(sa) > 1:
            out.extend(zip(sa, sb))
        else:
            out.append((a, b))
    return out


_TECHNICAL_RE = re.compile(r"^[a-z0-9]+(?:[-_.:/][a-z0-9]+)+$")


def is_technical(src: str) -> bool:
    """Message keys rather than text: 'translator-credits', 'org.gnome.Foo', 'gtk-ok'."""
    return bool(_TECHNICAL_RE.match(src.lower())) and " " not in src


def length_ratio_ok(src: str, tgt: str, lo: float, hi: float) -> bool:
    """(len(tgt)+8) / (len(src)+8) within [lo, hi]: the +8 keeps short labels from tripping."""
    r = (len(tgt) + 8) / (len(src) + 8)
    return lo <= r <= hi
