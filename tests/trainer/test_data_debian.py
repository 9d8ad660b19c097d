"""The Debian corpus (`headwise-train data` from a lock): tiny .deb fixtures built here with
dpkg-deb, taken from a local directory (--deb-dir), so nothing touches the network. Checks the
cleaning rules, splits by source package, reproducibility, resuming from the cache, French,
and the errors for bad input."""
import errno
import hashlib
import json
import lzma
import os
import shutil
import sys
from collections import Counter

import pytest

TRAINER = os.path.join(os.path.dirname(__file__), "..", "..", "trainer")
sys.path.insert(0, TRAINER)

from deb_fixtures import HEADER, make_deb, make_mo, store_ddtp, write_lock  # noqa: E402
from headwise_trainer import cli  # noqa: E402
from headwise_trainer.data import deb_cache, debian_archive as da, ui_text  # noqa: E402
from headwise_trainer.data.catalog_pairs import package_pairs  # noqa: E402
from headwise_trainer.data.pair_filters import FilterConfig  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="needs dpkg-deb")

WORDS = ["file", "folder", "window", "printer", "network", "server", "account", "picture",
         "message", "document", "setting", "device", "profile", "backup", "download"]
WORTE = ["Datei", "Ordner", "Fenster", "Drucker", "Netzwerk", "Server", "Konto", "Bild",
         "Nachricht", "Dokument", "Einstellung", "Gerät", "Profil", "Sicherung", "Download"]


def _catalog(pkg_index, n, shared=()):
    """n distinct messages for package pkg_index, plus the shared (src, tgt) pairs."""
    entries = [("", HEADER)]
    for i in range(n):
        w, v = WORDS[i % 15], WORTE[i % 15]
        entries.append((f"Open the {w} number {pkg_index}-{i}",
                        f"{v} Nummer {pkg_index}-{i} öffnen"))
    entries.extend(shared)
    return make_mo(entries)


def _ddtp(pkgs):
    en, de = [], []
    for p in pkgs:
        md5 = hashlib.md5(p.encode()).hexdigest()
        en.append(f"Package: {p}\nDescription-md5: {md5}\nDescription-en: tool for {p} files\n"
                  f" The {p} program reads files. It writes reports.\n .\n"
                  f" This package holds the {p} program.\n")
        de.append(f"Package: {p}\nDescription-md5: {md5}\nDescription-de: Werkzeug für "
                  f"{p}-Dateien\n Das Programm {p} liest Dateien. Es schreibt Berichte.\n .\n"
                  f" Dieses Paket enthält das Programm {p}.\n")
    return "\n".join(en), "\n".join(de)


SHARED = [("Quit the program", "Das Programm beenden")]


@pytest.fixture
def world(tmp_path):
    """12 packages (two binaries of one source), a lock, DDTP copies in the cache."""
    debs = tmp_path / "debs"
    debs.mkdir()
    rows, names = [], []
    for i in range(12):
        name = f"app{i:02d}"
        files = {f"usr/share/locale/de/LC_MESSAGES/{name}.mo": _catalog(i, 6, SHARED),
                 f"usr/share/locale/fr/LC_MESSAGES/{name}.mo": make_mo(
                     [("", HEADER), (f"Open window {i}", f"Ouvrir la fenêtre {i}")]),
                 f"usr/share/doc/{name}/README": b"not a catalog"}
        _, sha, size = make_deb(str(debs), name, f"1.{i}-1", files)
        src = "appsuite" if i in (10, 11) else name
        rows.append((name, f"1.{i}-1", "all", src, size, sha))
        names.append(name)
    cache = tmp_path / "cache"
    en, de = _ddtp(names)
    idx = {"Translation-en": store_ddtp(str(cache), "Translation-en", en),
           "Translation-de": store_ddtp(str(cache), "Translation-de", de)}
    lock = tmp_path / "de.lock"
    write_lock(str(lock), "de", rows, idx)
    return {"tmp": tmp_path, "debs": debs, "cache": cache, "lock": lock, "rows": rows}


