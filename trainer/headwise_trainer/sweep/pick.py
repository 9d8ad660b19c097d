"""`sweep pick`: the points the study goes on from, chosen from the records by stated rules, so
that no choice is made by hand:

  enc   the encoder-only point the "10 of 48 encoder heads" claim rests on (claims.py: the
        highest BLEU among encoder-only L0 points with <= 10 encoder heads and a control); the
        study's phase 2 runs it with more seeds
  all   the all-types point the "a quarter of the heads" claim rests on (the same with <= a
        quarter of all heads); phase 2 runs it with more seeds and trains its layout from scratch
  ship  the model to ship (issue 13 item 8): among seed-1 L0 points whose BLEU is within
        SHIP_MARGIN of their control (point estimate), the fewest heads kept in all; ties go to
        the higher BLEU

Each prints one JSON object (name, setting, lambda, seed, heads kept, BLEU, control, difference)
or, with --field, that field alone (for scripts). No candidate: ValueError (headwise-train exits
with status 1 and the reason on stderr).
"""
from __future__ import annotations

import json
from typing import Optional, Tuple

from .claims import (ALL_SHARE, ENC_HEADS, best_within, is_encoder_candidate,
                     is_quarter_candidate)
from .points import Comparisons, bleu, control_of, fmt_diff, is_pruned_l0, kept, seed
from .records import load_points

SHIP_MARGIN = 1.0  # BLEU below the control a shipped pruned model may lose (issue 13 item 8)

RULES = {
    "enc": f"phase 2's encoder-only point: the highest BLEU with <= {ENC_HEADS} encoder heads and "
           "a control",
    "all": f"phase 2's all-types point: the highest BLEU with <= {ALL_SHARE:.0%} of the heads "
           "and a control",
    "ship": f"the pruned model to ship: seed 1, within {SHIP_MARGIN:g} BLEU of its control, the "
            "fewest heads kept",
}


Choice = Tuple[Optional[dict], Optional[dict], Optional[dict]]  # point, control, difference


def pick_ship(points, cmp: Comparisons, search: str) -> Choice:
    """The point `ship` names, its control and difference (all None when there is none)."""
    best = None
    for r in points:
        if not is_pruned_l0(r) or seed(r) != 1 or bleu(r, search) is None:
            continue
        c = control_of(points, r)
        d = cmp.diff(r, c, search)
        if d is None or d["delta"] < -SHIP_MARGIN:
            continue
        key = (sum(kept(r)), -bleu(r, search))
        if best is None or key < best[0]:
            best = (key, r, c, d)
    return (None, None, None) if best is None else best[1:]


def choose(points, what: str, search: str, cmp: Optional[Comparisons] = None) -> Choice:
    """The point rule `what` names, its control and difference (all None when there is none).
    `cmp`: the caller's Comparisons, so that differences it has computed are not computed again."""
    cmp = cmp if cmp is not None else Comparisons()
    if what == "ship":
        return pick_ship(points, cmp, search)
    rule = is_encoder_candidate if what == "enc" else is_quarter_candidate
    best, c, d = best_within(points, cmp, rule, search)
    return (best, c, d) if best is not None and c is not None else (None, None, None)


def describe(r: dict, c: dict, d: dict, search: str) -> dict:
    return {"name": r["name"], "setting": r["setting"], "lambda": r["lambda"], "seed": seed(r),
            "heads_kept": list(kept(r)), "search": search, "bleu": bleu(r, search),
            "control": c["name"], "control_bleu": bleu(c, search), "delta": d["delta"],
            **({"delta_low": d["delta_low"], "delta_high": d["delta_high"]}
               if "delta_low" in d else {})}


def pick_rows(points, search: str, cmp: Optional[Comparisons] = None):
    """Markdown table rows of every rule's choice (the report's "Picks" section)."""
    rows = ["| rule | point | heads kept enc/dec/cross | BLEU | vs control |",
            "|---|---|---|---|---|"]
    for what, text in RULES.items():
        r, c, d = choose(points, what, search, cmp)
        if r is None:
            rows.append(f"| `{what}`: {text} | none yet | | | |")
            continue
        rows.append(f"| `{what}`: {text} | {r['name']} | {'/'.join(map(str, kept(r)))} | "
                    f"{bleu(r, search):.2f} | {fmt_diff(d)} against {c['name']} |")
    return rows


def run_pick(args) -> None:
    points, _ = load_points(args.root)
    r, c, d = choose(points, args.what, args.search)
    if r is None:
        raise ValueError(f"no point under {args.root} satisfies the '{args.what}' rule yet "
                       f"({args.search} scores; `headwise-train sweep pick --help` states it)")
    out = describe(r, c, d, args.search)
    print(out[args.field] if args.field else json.dumps(out, sort_keys=True))
