"""Command-line entry point: `headwise-train SUBCOMMAND ...` (see trainer/headwise-train)."""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_LOCK_DIR = os.path.join(HERE, "data")
DEFAULT_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "headwise", "corpus-cache")


class CliError(Exception):
    pass


def check_outputs(out_dir: str, names: List[str], overwrite: bool, inputs: List[str]) -> None:
    """Refuses to replace an existing output unless `overwrite`, and an input ever."""
    targets = [os.path.join(out_dir, n) for n in names]
    real = {os.path.realpath(t) for t in targets}
    for p in inputs:
        if os.path.realpath(p) in real:
            raise CliError(f"{p} is an input and an output of this command; choose another --out "
                           "(inputs are never overwritten)")
    existing = [t for t in targets if os.path.exists(t)]
    if existing and not overwrite:
        raise CliError(f"{existing[0]} exists; pass --overwrite to replace the outputs in "
                       f"{out_dir}")


def cmd_data(args) -> None:
    from . import data
    check_outputs(args.out, [f"{s}.{lang}" for s in data.SPLITS
                             for lang in (args.src_lang, args.lang)] + ["manifest.json"],
                  args.overwrite, [p for p in (args.tsv, args.src_file, args.tgt_file) if p])
    if args.tsv or args.src_file or args.tgt_file:
        return _data_user_text(args)
    from . import corpus_build, debian_archive as da, deb_cache
    from .pair_filters import FilterConfig
    if not 1 <= args.workers <= 2:
        raise CliError(f"--workers {args.workers}: expected 1 or 2")
    lock_path = args.lock or os.path.join(DEFAULT_LOCK_DIR, f"{args.lang}.lock")
    os.makedirs(args.cache, exist_ok=True)
    apt = None if args.deb_dir else da.AptRoot(os.path.join(args.cache, "apt"), [args.lang],
                                                mirror=args.mirror, suite=args.suite)
    if args.update_lock:
        if apt is None:
            raise CliError("--update-lock reads the archive's indexes; it does not go with "
                           "--deb-dir")
        apt.update()
        lock = da.make_lock(apt, args.lang, args.size_limit,
                            lambda n, b: corpus_build.store_index(args.cache, n, b))
        da.write_lock(lock_path, lock)
        print(f"data: wrote {lock_path}")
    lock = da.read_lock(lock_path)
    if lock.lang != args.lang:
        raise CliError(f"{lock_path}: a lock for '{lock.lang}', expected one for '{args.lang}'")
    if apt is not None and not args.update_lock:  # download from the archive the lock names
        mirror, suite = (lock.archive.split() + ["", ""])[:2]
        apt = da.AptRoot(apt.root, [args.lang], mirror=mirror or args.mirror,
                         suite=suite or args.suite)
    source = deb_cache.DirSource(args.deb_dir) if args.deb_dir else deb_cache.AptSource(apt)
    cfg = corpus_build.BuildConfig(
        filters=FilterConfig(max_chars=args.max_chars), cap=args.cap,
        test_pairs=args.test_pairs, dev_pairs=args.dev_pairs, workers=args.workers,
        ddtp=not args.no_ddtp)
    man = corpus_build.build_corpus(lock, lock_path, args.cache, source, apt, args.out, cfg,
                                    src_lang=args.src_lang)
    sizes = man["split_sizes"]
    print(f"data: {man['counts_catalogs'].get('entries', 0)} catalog messages and "
          f"{man['counts_descriptions'].get('entries', 0)} description parts -> train "
          f"{sizes['train']}, dev {sizes['dev']} ({len(man['split_packages']['dev'])} "
          f"packages), test {sizes['test']} ({len(man['split_packages']['test'])} packages) "
          f"-> {args.out}")


