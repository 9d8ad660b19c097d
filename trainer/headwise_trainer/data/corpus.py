"""Parallel corpus files, and the user-text path (--tsv, --src-file/--tgt-file).

The corpus directory (what `headwise-train spm/train/evaluate` read): train/dev/test.SRC and
.TGT, one UTF-8 line per pair, aligned, plus manifest.json; write_splits writes them. The
Debian corpus is built by corpus_build.py. User text: collect pairs in file order ->
normalise whitespace -> drop empty, identical and format-only pairs -> keep the first pair per
source string -> split by sha1(source) mod 100. Same inputs, byte-identical outputs.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Sequence, Tuple


SPLITS = ("train", "dev", "test")


# Source-length buckets (whitespace words of the source) that the corpus manifest counts and
# that evaluations report BLEU/chrF for: UI labels, short messages, sentences, long help texts.
LENGTH_BUCKETS = ((1, 5), (6, 15), (16, 40), (41, None))


def length_bucket_name(lo: int, hi) -> str:
    return f"{lo}-{hi}" if hi is not None else f">{lo - 1}"


def length_bucket(source: str) -> str:
    """The bucket of a source string by its whitespace word count (0 words count as 1-5)."""
    n = max(len(source.split()), 1)
    for lo, hi in LENGTH_BUCKETS:
        if hi is None or n <= hi:
            return length_bucket_name(lo, hi)
    raise AssertionError("LENGTH_BUCKETS ends with an open bucket")


class DataError(ValueError):
    """Bad corpus input; the message names the file, the line and what was expected."""


@dataclass
class CorpusStats:
    raw_pairs: int = 0
    dropped_empty: int = 0
    dropped_identical: int = 0
    dropped_format_only: int = 0
    dropped_too_long: int = 0
    dropped_duplicate_source: int = 0
    kept: int = 0
    split_counts: Dict[str, int] = field(default_factory=dict)


def normalize_ws(text: str) -> str:
    """Collapses every run of Unicode whitespace (incl. newlines, tabs) to one space; strips."""
    return " ".join(text.split())


# printf directives (%s, %1$d, %-10lu, %%), Python %(name)s, brace fields {0} {name}, and
# shell-style $VAR: what remains after removing them must contain a letter to be worth learning.
_FORMAT_RE = re.compile(
    r"%(?:\d+\$)?[-+ #0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|q|j|z|t|I64|I32)?"
    r"[diouxXeEfFgGaAcspnmCS%]"
    r"|%\([A-Za-z_][A-Za-z0-9_]*\)[-+ #0]*\d*(?:\.\d+)?[diouxXeEfFgGcrs]"
    r"|\{[A-Za-z0-9_]*\}"
    r"|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")


def is_format_only(text: str) -> bool:
    """True when the string has no letter once format directives are removed ("%s: %s")."""
    return not any(ch.isalpha() for ch in _FORMAT_RE.sub("", text))


def split_of(source: str, dev_percent: int, test_percent: int) -> str:
    """Deterministic split from sha1(source utf-8) mod 100: [0,dev) dev, [dev,dev+test) test."""
    bucket = int.from_bytes(hashlib.sha1(source.encode("utf-8")).digest()[:8], "big") % 100
    if bucket < dev_percent:
        return "dev"
    if bucket < dev_percent + test_percent:
        return "test"
    return "train"


def clean_pairs(pairs: Iterable[Tuple[str, str]], max_chars: int,
                stats: CorpusStats) -> List[Tuple[str, str]]:
    """Normalises, filters and deduplicates on the source (first occurrence wins)."""
    seen = set()
    out = []
    for src, tgt in pairs:
        stats.raw_pairs += 1
        src, tgt = normalize_ws(src), normalize_ws(tgt)
        if not src or not tgt:
            stats.dropped_empty += 1
        elif src == tgt:
            stats.dropped_identical += 1
        elif is_format_only(src):
            stats.dropped_format_only += 1
        elif max_chars and (len(src) > max_chars or len(tgt) > max_chars):
            stats.dropped_too_long += 1
        elif src in seen:
            stats.dropped_duplicate_source += 1
        else:
            seen.add(src)
            out.append((src, tgt))
    stats.kept = len(out)
    return out


# ---------------------------------------------------------------- user text

def _read_lines(path: str) -> List[str]:
    if not os.path.isfile(path):
        raise DataError(f"{path}: parallel text file not found")
    with open(path, "rb") as f:
        blob = f.read()
    lines = blob.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for i, raw in enumerate(lines, 1):
        try:
            out.append(raw.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError as e:
            raise DataError(f"{path}:{i}: expected UTF-8 text, found invalid byte "
                            f"0x{raw[e.start]:02x} at column {e.start + 1}") from e
    return out


def _check_nonempty(path: str, lines: Sequence[str], what: str) -> None:
    for i, ln in enumerate(lines, 1):
        if not ln.strip():
            raise DataError(f"{path}:{i}: expected a {what} sentence, found an empty line")


def aligned_pairs(src_file: str, tgt_file: str) -> List[Tuple[str, str]]:
    src, tgt = _read_lines(src_file), _read_lines(tgt_file)
    if len(src) != len(tgt):
        raise DataError(f"misaligned parallel files: {src_file} has {len(src)} lines, "
                        f"{tgt_file} has {len(tgt)}; expected the same number")
    if not src:
        raise DataError(f"{src_file}: expected parallel sentences, found an empty file")
    _check_nonempty(src_file, src, "source")
    _check_nonempty(tgt_file, tgt, "target")
    return list(zip(src, tgt))


def tsv_pairs(tsv_file: str) -> List[Tuple[str, str]]:
    lines = _read_lines(tsv_file)
    if not lines:
        raise DataError(f"{tsv_file}: expected tab-separated sentence pairs, found an empty file")
    out = []
    for i, ln in enumerate(lines, 1):
        fields = ln.split("\t")
        if len(fields) != 2:
            raise DataError(f"{tsv_file}:{i}: expected 2 tab-separated fields (source, target), "
                            f"found {len(fields)}")
        for name, val in zip(("source", "target"), fields):
            if not val.strip():
                raise DataError(f"{tsv_file}:{i}: expected a {name} sentence, found an empty field")
        out.append((fields[0], fields[1]))
    return out


# ---------------------------------------------------------------- writing

def _write_atomic(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        if e.errno == errno.ENOSPC:
            raise DataError(f"disk full (ENOSPC) while writing {path} ({len(data)} bytes): "
                            "free space there and rerun") from e
        raise


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_splits(out_dir: str, splits: Dict[str, List[Tuple[str, str]]], src_lang: str,
                 tgt_lang: str, manifest_extra: dict) -> dict:
    """Writes SPLIT.SRC / SPLIT.TGT (one UTF-8 line per pair) and manifest.json (format,
    languages, per-file sha256, split sizes, and manifest_extra), each atomically."""
    if src_lang == tgt_lang:
        raise DataError(f"source and target language codes must differ, found '{src_lang}' twice")
    os.makedirs(out_dir, exist_ok=True)
    files = {}
    for s in SPLITS:
        for lang, idx in ((src_lang, 0), (tgt_lang, 1)):
            name = f"{s}.{lang}"
            blob = "".join(p[idx] + "\n" for p in splits[s]).encode("utf-8")
            _write_atomic(os.path.join(out_dir, name), blob)
            files[name] = hashlib.sha256(blob).hexdigest()
    manifest = {
        "format": "headwise-corpus/1",
        "source_lang": src_lang,
        "target_lang": tgt_lang,
        "split_sizes": {s: len(splits[s]) for s in SPLITS},
        "files": files,
        **manifest_extra,
    }
    _write_atomic(os.path.join(out_dir, "manifest.json"),
                  (json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
                  .encode("utf-8"))
    return manifest


def write_corpus(out_dir: str, pairs: List[Tuple[str, str]], src_lang: str, tgt_lang: str,
                 dev_percent: int, test_percent: int, stats: CorpusStats,
                 provenance: dict, max_chars: int = 0) -> dict:
    """User text: splits by sha1(source) (split_of) and writes with write_splits."""
    splits: Dict[str, List[Tuple[str, str]]] = {s: [] for s in SPLITS}
    for src, tgt in pairs:
        splits[split_of(src, dev_percent, test_percent)].append((src, tgt))
    stats.split_counts = {s: len(splits[s]) for s in SPLITS}
    return write_splits(out_dir, splits, src_lang, tgt_lang, {
        "split_rule": f"sha1(source utf-8)[:8] big-endian mod 100: <{dev_percent} dev, "
                      f"<{dev_percent + test_percent} test, else train",
        "counts": dict(stats.__dict__),
        "max_chars": max_chars,
        "normalisation": "whitespace runs -> one space, stripped; dropped: empty, source == "
                         "target, source without letters outside format directives, longer "
                         "than max_chars; first pair kept per source",
        **provenance,
    })
