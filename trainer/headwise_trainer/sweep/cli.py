"""The `sweep` subcommand of headwise-train (argument parsing only; torch is imported when an
action runs)."""
from __future__ import annotations

import argparse

from ..cli_support import add_corpus, add_device, add_threads, add_vocab, lazy

# The pruning study's settings (issue 13), without --lambda/--types/--seed: gates start near 0
# as in the reference code, a gate learning rate 10x below the first sweep's 0.1/2 with its
# own constant schedule, the hard rule, settled = |log_alpha| >= 1.
DEFAULT_PRUNE_ARGS = ("--lr 2e-4 --warmup 200 --steps 4000 --max-tokens 4096 "
                      "--init-log-alpha 0.0 --gate-lr 0.01 --gate-lr-schedule constant "
                      "--gate-rule hard --settle-margin 1.0 --penalty sum "
                      "--log-every 50 --checkpoint-every 250 --keep 2 --eval-every 500 "
                      "--dev-bleu-sentences 400 --export-dtype f16")


def _common(p) -> None:
    p.add_argument("--root", required=True, help="sweep directory, one subdirectory per point")
    add_corpus(p, from_data=False)
    add_vocab(p, "the model's")
    p.add_argument("--limit", type=int, default=0,
                   help="score the first N test sentences only (0: all; for trials)")
    add_threads(p, 1)
    p.add_argument("--searches", default="greedy,beam4",
                   help="searches every point is scored with: greedy and/or beam4 (beam 4, "
                        "length penalty 1; default %(default)s)")


