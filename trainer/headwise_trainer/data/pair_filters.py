"""The per-pair filter chain shared by the catalog and the package-description sources.

An entry (one catalog message or one description) is split into pieces (ui_text.split_pair),
and each piece runs the chain below in this order; the first rule that fails drops it and
counts it under its name. The counts travel in a Counter keyed by these names.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import List, Optional, Tuple

from . import ui_text

# (counter key, what it means) in the order applied; documented in the manifest and data card.
PIECE_FILTERS = [
    ("empty", "a side is empty after whitespace normalisation"),
    ("technical", "the source is a message key, not text ('translator-credits', 'gtk-ok')"),
    ("format_only", "no letter in the source outside placeholders and tags"),
    ("placeholders_differ", "printf/brace/Qt/$VAR placeholders differ between the sides"),
    ("markup_differ", "the sides hold different markup tags"),
    ("identical", "source == target (untranslated copy, or a name)"),
    ("too_long", "a side is longer than max_chars"),
    ("length_ratio", "target/source length ratio outside [ratio_lo, ratio_hi]"),
    ("duplicate_in_package", "the source already came earlier in the same package"),
]


@dataclass(frozen=True)
class FilterConfig:
    max_chars: int = 400
    ratio_lo: float = 0.4
    ratio_hi: float = 2.5


def clean_piece(src: str, tgt: str, cfg: FilterConfig, counts: Counter
                ) -> Optional[Tuple[str, str]]:
    """Runs the chain on one normalised piece (not the duplicate check); None when dropped."""
    src, tgt, accel = ui_text.strip_accelerators(src, tgt)
    if accel:
        counts["accelerators_removed"] += 1
    src, tgt = ui_text.normalize_ws(src), ui_text.normalize_ws(tgt)
    if not src or not tgt:
        key = "empty"
    elif ui_text.is_technical(src):
        key = "technical"
    elif ui_text.is_format_only(src):
        key = "format_only"
    elif ui_text.placeholders(src) != ui_text.placeholders(tgt):
        key = "placeholders_differ"
    elif ui_text.tags(src) != ui_text.tags(tgt):
        key = "markup_differ"
    elif src == tgt:
        key = "identical"
    elif cfg.max_chars and (len(src) > cfg.max_chars or len(tgt) > cfg.max_chars):
        key = "too_long"
    elif not ui_text.length_ratio_ok(src, tgt, cfg.ratio_lo, cfg.ratio_hi):
        key = "length_ratio"
    else:
        return src, tgt
    counts[key] += 1
    return None


def clean_entry(src: str, tgt: str, cfg: FilterConfig, counts: Counter, seen: set,
                out: List[Tuple[str, str]]) -> None:
    """Splits one entry into pieces, cleans each, appends the survivors not seen before."""
    pieces = ui_text.split_pair(src, tgt)
    if len(pieces) > 1:
        counts["entries_split"] += 1
    counts["pieces"] += len(pieces)
    for a, b in pieces:
        r = clean_piece(a, b, cfg, counts)
        if r is None:
            continue
        if r[0] in seen:
            counts["duplicate_in_package"] += 1
            continue
        seen.add(r[0])
        out.append(r)
