"""The converter's --keep-heads spec (converter/src/keep_heads.h), for evaluating head layouts.

Syntax (whitespace ignored; entries separated by ';' or newlines; '#' comments to line end):
  ENTRY  := KIND '.' LAYERS '=' HEADS
  KIND   := enc | dec | cross | *          LAYERS := N | N-M | *
  HEADS  := all | none | (empty = none) | ITEM (',' ITEM)*     ITEM := N | N-M
The listed heads are KEPT. Entries apply in order, the last one naming a block wins; blocks no
entry names keep their gates' decision (log_alpha > 0; every head without a gate). So
``apply_spec(parse_spec(s), model)`` is exactly the layout ``headwise-convert --keep-heads s``
builds from the same checkpoint.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .gates import head_layout
from .marian import MarianMTModel

KIND_NAMES = {"enc": ("encoder_self",), "dec": ("decoder_self",), "cross": ("decoder_cross",),
              "*": ("encoder_self", "decoder_self", "decoder_cross")}
_NUM = re.compile(r"^[0-9]{1,9}$")


class KeepHeadsError(ValueError):
    pass


@dataclass
class Entry:
    text: str
    kinds: Tuple[str, ...]
    layers: Optional[Tuple[int, int]]     # inclusive range; None = every layer
    heads: Optional[List[int]] = field(default=None)  # None = all heads


def _range(s: str) -> Optional[Tuple[int, int]]:
    a, sep, b = s.partition("-")
    if not _NUM.match(a) or (sep and not _NUM.match(b)):
        return None
    return int(a), int(b if sep else a)


def _error(index: int, text: str, what: str) -> KeepHeadsError:
    return KeepHeadsError(f"--keep-heads entry {index} '{text}': {what}")


def parse_spec(text: str) -> List[Entry]:
    entries: List[Entry] = []
    raw = []
    for line in text.split("\n"):
        raw.extend(line.split("#", 1)[0].split(";"))
    for part in raw:
        entry_text = part.strip()
        if not entry_text:
            continue
        index = len(entries) + 1
        squeezed = "".join(entry_text.split())
        if squeezed.count("=") != 1:
            raise _error(index, entry_text, "expected BLOCKS=HEADS with one '=', e.g. enc.0=0,3")
        blocks, heads = squeezed.split("=")
        kind, dot, layers = blocks.partition(".")
        if kind not in KIND_NAMES:
            raise _error(index, entry_text, f"unknown block kind '{kind}'; expected enc, dec, "
                                            "cross or *")
        if not dot:
            raise _error(index, entry_text, "expected KIND.LAYER before '=', e.g. enc.0 or "
                                            "cross.*")
        layer_range = None
        if layers != "*":
            layer_range = _range(layers)
            if layer_range is None:
                raise _error(index, entry_text, f"expected a layer N, a range N-M or *, found "
                                                f"'{layers}'")
            if layer_range[1] < layer_range[0]:
                raise _error(index, entry_text, f"layer range {layers} is reversed")
        head_list: Optional[List[int]] = []
        if heads == "all":
            head_list = None
        elif heads not in ("", "none"):
            for item in heads.split(","):
                r = _range(item)
                if r is None:
                    raise _error(index, entry_text, "expected heads as all, none, N or N-M "
                                                    f"separated by commas, found '{item}'")
                if r[1] < r[0]:
                    raise _error(index, entry_text, f"head range {item} is reversed")
                for h in range(r[0], r[1] + 1):
                    if h in head_list:
                        raise _error(index, entry_text, f"head {h} is listed twice")
                    head_list.append(h)
            head_list.sort()
        entries.append(Entry(entry_text, KIND_NAMES[kind], layer_range, head_list))
    if not entries:
        raise KeepHeadsError("--keep-heads: the spec has no entries; expected e.g. "
                             "'enc.0=0,3;dec.*=all'")
    return entries


def spec_text(arg: str) -> str:
    """The spec for a --keep-heads argument: the file's contents if ``arg`` names a file."""
    if os.path.isfile(arg):
        with open(arg, encoding="utf-8") as f:
            return f.read()
    return arg


def apply_spec(entries: List[Entry], model: MarianMTModel) -> Dict[str, List[int]]:
    """Block name -> kept heads: the gates' layout with the entries applied in order."""
    layout = head_layout(model)
    by_kind: Dict[str, List[Tuple[str, int]]] = {}
    for name, kind, _, attn in model.attention_blocks():
        by_kind.setdefault(kind, []).append((name, attn.num_heads))
    for index, e in enumerate(entries, 1):
        for kind in e.kinds:
            blocks = by_kind.get(kind, [])
            n_layers = len(blocks)
            first, last = e.layers if e.layers is not None else (0, n_layers - 1)
            stack = "the encoder" if kind == "encoder_self" else "the decoder"
            if last >= n_layers:
                raise _error(index, e.text, f"layer {last} out of range, {stack} has "
                                            f"{n_layers} layers (0-{n_layers - 1})")
            for name, heads in blocks[first:last + 1]:
                if e.heads is not None and e.heads and e.heads[-1] >= heads:
                    raise _error(index, e.text, f"head {e.heads[-1]} out of range, {name} has "
                                                f"{heads} heads (0-{heads - 1})")
                layout[name] = list(range(heads)) if e.heads is None else list(e.heads)
    return layout
