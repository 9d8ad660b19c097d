"""Head layouts as keep-heads specs, and layouts that keep the top-K heads of a ranking.

``layout_spec`` writes a layout in the converter's --keep-heads syntax (model/keep_heads.py), so the
layout of a pruned checkpoint can be given to ``train --head-layout`` or ``prune-eval
--keep-heads``. ``top_k_layout`` keeps the K best-scored heads of the chosen kinds, all blocks
together (a global ranking), and every head of the other kinds.
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, Tuple

from ..model.marian import MarianMTModel

SPEC_KIND = {"encoder_self": "enc", "decoder_self": "dec", "decoder_cross": "cross"}


def _heads(heads: Sequence[int]) -> str:
    return ",".join(str(h) for h in sorted(heads)) or "none"


def layout_spec(model: MarianMTModel, layout: Mapping[str, Sequence[int]]) -> str:
    """'enc.0=none; enc.3=5; ...' naming every block, in canonical order."""
    return "; ".join(f"{SPEC_KIND[kind]}.{layer}={_heads(layout[name])}"
                     for name, kind, layer, _ in model.attention_blocks())


def kept_per_kind(model: MarianMTModel, layout: Mapping[str, Sequence[int]]) -> Dict[str, int]:
    out = {k: 0 for k in SPEC_KIND}
    for name, kind, _, _ in model.attention_blocks():
        out[kind] += len(layout[name])
    return out


def top_k_layout(model: MarianMTModel, scores: Mapping[Tuple[str, int], float],
                 kinds: Sequence[str], k: int) -> Dict[str, List[int]]:
    """Keeps the ``k`` heads of ``kinds`` with the highest ``scores[(block, head)]`` (ties:
    canonical order, earlier first) and every head of the other kinds."""
    ranked = []
    for order, (name, kind, _, attn) in enumerate(model.attention_blocks()):
        if kind in kinds:
            for h in range(attn.num_heads):
                if (name, h) not in scores:
                    raise ValueError(f"no score for {name} head {h}")
                ranked.append((-scores[(name, h)], order, h, name))
    if not 0 <= k <= len(ranked):
        raise ValueError(f"keep {k} heads: expected 0..{len(ranked)} for {', '.join(kinds)}")
    keep = {(name, h) for _, _, h, name in sorted(ranked)[:k]}
    return {name: [h for h in range(attn.num_heads)
                   if kind not in kinds or (name, h) in keep]
            for name, kind, _, attn in model.attention_blocks()}
