"""Pairs from one package's gettext catalogs (the .mo files the package cache kept).

Per message: the header entry is skipped; msgctxt is dropped from the pair (the context only
tells entries apart; deduplication on the source keeps the first); plural entries pair the
singular msgid with msgstr[0] (the singular form in de and fr); an empty msgstr is
'untranslated'. Fuzzy entries never reach a .mo file (msgfmt leaves them out unless run with
--use-fuzzy, which cannot be seen in the compiled file). The rest runs pair_filters.
"""
from __future__ import annotations

from collections import Counter
from typing import List, Tuple

from .mo_reader import MoFormatError, parse_mo
from .pair_filters import FilterConfig, clean_entry


class CatalogError(ValueError):
    pass


def package_pairs(package: str, catalogs: List[dict], cfg: FilterConfig
                  ) -> Tuple[List[Tuple[str, str]], Counter, List[dict]]:
    """catalogs: [{'path': archive path, 'file': cached file, 'sha256': ...}] in order.
    Returns (pairs, counts, per-catalog info). Raises CatalogError naming package and file."""
    counts: Counter = Counter()
    seen: set = set()
    out: List[Tuple[str, str]] = []
    info = []
    for c in catalogs:
        try:
            with open(c["file"], "rb") as f:
                blob = f.read()
            cat = parse_mo(blob, f"package {package}: /{c['path']}")
        except MoFormatError as e:
            raise CatalogError(f"{e} (cached as {c['file']}; a corrupt catalog in the "
                               "package: remove it from the lock or fix the file)") from e
        info.append({"path": c["path"], "sha256": c["sha256"], "entries": len(cat.entries),
                     "charset": cat.charset})
        counts["undecodable"] += cat.skipped_undecodable
        for e in cat.entries:
            counts["entries"] += 1
            if e.context is not None:
                counts["with_context"] += 1
            if e.plural:
                counts["plural_singular_used"] += 1
            if not e.msgstr.strip():
                counts["untranslated"] += 1
                continue
            clean_entry(e.msgid, e.msgstr, cfg, counts, seen, out)
    counts["kept"] = len(out)
    return out, counts, info
