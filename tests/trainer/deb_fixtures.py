"""Test fixtures for the corpus: GNU .mo catalogs, tiny .deb packages (dpkg-deb -b), lock files
and DDTP index files, all written here, so the Debian-corpus tests run offline and fast."""
import hashlib
import os
import struct
import subprocess


def make_mo(entries, big_endian=False, revision=0):
    """A GNU .mo file (format of the gettext manual) from (original, translation) str pairs."""
    e = ">" if big_endian else "<"
    enc = lambda x: x if isinstance(x, bytes) else x.encode("utf-8")  # noqa: E731
    pairs = sorted((enc(o), enc(t)) for o, t in entries)
    n = len(pairs)
    orig_tab, trans_tab = 28, 28 + 8 * n
    hash_off = 28 + 16 * n
    pos = hash_off
    blob, otab, ttab = b"", b"", b""
    for o, _ in pairs:
        otab += struct.pack(e + "2I", len(o), pos)
        blob += o + b"\0"
        pos += len(o) + 1
    for _, t in pairs:
        ttab += struct.pack(e + "2I", len(t), pos)
        blob += t + b"\0"
        pos += len(t) + 1
    head = struct.pack(e + "7I", 0x950412DE, revision, n, orig_tab, trans_tab, 0, hash_off)
    return head + otab + ttab + blob


HEADER = "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n != 1);\n"


def make_deb(out_dir, name, version, files, arch="all"):
    """Builds NAME_VERSION_ARCH.deb in out_dir holding files {archive path: bytes}; returns
    (path, sha256, size)."""
    root = os.path.join(out_dir, f"build-{name}")
    os.makedirs(os.path.join(root, "DEBIAN"), exist_ok=True)
    with open(os.path.join(root, "DEBIAN", "control"), "w") as f:
        f.write(f"Package: {name}\nVersion: {version}\nArchitecture: {arch}\n"
                "Maintainer: headwise tests <tests@example.invalid>\n"
                f"Description: test package {name}\n")
    for path, blob in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(blob)
    deb = os.path.join(out_dir, f"{name}_{version.replace(':', '%3a')}_{arch}.deb")
    subprocess.run(["dpkg-deb", "-Zgzip", "--root-owner-group", "-b", root, deb], check=True,
                   capture_output=True)
    blob = open(deb, "rb").read()
    return deb, hashlib.sha256(blob).hexdigest(), len(blob)


def write_lock(path, lang, debs, indexes=None, sources=None, skipped=()):
    """debs: [(name, version, arch, source, size, sha256)]; indexes: {name: (sha256, size)}."""
    lines = ["format headwise-lock/1", f"lang {lang}",
             "archive http://deb.debian.org/debian bookworm main amd64",
             "release 12.0 test", "size-limit 20000000"]
    for n, (sha, size) in sorted((indexes or {}).items()):
        lines.append(f"index {n} {sha} {size}")
    for d in debs:
        lines.append("pkg " + " ".join(str(x) for x in d))
    for d in skipped:
        lines.append("skip " + " ".join(str(x) for x in d[:5]) + " over-size-limit")
    for src, bins in sorted((sources or {}).items()):
        lines.append(f"src {src} {' '.join(bins)}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def store_ddtp(cache, name, text):
    """Puts a Translation-* index copy where the build looks for it; returns (sha256, size)."""
    blob = text.encode("utf-8")
    sha = hashlib.sha256(blob).hexdigest()
    os.makedirs(os.path.join(cache, "ddtp"), exist_ok=True)
    with open(os.path.join(cache, "ddtp", f"{sha}.{name}"), "wb") as f:
        f.write(blob)
    return sha, len(blob)
