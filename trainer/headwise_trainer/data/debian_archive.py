"""Debian's archive as seen through a private apt root under the cache (nothing installed, the
system's apt state untouched), and the lock file that pins what a corpus is built from.

apt root (CACHE/apt): its own sources.list (one archive, one suite, main, amd64 + all), lists,
status and cache directories, and a config that adds the Contents index targets and the
Translation-en/-LANG targets (`#clear Acquire::Languages` overrides images that switch them
off). `apt-get -c CACHE/apt/apt.conf update` fills it; `apt-get -c ... download pkg=ver`
fetches from it.

Lock file (trainer/data/LANG.lock, text, one record a line, sorted):
    format headwise-lock/1
    lang de
    archive http://deb.debian.org/debian bookworm main amd64
    release <Version> <Date>         the suite's Release file when the lock was made
    size-limit 20000000              packages larger than this (bytes) are not used
    index <name> <sha256> <bytes>    a DDTP Translation file, decompressed
    pkg <name> <version> <arch> <source> <bytes> <sha256>
    skip <name> <version> <arch> <source> <bytes> over-size-limit
    src <source> <binary> ...        source package of binaries with a LANG description
                                     (where the name differs), for splitting by source
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

LOCK_FORMAT = "headwise-lock/1"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEFAULT_SUITE = "bookworm"
DEFAULT_SIZE_LIMIT = 20_000_000
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


class ArchiveError(ValueError):
    """Archive, apt or lock-file problem; the message names the package or file."""


@dataclass(frozen=True)
class LockedPackage:
    name: str
    version: str
    arch: str
    source: str
    size: int
    sha256: str  # "" for skipped packages

    @property
    def deb_name(self) -> str:
        """The file name apt-get download gives it (an epoch's ':' written as %3a)."""
        return f"{self.name}_{self.version.replace(':', '%3a')}_{self.arch}.deb"


@dataclass
class Lock:
    lang: str
    archive: str
    release: str
    size_limit: int
    indexes: Dict[str, Tuple[str, int]] = field(default_factory=dict)  # name -> (sha256, size)
    packages: List[LockedPackage] = field(default_factory=list)
    skipped: List[LockedPackage] = field(default_factory=list)
    sources: Dict[str, str] = field(default_factory=dict)  # DDTP binary -> source, if differs


# ---------------------------------------------------------------- lock file

def write_lock(path: str, lock: Lock) -> None:
    lines = [f"# Corpus lock for 'headwise-train data --lang {lock.lang}': the Debian packages",
             "# (and DDTP index files) the corpus is built from. Made by --update-lock; builds",
             "# read only this file. See models/en-de/data/README.md.",
             f"format {LOCK_FORMAT}", f"lang {lock.lang}", f"archive {lock.archive}",
             f"release {lock.release}", f"size-limit {lock.size_limit}"]
    for name in sorted(lock.indexes):
        sha, size = lock.indexes[name]
        lines.append(f"index {name} {sha} {size}")
    for p in sorted(lock.packages, key=lambda p: p.name):
        lines.append(f"pkg {p.name} {p.version} {p.arch} {p.source} {p.size} {p.sha256}")
    for p in sorted(lock.skipped, key=lambda p: p.name):
        lines.append(f"skip {p.name} {p.version} {p.arch} {p.source} {p.size} over-size-limit")
    by_src: Dict[str, List[str]] = {}
    for b, s in lock.sources.items():
        by_src.setdefault(s, []).append(b)
    for s in sorted(by_src):
        lines.append(f"src {s} {' '.join(sorted(by_src[s]))}")
    tmp = f"{path}.{os.getpid()}.tmp"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def read_lock(path: str) -> Lock:
    if not os.path.isfile(path):
        raise ArchiveError(f"{path}: lock file not found; expected one made by "
                           "'headwise-train data --update-lock'")
    head: Dict[str, str] = {}
    lock = Lock("", "", "", 0)
    with open(path, encoding="utf-8") as f:
        for i, raw in enumerate(f, 1):
            ln = raw.strip()
            if not ln or ln.startswith("#"):
                continue
            key, _, rest = ln.partition(" ")
            f_ = rest.split(" ")
            where = f"{path}:{i}"
            if key in ("format", "lang", "archive", "release", "size-limit"):
                head[key] = rest
            elif key == "index" and len(f_) == 3:
                lock.indexes[f_[0]] = (f_[1], _int(f_[2], where))
            elif key == "pkg" and len(f_) == 6:
                lock.packages.append(LockedPackage(f_[0], f_[1], f_[2], f_[3],
                                                   _int(f_[4], where), f_[5]))
            elif key == "skip" and len(f_) == 6:
                lock.skipped.append(LockedPackage(f_[0], f_[1], f_[2], f_[3],
                                                  _int(f_[4], where), ""))
            elif key == "src" and len(f_) >= 2:
                for b in f_[1:]:
                    lock.sources[b] = f_[0]
            else:
                raise ArchiveError(f"{where}: expected a 'format/lang/archive/release/"
                                   f"size-limit/index/pkg/skip/src' record, found {ln[:80]!r}")
    if head.get("format") != LOCK_FORMAT:
        raise ArchiveError(f"{path}: expected 'format {LOCK_FORMAT}', found "
                           f"{head.get('format')!r}")
    lock.lang, lock.archive = head.get("lang", ""), head.get("archive", "")
    lock.release = head.get("release", "")
    lock.size_limit = _int(head.get("size-limit", "0"), path)
    if not lock.lang or not lock.packages:
        raise ArchiveError(f"{path}: expected a 'lang' record and at least one 'pkg' record")
    return lock


def _int(text: str, where: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ArchiveError(f"{where}: expected an integer, found {text!r}") from None


# ---------------------------------------------------------------- index parsing

def deb822_records(text: str) -> Iterator[Dict[str, str]]:
    """Paragraphs of a Packages/Translation file; continuation lines keep their newline."""
    rec: Dict[str, str] = {}
    key = None
    for line in text.split("\n"):
        if not line.strip():
            if rec:
                yield rec
            rec, key = {}, None
        elif line[0] in " \t":
            if key is not None:
                rec[key] += "\n" + line
        else:
            key, _, val = line.partition(":")
            rec[key] = val.strip()
    if rec:
        yield rec


def catalog_regex(lang: str) -> "re.Pattern[str]":
    """Paths of LANG gettext catalogs: any '.../LANG/LC_MESSAGES/NAME.mo' (usr/share/locale
    mostly; also the catalogs programs keep elsewhere, e.g. under usr/lib/python3)."""
    return re.compile(r"(?:^|/)" + re.escape(lang) + r"/LC_MESSAGES/[^/]+\.mo$")


def packages_with_catalogs(contents_lines: Iterable[str], lang: str) -> Dict[str, int]:
    """Package name -> number of LANG catalogs, from Contents-ARCH lines 'PATH  sec/pkg,...'."""
    rx = catalog_regex(lang)
    out: Dict[str, int] = {}
    for line in contents_lines:
        path, _, owners = line.rstrip("\n").rpartition(" ")
        path = path.rstrip()
        if not path or not rx.search(path):
            continue
        for o in owners.split(","):
            name = o.rsplit("/", 1)[-1]
            if name:
                out[name] = out.get(name, 0) + 1
    return out


def parse_packages(text: str) -> Dict[str, LockedPackage]:
    """Packages index -> newest record per package name (amd64 before all, as apt does not
    mix: one archive has one version of a name per architecture)."""
    out: Dict[str, LockedPackage] = {}
    for r in deb822_records(text):
        if "Package" not in r:
            continue
        src = r.get("Source", r["Package"]).split(" ", 1)[0]
        p = LockedPackage(r["Package"], r.get("Version", ""), r.get("Architecture", ""), src,
                          int(r.get("Size", "0") or 0), r.get("SHA256", ""))
        out.setdefault(p.name, p)
    return out


# ---------------------------------------------------------------- the private apt root

class AptRoot:
    """A private apt configuration under DIR; see the module docstring."""

    def __init__(self, root: str, langs: Iterable[str], mirror: str = DEFAULT_MIRROR,
                 suite: str = DEFAULT_SUITE):
        self.root = os.path.abspath(root)
        self.langs = sorted(set(["en", *langs]))
        self.mirror, self.suite = mirror, suite
        self.conf = os.path.join(self.root, "apt.conf")
        self.lists = os.path.join(self.root, "lists")

    @property
    def archive(self) -> str:
        return f"{self.mirror} {self.suite} main amd64"

    def write_config(self) -> None:
        r = self.root
        for d in ("lists/partial", "cache/archives/partial", "etc/sources.list.d",
                  "etc/preferences.d", "etc/apt.conf.d"):
            os.makedirs(os.path.join(r, d), exist_ok=True)
        open(os.path.join(r, "status"), "a").close()
        with open(os.path.join(r, "etc/sources.list"), "w") as f:
            f.write(f"deb [arch=amd64 signed-by={KEYRING}] {self.mirror} {self.suite} main\n")
        langs = " ".join(f'"{x}";' for x in self.langs)
        conf = f"""// written by headwise-train data: a private apt root, nothing is installed
Dir::State "{r}";
Dir::State::Lists "{r}/lists";
Dir::State::status "{r}/status";
Dir::Cache "{r}/cache";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Dir::Etc::SourceList "{r}/etc/sources.list";
Dir::Etc::SourceParts "{r}/etc/sources.list.d";
Dir::Etc::Preferences "{r}/etc/preferences";
Dir::Etc::PreferencesParts "{r}/etc/preferences.d";
APT::Architecture "amd64";
#clear APT::Architectures;
APT::Architectures {{ "amd64"; }};
APT::Sandbox::User "root";
#clear Acquire::Languages;
Acquire::Languages {{ {langs} }};
Acquire::IndexTargets::deb::Contents-deb {{
  MetaKey "$(COMPONENT)/Contents-$(ARCHITECTURE)";
  ShortDescription "Contents-$(ARCHITECTURE)";
  Description "$(RELEASE)/$(COMPONENT) $(ARCHITECTURE) Contents (deb)";
}};
"""
        with open(self.conf, "w") as f:
            f.write(conf)

    def update(self, log=print) -> None:
        self.write_config()
        log(f"data: apt-get update of the private apt root {self.root} ({self.archive})")
        r = subprocess.run(["apt-get", "-c", self.conf, "-q", "update"], capture_output=True,
                           text=True, check=False)
        if r.returncode != 0 or "\nE: " in "\n" + r.stderr or "\nW: Failed" in "\n" + r.stderr:
            raise ArchiveError(f"apt-get update of {self.archive} failed (exit {r.returncode}): "
                               f"{_last_lines(r.stderr or r.stdout)}")

    def has_lists(self) -> bool:
        return self._find("_binary-amd64_Packages") is not None

    def _find(self, suffix: str) -> Optional[str]:
        if not os.path.isdir(self.lists):
            return None
        stem = f"_dists_{self.suite}_main{suffix}"
        for n in sorted(os.listdir(self.lists)):
            base = re.sub(r"\.(lz4|gz|xz|zst|bz2)$", "", n)
            if base.endswith(stem):
                return os.path.join(self.lists, n)
        return None

    def index_text(self, what: str) -> str:
        """Decompressed text of Packages ('_binary-amd64_Packages'), Contents ('_Contents-all')
        or a translation ('_i18n_Translation-de')."""
        path = self._find(what)
        if path is None:
            raise ArchiveError(f"{self.lists}: no {self.suite} main {what.strip('_')} index; "
                               "did apt-get update fetch it?")
        return read_compressed(path).decode("utf-8")

    def release(self) -> str:
        for n in sorted(os.listdir(self.lists)):
            if n.endswith(f"_dists_{self.suite}_InRelease") or n.endswith(
                    f"_dists_{self.suite}_Release"):
                text = open(os.path.join(self.lists, n), encoding="utf-8",
                            errors="replace").read()
                ver = re.search(r"^Version: (.*)$", text, re.M)
                date = re.search(r"^Date: (.*)$", text, re.M)
                return f"{ver.group(1) if ver else '?'} {date.group(1) if date else '?'}"
        return "unknown"

    def download(self, pkgs: List[LockedPackage], dest: str) -> None:
        """apt-get download name=version ... into dest; on failure names the package."""
        if not self.has_lists():
            self.update()
        args = [f"{p.name}={p.version}" for p in pkgs]
        r = subprocess.run(["apt-get", "-c", self.conf, "-q", "download", *args], cwd=dest,
                           capture_output=True, text=True, check=False)
        if r.returncode == 0:
            return
        if len(pkgs) > 1:
            for p in pkgs:  # find the one apt refuses, so the error names it
                self.download([p], dest)
            return
        p = pkgs[0]
        raise ArchiveError(f"package {p.name} version {p.version}: apt-get download failed "
                           f"(exit {r.returncode}): {_last_lines(r.stderr or r.stdout)}; if "
                           "the archive no longer has this version, make a new lock with "
                           "--update-lock")


def _last_lines(text: str, n: int = 3) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-n:]) if lines else "no output"


