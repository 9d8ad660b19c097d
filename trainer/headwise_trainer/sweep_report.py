"""`sweep report`: the sweep's results -> ROOT-independent JSON, the PNG of the curves and the
Markdown report (docs/pruning-results.md), beside the paper's EN-RU numbers. Everything in the
report is computed from the JSON records; points that have no result are listed as missing."""
from __future__ import annotations

import glob
import json
import os
import time
from typing import Dict, List, Optional, Tuple

from .sweep_eval import run_facts, write_json
from .sweep_goals import (BASE, CONTROL, PAPER_ALL, PAPER_ENC, SHIPPED, START, control_of, goals,
                          kept, side_by_side, steps)
from .sweep_plot import plot

DEFAULT_L0 = [f"{s}-{lam}" for lam in ("0", "0.005", "0.01", "0.015", "0.025", "0.04", "0.08")
              for s in ("enc", "all")]
DEFAULT_RANK = [f"{sc}-{st}-{k}" for sc in ("relevance", "michel")
                for st, ks in (("enc", (36, 24, 10, 6)), ("all", (72, 48, 24, 12)))
                for k in ks]

REPRODUCE = """Each command skips what is done and continues what was interrupted; rerun it after a
stop. Run from the repository root, one training process per core at most.

    # L0 points (7 lambdas x {encoder-only, all types}, 250 steps each from base step 1,100),
    # the shipped run adopted as all-0.015, the from-scratch control and the reference models
    trainer/headwise-train sweep runs --root work/sweep/en-de --from work/prune-start/ckpt-1100.pt \\
      --data work/corpus-de --vocab work/vocab-de --threads 1 \\
      --adopt all-0.015=work/runs/en-de-prune:models/en-de/checkpoint \\
      --scratch scratch-shipped=models/en-de/sweep/shipped-layout.spec --base-run work/runs/en-de-base \\
      --reference base=models/en-de/base-checkpoint --reference start=work/prune-start/ckpt-1100.pt
    # the 100-step series (what ran this session: work/sweep/queue2.sh, queue3.sh): first the
    # step-100 checkpoints of the lambda-0 and the shipped run, then the runs
    trainer/headwise-train sweep runs --root work/sweep/en-de --data work/corpus-de \\
      --vocab work/vocab-de --threads 1 --lambdas "" \\
      --reference all-0-s100=work/sweep/en-de/all-0/run/ckpt-100.pt \\
      --reference all-0.015-s100=work/runs/en-de-prune/ckpt-100.pt
    trainer/headwise-train sweep runs --root work/sweep/en-de --from work/prune-start/ckpt-1100.pt \\
      --data work/corpus-de --vocab work/vocab-de --threads 1 --steps 100 --suffix s100 \\
      --settings enc --lambdas 0,0.002,0.005,0.015,0.04
    trainer/headwise-train sweep runs --root work/sweep/en-de --from work/prune-start/ckpt-1100.pt \\
      --data work/corpus-de --vocab work/vocab-de --threads 1 --steps 100 --suffix s100 \\
      --settings all --lambdas 0.005,0.04
    # rank pruning of the base by the analysis' scores, no fine-tuning
    trainer/headwise-train sweep rank --root work/sweep/en-de --data work/corpus-de \\
      --analysis models/en-de/base-checkpoint/analysis.json --model models/en-de/base-checkpoint
    # this page, models/en-de/sweep/en-de-sweep.json and .png
    trainer/headwise-train sweep report --root work/sweep/en-de --out-dir models/en-de/sweep \\
      --md docs/pruning-results.md --base-run work/runs/en-de-base

`sweep runs --no-train` only scores what others' processes finished. The from-scratch control
alone is `train --head-layout models/en-de/sweep/shipped-layout.spec` with the base run's
arguments (models/en-de/README.md) and `--steps 1200`."""


def load_points(root: str) -> Tuple[List[dict], Dict[str, dict]]:
    """Every result record under ROOT, and name -> state of the directories without one."""
    points, pending = [], {}
    for d in sorted(glob.glob(os.path.join(root, "*", ""))):
        name = os.path.basename(os.path.dirname(d))
        if name == "rank":
            continue
        ev = os.path.join(d, "eval.json")
        if os.path.isfile(ev):
            with open(ev, encoding="utf-8") as f:
                points.append(json.load(f))
        else:
            facts = run_facts(os.path.join(d, "run"))
            status = ("trained, not scored yet" if os.path.isdir(os.path.join(d, "export")) else
                      f"not finished, newest checkpoint step {facts['steps']}" if facts else
                      "no checkpoint yet")
            pending[name] = {"status": status, **facts}
    for p in sorted(glob.glob(os.path.join(root, "rank", "*.json"))):
        with open(p, encoding="utf-8") as f:
            points.append(json.load(f))
    return points, pending


