"""The sweep's result records (point_eval.py) as the report reads them: scores per search, heads
kept, the control of each point, and paired bootstrap differences (metrics.paired_bootstrap)
computed from the records' segment statistics. Nothing here knows a fact about a particular
run: every number comes from a record.

Controls: an L0 point (kind "l0", lambda > 0) is compared with the lambda-0 point of the same
setting, fine-tuning steps and seed (seed 1's when that seed has none; for an encoder-only
point the all-types control when no encoder-only one exists); a rank point with the record
named BASE (the unpruned model, `sweep runs --reference base=MODEL`); a from-scratch point with
the L0 point whose layout it trains.

Seeds: a point run with several seeds (names ending -seedN) is also compared as a whole: the
mean over its seeds of each seed's difference from the control of the same seed
(Comparisons.diff_seeds, metrics.paired_bootstrap_mean).
"""
from __future__ import annotations

import statistics
from typing import Dict, List, Optional, Sequence, Tuple

from ..evaluation.metrics import paired_bootstrap, paired_bootstrap_mean

BASE = "base"
SEARCH_LABEL = {"greedy": "greedy", "beam4": "beam 4"}


def kept(r: dict) -> Tuple[int, int, int]:
    hk = r["heads_kept"]
    return sum(hk["encoder_self"]), sum(hk["decoder_self"]), sum(hk["decoder_cross"])


def source_heads(r: dict) -> Tuple[int, int, int]:
    """Heads per kind of the unpruned model (the record's "heads_source")."""
    hs = r["heads_source"]
    return hs["encoder_self"], hs["decoder_self"], hs["decoder_cross"]


def steps(r: dict) -> int:
    return (r.get("run") or {}).get("steps") or 0


def seed(r: dict) -> int:
    return int(r.get("seed") or (r.get("run") or {}).get("args", {}).get("seed") or 1)


def searches(points: Sequence[dict]) -> List[str]:
    """The searches every scored point has, in a fixed order (greedy first). Rank points do
    not count when other points exist: they are scored greedy only (scripts/pruning-study.sh
    rank), and their tables show "-" for a search they lack."""
    scored = [r for r in points if r.get("kind") != "rank"] or list(points)
    have = [set((r.get("searches") or {"greedy": None}).keys()) for r in scored]
    common = set.intersection(*have) if have else set()
    return [s for s in ("greedy", "beam4") if s in common]


def bleu(r: dict, search: str = "greedy") -> Optional[float]:
    s = (r.get("searches") or {}).get(search)
    if s is not None:
        return s["bleu"]
    return r.get("bleu") if search == "greedy" else None


def is_pruned_l0(r: dict) -> bool:
    return r["kind"] == "l0" and bool(r.get("lambda"))


def control_of(points: Sequence[dict], r: dict) -> Optional[dict]:
    """The control a point is compared with (module doc), or None."""
    if r["kind"] == "rank":
        return next((p for p in points if p.get("name") == BASE), None)
    if r["kind"] == "scratch":
        return next((p for p in points if is_pruned_l0(p) and p["layout"] == r["layout"]), None)
    if r["kind"] != "l0":
        return None
    for setting in ([r["setting"], "all"] if r["setting"] == "enc" else [r["setting"]]):
        for s in (seed(r), 1):
            c = next((p for p in points if p["kind"] == "l0" and p.get("lambda") == 0
                      and p["setting"] == setting and steps(p) == steps(r) and seed(p) == s),
                     None)
            if c is not None and c is not r:
                return c
    return None


class Comparisons:
    """Paired bootstrap differences of point minus control, computed once per pair."""

    def __init__(self):
        self._cache: Dict[Tuple[str, str, str], Optional[dict]] = {}

    def diff(self, r: dict, control: Optional[dict], search: str) -> Optional[dict]:
        if control is None:
            return None
        key = (r["name"], control["name"], search)
        if key not in self._cache:
            a = (r.get("segment_stats") or {}).get(search)
            b = (control.get("segment_stats") or {}).get(search)
            if a and b and len(a) == len(b):
                self._cache[key] = paired_bootstrap(a, b)
            elif bleu(r, search) is not None and bleu(control, search) is not None:
                self._cache[key] = {"delta": bleu(r, search) - bleu(control, search)}
            else:
                self._cache[key] = None
        return self._cache[key]


    def diff_seeds(self, pairs: Sequence[Tuple[dict, dict]], search: str) -> Optional[dict]:
        """The mean difference of the (point, control) pairs (seed_pairs), with one paired
        bootstrap for all of them when every record has segment statistics, else the mean of
        the score differences without an interval; None when a score is missing."""
        if not pairs:
            return None
        key = (tuple(p["name"] for p, _ in pairs), tuple(c["name"] for _, c in pairs), search)
        if key not in self._cache:
            stats = [((p.get("segment_stats") or {}).get(search),
                      (c.get("segment_stats") or {}).get(search)) for p, c in pairs]
            if all(a and b and len(a) == len(b) == len(stats[0][0]) for a, b in stats):
                self._cache[key] = paired_bootstrap_mean(stats)
            elif all(bleu(p, search) is not None and bleu(c, search) is not None
                     for p, c in pairs):
                deltas = [bleu(p, search) - bleu(c, search) for p, c in pairs]
                self._cache[key] = {"delta": statistics.mean(deltas), "deltas": deltas,
                                    "pairs": len(pairs)}
            else:
                self._cache[key] = None
        return self._cache[key]


def seed_pairs(points: Sequence[dict], r: dict) -> List[Tuple[dict, dict]]:
    """(seed's point, control of the same seed) for every seed of ``r``'s point that has a
    control of its own seed, in seed order. Empty when fewer than two seeds have one: a
    single seed is what Comparisons.diff compares already."""
    pairs = []
    for p in sorted(same_point_other_seeds(points, r), key=seed):
        c = control_of(points, p)
        if c is not None and seed(c) == seed(p):
            pairs.append((p, c))
    return pairs if len(pairs) > 1 else []


def fmt_diff(d: Optional[dict]) -> str:
    """'-0.42 [-0.81, -0.05]' (95% paired bootstrap interval), or '-0.42' without one."""
    if d is None:
        return "-"
    if "delta_low" not in d:
        return f"{d['delta']:+.2f}"
    return f"{d['delta']:+.2f} [{d['delta_low']:+.2f}, {d['delta_high']:+.2f}]"


def seed_spread(values: Sequence[float]) -> str:
    """'24.10 +- 0.12 (3 seeds)' (mean and sample standard deviation), or one value."""
    if len(values) == 1:
        return f"{values[0]:.2f} (1 seed)"
    return f"{statistics.mean(values):.2f} +- {statistics.stdev(values):.2f} ({len(values)} seeds)"


def same_point_other_seeds(points: Sequence[dict], r: dict) -> List[dict]:
    """The L0 points that differ from ``r`` only by seed (``r`` included)."""
    return [p for p in points if p["kind"] == "l0" and p["setting"] == r["setting"]
            and p.get("lambda") == r.get("lambda") and steps(p) == steps(r)]
