"""The `prune` and `prune-eval` subcommands of headwise-train (argument parsing only; torch is
imported when a subcommand runs)."""
from __future__ import annotations

import argparse

from ..cli_support import (add_corpus, add_device, add_overwrite, add_resume, add_search,
                           add_split, add_threads, add_vocab, lazy)


def add_prune(sub) -> None:
    p = sub.add_parser(
        "prune", help="L0 head pruning: fine-tune with Hard Concrete head gates",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Fine-tune a trained model with a Hard Concrete gate on every head of the "
        "chosen attention types and the loss\n"
        "  label-smoothed CE (mean per target token) + LAMBDA * penalty\n"
        "where penalty (--penalty sum, the default) is the SUM over all gated heads of "
        "P(gate != 0),\nso LAMBDA is the price of one open head in nats per token; with "
        "--penalty layer-mean the\nper-block sums are averaged over the gated blocks, as the "
        "reference code of Voita et al.\ndoes (its lambda = ours x number of gated blocks).\n"
        "Start from a training/pruning run, a ckpt-*.pt, or a Hugging Face / OPUS-MT checkpoint "
        "directory\n(config.json + model.safetensors or pytorch_model.bin; its source.spm, "
        "target.spm, vocab.json\nserve as --vocab). Logs expected open heads and kept heads per "
        "block to OUT/prune_log.jsonl;\ncheckpoints resume bit-identically (--resume).")
    p.add_argument("--from", dest="start", metavar="PATH",
                   help="start point: run directory, ckpt-*.pt, or checkpoint directory "
                        "(required unless --resume)")
    add_corpus(p)
    add_vocab(p, "the start point's")
    p.add_argument("--out", required=True, help="pruning run directory")
    add_resume(p)
    g = p.add_argument_group("gates and penalty")
    g.add_argument("--lambda", dest="lam", type=float, default=0.01,
                   help="penalty weight (default 0.01: on the en-de base model the mean CE "
                        "gradient of three heads in four was below 0.21 * 0.01, the penalty's "
                        "gradient at log_alpha 0); see --penalty for its unit")
    g.add_argument("--penalty", default="sum", choices=["sum", "layer-mean"],
                   help="sum: P(open) summed over every gated head (default); layer-mean: "
                        "per-block sums averaged over gated blocks (reference code)")
    g.add_argument("--types", default=None,
                   help="attention types to gate, comma-separated subset of enc,dec,cross "
                        "(default: all three; enc with --encoder-only)")
    g.add_argument("--encoder-only", action="store_true",
                   help="train only the encoder's own weights and the gates; decoder and shared "
                        "embeddings stay fixed (the paper's encoder-only setting)")
    g.add_argument("--init-log-alpha", type=float, default=3.0,
                   help="initial log_alpha of new gates (default 3.0: P(gate != 0) 0.978, test-"
                        "time gate 1; the reference code starts near 0)")
    g.add_argument("--gate-rule", default="hard", choices=["hard", "continuous"],
                   help="test-time gate: hard (log_alpha > 0 keeps the head, gate 1; default) "
                        "or continuous (the reference code's clamp(sigmoid(log_alpha) * 1.2 - "
                        "0.1, 0, 1): heads with gate 0 removed, the others scaled, which the "
                        "converter folds into out_proj); exported in config.json")
    g.add_argument("--settle-margin", type=float, default=1.0,
                   help="a gate has settled when |log_alpha| >= this; the log counts the heads "
                        "that have not (default 1.0)")
    g.add_argument("--settle-steps", type=int, default=0,
                   help="the last N of --steps add the settle push to the loss (default 0: "
                        "none). A run resumed with a larger --steps and --settle-steps continues "
                        "its own path and settles at its end")
    g.add_argument("--settle-push", type=float, default=0.05,
                   help="weight of the settle push: MU x sum over gates of max(0, margin - "
                        "|log_alpha|), which moves every unsettled gate away from 0 on the side "
                        "it is on (default %(default)s)")
    o = p.add_argument_group("optimisation")
    o.add_argument("--steps", type=int, default=1000, help="total optimiser steps")
    o.add_argument("--lr", type=float, default=2e-4,
                   help="peak learning rate of the model's weights (inverse-sqrt schedule)")
    o.add_argument("--gate-lr", type=float, default=0.05,
                   help="peak learning rate of log_alpha (default 0.05)")
    o.add_argument("--gate-lr-schedule", default="constant",
                   choices=["constant", "inverse-sqrt", "cosine", "linear"],
                   help="schedule of the gate learning rate after the same warm-up: constant "
                        "(default), inverse-sqrt, or cosine/linear decay to 0 at --steps")
    o.add_argument("--warmup", type=int, default=50, help="warm-up steps (default 50)")
    o.add_argument("--max-tokens", type=int, default=2000,
                   help="per batch: sentences x longest side (ids)")
    o.add_argument("--max-len", type=int, default=128,
                   help="drop training pairs with a side longer than this many ids")
    o.add_argument("--label-smoothing", type=float, default=0.1)
    o.add_argument("--clip-norm", type=float, default=1.0,
                   help="gradient clipping of the model's weights (not the gates); 0: none")
    o.add_argument("--seed", type=int, default=1)
    o.add_argument("--precision", default="auto", choices=["auto", "bf16", "fp32"],
                   help="bf16: the forward pass under bf16 autocast (weights, gates, Adam, the "
                        "loss and the penalty stay fp32); auto (default): bf16 where the CPU "
                        "has AMX or AVX-512 BF16 or the GPU supports bf16, else fp32")
    add_threads(o)
    add_device(o, "where to train (default cpu)")
    r = p.add_argument_group("reporting and output")
    r.add_argument("--log-every", type=int, default=20,
                   help="progress line and prune_log.jsonl record every N steps")
    r.add_argument("--eval-every", type=int, default=0,
                   help="dev loss + BLEU with test-time gates every N steps (0: never)")
    r.add_argument("--dev-bleu-sentences", type=int, default=200,
                   help="dev sentences decoded for BLEU (0: all)")
    r.add_argument("--checkpoint-every", type=int, default=100)
    r.add_argument("--keep", type=int, default=2, help="checkpoints kept")
    r.add_argument("--export", metavar="DIR",
                   help="at the end, write the gated checkpoint (Hugging Face layout, "
                        "log_alpha tensors) here; with --resume on a finished run: export only")
    r.add_argument("--export-dtype", default="f16", choices=["f32", "f16", "bf16"],
                   help="weight type of the export (gates are always F32; default f16)")
    add_overwrite(r, "replace an existing --export DIR")
    p.set_defaults(func=lazy("pruning.prune:run_prune"))