def fmt_time(sec: Optional[float]) -> str:
    if not sec:
        return "-"
    sec = int(sec)
    if sec >= 3600:
        return f"{sec // 3600} h {sec % 3600 // 60:02d} min"
    return f"{sec // 60} min {sec % 60:02d} s"


def delta(a: Optional[dict], b: Optional[dict]) -> str:
    return f"{a['bleu'] - b['bleu']:+.2f}" if a and b else "-"


def l0_table(points, base) -> List[str]:
    rows = ["| point | gated | lambda | steps | heads kept enc/dec/cross (total) | BLEU | chrF | "
            "vs control (same steps; enc-0 for enc) | vs base | training time | eval time |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    l0 = sorted((r for r in points if r["kind"] == "l0"),
                key=lambda r: (-(steps(r) or 0), r["setting"] != "enc", r["lambda"]))
    for r in l0:
        e, d, c = kept(r)
        run = r.get("run", {})
        control = (r["setting"] == "enc" and control_of(points, "enc", steps(r) or 0)) or \
            control_of(points, "all", steps(r) or 0)
        gated = "encoder (--encoder-only)" if r["setting"] == "enc" else "all three"
        rows.append(f"| {r['name']} | {gated} "
                    f"| {r['lambda']:g} | {run.get('steps', '-')} | {e}/{d}/{c} ({e + d + c}) | "
                    f"{r['bleu']:.2f} | {r['chrf']:.2f} | {delta(r, control)} | {delta(r, base)} | "
                    f"{fmt_time(run.get('train_seconds'))} | {fmt_time(r.get('eval_seconds'))} |")
    return rows


def rank_table(points, base) -> List[str]:
    rows = ["| score | pruned among | heads kept enc/dec/cross (total) | BLEU | chrF | vs base "
            "(all heads) |", "|---|---|---|---|---|---|"]
    rk = sorted((r for r in points if r["kind"] == "rank"),
                key=lambda r: (r["score"], r["setting"] != "enc", -r["keep"]))
    for r in rk:
        e, d, c = kept(r)
        rows.append(f"| {'LRP relevance' if r['score'] == 'relevance' else 'Michel importance'} "
                    f"| {'encoder self' if r['setting'] == 'enc' else 'all three types'} | "
                    f"{e}/{d}/{c} ({e + d + c}) | {r['bleu']:.2f} | {r['chrf']:.2f} | "
                    f"{delta(r, base)} |")
    return rows


def dev_curve(history: List[dict]) -> str:
    return "; ".join(f"step {h['step']}: BLEU {h['dev_bleu']}" for h in history) or "none yet"


def analysis_note(points: List[dict]) -> List[str]:
    """Where the rank scores came from (the analysis file's own account of its data)."""
    path = next((r["analysis"] for r in points if r["kind"] == "rank"), None)
    if not path or not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as f:
        data = json.load(f).get("data", {})
    return ["", f"Scores from `{path}`: {data.get('sentences', '?')} {data.get('split', '?')} "
            f"sentences, {data.get('predictions', '?')} generated tokens, "
            f"{fmt_time(data.get('seconds'))} to compute. Relevance is normalised to sum 1 per "
            "block and Michel importance l2-normalised per block, so the global ranking compares "
            "heads of different blocks on those per-block scales."]


