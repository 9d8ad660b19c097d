"""`sweep gates`: where the gates that have not settled are going (issue 13 item 2).

A point's gates have settled when no log_alpha lies within the settle margin of 0 (gates.py). For
the gates of a point's newest checkpoint that have not, this compares log_alpha with the
previous kept checkpoint of the same run and sorts each gate into one class:

  crossed  the sign changed: the hard test-time decision flipped between the two checkpoints
  held     |change| < --hold: the penalty and the loss hold it near 0; more steps of the same
           objective do not settle it
  away     moving away from 0: more steps of the same objective would settle it
  toward   moving toward 0

Reads ROOT/<point>/run/ckpt-*.pt (the run directories stay in the sweep's cache, outside the
work tree); a point with fewer than two kept checkpoints, or without gates, is listed as such.
Prints one line per point and the totals; --json writes them.
"""
from __future__ import annotations

import json
import os
from typing import Dict, List, Optional

from ..model import run_state
from ..model.checkpoint import GATE_SUFFIX
from ..model.gates import DEFAULT_SETTLE_MARGIN

CLASSES = ("crossed", "held", "away", "toward")


def classify(before: float, after: float, hold: float) -> str:
    """The class of one unsettled gate whose log_alpha went from `before` to `after`."""
    if (before > 0) != (after > 0):
        return "crossed"
    if abs(after - before) < hold:
        return "held"
    return "away" if abs(after) > abs(before) else "toward"


def _gates(state: dict) -> Dict[str, List[float]]:
    return {k[: -len(GATE_SUFFIX)]: [float(x) for x in v.tolist()]
            for k, v in state["model"].items() if k.endswith(GATE_SUFFIX)}


def point_paths(run_dir: str, hold: float) -> Optional[dict]:
    """{steps, margin, unsettled, classes, gates} for one run directory, or None when it has
    fewer than two checkpoints or no gates."""
    ckpts = run_state.list_checkpoints(run_dir)
    if len(ckpts) < 2:
        return None
    (s0, p0), (s1, p1) = ckpts[-2], ckpts[-1]
    before = _gates(run_state.load_checkpoint_file(p0))
    after_state = run_state.load_checkpoint_file(p1)
    after = _gates(after_state)
    if not after:
        return None
    margin = float((after_state.get("prune_args") or {}).get("settle_margin",
                                                             DEFAULT_SETTLE_MARGIN))
    counts = {c: 0 for c in CLASSES}
    rows = []
    for block, values in after.items():
        for head, a in enumerate(values):
            if abs(a) >= margin:
                continue
            b = before[block][head]
            c = classify(b, a, hold)
            counts[c] += 1
            rows.append({"block": block, "head": head, "from": round(b, 4), "to": round(a, 4),
                         "class": c})
    return {"steps": [s0, s1], "margin": margin, "unsettled": len(rows), "classes": counts,
            "gates": rows}


def run_gates(args, log=print) -> dict:
    points = {}
    for name in sorted(os.listdir(args.root)):
        run_dir = os.path.join(args.root, name, "run")
        if os.path.isdir(run_dir):
            points[name] = point_paths(run_dir, args.hold)
    totals = {c: 0 for c in CLASSES}
    for name, p in points.items():
        if p is None:
            log(f"{name}: fewer than two kept checkpoints, or no gates")
            continue
        for c in CLASSES:
            totals[c] += p["classes"][c]
        log(f"{name}: steps {p['steps'][0]} -> {p['steps'][1]}, {p['unsettled']} unsettled "
            f"(|log_alpha| < {p['margin']:g}): " +
            ", ".join(f"{p['classes'][c]} {c}" for c in CLASSES))
    log(f"total: {sum(totals.values())} unsettled: " +
        ", ".join(f"{totals[c]} {c}" for c in CLASSES) + f" (held: |change| < {args.hold:g})")
    out = {"root": args.root, "hold": args.hold, "points": points, "totals": totals}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")
    return out
