"""`sweep report`: the sweep's result records -> a ROOT-independent JSON, the PNG of the curves
and the Markdown report (docs/pruning-results.md), beside the paper's EN-RU numbers.

Everything the report states about runs is computed from the records (point_eval.py) and the
analysis file the rank points name: settings, step counts, gate settings, controls, seeds,
paired bootstrap 95% intervals (metrics.paired_bootstrap, from the records' segment
statistics) and the verdicts (claims.py). Points that have no result are listed as
missing.
"""
from __future__ import annotations

import json
import os
import time
from typing import Dict, List, Optional, Sequence, Tuple

from .claims import paper_tables, relevance_sign_rows, verdict_rows
from .pick import pick_rows
from .records import load_points
from .point_eval import run_facts, write_json
from .plot import plot
from .points import (BASE, SEARCH_LABEL, Comparisons, bleu, control_of, fmt_diff,
                     is_pruned_l0, kept, same_point_other_seeds, searches, seed, seed_pairs,
                     seed_spread, steps)

STUDY_SCRIPT = "scripts/pruning-study.sh"
SETTING_TEXT = {"enc": "encoder (--encoder-only)", "all": "all three"}
GATE_KEYS = ("init_log_alpha", "gate_lr", "gate_lr_schedule", "penalty", "gate_rule",
             "settle_margin", "settle_steps", "settle_push", "lr", "warmup", "max_tokens",
             "label_smoothing", "device")


def fmt_time(sec: Optional[float]) -> str:
    if not sec:
        return "-"
    sec = int(sec)
    if sec >= 3600:
        return f"{sec // 3600} h {sec % 3600 // 60:02d} min"
    return f"{sec // 60} min {sec % 60:02d} s"


def _heads(r: dict) -> str:
    e, d, c = kept(r)
    return f"{e}/{d}/{c} ({e + d + c})"


def _score(r: dict, search: str) -> str:
    b = bleu(r, search)
    return "-" if b is None else f"{b:.2f}"