def markdown(points: List[dict], pending: Dict[str, dict], png_rel: str, json_rel: str,
             command: str, base_run: Optional[dict] = None,
             expect: Optional[List[str]] = None) -> str:
    by = {r["name"]: r for r in points}
    control, base, start, shipped = (by.get(n) for n in (CONTROL, BASE, START, SHIPPED))
    scratch = [r for r in points if r["kind"] == "scratch"]
    l0_names = {r["name"] for r in points if r["kind"] in ("l0", "scratch", "reference")}
    state = lambda n: pending.get(n, {}).get("status", "not run")  # noqa: E731
    missing = [f"{n} ({state(n)})" for n in DEFAULT_L0 + list(expect or []) if n not in l0_names]
    missing += [f"{n} ({state(n)})" for n in pending if n not in DEFAULT_L0 + list(expect or [])]
    missing_rank = [n for n in DEFAULT_RANK if n not in by]
    any_rec = next(iter(points), None)
    m = any_rec["machine"] if any_rec else {}
    lines = [
        "# Pruning results: en-de, beside Voita et al. (EN-RU)",
        "",
        f"Generated by `{command}` from the JSON records in `{json_rel}` "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). Do not edit by hand: rerun the "
        "sweep (it continues where it stopped) and this command.",
        "",
        "## Goals",
        "",
        "Measured against the **lambda-0 control** of the same step budget: the same start "
        "point (base step 1,100), the same fine-tuning steps and settings, every head of all "
        "three types gated but no penalty (`all-0` after 250 steps; `all-0-s100` is its "
        "step-100 checkpoint). The shipped base (step 1,200) is 100 training steps further than "
        "the start point and is no fair baseline for a fine-tune.",
        *goals(points),
        "",
        f"![pruning curves]({png_rel})",
        "",
        "## Setup",
        "",
        f"- Data: the en-de corpus of `models/en-de/README.md`, "
        f"{any_rec.get('train_pairs') if any_rec else '?'} training pairs; every score is greedy "
        f"BLEU/chrF (sacreBLEU's definitions) on the "
        f"{any_rec.get('sentences') if any_rec else '?'}-"
        "sentence test split, with the test-time gates (log_alpha > 0) or the rank layout as a "
        "0/1 head mask (`prune-eval`'s evaluation).",
        f"- Machine: {m.get('cpu', '?')}, {m.get('cores', '?')} cores shared with other jobs, "
        f"1 torch thread per process, torch {m.get('torch', '?')}. Times are wall-clock under "
        "that shared load (up to two training processes at once), so they vary by 2x between runs.",
        "- L0 points: `prune` from base step 1,100 with the shipped run's settings (lr 5e-4, "
        "gate lr 0.1, warm-up 20, batches of 2,000 ids; penalty = lambda x the SUM of P(gate "
        "open) over the gated heads), for 250 steps (`all-0`, `all-0.015`) or 100 steps "
        "(`*-s100`: the series was cut to 100 steps when the shared machine slowed to ~400 "
        "tokens/s). The learning rates depend only on the step, so the step-100 checkpoint of a "
        "250-step run is the 100-step run: `all-0-s100` and `all-0.015-s100` are such "
        "checkpoints. `enc` = `--encoder-only` (encoder "
        "gates; encoder weights and gates trained, decoder and embeddings fixed), `all` = "
        "encoder self, decoder self and decoder-encoder heads gated, everything trained. "
        "`all-0.015` is the shipped pruned model (`models/en-de/checkpoint`).",
        "- Rank points: the base (step 1,200, `models/en-de/base-checkpoint`) with only the K "
        "heads of the highest score kept, ranked globally within the pruned types, without any "
        "fine-tuning; scores from `models/en-de/base-checkpoint/analysis.json`.",
        "",
        "## Reference models",
        "",
        "| model | BLEU | chrF |",
        "|---|---|---|",
    ]
    for r, what in ((start, "start point, base step 1,100 (all heads)"),
                    (base, "shipped base, step 1,200 (all heads)"),
                    (control, "lambda-0 control: start point + 250 gated steps, lambda 0"),
                    (by.get("all-0-s100"), "lambda-0 control at step 100 (all-0's ckpt-100)")):
        lines.append(f"| {what} | {r['bleu']:.2f} | {r['chrf']:.2f} |" if r else
                     f"| {what} | missing | |")
    lines += ["", "## L0 pruning (gates fine-tuned with the penalty)", "",
              *l0_table(points, base), "",
              "## Rank pruning without fine-tuning (LRP relevance, Michel importance)", ""]
    lines += rank_table(points, base) if any(r["kind"] == "rank" for r in points) else \
        ["No rank-pruning result: " + ("analysis.json was not available." if missing_rank else "")]
    lines += analysis_note(points)
    lines += ["", "## Pruned versus the same layout trained from scratch", ""]
    scratch_pending = {n: p for n, p in pending.items()
                       if n.startswith("scratch") and p.get("steps")}
    if scratch or scratch_pending:
        lines += ["| model | heads kept enc/dec/cross | training | BLEU | chrF | training time |",
                  "|---|---|---|---|---|---|"]
        if shipped:
            lines.append(f"| pruned (shipped, {SHIPPED}) | {'/'.join(map(str, kept(shipped)))} | "
                         f"base 1,100 steps + 250 pruning steps | {shipped['bleu']:.2f} | "
                         f"{shipped['chrf']:.2f} | {fmt_time(shipped['run'].get('train_seconds'))} "
                         f"(pruning only) |")
        base_time = fmt_time((base_run or {}).get("train_seconds")) \
            if (base_run or {}).get("train_seconds") else "1 h 22 min (models/en-de/README.md)"
        if base:
            lines.append(f"| base, all heads | 48/24/24 | 1,200 steps | {base['bleu']:.2f} | "
                         f"{base['chrf']:.2f} | "
                         f"{base_time} |")
        for r in scratch:
            lines.append(f"| {r['name']}: the shipped layout from scratch | "
                         f"{'/'.join(map(str, kept(r)))} | {r['run'].get('steps')} steps, the "
                         f"base run's settings | {r['bleu']:.2f} | {r['chrf']:.2f} | "
                         f"{fmt_time(r['run'].get('train_seconds'))} |")
    for name, p in scratch_pending.items():
        lines.append(f"\nNo test result: {name} (the shipped layout trained from scratch with "
                     f"the base run's settings, 1 thread, niced behind the pruning runs) had "
                     f"reached step {p.get('steps')} of {p['args'].get('steps')} after "
                     f"{fmt_time(p.get('train_seconds'))} of training; it resumes with the "
                     "`sweep runs` command below.")
    curves = [(r["name"], r["run"].get("dev_history") or []) for r in scratch]
    curves += [(n, p.get("dev_history") or []) for n, p in pending.items()
               if n.startswith("scratch")]
    if curves:
        lines += ["", "Dev BLEU during training (greedy, first 200 dev sentences, F32):", ""]
        if base_run:
            lines.append(f"- base, all heads: {dev_curve(base_run.get('dev_history', []))}")
        lines += [f"- {n}, the shipped layout (1/10/13 heads): {dev_curve(h)}" for n, h in curves]
    if not scratch and not curves:
        lines.append("No result: the from-scratch control had not started.")
    lines += ["", "## Beside the paper: BLEU change against the unpruned model", "",
              *side_by_side(points), "",
              "## The paper's numbers (Voita et al. 2019, EN-RU, 6+6 layers x 8 heads)", "",
              "Encoder self-attention only:", "", "| data | encoder heads | BLEU |",
              "|---|---|---|",
              *[f"| {d} | {h} | {b} |" for d, h, b in PAPER_ENC], "",
              "All three types (kept: encoder self / decoder self / decoder-encoder):", "",
              "| data | heads kept | pruned from trained | same layout from scratch |",
              "|---|---|---|---|", *[f"| {d} | {h} | {p} | {s} |" for d, h, p, s in PAPER_ALL], "",
              "The paper loses 0.15 BLEU at 10 of 48 encoder heads and 0.5-0.7 BLEU at about a "
              "quarter of the heads (WMT 8/13/15), with 2.5M-6M training pairs and a converged "
              "model; here the model is small, under-trained and fine-tuned for 100-250 steps "
              "only.",
              "", "## How to reproduce", "", REPRODUCE, "", "## Missing", ""]
    if missing or missing_rank:
        lines += [f"- L0/control points without a result: {', '.join(missing) or 'none'}.",
                  f"- Rank points without a result: {', '.join(missing_rank) or 'none'}."]
    else:
        lines.append("Nothing: every planned point has a result.")
    return "\n".join(lines) + "\n"