def _build(w, out, *extra, lock=None, debs=None):
    return cli.main(["data", "--lock", str(lock or w["lock"]), "--deb-dir",
                     str(debs or w["debs"]), "--cache", str(w["cache"]), "--out",
                     str(w["tmp"] / out), "--test-pairs", "10", "--dev-pairs", "10",
                     "--workers", "1", *extra])


def _lines(d, name):
    return open(os.path.join(d, name), encoding="utf-8").read().split("\n")[:-1]


def test_build_splits_by_package_and_is_reproducible(world):
    assert _build(world, "c1") == 0
    out = world["tmp"] / "c1"
    man = json.load(open(out / "manifest.json"))
    sizes = man["split_sizes"]
    assert sizes["test"] >= 10 and sizes["dev"] >= 10 and sizes["train"] > 0
    assert sum(sizes.values()) == sum(len(_lines(out, f"{s}.en")) for s in sizes)
    pk = man["packages"]
    test_pk = set(man["split_packages"]["test"])
    dev_pk = set(man["split_packages"]["dev"])
    assert test_pk and dev_pk and not test_pk & dev_pk
    assert {s for s, v in pk.items() if v["split"] == "train"}.isdisjoint(test_pk | dev_pk)
    # Binaries of one source package go to one split, as one entry.
    assert pk["appsuite"]["binaries"] == ["app10", "app11"]
    # No source string of dev or test is in train; the string every package shares is in
    # exactly one split, once.
    train = set(_lines(out, "train.en"))
    ev = set(_lines(out, "dev.en")) | set(_lines(out, "test.en"))
    assert not train & ev
    all_src = _lines(out, "train.en") + _lines(out, "dev.en") + _lines(out, "test.en")
    assert all_src.count("Quit the program") == 1
    # Each test package's own strings are all in test (whole packages).
    for p in test_pk:
        i = int(pk[p]["binaries"][0][3:])
        assert f"Open the file number {i}-0" in set(_lines(out, "test.en"))
    # DDTP sentences split where both sides agree and follow their package.
    assert "It writes reports." in all_src
    assert man["counts_descriptions"]["entries_split"] == 12
    assert man["length_buckets"]["train"]["1-5"] + man["length_buckets"]["train"]["6-15"] > 0
    assert man["lock"]["sha256"] == hashlib.sha256(open(world["lock"], "rb").read()).hexdigest()
    # Same lock, same bytes; a rebuild needs no .debs at all (the cache has every package).
    shutil.rmtree(world["debs"])
    world["debs"].mkdir()
    assert _build(world, "c2") == 0
    for n in sorted(os.listdir(out)):
        assert open(out / n, "rb").read() == open(world["tmp"] / "c2" / n, "rb").read(), n
    # The cache keeps the catalogs only: no .deb left.
    assert not os.listdir(world["cache"] / "debs" / "partial")
    # The data card: the English training side verbatim, every package, the counts.
    card = world["tmp"] / "card"
    card.mkdir()
    (card / "README.md").write_text("# Card\nhand text\n<!-- BEGIN generated by headwise-train "
                                    "data-card -->\nSTALE TEXT\n<!-- END generated by headwise-train "
                                    "data-card -->\ntail text\n")
    assert cli.main(["data-card", "--data", str(out), "--out", str(card)]) == 0
    assert lzma.decompress((card / "train.en.xz").read_bytes()) == (out / "train.en").read_bytes()
    rows = lzma.decompress((card / "packages.tsv.xz").read_bytes()).decode().splitlines()
    assert len(rows) == 1 + len(pk) and "appsuite\t" in "\n".join(rows)
    readme = (card / "README.md").read_text()
    assert readme.startswith("# Card\nhand text\n") and readme.endswith("tail text\n")
    assert "STALE TEXT" not in readme and f"| test | {sizes['test']:,} |" in readme
    assert f"`kept` | {man['counts_catalogs']['kept']:,}" in readme