def l0_table(points, cmp: Comparisons, srch: Sequence[str]) -> List[str]:
    head = ["point", "gated", "lambda", "seed", "steps", "heads kept enc/dec/cross (total)",
            "gates not settled"]
    for s in srch:
        head += [f"BLEU {SEARCH_LABEL[s]}", f"vs control, {SEARCH_LABEL[s]} [95% CI]"]
    head += ["control", "chrF (greedy)", "training time"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    l0 = sorted((r for r in points if r["kind"] == "l0"),
                key=lambda r: (-steps(r), r["setting"] != "enc", r["lambda"], seed(r)))
    for r in l0:
        c = control_of(points, r) if r.get("lambda") else None
        g = r.get("gates") or {}
        cells = [r["name"], SETTING_TEXT[r["setting"]], f"{r['lambda']:g}", str(seed(r)),
                 str(steps(r) or "-"), _heads(r),
                 "-" if "unsettled" not in g else f"{g['unsettled']} (|log_alpha| < "
                                                  f"{g['settle_margin']:g})"]
        for s in srch:
            cells += [_score(r, s), fmt_diff(cmp.diff(r, c, s)) if c else "-"]
        cells += [c["name"] if c else "-", f"{r['chrf']:.2f}",
                  fmt_time((r.get("run") or {}).get("train_seconds"))]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def seeds_table(points, cmp: Comparisons, srch: Sequence[str]) -> List[str]:
    """Points run with more than one seed: mean and standard deviation of BLEU, and for a
    pruned point the mean over its seeds of each seed's difference from its own seed's control
    (Comparisons.diff_seeds: one paired bootstrap over all the seeds)."""
    groups, seen = [], set()
    for r in points:
        if r["kind"] != "l0":
            continue
        group = same_point_other_seeds(points, r)
        key = tuple(sorted(p["name"] for p in group))
        if len(group) > 1 and key not in seen:
            seen.add(key)
            groups.append(group)
    if not groups:
        return ["No point was run with more than one seed."]
    head = ["points"]
    for s in srch:
        head += [f"BLEU {SEARCH_LABEL[s]}",
                 f"vs control, {SEARCH_LABEL[s]}, mean of seeds [95% CI] (per seed)"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for g in groups:
        cells = [", ".join(sorted(p["name"] for p in g))]
        pairs = seed_pairs(points, g[0]) if is_pruned_l0(g[0]) else []
        for s in srch:
            vals = [bleu(p, s) for p in g if bleu(p, s) is not None]
            cells.append(seed_spread(vals) if vals else "-")
            d = cmp.diff_seeds(pairs, s) if pairs else None
            cells.append("-" if d is None else
                         f"{fmt_diff(d)} ({', '.join(f'{x:+.2f}' for x in d['deltas'])}; "
                         f"controls {', '.join(q['name'] for _, q in pairs)})")
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def rank_table(points, cmp: Comparisons, srch: Sequence[str]) -> List[str]:
    head = ["score", "pruned among", "heads kept enc/dec/cross (total)"]
    for s in srch:
        head += [f"BLEU {SEARCH_LABEL[s]}", f"vs base, {SEARCH_LABEL[s]} [95% CI]"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rk = [r for r in points if r["kind"] == "rank"]
    named = sorted((r for r in rk if r["score"] != "random"),
                   key=lambda r: (r["score"], r["setting"] != "enc", -r["keep"]))
    for r in named:
        c = control_of(points, r)
        cells = [r["score"], "encoder self" if r["setting"] == "enc" else "all three types",
                 _heads(r)]
        for s in srch:
            cells += [_score(r, s), fmt_diff(cmp.diff(r, c, s)) if c else "-"]
        rows.append("| " + " | ".join(cells) + " |")
    cuts = sorted({(r["setting"], r["keep"]) for r in rk if r["score"] == "random"},
                  key=lambda x: (x[0] != "enc", -x[1]))
    for setting, k in cuts:
        orders = [r for r in rk if r["score"] == "random" and r["setting"] == setting
                  and r["keep"] == k]
        cells = [f"random ({len(orders)} orders)",
                 "encoder self" if setting == "enc" else "all three types", _heads(orders[0])]
        for s in srch:
            vals = [bleu(r, s) for r in orders if bleu(r, s) is not None]
            cells += [f"mean {sum(vals) / len(vals):.2f}, {min(vals):.2f}-{max(vals):.2f}"
                      if vals else "-", "-"]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def scratch_table(points, cmp: Comparisons, srch: Sequence[str]) -> List[str]:
    scratch = [r for r in points if r["kind"] == "scratch"]
    if not scratch:
        return ["No from-scratch control has a result."]
    head = ["from scratch", "heads kept", "steps", "pruned point (same layout)"]
    for s in srch:
        head += [f"scratch BLEU {SEARCH_LABEL[s]}", "pruned minus scratch [95% CI]"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in scratch:
        pruned = control_of(points, r)
        cells = [r["name"], _heads(r), str(steps(r) or "-"), pruned["name"] if pruned else "-"]
        for s in srch:
            cells += [_score(r, s), fmt_diff(cmp.diff(pruned, r, s)) if pruned else "-"]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def setup_lines(points) -> List[str]:
    """What the records say about how the points were made."""
    lines = []
    any_rec = next(iter(points), None)
    if any_rec is None:
        return ["No record."]
    m = any_rec.get("machine", {})
    lines.append(f"- Scores: BLEU and chrF as sacreBLEU 2.x computes them, on the "
                 f"{any_rec.get('sentences')}-sentence {any_rec.get('split')} split "
                 f"({any_rec.get('train_pairs')} training pairs); searches: "
                 f"{', '.join(SEARCH_LABEL[s] for s in searches(points))}. Intervals: paired "
                 "bootstrap, 1,000 resamples (sacreBLEU's), 95%, of each point minus its "
                 "control; for a point run with several seeds, of the mean over the seeds of "
                 "each seed minus its own seed's control (the same resamples for every seed, "
                 "so the interval is the test set's uncertainty of that mean; the seeds' "
                 "spread is in the per-seed differences). A claim's point is chosen on seed 1 "
                 "and judged on the mean of its seeds when they have run.")
    starts = sorted({str((r.get("run") or {}).get("start")) for r in points
                     if r["kind"] == "l0" and (r.get("run") or {}).get("start")})
    if starts:
        lines.append(f"- L0 start point(s): {'; '.join(starts)}.")
    settings = {}
    for r in points:
        if r["kind"] == "l0":
            a = (r.get("run") or {}).get("args") or {}
            key = json.dumps({k: a.get(k) for k in GATE_KEYS if k in a}, sort_keys=True)
            settings.setdefault(key, []).append(r["name"])
    for key, names in settings.items():
        vals = json.loads(key)
        lines.append(f"- Gate and fine-tuning settings of {', '.join(sorted(names))}: "
                     + (", ".join(f"{k} {v}" for k, v in vals.items()) or "not recorded") + ".")
    rank = next((r for r in points if r["kind"] == "rank"), None)
    if rank:
        lines.append(f"- Rank points: the model `{rank['model']}` with only the K heads of the "
                     f"highest score kept (global ranking within the pruned types), no "
                     f"fine-tuning; scores from `{rank.get('analysis')}`.")
    lines.append(f"- Machine of the first record: {m.get('cpu', '?')}, {m.get('cores', '?')} "
                 f"cores, torch {m.get('torch', '?')}.")
    return lines


def load_analysis(points, path: Optional[str]) -> Tuple[Optional[dict], Optional[str]]:
    path = path or next((r.get("analysis") for r in points if r["kind"] == "rank"), None)
    if not path or not os.path.isfile(path):
        return None, path
    with open(path, encoding="utf-8") as f:
        return json.load(f), path


def markdown(points: List[dict], pending: Dict[str, dict], png_rel: str, json_rel: str,
             command: str, analysis: Optional[dict] = None, analysis_path: Optional[str] = None,
             expect: Optional[List[str]] = None) -> str:
    cmp = Comparisons()
    srch = searches(points) or ["greedy"]
    by = {r["name"]: r for r in points}
    lines = [
        "# Pruning results, beside Voita et al. (EN-RU)", "",
        f"Generated by `{command}` from the {len(points)} result records in `{json_rel}` "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). Do not edit by hand: rerun "
        f"the study (`{STUDY_SCRIPT}`; it continues where it stopped) and this command.", "",
        "## Verdicts", ""]
    for s in srch:
        lines += [f"{SEARCH_LABEL[s].capitalize()} search:", "",
                  "| claim | paper | verdict | on this data |", "|---|---|---|---|"]
        lines += [f"| {c} | {p} | **{v}** | {e} |" for c, p, v, e in
                  verdict_rows(points, cmp, s, analysis)]
        lines.append("")
    lines += ["## Picks", "", "The points the study goes on from, chosen by rule from the records "
              "(`headwise-train sweep pick enc|all|ship`; greedy scores):", "",
              *pick_rows(points, "greedy", cmp), ""]
    lines += [f"![pruning curves]({png_rel})", "", "## Setup", "", *setup_lines(points), "",
              "## Reference models", "", "| model | " + " | ".join(
                  f"BLEU {SEARCH_LABEL[s]}" for s in srch) + " | chrF (greedy) |",
              "|---|" + "---|" * (len(srch) + 1)]
    for r in points:
        if r["kind"] == "reference":
            lines.append(f"| {r['name']} ({r['model']}) | "
                         + " | ".join(_score(r, s) for s in srch) + f" | {r['chrf']:.2f} |")
    if BASE not in by:
        lines.append(f"| {BASE} | missing | |")
    lines += ["", "## L0 pruning (gates fine-tuned with the penalty)", "",
              *l0_table(points, cmp, srch), "", "## Seeds", "", *seeds_table(points, cmp, srch), "",
              "## Rank pruning without fine-tuning", "", *rank_table(points, cmp, srch), "",
              "## Pruned versus the same layout trained from scratch", "",
              *scratch_table(points, cmp, srch), "",
              "## Relevance with sign", "",
              (f"The heads with the largest absolute relevance share per attention type in "
               f"`{analysis_path}`, beside their signed share (a head whose signed share is far "
               "below its absolute share works against the predictions as often as for them):"
               if analysis else "No analysis file."), "",
              *(relevance_sign_rows(analysis) if analysis else []), "",
              "## The paper's numbers (Voita et al. 2019, EN-RU, 6+6 layers x 8 heads)", "",
              *paper_tables(), "", "## Missing", ""]
    missing = [f"{n} ({pending[n]['status']})" for n in sorted(pending)]
    missing += [f"{n} (not run)" for n in (expect or []) if n not in by and n not in pending]
    lines.append("- " + ", ".join(missing) + "." if missing else
                 "Nothing: every planned point has a result.")
    return "\n".join(lines) + "\n"


def collected(points: List[dict], cmp_searches: Sequence[str]) -> List[dict]:
    """The records without their segment statistics, with each point's differences against
    its control (the intervals the report shows)."""
    cmp = Comparisons()
    out = []
    for r in sorted(points, key=lambda r: r["name"]):
        c = control_of(points, r)
        rec = {k: v for k, v in r.items() if k != "segment_stats"}
        if c is not None:
            rec["vs_control"] = {"control": c["name"],
                                 **{s: cmp.diff(r, c, s) for s in cmp_searches}}
        out.append(rec)
    return out


def run_report(args, log=print) -> dict:
    points, pending = load_points(args.root)
    os.makedirs(args.out_dir, exist_ok=True)
    json_path = os.path.join(args.out_dir, f"{args.name}-sweep.json")
    png_path = os.path.join(args.out_dir, f"{args.name}-sweep.png")
    expect = [n.strip() for n in (args.expect or "").split(",") if n.strip()]
    base_run = run_facts(args.base_run) if args.base_run else {}
    base_run = {k: base_run[k] for k in ("steps", "train_seconds", "dev_history") if k in base_run}
    srch = searches(points) or ["greedy"]
    write_json(json_path, {"format": "headwise-pruning-sweep", "version": 2,
                           "points": collected(points, srch), "pending": pending,
                           "base_run": base_run})
    by = {r["name"]: r for r in points}
    plot(points, png_path, f"{args.name}: test BLEU against heads kept", by.get(BASE), srch)
    if args.md:
        analysis, analysis_path = load_analysis(points, getattr(args, "analysis", None))
        rel = lambda p: os.path.relpath(p, os.path.dirname(os.path.abspath(args.md)))  # noqa: E731
        cmd = (f"headwise-train sweep report --root {args.root} --out-dir {args.out_dir} "
               f"--md {args.md}" + (f" --base-run {args.base_run}" if args.base_run else "")
               + (f" --analysis {args.analysis}" if getattr(args, "analysis", None) else "")
               + (f" --expect {','.join(expect)}" if expect else ""))
        with open(args.md, "w", encoding="utf-8") as f:
            f.write(markdown(points, pending, rel(os.path.abspath(png_path)),
                             os.path.relpath(json_path), cmd, analysis, analysis_path, expect))
    log(f"sweep report: {len(points)} results, {len(pending)} pending -> {json_path}, {png_path}"
        + (f", {args.md}" if args.md else ""))
    return {"points": len(points), "pending": pending}

