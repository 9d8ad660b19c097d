"""How far two head rankings agree: Spearman correlation and top-K overlap per attention type.

A ranking is one number per head from an analysis.json (a field of its head entries:
relevance, relevance_z, relevance_attnlrp, michel, confidence), pooled over the layers of each
attention type (encoder self, decoder self, decoder cross). The models/en-de analysis README
quotes these numbers (AttnLRP vs z-rule, 150 vs 500 sentences):

    PYTHONPATH=trainer python3 -m headwise_trainer.analysis.compare \\
        base/analysis-both-rules-150.json:relevance base/analysis-both-rules-150.json:relevance_z
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Dict, List, Optional, Sequence

KINDS = ("encoder_self", "decoder_self", "decoder_cross")


def ranks(values: Sequence[float]) -> List[float]:
    """Ranks 0..n-1 by value; tied values share the mean of their ranks."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2
        i = j + 1
    return out


def spearman(a: Sequence[float], b: Sequence[float]) -> Optional[float]:
    """Pearson correlation of the ranks; None when either side is constant."""
    if len(a) != len(b):
        raise ValueError(f"rankings of different lengths: {len(a)} and {len(b)} heads")
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return None if va == 0 or vb == 0 else cov / (va * vb) ** 0.5


def top_overlap(a: Sequence[float], b: Sequence[float], k: int) -> int:
    """Heads among the k highest of both rankings (ties broken by head order)."""
    def top(v):
        return set(sorted(range(len(v)), key=lambda i: (-v[i], i))[:k])
    return len(top(a) & top(b))


def head_values(doc: dict, field: str) -> Dict[str, List[float]]:
    """{kind: [value per head, layers in order]} of one analysis.json field."""
    out: Dict[str, List[float]] = {}
    for block in doc["blocks"]:
        for h in block["heads"]:
            if field not in h or h[field] is None:
                raise ValueError(f"{block['name']} head {h['head']}: no '{field}' "
                                 f"(fields: {', '.join(sorted(h))})")
            out.setdefault(block["kind"], []).append(float(h[field]))
    return out


def compare(a: dict, field_a: str, b: dict, field_b: str, k: int = 8) -> Dict[str, dict]:
    va, vb = head_values(a, field_a), head_values(b, field_b)
    return {kind: {"heads": len(va[kind]), "spearman": spearman(va[kind], vb[kind]),
                   f"top{k}_overlap": top_overlap(va[kind], vb[kind], k)}
            for kind in KINDS if kind in va and kind in vb}


def _load(spec: str):
    path, _, field = spec.rpartition(":")
    if not path:
        path, field = spec, "relevance"
    with open(path, encoding="utf-8") as f:
        return json.load(f), field


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description="Spearman correlation and top-K overlap of two "
                                "head rankings (FILE[:FIELD], FIELD default relevance)")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--top", type=int, default=8)
    args = p.parse_args(argv)
    (da, fa), (db, fb) = _load(args.a), _load(args.b)
    for kind, r in compare(da, fa, db, fb, args.top).items():
        rho = "n/a" if r["spearman"] is None else f"{r['spearman']:.2f}"
        print(f"{kind}: spearman {rho}, top-{args.top} overlap "
              f"{r[f'top{args.top}_overlap']} of {r['heads']} heads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
