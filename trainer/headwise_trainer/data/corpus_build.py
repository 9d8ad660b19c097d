"""`headwise-train data` for the Debian corpus: lock -> cache -> pairs -> splits -> files.

1. The package cache (deb_cache) fetches and unpacks every locked package not yet finished.
2. Each package's catalogs give cleaned pairs (catalog_pairs), two worker processes at most;
   the DDTP index copies named by the lock give description pairs (ddtp).
3. Pairs group by Debian *source* package (binaries of one source are one piece of software),
   in source-name order; within a source, binaries in name order, catalogs before
   descriptions; a source string is kept once per source package.
4. Splits by source package: sources sorted by sha1("headwise-split/1:" + name) are taken in
   that order into test until it holds test_pairs pairs, then into dev until dev_pairs
   (pairs counted once across the chosen packages); a
   source with more than eval_max_package pairs is passed over (so each split holds many
   packages). Everything else is train.
5. Across packages: a source string is kept once, test first, then dev, then train: so train
   holds no source string of dev or test. Then each source package keeps at most
   `cap` train pairs (those with the smallest sha1(source); the others are counted).
6. Files as data.write_splits writes them, and a manifest with every count.
"""
from __future__ import annotations

import hashlib
import multiprocessing
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from . import catalog_pairs, ddtp
from .corpus import (LENGTH_BUCKETS, DataError, length_bucket, length_bucket_name,
                     write_splits)
from .deb_cache import DebSource, PackageCache
from .debian_archive import ArchiveError, AptRoot, Lock
from .pair_filters import PIECE_FILTERS, FilterConfig

Pair = Tuple[str, str]
@dataclass
class BuildConfig:
    filters: FilterConfig = field(default_factory=FilterConfig)
    cap: int = 3000
    test_pairs: int = 2500
    dev_pairs: int = 2500
    eval_max_package: int = 600
    workers: int = 2
    ddtp: bool = True


def _pkg_job(args):
    name, catalogs, cfg = args
    pairs, counts, info = catalog_pairs.package_pairs(name, catalogs, cfg)
    return name, pairs, counts, info


def _split_key(source: str) -> str:
    return hashlib.sha1(f"headwise-split/1:{source}".encode("utf-8")).hexdigest()