def read_compressed(path: str) -> bytes:
    """File bytes, decompressed by apt's own helper when the name says lz4/gz/xz/zst/bz2."""
    if not re.search(r"\.(lz4|gz|xz|zst|bz2)$", path):
        with open(path, "rb") as f:
            return f.read()
    r = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", path], capture_output=True,
                       check=False)
    if r.returncode != 0:
        raise ArchiveError(f"{path}: could not decompress: {r.stderr.decode(errors='replace')}")
    return r.stdout


def sha256_bytes(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def make_lock(apt: AptRoot, lang: str, size_limit: int, index_store, log=print) -> Lock:
    """A lock from the apt root's current indexes: every package with a LANG catalog.
    `index_store(name, bytes) -> sha256` keeps a copy of each DDTP index in the cache."""
    contents = []
    for arch in ("_Contents-all", "_Contents-amd64"):
        contents.extend(apt.index_text(arch).split("\n"))
    found = packages_with_catalogs(contents, lang)
    index = parse_packages(apt.index_text("_binary-amd64_Packages"))
    lock = Lock(lang, apt.archive, apt.release(), size_limit)
    missing = sorted(n for n in found if n not in index)
    for n in sorted(found):
        p = index.get(n)
        if p is None:
            continue
        (lock.skipped if size_limit and p.size > size_limit else lock.packages).append(p)
    log(f"data: {len(found)} packages ship {lang} catalogs; {len(lock.packages)} locked, "
        f"{len(lock.skipped)} over {size_limit} bytes skipped"
        + (f", {len(missing)} not in the Packages index: {' '.join(missing[:5])}" if missing
           else ""))
    for name in ("en", lang):
        text = apt.index_text(f"_i18n_Translation-{name}")
        blob = text.encode("utf-8")
        lock.indexes[f"Translation-{name}"] = (index_store(f"Translation-{name}", blob),
                                               len(blob))
        if name == lang:
            for r in deb822_records(text):
                b = r.get("Package")
                if b in index and index[b].source != b:
                    lock.sources[b] = index[b].source
    return lock
