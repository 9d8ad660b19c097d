"""The package cache: fetch the locked .debs, keep only their LANG catalogs, resume from it.

CACHE/debs/partial/   downloads in progress (a .deb is deleted once its catalogs are kept)
CACHE/catalogs/LANG/NAME_VERSION/
    000.mo ...        the package's LANG catalogs, in sorted archive-path order
    done.json         written last (atomically, with the directory renamed into place): the
                      marker that this package is finished; it names the .deb's sha256 and
                      each catalog's archive path and sha256

A package whose marker exists and matches the lock is never fetched or unpacked again, so an
interrupted or failed build continues where it stopped. Nothing is installed: the catalogs are
read from `dpkg-deb --fsys-tarfile` (the package's data tar) by Python's tarfile.

Where the .debs come from is injectable: AptSource (apt-get download from the private apt
root) or DirSource (a local directory of .deb files, for tests and offline rebuilds).
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Dict, List, Optional, Sequence

from .debian_archive import ArchiveError, AptRoot, LockedPackage, catalog_regex

BATCH = 24  # packages per apt-get download call


class DebSource:
    """Puts p.deb_name for every p into dest (a directory); raises ArchiveError naming the
    package it cannot provide."""

    def fetch(self, pkgs: Sequence[LockedPackage], dest: str) -> None:
        raise NotImplementedError


class AptSource(DebSource):
    def __init__(self, apt: AptRoot):
        self.apt = apt

    def fetch(self, pkgs, dest):
        self.apt.download(list(pkgs), dest)


class DirSource(DebSource):
    def __init__(self, directory: str):
        self.dir = directory

    def fetch(self, pkgs, dest):
        for p in pkgs:
            src = os.path.join(self.dir, p.deb_name)
            if not os.path.isfile(src):
                raise ArchiveError(f"package {p.name} version {p.version}: {src} not found "
                                   f"(--deb-dir {self.dir})")
            shutil.copyfile(src, os.path.join(dest, p.deb_name))


def _sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def pkg_dir_name(p: LockedPackage) -> str:
    return f"{p.name}_{p.version.replace(':', '%3a')}"



def _disk_full(where: str, e: OSError, done: int, total: int) -> ArchiveError:
    return ArchiveError(f"disk full (ENOSPC) while writing {where}: {e.strerror}; free space "
                        f"there and rerun: {done} of {total} packages are finished in the "
                        "cache and will not be fetched again")


class PackageCache:
    def __init__(self, cache_dir: str, lang: str, source: DebSource, log=print,
                 workers: int = 2, min_free: int = 64 << 20):
        self.cache = os.path.abspath(cache_dir)
        self.lang = lang
        self.source = source
        self.log = log
        self.workers = max(1, min(2, workers))
        self.min_free = min_free
        self.cat_root = os.path.join(self.cache, "catalogs", lang)
        self.partial = os.path.join(self.cache, "debs", "partial")
        self.rx = catalog_regex(lang)

    # ------------------------------------------------------------ markers
    def marker(self, p: LockedPackage) -> str:
        return os.path.join(self.cat_root, pkg_dir_name(p), "done.json")

    def finished(self, p: LockedPackage) -> Optional[dict]:
        path = self.marker(p)
        if not os.path.isfile(path):
            return None
        try:
            with open(path, encoding="utf-8") as f:
                rec = json.load(f)
        except (OSError, ValueError):
            return None
        if rec.get("version") != p.version or (p.sha256 and rec.get("deb_sha256") != p.sha256):
            return None
        return rec

    def catalog_files(self, p: LockedPackage, rec: dict) -> List[dict]:
        d = os.path.dirname(self.marker(p))
        return [dict(c, file=os.path.join(d, c["file"])) for c in rec["catalogs"]]

    # ------------------------------------------------------------ the whole lock
    def ensure(self, pkgs: Sequence[LockedPackage],
               progress: Optional[Callable[[int, int], None]] = None) -> Dict[str, dict]:
        """Fetches and unpacks every package not yet finished; returns name -> marker."""
        done: Dict[str, dict] = {}
        todo = []
        for p in pkgs:
            rec = self.finished(p)
            if rec is None:
                todo.append(p)
            else:
                done[p.name] = rec
        total = len(pkgs)
        self.log(f"data: {len(done)} of {total} packages already in the cache {self.cat_root}; "
                 f"{len(todo)} to fetch")
        if not todo:
            return done
        os.makedirs(self.partial, exist_ok=True)
        os.makedirs(self.cat_root, exist_ok=True)
        batches = [todo[i:i + BATCH] for i in range(0, len(todo), BATCH)]
        lock = threading.Lock()
        try:
            with ThreadPoolExecutor(1) as dl, ThreadPoolExecutor(self.workers) as ex:
                nxt = dl.submit(self._download, batches[0], len(done), total)
                for bi in range(len(batches)):
                    paths = nxt.result()
                    if bi + 1 < len(batches):
                        nxt = dl.submit(self._download, batches[bi + 1], len(done), total)
                    for p, rec in zip(batches[bi], ex.map(self._unpack, batches[bi], paths)):
                        with lock:
                            done[p.name] = rec
                    if progress:
                        progress(len(done), total)
        except OSError as e:
            if e.errno == errno.ENOSPC:
                raise _disk_full(e.filename or self.cache, e, len(done), total) from e
            raise
        return done

    def _download(self, batch: Sequence[LockedPackage], n_done: int, total: int) -> List[str]:
        need = sum(p.size for p in batch) + self.min_free
        free = shutil.disk_usage(self.cache).free
        if free < need:
            raise _disk_full(self.cache, OSError(errno.ENOSPC, f"{free} bytes free, the next "
                             f"{len(batch)} packages need about {need}"), n_done, total)
        for p in batch:  # a leftover of an interrupted download is never trusted
            leftover = os.path.join(self.partial, p.deb_name)
            if os.path.exists(leftover):
                os.remove(leftover)
        self.source.fetch(batch, self.partial)
        paths = []
        for p in batch:
            path = os.path.join(self.partial, p.deb_name)
            if not os.path.isfile(path):
                raise ArchiveError(f"package {p.name} version {p.version}: the download left "
                                   f"no {path}")
            if p.sha256 and _sha256_file(path) != p.sha256:
                os.remove(path)  # one retry: an interrupted or damaged transfer
                self.source.fetch([p], self.partial)
                got = _sha256_file(path)
                if got != p.sha256:
                    os.remove(path)
                    raise ArchiveError(f"package {p.name} version {p.version}: downloaded "
                                       f"{p.deb_name} has sha256 {got}, the lock expects "
                                       f"{p.sha256} (corrupt or interrupted download)")
            paths.append(path)
        return paths

    def _unpack(self, p: LockedPackage, deb: str) -> dict:
        final = os.path.dirname(self.marker(p))
        tmp = f"{final}.tmp{os.getpid()}.{threading.get_ident()}"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        deb_sha = p.sha256 or _sha256_file(deb)
        catalogs = read_deb_catalogs(deb, self.rx, f"package {p.name} version {p.version}")
        recs = []
        for i, (path, blob) in enumerate(sorted(catalogs.items())):
            name = f"{i:03d}.mo"
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(blob)
            recs.append({"path": path, "file": name, "sha256": hashlib.sha256(blob).hexdigest(),
                         "bytes": len(blob)})
        rec = {"package": p.name, "version": p.version, "source": p.source,
               "deb_sha256": deb_sha, "catalogs": recs}
        with open(os.path.join(tmp, "done.json"), "w", encoding="utf-8") as f:
            json.dump(rec, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        if os.path.exists(final):
            shutil.rmtree(final)  # an unfinished directory from an older run
        os.rename(tmp, final)
        os.remove(deb)
        return rec


def read_deb_catalogs(deb: str, rx, what: str) -> Dict[str, bytes]:
    """Archive path -> bytes of every regular file in the .deb's data tar that rx matches.
    Links are skipped (a catalog linked to another one holds the same strings)."""
    proc = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out: Dict[str, bytes] = {}
    err = None
    try:
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tf:
            for m in tf:
                name = m.name[2:] if m.name.startswith("./") else m.name.lstrip("/")
                if m.isfile() and rx.search(name):
                    f = tf.extractfile(m)
                    out[name] = f.read() if f else b""
    except (tarfile.TarError, EOFError, OSError) as e:
        if isinstance(e, OSError) and e.errno == errno.ENOSPC:
            raise
        err = e
    finally:
        if proc.stdout:
            proc.stdout.read()  # drain, so dpkg-deb can exit
        stderr = proc.stderr.read().decode("utf-8", errors="replace") if proc.stderr else ""
        rc = proc.wait()
    if rc != 0 or err is not None:
        detail = stderr.strip().splitlines()[-1] if stderr.strip() else str(err)
        raise ArchiveError(f"{what}: {deb} is not a valid .deb (dpkg-deb --fsys-tarfile: "
                           f"{detail})")
    return out