def _src_key(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8")).digest()


def bucket_counts(pairs: List[Pair]) -> Dict[str, int]:
    out = {length_bucket_name(lo, hi): 0 for lo, hi in LENGTH_BUCKETS}
    for s, _ in pairs:
        out[length_bucket(s)] += 1
    return out


def ddtp_texts(lock: Lock, cache_dir: str, apt: Optional[AptRoot], lang: str
               ) -> Tuple[str, str]:
    """The Translation-en / -LANG texts the lock names, from the cache's copies (made by
    --update-lock); a missing copy is taken from the apt root if its hash still matches."""
    out = []
    for name in ("Translation-en", f"Translation-{lang}"):
        if name not in lock.indexes:
            raise ArchiveError(f"the lock names no {name} index; make a new lock with "
                               "--update-lock, or build with --no-ddtp")
        sha, size = lock.indexes[name]
        path = os.path.join(cache_dir, "ddtp", f"{sha}.{name}")
        if not os.path.isfile(path) and apt is not None:
            if not apt.has_lists():
                apt.update()
            blob = apt.index_text(f"_i18n_{name}").encode("utf-8")
            if hashlib.sha256(blob).hexdigest() == sha:
                store_index(cache_dir, name, blob)
        if not os.path.isfile(path):
            raise ArchiveError(f"{path}: the {name} index the lock names (sha256 {sha}) is "
                               "not in the cache and the archive's current one differs; "
                               "make a new lock with --update-lock, or build with --no-ddtp")
        with open(path, "rb") as f:
            blob = f.read()
        got = hashlib.sha256(blob).hexdigest()
        if got != sha:
            raise ArchiveError(f"{path}: expected sha256 {sha} ({size} bytes), found {got}")
        out.append(blob.decode("utf-8"))
    return out[0], out[1]


def store_index(cache_dir: str, name: str, blob: bytes) -> str:
    sha = hashlib.sha256(blob).hexdigest()
    d = os.path.join(cache_dir, "ddtp")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"{sha}.{name}")
    if not os.path.isfile(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    return sha


def build_corpus(lock: Lock, lock_path: str, cache_dir: str, source: DebSource,
                 apt: Optional[AptRoot], out_dir: str, cfg: BuildConfig,
                 src_lang: str = "en", log=print) -> dict:
    lang = lock.lang
    cache = PackageCache(cache_dir, lang, source, log=log, workers=cfg.workers)
    step = max(1, len(lock.packages) // 20)
    markers = cache.ensure(lock.packages, progress=lambda d, n: (
        log(f"data: {d}/{n} packages in the cache") if d % step < 24 or d == n else None))

    # ---- catalog pairs, per binary package
    jobs = [(p.name, cache.catalog_files(p, markers[p.name]), cfg.filters)
            for p in lock.packages]
    results = {}
    log(f"data: reading the {lang} catalogs of {len(jobs)} packages")
    try:
        if cfg.workers > 1:
            with multiprocessing.get_context("fork").Pool(min(2, cfg.workers)) as pool:
                for name, pairs, counts, info in pool.imap(_pkg_job, jobs, chunksize=8):
                    results[name] = (pairs, counts, info)
        else:
            for j in jobs:
                name, pairs, counts, info = _pkg_job(j)
                results[name] = (pairs, counts, info)
    except catalog_pairs.CatalogError as e:
        raise DataError(str(e)) from e
    mo_counts: Counter = Counter()
    for _, c, _ in results.values():
        mo_counts.update(c)

    # ---- description pairs
    dd_counts: Counter = Counter()
    dd_pairs: Dict[str, List[Pair]] = {}
    if cfg.ddtp:
        en_text, tgt_text = ddtp_texts(lock, cache_dir, apt, lang)
        dd_pairs, dd_counts = ddtp.description_pairs(en_text, tgt_text, lang, cfg.filters)
        log(f"data: {dd_counts['kept']} description pairs from {len(dd_pairs)} packages")

    # ---- group by source package
    src_of = dict(lock.sources)
    for p in lock.packages:
        src_of[p.name] = p.source
    members: Dict[str, List[str]] = {}
    for b in sorted(set(results) | set(dd_pairs)):
        members.setdefault(src_of.get(b, b), []).append(b)
    groups: Dict[str, List[Pair]] = {}
    group_counts: Counter = Counter()
    for s in sorted(members):
        seen, out = set(), []
        for part in ("catalogs", "descriptions"):
            for b in members[s]:
                pairs = results[b][0] if part == "catalogs" and b in results else (
                    dd_pairs.get(b, []) if part == "descriptions" else [])
                for pr in pairs:
                    if pr[0] in seen:
                        group_counts["duplicate_in_source_package"] += 1
                        continue
                    seen.add(pr[0])
                    out.append(pr)
        if out:
            groups[s] = out

    # ---- splits by source package
    split_of: Dict[str, str] = {}
    have = {"test": 0, "dev": 0}
    want = {"test": cfg.test_pairs, "dev": cfg.dev_pairs}
    taken: set = set()  # source strings of the packages chosen so far
    for s in sorted(groups, key=_split_key):
        if len(groups[s]) > cfg.eval_max_package:
            continue
        new = [pr[0] for pr in groups[s] if pr[0] not in taken]
        for sp in ("test", "dev"):
            if have[sp] < want[sp]:
                split_of[s] = sp
                have[sp] += len(new)
                taken.update(new)
                break
        else:
            break
    splits: Dict[str, List[Pair]] = {"train": [], "dev": [], "test": []}
    per_package: Dict[str, dict] = {}
    seen_src: set = set()
    xcounts: Counter = Counter()
    for sp in ("test", "dev", "train"):
        for s in sorted(groups):
            if split_of.get(s, "train") != sp:
                continue
            kept = []
            for pr in groups[s]:
                if pr[0] in seen_src:
                    xcounts[f"{sp}_duplicate_of_earlier_package"] += 1
                    continue
                seen_src.add(pr[0])
                kept.append(pr)
            if sp == "train" and cfg.cap and len(kept) > cfg.cap:
                keep = set(sorted(range(len(kept)), key=lambda i: _src_key(kept[i][0]))
                           [:cfg.cap])
                xcounts["train_over_package_cap"] += len(kept) - cfg.cap
                kept = [pr for i, pr in enumerate(kept) if i in keep]
            splits[sp].extend(kept)
            per_package[s] = {"split": sp, "pairs": len(kept), "binaries": members[s]}
    eval_src = {s for s, _ in splits["dev"]} | {s for s, _ in splits["test"]}
    overlap = sum(1 for s, _ in splits["train"] if s in eval_src)
    assert overlap == 0, overlap

    # ---- provenance and files
    versions = {p.name: p.version for p in lock.packages}
    catalogs = [dict(c, package=name) for name in sorted(results) for c in results[name][2]]
    split_packages = {sp: sorted(s for s, v in per_package.items() if v["split"] == sp)
                      for sp in ("dev", "test")}
    manifest_extra = {
        "source": "debian",
        "lock": {"file": os.path.basename(lock_path), "sha256": _sha256_path(lock_path),
                 "archive": lock.archive, "release": lock.release,
                 "packages": len(lock.packages), "skipped_over_size_limit": len(lock.skipped),
                 "size_limit": lock.size_limit, "indexes": {k: {"sha256": v[0], "bytes": v[1]}
                                                          for k, v in lock.indexes.items()}},
        "filters": {"order": [k for k, _ in PIECE_FILTERS],
                    "meaning": dict(PIECE_FILTERS),
                    "max_chars": cfg.filters.max_chars, "ratio_lo": cfg.filters.ratio_lo,
                    "ratio_hi": cfg.filters.ratio_hi, "cap_per_source_package": cfg.cap,
                    "plural": "msgid (singular) paired with msgstr[0]",
                    "accelerators": "'_', '&', '~' marks removed on both sides",
                    "markup": "kept where both sides hold the same tags, else dropped"},
        "counts_catalogs": dict(sorted(mo_counts.items())),
        "counts_descriptions": dict(sorted(dd_counts.items())),
        "counts_across_packages": dict(sorted((group_counts + xcounts).items())),
        "split_rule": (f"by Debian source package: sha1('headwise-split/1:'+source) order, "
                       f"test until >= {cfg.test_pairs} pairs, then dev until >= "
                       f"{cfg.dev_pairs}; sources with > {cfg.eval_max_package} pairs passed "
                       "over; train drops every source string of dev/test"),
        "split_packages": split_packages,
        "length_buckets": {sp: bucket_counts(v) for sp, v in splits.items()},
        "packages": {s: dict(v, versions={b: versions[b] for b in v["binaries"]
                                          if b in versions})
                     for s, v in sorted(per_package.items())},
        "catalogs": catalogs,
    }
    return write_splits(out_dir, splits, src_lang, lang, manifest_extra)


def _sha256_path(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()
