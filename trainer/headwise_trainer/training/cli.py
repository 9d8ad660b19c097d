"""The training subcommands of headwise-train: train, average, plot-run."""
from __future__ import annotations

from ..cli_support import add_corpus, add_device, add_overwrite, add_resume, add_threads, lazy
from ..model.config import ACTIVATIONS


def add_train(sub) -> None:
    t = sub.add_parser("train", help="train a MarianMT model (resumable; DDP with --nproc or torchrun)",
                       description="Train the reference MarianMT model: label-smoothed "
                       "cross-entropy, Adam (0.9, 0.98, 1e-9) with a warm-up learning-rate "
                       "schedule, token-based batches, bf16 autocast where the CPU/GPU has it, "
                       "periodic dev loss/BLEU with early stopping, checkpoints that resume "
                       "exactly (keep-last-N plus best.pt). Multi-process data parallel (DDP): "
                       "--nproc N on one machine, or torchrun --nproc_per_node N "
                       "trainer/headwise-train train ... where torchrun works (Debian 12's "
                       "torch 1.13 torchrun fails on Python 3.11). Long runs belong under "
                       "/root/.cache/headwise/runs/ (never in the work tree).")
    add_corpus(t)
    t.add_argument("--vocab", required=True, help="vocabulary directory from 'spm'")
    t.add_argument("--out", required=True, help="run directory (checkpoints, run.json, "
                   "train.log, history.json)")
    add_resume(t)
    t.add_argument("--nproc", type=int, default=1,
                   help="data-parallel worker processes on this machine (DDP); "
                        "--max-tokens is per process")
    add_device(t, "where to train (default cpu); cuda needs torch 2.x with CUDA")
    t.add_argument("--init-from", metavar="START",
                   help="start a new run from the weights of START (a Hugging Face / OPUS-MT "
                        "checkpoint directory, a run directory or a ckpt-*.pt file) instead of "
                        "a random initialisation: a warm start, not a resume (new optimiser "
                        "state, step 0, its own schedule and data order). The architecture "
                        "comes from START: --d-model, --encoder-layers, --decoder-layers, "
                        "--heads, --decoder-heads, --ffn, --activation and --max-positions "
                        "(given or by default) must agree with it, else an error names the "
                        "ones that differ. The dropout options apply. START must have no head "
                        "gates and the vocabulary's size")
    g = t.add_argument_group("model")
    g.add_argument("--d-model", type=int, default=256)
    g.add_argument("--encoder-layers", type=int, default=6)
    g.add_argument("--decoder-layers", type=int, default=3)
    g.add_argument("--heads", type=int, default=8, help="attention heads (encoder, and decoder "
                   "unless --decoder-heads)")
    g.add_argument("--decoder-heads", type=int, default=0)
    g.add_argument("--ffn", type=int, default=1024, help="feed-forward width")
    g.add_argument("--activation", default="swish", choices=list(ACTIVATIONS))
    g.add_argument("--dropout", type=float, default=0.1,
                   help="dropout on embeddings and on every sub-layer output before the "
                        "residual sum (Marian --transformer-dropout, fairseq --dropout; "
                        "default 0.1, transformer-base)")
    g.add_argument("--attention-dropout", type=float, default=0.0,
                   help="dropout on the attention probabilities (default 0.0, as Marian and "
                        "fairseq transformer-base)")
    g.add_argument("--activation-dropout", type=float, default=0.0,
                   help="dropout after the feed-forward activation (default 0.0, as Marian "
                        "and fairseq transformer-base)")
    g.add_argument("--max-positions", type=int, default=512)
    g.add_argument("--head-layout", metavar="SPEC",
                   help="train this head layout from scratch: the heads SPEC keeps (the "
                        "converter's --keep-heads syntax, e.g. 'enc.*=none;enc.3=5', or a file "
                        "holding it); the others are masked from step 0 by frozen 0/1 gates")
    o = t.add_argument_group("optimisation")
    o.add_argument("--steps", type=int, default=6000,
                   help="optimiser steps at most (early stopping may end sooner)")
    o.add_argument("--max-tokens", type=int, default=2500,
                   help="per batch and process: sentences x longest side (ids); the "
                        "effective batch is max-tokens x update-freq x processes")
    o.add_argument("--update-freq", type=int, default=1,
                   help="batches whose gradients are summed per optimiser step (gradient "
                        "accumulation; default 1)")
    o.add_argument("--max-len", type=int, default=128,
                   help="drop training pairs with a side longer than this many ids")
    o.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    o.add_argument("--lr-schedule", default="inverse-sqrt",
                   choices=["inverse-sqrt", "constant", "cosine", "linear"],
                   help="after the linear warm-up: peak*sqrt(warmup/step) (default), constant, "
                        "or a cosine / linear decay to --min-lr at --decay-steps")
    o.add_argument("--warmup", type=int, default=800, help="linear warm-up steps")
    o.add_argument("--decay-steps", type=int, default=0,
                   help="cosine/linear: the step where the decay reaches --min-lr (default: "
                        "--steps of the first invocation)")
    o.add_argument("--min-lr", type=float, default=0.0, help="cosine/linear: final rate")
    o.add_argument("--label-smoothing", type=float, default=0.1)
    o.add_argument("--clip-norm", type=float, default=1.0, help="0: no clipping")
    o.add_argument("--seed", type=int, default=1)
    o.add_argument("--precision", default="auto", choices=["auto", "bf16", "fp32"],
                   help="bf16: forward matrix products under bf16 autocast (weights, Adam and "
                        "the loss stay fp32); auto (default): bf16 where the CPU has AMX or "
                        "AVX-512 BF16 or the GPU supports bf16, else fp32")
    add_threads(o, help="threads per process, torch's and OpenBLAS's (default %(default)s)")
    r = t.add_argument_group("evaluation, early stopping and checkpoints")
    r.add_argument("--eval-every", type=int, default=500,
                   help="steps between dev evaluations (0: never); each one also writes a "
                        "checkpoint")
    r.add_argument("--dev-bleu-sentences", type=int, default=300,
                   help="dev pairs decoded (greedy) for BLEU, evenly spaced over the split "
                        "(0: all)")
    r.add_argument("--dev-loss-sentences", type=int, default=2000,
                   help="dev pairs for the dev loss, evenly spaced (0: all)")
    r.add_argument("--patience", type=int, default=0,
                   help="stop when the best dev BLEU of the last N evaluations is below the "
                        "best before them + --min-delta (0: never stop early)")
    r.add_argument("--min-delta", type=float, default=0.2,
                   help="dev BLEU gain that counts as an improvement (default 0.2)")
    r.add_argument("--checkpoint-every", type=int, default=250)
    r.add_argument("--keep", type=int, default=2,
                   help="newest checkpoints kept (best.pt is kept besides them); keep at "
                        "least as many as you will --average")
    r.add_argument("--shard-mib", type=int, default=0,
                   help="write each checkpoint as a directory of parts of at most this many "
                        "MiB (e.g. 16, for transfer); read back transparently (0: one file)")
    r.add_argument("--log-every", type=int, default=25)
    t.set_defaults(func=lazy("training.train:run_training"))