def add_prune_eval(sub) -> None:
    e = sub.add_parser(
        "prune-eval", help="BLEU/chrF of the full, gated and head-masked model",
        description="Score head layouts of one model on a corpus split: 'full' (every head), "
        "'gated' (test-time gates, log_alpha > 0) and one variant per --keep-heads SPEC. SPEC is "
        "the converter's: KIND.LAYERS=HEADS entries separated by ';', KIND enc|dec|cross|*, "
        "LAYERS N|N-M|*, HEADS all|none|N,N-M, listing the heads to KEEP; blocks it does not "
        "name keep the gates' decision. A file name is read as the spec.")
    e.add_argument("--model", required=True,
                   help="checkpoint directory, run directory (training or pruning) or ckpt-*.pt")
    add_corpus(e, from_data=False)
    add_vocab(e, "the model's")
    add_split(e, "test")
    e.add_argument("--variants", default="full,gated",
                   help="comma-separated subset of full,gated (default both; gated only where "
                        "the model has gates)")
    e.add_argument("--keep-heads", action="append", metavar="SPEC",
                   help="also score the layout SPEC keeps, e.g. 'enc.*=0-3;cross.2=none' "
                        "(repeatable)")
    e.add_argument("--baseline", metavar="PATH",
                   help="also score this model (e.g. the unpruned start point) with every head, "
                        "as variant 'baseline'")
    e.add_argument("--pruning-run", metavar="RUN_DIR|CKPT",
                   help="record this pruning run's (or checkpoint's) start point, lambda, steps "
                        "and time in the JSON")
    add_search(e)
    e.add_argument("--hyps-dir", help="write each variant's translations here")
    e.add_argument("--json", help="write the scores and layouts to this JSON file")
    add_threads(e)
    e.set_defaults(func=lazy("pruning.prune_eval:run_prune_eval"))