def test_french_from_the_same_packages(world):
    rows = world["rows"]
    en, fr = _ddtp([r[0] for r in rows])
    fr = fr.replace("Description-de", "Description-fr")
    idx = {"Translation-en": store_ddtp(str(world["cache"]), "Translation-en", en),
           "Translation-fr": store_ddtp(str(world["cache"]), "Translation-fr", fr)}
    lock = world["tmp"] / "fr.lock"
    write_lock(str(lock), "fr", rows, idx)
    assert cli.main(["data", "--lang", "fr", "--lock", str(lock), "--deb-dir",
                     str(world["debs"]), "--cache", str(world["cache"]), "--out",
                     str(world["tmp"] / "fr"), "--test-pairs", "2", "--dev-pairs", "2",
                     "--workers", "2", "--no-ddtp"]) == 0
    out = world["tmp"] / "fr"
    man = json.load(open(out / "manifest.json"))
    assert man["target_lang"] == "fr" and os.path.isfile(out / "train.fr")
    pairs = dict(zip(sum((_lines(out, f"{s}.en") for s in ("train", "dev", "test")), []),
                     sum((_lines(out, f"{s}.fr") for s in ("train", "dev", "test")), [])))
    assert pairs["Open window 3"] == "Ouvrir la fenêtre 3"
    assert len(pairs) == 12  # the German strings are not in the French catalogs
    # A lock for another language is refused.
    assert cli.main(["data", "--lang", "de", "--lock", str(lock), "--deb-dir",
                     str(world["debs"]), "--cache", str(world["cache"]), "--out",
                     str(world["tmp"] / "x")]) == 1
    # French and German catalogs of one package are cached side by side.
    assert os.path.isdir(world["cache"] / "catalogs" / "fr")


class CountingSource(deb_cache.DirSource):
    def __init__(self, d, fail_after=None):
        super().__init__(d)
        self.fetched = []
        self.fail_after = fail_after

    def fetch(self, pkgs, dest):
        for p in pkgs:
            if self.fail_after is not None and len(self.fetched) >= self.fail_after:
                with open(os.path.join(dest, p.deb_name), "wb") as f:
                    f.write(b"!<arch>\ntruncated")  # an interrupted transfer
                raise KeyboardInterrupt
            super().fetch([p], dest)
            self.fetched.append(p.name)


def test_interrupted_run_continues_from_the_cache(world, monkeypatch):
    monkeypatch.setattr(deb_cache, "BATCH", 3)
    lock = da.read_lock(str(world["lock"]))
    first = CountingSource(str(world["debs"]), fail_after=5)
    with pytest.raises(KeyboardInterrupt):
        deb_cache.PackageCache(str(world["cache"]), "de", first, log=lambda m: 0,
                               workers=1).ensure(lock.packages)
    pc = deb_cache.PackageCache(str(world["cache"]), "de", CountingSource(str(world["debs"])),
                                log=lambda m: 0, workers=1)
    finished = [p.name for p in lock.packages if pc.finished(p)]
    assert 3 <= len(finished) <= 5  # whole batches were unpacked before the interruption
    done = pc.ensure(lock.packages)
    assert len(done) == 12
    assert set(pc.source.fetched) == {p.name for p in lock.packages} - set(finished)
    again = deb_cache.PackageCache(str(world["cache"]), "de", CountingSource(str(world["debs"])),
                                   log=lambda m: 0, workers=1)
    again.ensure(lock.packages)
    assert again.source.fetched == []  # nothing is redone


def _expect_error(capsys, rc, *parts):
    err = capsys.readouterr().err
    assert rc == 1, err
    for p in parts:
        assert p in err, err
    return err