def add_sweep(sub) -> None:
    s = sub.add_parser(
        "sweep", help="pruning curves: L0 runs over lambda, rank pruning, controls, report",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Points of BLEU-against-heads-kept curves, each in ROOT/<name>/ and each "
        "skipped when its\nresult exists, so rerunning a sweep continues it (see sweep/runs.py).\n"
        "  runs    L0 pruning for every --settings x --lambdas (prune), from-scratch controls\n"
        "          (--scratch, train --head-layout), reference models; test BLEU of each\n"
        "  rank    keep the K heads with the best analysis.json score, no fine-tuning\n"
        "  report  collect the results into JSON + PNG and write the Markdown report\n"
        "  pick    the point a stated rule chooses from the records\n"
        "  gates   where each point's unsettled gates moved since its previous checkpoint")
    a = s.add_subparsers(dest="action", metavar="ACTION")
    a.required = True

    r = a.add_parser("runs", help="train (resumable) and score the L0 points and controls")
    _common(r)
    r.add_argument("--from", dest="start", help="start point of the L0 runs (prune --from)")
    r.add_argument("--lambdas", default="0,0.005,0.01,0.015,0.025,0.04,0.08",
                   help="comma-separated penalty weights (default %(default)s)")
    r.add_argument("--settings", default="enc,all",
                   help="enc (--encoder-only) and/or all (enc,dec,cross gated); default both")
    r.add_argument("--steps", type=int,
                   help="fine-tuning steps of the L0 points (overrides --prune-args' --steps)")
    r.add_argument("--seeds", default="1",
                   help="comma-separated seeds of the L0 points (default 1; other seeds get a "
                        "-seed<N> name suffix)")
    add_device(r, "where prune and the from-scratch control train (default cpu)")
    r.add_argument("--suffix", default="",
                   help="appended to the L0 point names, e.g. s100 for a 100-step series")
    r.add_argument("--prune-args", default=DEFAULT_PRUNE_ARGS,
                   help="further prune arguments (default: %(default)s)")
    r.add_argument("--precision", choices=("auto", "bf16", "fp32"),
                   help="the L0 points' and the from-scratch control's --precision (default: "
                        "prune's auto, and the precision --base-run recorded); a study pins one "
                        "so that its points and controls compute alike on any machine")
    r.add_argument("--settle-steps", type=int, default=0,
                   help="the last N of --steps add prune's settle push (prune --settle-steps; "
                        "default 0: none). With points whose runs end at --steps - N (copies of "
                        "another sweep's), each resumes and settles in the N steps")
    r.add_argument("--settle-push", type=float,
                   help="prune --settle-push (default: prune's)")
    r.add_argument("--adopt", action="append", metavar="NAME=RUN[:EXPORT]",
                   help="use an existing pruning run (and its export) as point NAME")
    r.add_argument("--scratch", action="append", metavar="NAME=SPEC",
                   help="from-scratch control: train SPEC's layout (file or spec) with the "
                        "settings of --base-run")
    r.add_argument("--base-run", default="work/runs/en-de-base",
                   help="training run whose run.json settings --scratch copies")
    r.add_argument("--scratch-steps", default="auto",
                   help="training steps of --scratch: N, or auto (default) = the --from "
                        "checkpoint's steps + --steps, the updates of base + pruning")
    r.add_argument("--reference", action="append", metavar="NAME=MODEL",
                   help="also score MODEL (checkpoint, run directory or ckpt-*.pt) as it is; "
                        "a pruning run's ckpt-*.pt becomes a point of its L0 curve (e.g. the "
                        "lambda-0 control at step 100)")
    r.add_argument("--no-train", action="store_true",
                   help="only score the points that are finished (leave training to others)")
    r.set_defaults(func=lazy("sweep.runs:run_runs"))

    k = a.add_parser("rank", help="rank pruning by analysis.json scores, without fine-tuning")
    _common(k)
    k.add_argument("--analysis", required=True, help="headwise-head-analysis JSON of --model")
    k.add_argument("--model", required=True, help="the model the analysis scored")
    k.add_argument("--scores", default="relevance,relevance_signed,michel,confidence,random",
                   help="analysis.json scores to rank by, and random (--random-orders "
                        "permutations); default %(default)s")
    k.add_argument("--random-orders", type=int, default=5,
                   help="random orders of the random baseline (default 5)")
    k.add_argument("--enc-keep", default="36,24,10,6",
                   help="encoder heads kept, encoder-only pruning (default %(default)s)")
    k.add_argument("--all-keep", default="72,48,24,12",
                   help="heads kept over all three types (default %(default)s)")
    k.set_defaults(func=lazy("sweep.runs:run_rank"))

    p = a.add_parser("report", help="results -> JSON, PNG and the Markdown report")
    p.add_argument("--root", required=True, help="sweep directory")
    p.add_argument("--out-dir", required=True, help="where the JSON and PNG go")
    p.add_argument("--md", help="write the Markdown report here (e.g. docs/pruning-results.md)")
    p.add_argument("--name", default="en-de", help="file name stem (default %(default)s)")
    p.add_argument("--base-run", help="the base training run, for its dev curve (e.g. "
                   "work/runs/en-de-base)")
    p.add_argument("--analysis", help="the analysis.json of the base (sink shares, signed "
                   "relevance; default: the one the rank points name)")
    p.add_argument("--expect", help="comma-separated point names that should have a result "
                   "(listed as missing when they have none)")
    p.set_defaults(func=lazy("sweep.report:run_report"))

    c = a.add_parser("pick", help="the point a rule chooses from the records: enc / all (the "
                     "claims' headline points, for phase 2) or ship (the pruned model to ship)",
                     description="enc: the highest BLEU among encoder-only L0 points with <= 10 "
                     "encoder heads and a control; all: the same among all-types points with <= "
                     "a quarter of the heads; ship: among seed-1 L0 points within 1 BLEU of "
                     "their control, the fewest heads kept (ties: higher BLEU). Prints JSON, or "
                     "one field; exit status 1 when no point qualifies.")
    c.add_argument("what", choices=["enc", "all", "ship"])
    c.add_argument("--root", required=True, help="sweep directory")
    c.add_argument("--search", default="greedy", choices=["greedy", "beam4"],
                   help="the search whose scores decide (default %(default)s)")
    c.add_argument("--field", choices=["name", "lambda", "setting", "seed", "delta"],
                   help="print only this field")
    c.set_defaults(func=lazy("sweep.pick:run_pick"))

    g = a.add_parser("gates", help="where each point's unsettled gates moved between its last two "
                     "kept checkpoints (crossed 0, held near it, away from it, toward it)",
                     description="For the gates of each point's newest checkpoint within the "
                     "settle margin of 0: crossed (the hard decision flipped since the previous "
                     "kept checkpoint), held (|change| < --hold: more steps of the same "
                     "objective do not settle it), away (more steps would), toward.")
    g.add_argument("--root", required=True, help="sweep directory (its points' run/ckpt-*.pt)")
    g.add_argument("--hold", type=float, default=0.1,
                   help="a gate whose log_alpha changed by less than this is 'held' "
                        "(default %(default)s)")
    g.add_argument("--json", help="write the classes per point and gate here")
    g.set_defaults(func=lazy("sweep.gate_paths:run_gates"))