def run_report(args, log=print) -> dict:
    points, pending = load_points(args.root)
    os.makedirs(args.out_dir, exist_ok=True)
    json_path = os.path.join(args.out_dir, f"{args.name}-sweep.json")
    png_path = os.path.join(args.out_dir, f"{args.name}-sweep.png")
    expect = [n.strip() for n in (args.expect or "").split(",") if n.strip()]
    base_run = run_facts(args.base_run) if args.base_run else {}
    base_run = {k: base_run[k] for k in ("steps", "train_seconds", "dev_history") if k in base_run}
    write_json(json_path, {"format": "headwise-pruning-sweep", "version": 1,
                           "points": sorted(points, key=lambda r: r["name"]),
                           "pending": pending, "base_run": base_run})
    by = {r["name"]: r for r in points}
    plot(points, png_path, f"{args.name}: test BLEU (greedy) against heads kept", by.get(BASE))
    if args.md:
        rel = lambda p: os.path.relpath(p, os.path.dirname(os.path.abspath(args.md)))  # noqa: E731
        cmd = (f"headwise-train sweep report --root {args.root} --out-dir {args.out_dir} "
               f"--md {args.md}" + (f" --base-run {args.base_run}" if args.base_run else "")
               + (f" --expect {','.join(expect)}" if expect else ""))
        with open(args.md, "w", encoding="utf-8") as f:
            f.write(markdown(points, pending, rel(os.path.abspath(png_path)),
                             os.path.relpath(json_path), cmd, base_run, expect))
    log(f"sweep report: {len(points)} results, {len(pending)} pending -> {json_path}, {png_path}"
        + (f", {args.md}" if args.md else ""))
    return {"points": len(points), "pending": pending}