def test_missing_package_corrupt_deb_and_corrupt_mo(world, capsys):
    rows = list(world["rows"])
    # A package the lock names but the source cannot provide.
    bad = world["tmp"] / "missing.lock"
    write_lock(str(bad), "de", rows + [("ghost", "9.9-1", "all", "ghost", 10, "0" * 64)])
    _expect_error(capsys, _build(world, "m", lock=bad), "package ghost version 9.9-1",
                  "ghost_9.9-1_all.deb not found")
    # A .deb whose bytes are not what the lock says (damaged download).
    debs2 = world["tmp"] / "debs2"
    shutil.copytree(world["debs"], debs2)
    victim = debs2 / "app03_1.3-1_all.deb"
    victim.write_bytes(victim.read_bytes()[:200])
    _expect_error(capsys, _build(world, "m", debs=debs2), "package app03 version 1.3-1",
                  "sha256", "the lock expects")
    # A corrupt .deb that the lock does match: dpkg-deb's complaint, with the package.
    rows2 = [r if r[0] != "app03" else (*r[:4], victim.stat().st_size,
             hashlib.sha256(victim.read_bytes()).hexdigest()) for r in rows]
    write_lock(str(bad), "de", rows2)
    _expect_error(capsys, _build(world, "m", "--no-ddtp", lock=bad, debs=debs2),
                  "package app03 version 1.3-1", "is not a valid .deb")
    # A corrupt catalog: the package and the catalog's path are named.
    debs3 = world["tmp"] / "debs3"
    shutil.copytree(world["debs"], debs3)
    _, sha, size = make_deb(str(debs3), "brokenmo", "1-1", {
        "usr/share/locale/de/LC_MESSAGES/brokenmo.mo": _catalog(99, 5)[:60]})
    write_lock(str(bad), "de", rows + [("brokenmo", "1-1", "all", "brokenmo", size, sha)])
    _expect_error(capsys, _build(world, "m", "--no-ddtp", lock=bad, debs=debs3),
                  "package brokenmo: /usr/share/locale/de/LC_MESSAGES/brokenmo.mo")
    assert not os.path.exists(world["tmp"] / "m")  # nothing written on error


def test_full_disk(world, capsys, monkeypatch):
    real = shutil.disk_usage
    monkeypatch.setattr(deb_cache.shutil, "disk_usage",
                        lambda p: real(p)._replace(free=1000))
    _expect_error(capsys, _build(world, "d"), "disk full (ENOSPC)", "0 of 12 packages",
                  "rerun")
    monkeypatch.setattr(deb_cache.shutil, "disk_usage", real)

    def no_space(self, pkgs, dest):
        raise OSError(errno.ENOSPC, "No space left on device", os.path.join(dest, "x.deb"))
    monkeypatch.setattr(deb_cache.DirSource, "fetch", no_space)
    _expect_error(capsys, _build(world, "d"), "disk full (ENOSPC) while writing",
                  "x.deb", "No space left on device")
    monkeypatch.undo()
    # With every package cached, a full disk while writing the corpus names the file.
    assert _build(world, "d") == 0
    capsys.readouterr()

    def fsync_full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fsync", fsync_full)
    _expect_error(capsys, _build(world, "d2"), "disk full (ENOSPC) while writing",
                  os.path.join("d2", "train.en"))
    assert not [n for n in os.listdir(world["tmp"] / "d2") if n.endswith(".tmp")]


def test_bad_lock_file(tmp_path, capsys):
    p = tmp_path / "x.lock"
    p.write_text("format headwise-lock/1\nlang de\npkg onlythree fields here\n")
    with pytest.raises(da.ArchiveError, match=r"x\.lock:3: expected a"):
        da.read_lock(str(p))
    with pytest.raises(da.ArchiveError, match="lock file not found"):
        da.read_lock(str(tmp_path / "none.lock"))


