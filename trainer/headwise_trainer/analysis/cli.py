"""The `analyze` subcommand of headwise-train: head relevance (LRP), Michel importance and
attention statistics -> OUT/analysis.json and PNG heatmaps (this package); torch is imported
only when the subcommand runs."""
from __future__ import annotations

import argparse
import os

from ..cli_support import (CliError, add_corpus, add_overwrite, add_split, add_threads,
                           add_vocab, check_outputs)

OUTPUT = "analysis.json"


def add_analyze(sub) -> None:
    a = sub.add_parser(
        "analyze", help="head analysis: LRP relevance, Michel importance, head roles",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Analyse every attention head of a model on a corpus split, as Voita et "
        "al. (2019):\n"
        "  relevance   LRP from the top-1 logit of each greedily generated token to each "
        "head's output,\n              normalised over the heads of its block, mean over "
        "predictions (all three types)\n"
        "  michel      Michel et al.'s |d loss / d head mask| on the references, l2-normalised "
        "per block\n              (all three types; a cheaper ranking)\n"
        "  confidence  mean max attention weight, EOS excluded (all three types)\n"
        "  positional  one relative offset of the max-weight key >= 90% of the time "
        "(encoder and decoder\n              self-attention: decoder-encoder offsets compare "
        "positions of different sequences)\n"
        "  rare_word   max weight on the sentence's least frequent source token (encoder "
        "self-attention:\n              frequencies are of train.SRC tokenised with the model's "
        "source SentencePiece)\n"
        "  syntactic   with --conllu: nsubj, obj (dobj), amod, advmod in both directions vs. "
        "the most-\n              frequent-offset baseline (encoder self-attention: the parses "
        "are of the source)\n"
        "Gated models are analysed with test-time gates: closed heads get relevance and michel "
        "0 and are\nmarked in the plots; their attention statistics are still reported. "
        "Writes OUT/analysis.json\n(format headwise-head-analysis, version 1) and "
        "OUT/<statistic>.png.")
    a.add_argument("--model", required=True,
                   help="checkpoint directory (config.json + model.safetensors or "
                        "pytorch_model.bin, e.g. OPUS-MT), training/pruning run directory, or "
                        "ckpt-*.pt")
    add_corpus(a)
    add_vocab(a, "the model's")
    a.add_argument("--out", required=True, help="output directory")
    add_split(a, "dev")
    a.add_argument("--sentences", type=int, default=500,
                   help="analyse the first N sentences of the split (0: all; default 500)")
    a.add_argument("--max-len", type=int, default=128,
                   help="skip pairs with a side longer than this many ids (default 128)")
    a.add_argument("--conllu", metavar="FILE",
                   help="CoNLL-U parses of source sentences, for the syntactic statistics")
    a.add_argument("--rule", default="attnlrp", choices=["attnlrp", "z"],
                   help="LRP rule of 'relevance' (default attnlrp; z = the paper's z-rule)")
    a.add_argument("--both-rules", action="store_true",
                   help="also compute the other rule (relevance_z or relevance_attnlrp)")
    a.add_argument("--rare-min-rank", type=int, default=500,
                   help="rare_word uses sentences whose rarest token is outside the N most "
                        "frequent (default 500, as the paper)")
    a.add_argument("--syntactic-min-instances", type=int, default=10,
                   help="instances a relation needs before it can make a head syntactic")
    a.add_argument("--batch-size", type=int, default=16)
    add_threads(a)
    a.add_argument("--no-plots", action="store_true", help="write analysis.json only")
    add_overwrite(a, "replace outputs in --out")
    a.set_defaults(func=run_analyze)


def run_analyze(args, log=print) -> dict:
    from . import conllu, pipeline, plots, report, stats
    from ..data.batching import encode_split, read_split
    from ..model.checkpoint import WEIGHTS_FILE
    from ..data.corpus import _write_atomic, sha256_file
    from ..model.import_model import is_checkpoint_dir, load_start_model, load_start_vocab
    from ..threads import set_threads

    check_outputs(args.out, [OUTPUT], args.overwrite, [args.model, args.data])
    if args.sentences < 0:
        raise CliError(f"--sentences: expected 0 (all) or a positive count, found {args.sentences}")
    set_threads(args.threads)
    start = load_start_model(args.model)
    model = start.model.eval()
    vocab, _ = load_start_vocab(start, args.vocab, args.model)
    split = encode_split(vocab, args.data, args.split, args.max_len)
    n = min(args.sentences, len(split.src)) if args.sentences else len(split.src)
    if n == 0:
        raise CliError(f"{args.data}: split {args.split} has no sentence pairs within "
                       f"--max-len {args.max_len}")
    _, _, manifest = read_split(args.data, "train")
    train_src = os.path.join(args.data, f"train.{manifest['source_lang']}")
    freq = None
    if os.path.isfile(train_src):
        with open(train_src, encoding="utf-8") as f:
            freq = stats.token_frequencies(vocab, f.read().split("\n"))
    else:
        log(f"analyze: {train_src} not found; rare_word statistics skipped")
    parses = None
    if args.conllu:
        parses = [conllu.to_subwords(s, vocab) for s in conllu.read_conllu(args.conllu)]
        parses = [p for p in parses if len(p.ids) <= model.config.max_position_embeddings]
    opts = pipeline.Options(rule=args.rule, both_rules=args.both_rules,
                            batch_size=args.batch_size, rare_min_rank=args.rare_min_rank,
                            syntactic_min_instances=args.syntactic_min_instances)
    log(f"analyze: {start.description}: {n} {args.split} sentences, rule {args.rule}"
        f"{' + other' if args.both_rules else ''}")
    res = pipeline.analyse(model, split.src[:n], split.tgt[:n], opts, freq, parses, log)

    weights = os.path.join(args.model, WEIGHTS_FILE) if is_checkpoint_dir(args.model) else None
    checkpoint = {"path": args.model, "description": start.description,
                  "model_safetensors_sha256": sha256_file(weights)
                  if weights and os.path.isfile(weights) else None}
    data = {"corpus": args.data, "split": args.split, "sentences": n,
            "generation": "greedy", "max_len": args.max_len,
            "predictions": res.predictions, "seconds": round(res.seconds, 1),
            "train_frequencies": train_src if freq is not None else None,
            "rare_word_sentences": next((b.rare_sentences for b in res.blocks.values()
                                         if b.kind == "encoder_self"), 0)}
    if args.conllu:
        data.update(conllu=args.conllu, conllu_sentences=res.conllu_sentences,
                    conllu_unmapped_words=res.conllu_unmapped_words)
    thresholds = report.default_thresholds(args.rare_min_rank, args.syntactic_min_instances)
    doc = report.build(model, res, args.rule, checkpoint, data, thresholds)
    os.makedirs(args.out, exist_ok=True)
    _write_atomic(os.path.join(args.out, OUTPUT), report.dumps(doc))
    written = [] if args.no_plots else plots.plot_all(doc, args.out)
    log(f"analyze: {res.predictions} predictions in {res.seconds:.0f} s -> "
        f"{os.path.join(args.out, OUTPUT)}{' + ' + ', '.join(written) if written else ''}")
    return doc
