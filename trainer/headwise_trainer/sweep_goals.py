"""The verdicts of issue 4's goals and the comparison with the paper, computed from the sweep's
result records (sweep_eval.py): each pruned point against the lambda-0 control of the same
fine-tuning budget, rank-pruned points against the base."""
from __future__ import annotations

from typing import List, Optional, Tuple

CONTROL, BASE, START, SHIPPED = "all-0", "base", "start", "all-0.015"

# Voita et al. 2019, EN-RU transformer-base (shared/reference/head-pruning.md).
PAPER_ENC = [("WMT", 48, 29.6), ("WMT", 10, 29.45), ("OpenSubtitles", 48, 32.4),
             ("OpenSubtitles", 4, 32.15)]
PAPER_ALL = [("WMT", "48/48/48", 29.6, 29.6), ("WMT", "14/31/30", 29.62, 29.47),
             ("WMT", "12/21/25", 29.36, 28.95), ("WMT", "8/13/15", 29.06, 28.56),
             ("WMT", "5/9/12", 28.90, 28.41), ("OpenSubtitles", "48/48/48", 32.4, 32.4),
             ("OpenSubtitles", "27/31/46", 32.24, 32.23), ("OpenSubtitles", "13/17/31", 32.23, 31.98),
             ("OpenSubtitles", "6/9/13", 32.27, 31.84)]


def kept(r: dict) -> Tuple[int, int, int]:
    hk = r["heads_kept"]
    return sum(hk["encoder_self"]), sum(hk["decoder_self"]), sum(hk["decoder_cross"])


def rank_evidence(points: List[dict], pick, limit: float) -> str:
    """The best rank-pruned point (no fine-tuning) that fits a goal, against the base."""
    base = next((r for r in points if r.get("name") == BASE), None)
    best = max((r for r in points if r["kind"] == "rank" and pick(r)),
               key=lambda r: r["bleu"], default=None)
    if base is None or best is None:
        return ""
    d = best["bleu"] - base["bleu"]
    return (f" Without fine-tuning, rank pruning of the base ({best['name']}: "
            f"{'/'.join(map(str, kept(best)))} heads, BLEU {best['bleu']}) is {d:+.2f} against the "
            f"base's {base['bleu']}: {'within' if d >= -limit else 'outside'} the {limit} BLEU "
            "margin.")


def steps(r: dict) -> Optional[int]:
    return (r.get("run") or {}).get("steps")


def budgets(points: List[dict]) -> List[int]:
    """Fine-tuning step counts of the L0 points, largest first."""
    return sorted({steps(r) or 0 for r in points if r["kind"] == "l0"}, reverse=True)


def control_of(points: List[dict], setting: str, budget: int) -> Optional[dict]:
    return next((r for r in points if r["kind"] == "l0" and r.get("lambda") == 0
                 and r["setting"] == setting and (steps(r) or 0) == budget), None)


def goals_at(points: List[dict], budget: int) -> List[str]:
    """The two goals of issue 4 for the L0 points of one step budget, each with the evidence
    and a plain met / not met / open, against the lambda-0 control of the same budget."""
    l0 = [r for r in points if r["kind"] == "l0" and r.get("lambda")
          and (steps(r) or 0) == budget]
    control = control_of(points, "all", budget)
    ref = (f"the lambda-0 control {control['name']} ({control['bleu']})" if control else
           "the lambda-0 control")
    enc = [r for r in l0 if r["setting"] == "enc" and kept(r)[0] <= 10]
    best = max(enc, key=lambda r: r["bleu"], default=None)
    enc_control = control_of(points, "enc", budget)
    c1 = enc_control or control
    ref1 = (f"the encoder-only lambda-0 control {c1['name']} ({c1['bleu']})" if enc_control else
            ref + ", which also trains the decoder (no encoder-only lambda-0 run)")
    if c1 is None or best is None:
        verdict = "**open**: " + ("no lambda-0 control with a result" if c1 is None else
                                  "no encoder-only L0 point with <= 10 encoder heads has a result")
    else:
        d = best["bleu"] - c1["bleu"]
        verdict = (f"**{'met' if d >= -0.5 else 'not met'}**: {best['name']} keeps "
                   f"{kept(best)[0]}/48 encoder heads at BLEU {best['bleu']}, {d:+.2f} against "
                   f"{ref1}")
    out = [f"1. 10 of 48 encoder heads at <= 0.5 BLEU below the full model: {verdict}."]
    alls = [r for r in l0 if r["setting"] == "all"]
    strict = [r for r in alls if kept(r)[0] <= 12 and kept(r)[1] <= 6 and kept(r)[2] <= 6]
    loose = [r for r in alls if sum(kept(r)) <= 24]
    parts = []
    for what, cands in (("each type at <= 1/4 (<= 12/6/6 heads)", strict),
                        ("<= 24 of 96 heads in total", loose)):
        best = max(cands, key=lambda r: r["bleu"], default=None)
        if control is None or best is None:
            parts.append(f"{what}: **open** (no {'control' if control is None else 'such point'} "
                         f"with a result)")
            continue
        d = best["bleu"] - control["bleu"]
        parts.append(f"{what}: **{'met' if d >= -1.0 else 'not met'}**, {best['name']} keeps "
                     f"{'/'.join(map(str, kept(best)))} at BLEU {best['bleu']}, {d:+.2f} against "
                     f"{ref}")
    out.append("2. All three types pruned to a quarter of their heads at <= 1 BLEU below: "
               + "; ".join(parts) + ".")
    return out