def test_catalog_rules(tmp_path):
    cat = tmp_path / "c.mo"
    cat.write_bytes(make_mo([
        ("", HEADER),
        ("_Open File", "Datei ö_ffnen"),                      # accelerators both sides
        ("&Save", "&Speichern"),
        ("~Edit", "~Bearbeiten"),
        ("%d file\0%d files", "%d Datei\0%d Dateien"),       # plural: singular + msgstr[0]
        ("menu\x04Quit", "Beenden"),                          # context dropped
        ("button\x04Quit", "Verlassen"),                      # same source: first kept
        ("Copy %s to %s", "%2$s nach %1$s kopieren"),         # positions may move
        ("Delete %s", "Löschen"),                             # placeholder lost: dropped
        ("Size {0}", "Größe {1}"),                            # brace fields differ: dropped
        ("<b>Bold</b> text", "<b>Fetter</b> Text"),           # same tags: kept
        ("<b>Bold</b> word", "Fettes Wort"),                  # tags differ: dropped
        ("Untranslated", ""),                                 # untranslated
        ("translator-credits", "Hans Muster"),                # message key
        ("%s: %s", "%s: %s"),                                 # format only
        ("OK", "OK"),                                         # identical
        ("Yes", "Ja, das ist eine sehr sehr lange Antwort auf eine kurze Frage"),  # ratio
        ("The file could not be read. Check its permissions.",
         "Die Datei konnte nicht gelesen werden. Prüfen Sie die Berechtigungen."),
        ("file_name is used", "file_name wird verwendet"),    # identifier kept
    ]))
    pairs, counts, _ = package_pairs("t", [{"path": "c.mo", "file": str(cat), "sha256": ""}],
                                     FilterConfig())
    got = dict(pairs)
    assert got["Open File"] == "Datei öffnen"
    assert got["Save"] == "Speichern" and got["Edit"] == "Bearbeiten"
    assert got["%d file"] == "%d Datei"
    assert got["Quit"] in ("Beenden", "Verlassen") and len([s for s, _ in pairs
                                                            if s == "Quit"]) == 1
    assert got["Copy %s to %s"] == "%2$s nach %1$s kopieren"
    assert got["<b>Bold</b> text"] == "<b>Fetter</b> Text"
    assert got["The file could not be read."] == "Die Datei konnte nicht gelesen werden."
    assert got["Check its permissions."] == "Prüfen Sie die Berechtigungen."
    assert got["file_name is used"] == "file_name wird verwendet"
    for gone in ("Delete %s", "Size {0}", "<b>Bold</b> word", "Untranslated",
                 "translator-credits", "%s: %s", "OK", "Yes"):
        assert gone not in got
    assert counts == Counter(counts) and (
        counts["placeholders_differ"], counts["markup_differ"], counts["untranslated"],
        counts["technical"], counts["format_only"], counts["identical"],
        counts["length_ratio"], counts["duplicate_in_package"], counts["entries_split"],
        counts["plural_singular_used"], counts["with_context"]) == (2, 1, 1, 1, 1, 1, 1, 1,
                                                                    1, 1, 2)
    assert counts["accelerators_removed"] == 3
    assert counts["kept"] == len(pairs) == 10


def test_sentence_split_only_where_both_sides_agree():
    assert ui_text.split_pair("One. Two.", "Eins. Zwei.") == [("One.", "Eins."),
                                                             ("Two.", "Zwei.")]
    assert ui_text.split_pair("One. Two.", "Eins und zwei.") == [("One. Two.",
                                                                  "Eins und zwei.")]
    assert ui_text.split_sentences("Use e.g. this. Then z. B. that. Version 2. Done.") == [
        "Use e.g. this.", "Then z. B. that.", "Version 2. Done."]
    assert ui_text.split_pair("A para.\n\nB para.", "A Abs.\n\nB Abs.") == [
        ("A para.", "A Abs."), ("B para.", "B Abs.")]


def test_accelerator_rules():
    assert ui_text.strip_accelerators("Save & Quit", "Speichern & Beenden")[2] is False
    assert ui_text.strip_accelerators("Tom &amp; Jerry", "Tom &amp; Jerry")[2] is False
    assert ui_text.strip_accelerators("&Save", "Speichern")[:2] == ("Save", "Speichern")
    assert ui_text.strip_accelerators("MAX_SIZE", "MAX_SIZE")[2] is False
    assert ui_text.strip_accelerators("~/path", "~/Pfad")[2] is False