def add_average(sub) -> None:
    a = sub.add_parser("average", help="average the newest N checkpoints of a run",
                       description="Write the element-wise mean of the model tensors of the "
                       "newest N checkpoints of a run (or of the given ckpt files) as one "
                       "training-checkpoint file that evaluate, export and prune read.")
    a.add_argument("--run", help="run directory")
    a.add_argument("--last", type=int, default=5, help="newest N checkpoints (default 5)")
    a.add_argument("--ckpt", action="append", help="checkpoint files instead (repeatable)")
    a.add_argument("--out", required=True, help="averaged checkpoint file to write (*.pt)")
    add_overwrite(a, "replace an existing --out")
    a.set_defaults(func=lazy("model.average:run_average"))


def add_plot_run(sub) -> None:
    pr = sub.add_parser("plot-run", help="dev BLEU and dev loss vs step of a run (PNG)",
                        description="Plot the dev evaluations of a training run "
                        "(history.json, else its newest checkpoint) for a model card.")
    pr.add_argument("--run", required=True, help="run directory")
    pr.add_argument("--out", required=True, help="PNG to write")
    pr.add_argument("--title", default="", help="plot title (default: the run directory)")
    pr.add_argument("--prior", metavar="RUN_OR_HISTORY",
                    help="the run this one was warm-started from (train --init-from): its "
                         "directory or history.json, drawn first")
    pr.add_argument("--offset", type=int, default=0, metavar="STEP",
                    help="with --prior: the prior run's step at which this run began; this "
                         "run's steps are drawn shifted by it")
    pr.set_defaults(func=lazy("training.plot_run:run_plot"))