def _data_user_text(args) -> None:
    from . import data
    if not (0 <= args.dev_percent and 0 <= args.test_percent
            and args.dev_percent + args.test_percent < 100):
        raise CliError(f"--dev-percent {args.dev_percent} and --test-percent "
                       f"{args.test_percent}: expected non-negative values summing to < 100")
    stats = data.CorpusStats()
    if args.tsv and (args.src_file or args.tgt_file):
        raise CliError("give either --tsv or --src-file/--tgt-file, not both")
    if not args.tsv and not (args.src_file and args.tgt_file):
        raise CliError("--src-file and --tgt-file go together: expected both, found one")
    raw = data.tsv_pairs(args.tsv) if args.tsv else data.aligned_pairs(args.src_file,
                                                                      args.tgt_file)
    inputs = [args.tsv] if args.tsv else [args.src_file, args.tgt_file]
    prov = {"inputs": [{"path": os.path.abspath(p), "sha256": data.sha256_file(p)}
                       for p in inputs]}
    pairs = data.clean_pairs(raw, args.max_chars, stats)
    if not pairs:
        raise CliError("no sentence pairs left after cleaning; expected at least one")
    man = data.write_corpus(args.out, pairs, args.src_lang, args.lang, args.dev_percent,
                            args.test_percent, stats, prov, args.max_chars)
    c = man["counts"]
    print(f"data: {c['raw_pairs']} raw pairs -> {c['kept']} kept "
          f"(empty {c['dropped_empty']}, identical {c['dropped_identical']}, format-only "
          f"{c['dropped_format_only']}, too long {c['dropped_too_long']}, duplicate source "
          f"{c['dropped_duplicate_source']}); split {c['split_counts']} -> {args.out}")


def cmd_data_card(args) -> None:
    from .data_card import write_card
    write_card(args.data, args.out)


def cmd_spm(args) -> None:
    from .spm_vocab import train_vocab
    check_outputs(args.out, ["source.spm", "target.spm", "vocab.json", "vocab_info.json"],
                  args.overwrite, [])
    train_vocab(args.data, args.out, vocab_size=args.vocab_size, shared=not args.separate,
                model_type=args.model_type, character_coverage=args.character_coverage)