def test_lock_from_indexes():
    contents = ["usr/share/locale/de/LC_MESSAGES/a.mo   utils/pa,utils/pb",
                "usr/share/locale/fr/LC_MESSAGES/a.mo   utils/pc",
                "usr/lib/python3/dist-packages/x/locale/de/LC_MESSAGES/django.mo   python/pd",
                "usr/share/locale/de/LC_MESSAGES/sub/a.mo   utils/pe",
                "usr/share/locale/de_AT/LC_MESSAGES/a.mo   utils/pf"]
    assert da.packages_with_catalogs(contents, "de") == {"pa": 1, "pb": 1, "pd": 1}
    idx = da.parse_packages("Package: pa\nVersion: 1:2.0-1\nArchitecture: amd64\n"
                            "Source: suite (2.0-1)\nSize: 123\nSHA256: ab\n\n"
                            "Package: pb\nVersion: 3\nArchitecture: all\nSize: 30000000\n")
    assert idx["pa"] == da.LockedPackage("pa", "1:2.0-1", "amd64", "suite", 123, "ab")
    assert idx["pa"].deb_name == "pa_1%3a2.0-1_amd64.deb"
    assert idx["pb"].source == "pb" and idx["pb"].size == 30000000


def test_lock_round_trip(tmp_path):
    lock = da.Lock("de", "http://deb.debian.org/debian bookworm main amd64", "12.0 x",
                   20000000, {"Translation-de": ("aa", 3)},
                   [da.LockedPackage("b", "1", "all", "b", 5, "cc"),
                    da.LockedPackage("a", "2:1", "amd64", "src", 6, "dd")],
                   [da.LockedPackage("big", "1", "all", "big", 30000000, "")],
                   {"a-doc": "src"})
    da.write_lock(str(tmp_path / "l"), lock)
    back = da.read_lock(str(tmp_path / "l"))
    assert [p.name for p in back.packages] == ["a", "b"]
    assert back.packages[0] == lock.packages[1] and back.skipped == lock.skipped
    assert back.indexes == lock.indexes and back.sources == lock.sources
    assert back.release == "12.0 x" and back.size_limit == 20000000


def test_apt_download_names_the_package_apt_refuses(world, tmp_path, monkeypatch):
    """AptRoot.download against a stand-in apt-get on PATH (no network): a batch that apt
    refuses is retried one package at a time, so the error names the missing one."""
    fake = tmp_path / "bin"
    fake.mkdir()
    log = tmp_path / "apt.log"
    (fake / "apt-get").write_text(f"""#!/bin/sh
echo "$@" >> {log}
case "$*" in *update*) mkdir -p "$(dirname "$0")/../aptroot/lists"
  touch "$(dirname "$0")/../aptroot/lists/x_dists_bookworm_main_binary-amd64_Packages"; exit 0;;
esac
for a in "$@"; do case "$a" in ghost=*) echo "E: Can't find a source to download version '9' of 'ghost:amd64'" >&2; exit 100;; esac; done
for a in "$@"; do case "$a" in *=*) n="${{a%%=*}}"; cp {world['debs']}/"$n"_*.deb . ;; esac; done
""")
    (fake / "apt-get").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    apt = da.AptRoot(str(tmp_path / "aptroot"), ["de"])
    lock = da.read_lock(str(world["lock"]))
    dest = tmp_path / "dl"
    dest.mkdir()
    apt.download(lock.packages[:2], str(dest))
    assert sorted(os.listdir(dest)) == sorted(p.deb_name for p in lock.packages[:2])
    ghost = da.LockedPackage("ghost", "9", "amd64", "ghost", 1, "0" * 64)
    with pytest.raises(da.ArchiveError, match=r"package ghost version 9: apt-get download "
                                              r"failed \(exit 100\): E: Can't find a source"):
        apt.download([lock.packages[0], ghost], str(dest))
    calls = log.read_text().splitlines()
    assert calls[0].endswith("update") and len(calls) == 5  # update, ok, batch, app00, ghost
