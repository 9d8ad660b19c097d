"""Parallel corpus: from gettext catalogs of Debian packages or from user-supplied text.

Every path through here is deterministic: the same inputs give byte-identical output files
(and manifest). Pipeline: collect raw pairs in a fixed order -> normalise whitespace -> drop
empty, identical and format-only pairs -> keep the first pair per source string -> split by
sha1(source) mod 100 -> write aligned UTF-8 files plus manifest.json.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .mo_reader import MoFormatError, parse_mo

SPLITS = ("train", "dev", "test")


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


# ---------------------------------------------------------------- gettext catalogs

def read_package_list(path: str) -> List[str]:
    with open(path, encoding="utf-8") as f:
        pkgs = [ln.strip() for ln in f if ln.strip() and not ln.lstrip().startswith("#")]
    if not pkgs:
        raise DataError(f"{path}: expected a list of Debian package names, found none")
    return pkgs


def _dpkg(args: Sequence[str]) -> Optional[str]:
    try:
        r = subprocess.run(["dpkg-query", *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise DataError("dpkg-query not found: the gettext corpus needs a Debian system; "
                        "use --src-file/--tgt-file or --tsv for your own parallel text")
    return r.stdout if r.returncode == 0 else None


def package_version(pkg: str) -> Optional[str]:
    out = _dpkg(["-W", "-f=${Status}\t${Version}", pkg])
    if not out or "install ok installed" not in out:
        return None
    return out.split("\t", 1)[1].strip()


def install_packages(pkgs: Sequence[str]) -> None:
    cmd = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *pkgs]
    if os.geteuid() != 0:
        cmd = ["sudo", *cmd]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    r = subprocess.run(cmd, env=env, check=False)
    if r.returncode != 0:
        raise DataError(f"'{' '.join(cmd)}' failed with exit code {r.returncode}")


def package_catalogs(pkg: str, lang: str) -> List[str]:
    out = _dpkg(["-L", pkg]) or ""
    prefix = f"/usr/share/locale/{lang}/LC_MESSAGES/"
    return sorted(p for p in out.splitlines() if p.startswith(prefix) and p.endswith(".mo"))


def gettext_pairs(packages: Sequence[str], lang: str, install: bool,
                  log=print) -> Tuple[List[Tuple[str, str]], dict]:
    """Reads the `lang` catalogs of the packages. Returns raw (English, lang) pairs in sorted
    catalog-path order and provenance (package versions, catalog sha256 and entry counts)."""
    versions = {p: package_version(p) for p in packages}
    missing = [p for p, v in versions.items() if v is None]
    if missing and install:
        log(f"data: installing {len(missing)} corpus packages: {' '.join(missing)}")
        install_packages(missing)
        versions = {p: package_version(p) for p in packages}
        missing = [p for p, v in versions.items() if v is None]
    if missing:
        raise DataError(f"corpus packages not installed: {' '.join(missing)} "
                        "(run scripts/setup.sh, or drop --no-install)")
    owner: Dict[str, str] = {}
    for p in packages:
        for path in package_catalogs(p, lang):
            owner.setdefault(path, p)
    if not owner:
        raise DataError(f"no /usr/share/locale/{lang}/LC_MESSAGES/*.mo catalogs in the "
                        f"{len(packages)} listed packages: is '{lang}' a language they ship?")
    pairs: List[Tuple[str, str]] = []
    catalogs = []
    for path in sorted(owner):
        with open(path, "rb") as f:
            blob = f.read()
        try:
            cat = parse_mo(blob, path)
        except MoFormatError as e:
            raise DataError(str(e)) from e
        pairs.extend((e.msgid, e.msgstr) for e in cat.entries)
        catalogs.append({"path": path, "package": owner[path],
                         "sha256": hashlib.sha256(blob).hexdigest(),
                         "entries": len(cat.entries), "charset": cat.charset,
                         "undecodable": cat.skipped_undecodable})
    prov = {"packages": {p: versions[p] for p in sorted(packages)}, "catalogs": catalogs}
    return pairs, prov


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
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_corpus(out_dir: str, pairs: List[Tuple[str, str]], src_lang: str, tgt_lang: str,
                 dev_percent: int, test_percent: int, stats: CorpusStats,
                 provenance: dict, max_chars: int = 0) -> dict:
    if src_lang == tgt_lang:
        raise DataError(f"source and target language codes must differ, found '{src_lang}' twice")
    splits: Dict[str, List[Tuple[str, str]]] = {s: [] for s in SPLITS}
    for src, tgt in pairs:
        splits[split_of(src, dev_percent, test_percent)].append((src, tgt))
    os.makedirs(out_dir, exist_ok=True)
    files = {}
    for s in SPLITS:
        for lang, idx in ((src_lang, 0), (tgt_lang, 1)):
            name = f"{s}.{lang}"
            blob = "".join(p[idx] + "\n" for p in splits[s]).encode("utf-8")
            _write_atomic(os.path.join(out_dir, name), blob)
            files[name] = hashlib.sha256(blob).hexdigest()
    stats.split_counts = {s: len(splits[s]) for s in SPLITS}
    manifest = {
        "format": "headwise-corpus/1",
        "source_lang": src_lang,
        "target_lang": tgt_lang,
        "split_rule": f"sha1(source utf-8)[:8] big-endian mod 100: <{dev_percent} dev, "
                      f"<{dev_percent + test_percent} test, else train",
        "counts": dict(stats.__dict__),
        "max_chars": max_chars,
        "normalisation": "whitespace runs -> one space, stripped; dropped: empty, source == "
                         "target, source without letters outside format directives, longer "
                         "than max_chars; first pair kept per source",
        "files": files,
        **provenance,
    }
    _write_atomic(os.path.join(out_dir, "manifest.json"),
                  (json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
                  .encode("utf-8"))
    return manifest
