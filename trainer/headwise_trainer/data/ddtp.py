"""Pairs from Debian's translated package descriptions (DDTP: Translation-en, Translation-LANG).

The two index files pair by Description-md5 (the md5 of the English description). A
description is its one-line synopsis plus long-description paragraphs (' .' lines separate
them; lines that start a list item with '*', '-', '+' or 'o' are their own units). Synopsis
pairs with synopsis; the long parts pair unit by unit where both sides have the same number of
units (else paragraph by paragraph where those agree, else not at all), and each unit is split
into sentences by pair_filters/ui_text where both sides agree. A description belongs to every
binary package that carries it; it is read once, for the first such package in name order.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Dict, List, Tuple

from .debian_archive import deb822_records
from .pair_filters import FilterConfig, clean_entry

_ITEM_RE = re.compile(r"^\s*(?:[*+\-o]|\d+[.)])\s+")


def _paragraphs(body_lines: List[str]) -> List[List[str]]:
    """Long-description lines (leading space removed) -> paragraphs of units (list items
    separate)."""
    paras: List[List[str]] = [[]]
    for ln in body_lines:
        if ln.strip() == ".":
            paras.append([])
            continue
        if _ITEM_RE.match(ln) or not paras[-1]:
            paras[-1].append(_ITEM_RE.sub("", ln).strip())
        elif ln.startswith("  "):  # verbatim (preformatted) line: its own unit
            paras[-1].append(ln.strip())
        else:
            paras[-1][-1] += " " + ln.strip()
    return [p for p in paras if p]


def split_description(text: str) -> Tuple[str, List[List[str]]]:
    lines = text.split("\n")
    synopsis = lines[0].strip()
    body = [ln[1:] if ln.startswith(" ") else ln for ln in lines[1:]]
    return synopsis, _paragraphs(body)


def _units(a: List[List[str]], b: List[List[str]]) -> List[Tuple[str, str]]:
    fa = [u for p in a for u in p]
    fb = [u for p in b for u in p]
    if len(fa) == len(fb):
        return list(zip(fa, fb))
    if len(a) == len(b):
        return [(" ".join(x), " ".join(y)) for x, y in zip(a, b)]
    return []


def read_translations(text: str, lang: str) -> Dict[str, Tuple[str, str]]:
    """Translation-LANG text -> md5 -> (first package in name order, description)."""
    key = f"Description-{lang}"
    out: Dict[str, Tuple[str, str]] = {}
    for r in deb822_records(text):
        md5, desc, pkg = r.get("Description-md5"), r.get(key), r.get("Package")
        if not md5 or desc is None or not pkg:
            continue
        if md5 not in out or pkg < out[md5][0]:
            out[md5] = (pkg, desc)
    return out


def description_pairs(en_text: str, tgt_text: str, lang: str, cfg: FilterConfig
                      ) -> Tuple[Dict[str, List[Tuple[str, str]]], Counter]:
    """binary package -> cleaned pairs (in file order), and the filter counts."""
    en = read_translations(en_text, "en")
    tg = read_translations(tgt_text, lang)
    counts: Counter = Counter()
    by_pkg: Dict[str, List[Tuple[str, str]]] = {}
    for md5 in sorted(tg, key=lambda m: (tg[m][0], m)):
        pkg, tdesc = tg[md5]
        counts["descriptions"] += 1
        if md5 not in en:
            counts["no_english"] += 1
            continue
        es, ep = split_description(en[md5][1])
        ts, tp = split_description(tdesc)
        units = [(es, ts)] + _units(ep, tp)
        if ep and len(units) == 1:
            counts["body_unaligned"] += 1
        counts["entries"] += len(units)
        seen: set = set()
        out = by_pkg.setdefault(pkg, [])
        for a, b in units:
            clean_entry(a, b, cfg, counts, seen, out)
    counts["kept"] = sum(len(v) for v in by_pkg.values())
    return by_pkg, counts