def goals(points: List[dict]) -> List[str]:
    out = []
    for b in budgets(points):
        out += ["", f"After {b} fine-tuning steps:", "", *goals_at(points, b)]
    out += ["", "Without fine-tuning (rank pruning of the base, against the base):", "",
            "1." + (rank_evidence(points, lambda r: r["setting"] == "enc" and kept(r)[0] <= 10, 0.5)
                    or " no result."),
            "2." + (rank_evidence(points, lambda r: r["setting"] == "all"
                                  and sum(kept(r)) <= 24, 1.0) or " no result.")]
    return out


def side_by_side(points: List[dict]) -> List[str]:
    """BLEU change against the unpruned model: the paper's EN-RU numbers beside ours."""
    by = {r["name"]: r for r in points}
    rows = ["| pruning | Voita et al. WMT | Voita et al. OpenSubtitles | en-de (this repository) |",
            "|---|---|---|---|"]

    def ours(pick, ref_of) -> str:
        cells = []
        for r in sorted((r for r in points if pick(r)), key=lambda r: -r["bleu"]):
            ref = ref_of(r)
            if ref:
                cells.append(f"{r['name']} ({'/'.join(map(str, kept(r)))}): "
                             f"{r['bleu'] - ref['bleu']:+.2f}")
        return "; ".join(cells[:3]) or "no result"

    ctrl = lambda r: control_of(points, "enc", steps(r) or 0) or \
        control_of(points, "all", steps(r) or 0)  # noqa: E731
    base = lambda r: by.get(BASE)  # noqa: E731
    rows.append("| encoder self only, ~10 of 48 heads kept, fine-tuned | 10 heads: -0.15 | "
                "4 heads: -0.25 | " + ours(lambda r: r["kind"] == "l0" and r.get("lambda")
                                          and r["setting"] == "enc" and kept(r)[0] <= 12, ctrl)
                + " (vs the lambda-0 control) |")
    rows.append("| encoder self only, 10 of 48 heads by rank, no fine-tuning | | | "
                + ours(lambda r: r["kind"] == "rank" and r["setting"] == "enc"
                       and r["keep"] == 10, base) + " (vs the base) |")
    rows.append("| all three types, about a quarter kept, fine-tuned | 8/13/15: -0.54 | "
                "6/9/13: -0.13 | " + ours(lambda r: r["kind"] == "l0" and r.get("lambda")
                                         and r["setting"] == "all" and sum(kept(r)) <= 32,
                                         lambda r: control_of(points, "all", steps(r) or 0))
                + " (vs the lambda-0 control) |")
    scratch = [r for r in points if r["kind"] == "scratch"]
    rows.append("| same layout trained from scratch, vs pruned | 8/13/15: -0.50 | 6/9/13: -0.43 | "
                + ("; ".join(f"{r['name']}: {r['bleu'] - by[SHIPPED]['bleu']:+.2f} against "
                             f"{SHIPPED}" for r in scratch if SHIPPED in by) or "no result")
                + " |")
    return rows