def _lazy(module: str, func: str):
    """Imports torch-using modules only when their subcommand runs."""
    def run(args):
        import importlib
        getattr(importlib.import_module(f".{module}", __package__), func)(args)
    return run


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="headwise-train",
        description="Corpus, vocabulary, training, evaluation and export of MarianMT models "
                    "for headwise.")
    sub = p.add_subparsers(dest="command", metavar="SUBCOMMAND")
    sub.required = True

    d = sub.add_parser("data", help="build a parallel corpus (Debian's archive or your text)",
                       description="Build a deterministic train/dev/test corpus. Default: "
                       "English->LANG pairs from the gettext catalogs and the translated "
                       "package descriptions (DDTP) of the Debian packages that "
                       "trainer/data/LANG.lock pins; the .debs are fetched with apt-get "
                       "download into --cache and unpacked there (nothing is installed); a "
                       "rerun continues from the cache. With --src-file/--tgt-file or --tsv: "
                       "your own parallel text instead.")
    d.add_argument("--lang", default="de", help="target language code (default: de)")
    d.add_argument("--src-lang", default="en", help="source language code (default: en)")
    d.add_argument("--out", required=True, help="output directory")
    d.add_argument("--overwrite", action="store_true", help="replace an existing corpus in --out")
    d.add_argument("--max-chars", type=int, default=400,
                   help="drop pairs with a side longer than this (0: no limit; default 400)")
    u = d.add_argument_group("your own parallel text")
    u.add_argument("--src-file", help="aligned source sentences, one per line (UTF-8)")
    u.add_argument("--tgt-file", help="aligned target sentences, one per line (UTF-8)")
    u.add_argument("--tsv", help="source<TAB>target per line (UTF-8)")
    u.add_argument("--dev-percent", type=int, default=2, help="default 2")
    u.add_argument("--test-percent", type=int, default=2, help="default 2")
    a = d.add_argument_group("Debian corpus")
    a.add_argument("--lock", help="lock file (default: trainer/data/LANG.lock)")
    a.add_argument("--update-lock", action="store_true",
                   help="read the archive's current indexes and write a new --lock first "
                        "(the only way the package set or versions change)")
    a.add_argument("--cache", default=DEFAULT_CACHE,
                   help="package cache and private apt root (default: %(default)s)")
    a.add_argument("--deb-dir", help="take the locked .debs from this directory instead of "
                   "apt-get download (offline rebuilds, tests)")
    a.add_argument("--no-ddtp", action="store_true",
                   help="leave out the translated package descriptions")
    a.add_argument("--cap", type=int, default=3000,
                   help="train pairs kept per source package (0: no cap; default 3000)")
    a.add_argument("--test-pairs", type=int, default=2500,
                   help="test split: whole packages until at least this many pairs")
    a.add_argument("--dev-pairs", type=int, default=2500,
                   help="dev split: whole packages until at least this many pairs")
    a.add_argument("--workers", type=int, default=2, help="processes for unpacking and "
                   "parsing (1 or 2; default 2)")
    a.add_argument("--size-limit", type=int, default=20_000_000,
                   help="--update-lock: skip packages larger than this many bytes")
    a.add_argument("--mirror", default="http://deb.debian.org/debian",
                   help="--update-lock / download: the archive")
    a.add_argument("--suite", default="bookworm", help="--update-lock / download: the suite")
    d.set_defaults(func=cmd_data)

    c = sub.add_parser("data-card", help="write a Debian corpus' data card",
                       description="From a corpus built from the Debian archive: README.md "
                       "(its generated section), train.SRC.xz and packages.tsv.xz in --out.")
    c.add_argument("--data", required=True, help="corpus directory from 'data'")
    c.add_argument("--out", required=True, help="data card directory (models/en-de/data)")
    c.set_defaults(func=cmd_data_card)

    s = sub.add_parser("spm", help="train SentencePiece vocabularies (OPUS-MT files)",
                       description="Train source.spm, target.spm and vocab.json on the train "
                       "split (eos=0, unk=1, pad=last id).")
    s.add_argument("--data", required=True, help="corpus directory from 'data'")
    s.add_argument("--out", required=True, help="output directory")
    s.add_argument("--vocab-size", type=int, default=8000,
                   help="model vocabulary size incl. <pad> (shared), or per SentencePiece "
                        "model + 1 (separate); default 8000")
    s.add_argument("--separate", action="store_true",
                   help="separate source and target SentencePiece models (joint vocab.json)")
    s.add_argument("--model-type", default="unigram", choices=["unigram", "bpe"])
    s.add_argument("--character-coverage", type=float, default=1.0)
    s.add_argument("--overwrite", action="store_true",
                   help="replace existing vocabulary files in --out")
    s.set_defaults(func=cmd_spm)

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
    t.add_argument("--data", required=True, help="corpus directory from 'data'")
    t.add_argument("--vocab", required=True, help="vocabulary directory from 'spm'")
    t.add_argument("--out", required=True, help="run directory (checkpoints, run.json, "
                   "train.log, history.json)")
    t.add_argument("--resume", nargs="?", const="auto", default=None, metavar="CKPT",
                   help="continue from the newest checkpoint in --out, or from CKPT")
    t.add_argument("--nproc", type=int, default=1,
                   help="data-parallel worker processes on this machine (DDP); "
                        "--max-tokens is per process")
    t.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                   help="where to train (default cpu); cuda needs torch 2.x with CUDA")
    g = t.add_argument_group("model")
    g.add_argument("--d-model", type=int, default=256)
    g.add_argument("--encoder-layers", type=int, default=6)
    g.add_argument("--decoder-layers", type=int, default=3)
    g.add_argument("--heads", type=int, default=8, help="attention heads (encoder, and decoder "
                   "unless --decoder-heads)")
    g.add_argument("--decoder-heads", type=int, default=0)
    g.add_argument("--ffn", type=int, default=1024, help="feed-forward width")
    g.add_argument("--activation", default="swish", choices=["swish", "relu", "gelu"])
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
    o.add_argument("--threads", type=int, default=2, help="torch threads per process")
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
    t.set_defaults(func=_lazy("train", "run_training"))

    e = sub.add_parser("evaluate", help="BLEU and chrF on a corpus split",
                       description="Translate a split (greedy or beam) and score it with BLEU "
                       "and chrF computed as sacreBLEU 2.x does. Gated models use test-time "
                       "gates (log_alpha > 0) unless --no-gates. --hwm scores a converted "
                       "model with the headwise runtime (its Python module, python/) the same "
                       "way; with --model too, both and their difference.")
    e.add_argument("--model",
                   help="run directory, ckpt-*.pt file, or exported checkpoint directory")
    e.add_argument("--hwm", metavar="MODEL.hwm",
                   help="a converted model, translated by the headwise runtime with the same "
                        "length-sorted chunks (--batch-size) and maximum lengths as PyTorch")
    e.add_argument("--hwm-input", choices=["text", "ids"], default="text",
                   help="--hwm translates the source text with the model's own tokenizer "
                        "(default) or the trainer's source ids (needs --vocab or --model)")
    e.add_argument("--hwm-hyps", help="write the runtime's translations to this file "
                                      "(with --hwm alone, --hyps does)")
    e.add_argument("--data", required=True, help="corpus directory")
    e.add_argument("--vocab", help="vocabulary directory (default: the run's / checkpoint's)")
    e.add_argument("--split", default="test", choices=["train", "dev", "test"])
    e.add_argument("--beam", type=int, default=1, help="1 = greedy (default)")
    e.add_argument("--length-penalty", type=float, default=1.0)
    e.add_argument("--batch-size", type=int, default=64)
    e.add_argument("--limit", type=int, default=0, help="first N sentences only")
    e.add_argument("--no-gates", action="store_true", help="ignore head gates (all heads on)")
    e.add_argument("--mask-heads", action="append", metavar="BLOCK=H,H",
                   help="switch heads off, e.g. model.encoder.layers.0.self_attn=1,5 "
                        "(repeatable)")
    e.add_argument("--hyps", help="write the translations to this file")
    e.add_argument("--json", help="write the scores to this JSON file")
    e.add_argument("--threads", type=int, default=2)
    e.set_defaults(func=_lazy("evaluate", "run_evaluate"))

    x = sub.add_parser("export", help="training run -> Hugging Face-layout checkpoint dir",
                       description="Write config.json, model.safetensors, source.spm, "
                       "target.spm and vocab.json for the converter.")
    x.add_argument("--run", required=True, help="run directory or ckpt-*.pt file")
    x.add_argument("--out", required=True, help="checkpoint directory to write")
    x.add_argument("--vocab", help="vocabulary directory (default: the one the run used)")
    x.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16"],
                   help="tensor type in model.safetensors (gates stay F32)")
    x.add_argument("--average", type=int, default=1, metavar="N",
                   help="export the mean of the newest N checkpoints of the run (default 1)")
    x.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    x.set_defaults(func=_lazy("evaluate", "run_export"))

    a = sub.add_parser("average", help="average the newest N checkpoints of a run",
                       description="Write the element-wise mean of the model tensors of the "
                       "newest N checkpoints of a run (or of the given ckpt files) as one "
                       "training-checkpoint file that evaluate, export and prune read.")
    a.add_argument("--run", help="run directory")
    a.add_argument("--last", type=int, default=5, help="newest N checkpoints (default 5)")
    a.add_argument("--ckpt", action="append", help="checkpoint files instead (repeatable)")
    a.add_argument("--out", required=True, help="averaged checkpoint file to write (*.pt)")
    a.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    a.set_defaults(func=_lazy("average", "run_average"))

    pr = sub.add_parser("plot-run", help="dev BLEU and dev loss vs step of a run (PNG)",
                        description="Plot the dev evaluations of a training run "
                        "(history.json, else its newest checkpoint) for a model card.")
    pr.add_argument("--run", required=True, help="run directory")
    pr.add_argument("--out", required=True, help="PNG to write")
    pr.add_argument("--title", default="", help="plot title (default: the run directory)")
    pr.set_defaults(func=_lazy("plot_run", "run_plot"))

    from . import analyze_cli, prune_cli, shortlist, sweep_cli
    prune_cli.register(sub)    # prune, prune-eval
    analyze_cli.register(sub)  # analyze
    sweep_cli.register(sub)    # sweep
    shortlist.register(sub)    # shortlist
    return p


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    if getattr(args, "nproc", 1) > 1 and "WORLD_SIZE" not in os.environ:
        from .launch import launch, strip_nproc
        return launch(args.nproc, strip_nproc(argv))
    try:
        args.func(args)
    except KeyboardInterrupt:
        print("headwise-train: interrupted", file=sys.stderr)
        return 130
    except (CliError, ValueError, OSError) as e:
        print(f"headwise-train {args.command}: error: {e}", file=sys.stderr)
        return 1
    return 0
