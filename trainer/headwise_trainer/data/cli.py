"""The corpus and vocabulary subcommands of headwise-train: data, data-card, spm, shortlist."""
from __future__ import annotations

import os

from ..cli_support import CliError, add_corpus, add_overwrite, check_outputs
from ..paths import LOCK_DIR

DEFAULT_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "headwise", "corpus-cache")


def cmd_data(args) -> None:
    from . import corpus
    check_outputs(args.out, [f"{s}.{lang}" for s in corpus.SPLITS
                             for lang in (args.src_lang, args.lang)] + ["manifest.json"],
                  args.overwrite, [p for p in (args.tsv, args.src_file, args.tgt_file) if p])
    if args.tsv or args.src_file or args.tgt_file:
        return _data_user_text(args)
    from . import corpus_build, debian_archive as da, deb_cache
    from .pair_filters import FilterConfig
    if not 1 <= args.workers <= 2:
        raise CliError(f"--workers {args.workers}: expected 1 or 2")
    lock_path = args.lock or os.path.join(LOCK_DIR, f"{args.lang}.lock")
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
    from . import corpus
    if not (0 <= args.dev_percent and 0 <= args.test_percent
            and args.dev_percent + args.test_percent < 100):
        raise CliError(f"--dev-percent {args.dev_percent} and --test-percent "
                       f"{args.test_percent}: expected non-negative values summing to < 100")
    stats = corpus.CorpusStats()
    if args.tsv and (args.src_file or args.tgt_file):
        raise CliError("give either --tsv or --src-file/--tgt-file, not both")
    if not args.tsv and not (args.src_file and args.tgt_file):
        raise CliError("--src-file and --tgt-file go together: expected both, found one")
    raw = corpus.tsv_pairs(args.tsv) if args.tsv else corpus.aligned_pairs(args.src_file,
                                                                          args.tgt_file)
    inputs = [args.tsv] if args.tsv else [args.src_file, args.tgt_file]
    prov = {"inputs": [{"path": os.path.abspath(p), "sha256": corpus.sha256_file(p)}
                       for p in inputs]}
    pairs = corpus.clean_pairs(raw, args.max_chars, stats)
    if not pairs:
        raise CliError("no sentence pairs left after cleaning; expected at least one")
    man = corpus.write_corpus(args.out, pairs, args.src_lang, args.lang, args.dev_percent,
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


def add_data(sub) -> None:
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
    add_overwrite(d, "replace an existing corpus in --out")
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


def add_data_card(sub) -> None:
    c = sub.add_parser("data-card", help="write a Debian corpus' data card",
                       description="From a corpus built from the Debian archive: README.md "
                       "(its generated section), train.SRC.xz and packages.tsv.xz in --out.")
    add_corpus(c)
    c.add_argument("--out", required=True, help="data card directory (models/en-de/data)")
    c.set_defaults(func=cmd_data_card)


def add_spm(sub) -> None:
    s = sub.add_parser("spm", help="train SentencePiece vocabularies (OPUS-MT files)",
                       description="Train source.spm, target.spm and vocab.json on the train "
                       "split (eos=0, unk=1, pad=last id).")
    add_corpus(s)
    s.add_argument("--out", required=True, help="output directory")
    s.add_argument("--vocab-size", type=int, default=8000,
                   help="model vocabulary size incl. <pad> (shared), or per SentencePiece "
                        "model + 1 (separate); default 8000")
    s.add_argument("--separate", action="store_true",
                   help="separate source and target SentencePiece models (joint vocab.json)")
    s.add_argument("--model-type", default="unigram", choices=["unigram", "bpe"])
    s.add_argument("--character-coverage", type=float, default=1.0)
    add_overwrite(s, "replace existing vocabulary files in --out")
    s.set_defaults(func=cmd_spm)

def cmd_shortlist(args) -> None:
    import json
    import time

    from . import shortlist as slf
    from .spm_vocab import Vocab
    if args.top_k < 0 or args.frequent < 0 or args.min_count < 1:
        raise CliError("--top-k and --frequent must be >= 0, --min-count >= 1")
    out_dir = os.path.dirname(os.path.abspath(args.out))
    check_outputs(out_dir, [os.path.basename(args.out)], args.overwrite, [])
    man_path = os.path.join(args.data, "manifest.json")
    if not os.path.isfile(man_path):
        raise CliError(f"{man_path}: not found; expected a corpus directory made by "
                       "'headwise-train data'")
    with open(man_path, encoding="utf-8") as f:
        man = json.load(f)
    src_lang, tgt_lang = man["source_lang"], man["target_lang"]
    vocab = Vocab.load(args.vocab)
    V = len(vocab)
    t0 = time.time()

    def encode(split: str, limit: int = 0):
        path_s = os.path.join(args.data, f"{split}.{src_lang}")
        path_t = os.path.join(args.data, f"{split}.{tgt_lang}")
        for p in (path_s, path_t):
            if not os.path.isfile(p):
                raise CliError(f"{p}: not found")
        return (slf.encode_file(path_s, vocab.source, vocab.piece_to_id, vocab.unk_id, limit),
                slf.encode_file(path_t, vocab.target, vocab.piece_to_id, vocab.unk_id, limit))

    src, tgt = encode(args.split, args.limit)
    if src[0].size != tgt[0].size:
        raise CliError(f"{args.split}: {src[0].size} source lines but {tgt[0].size} target lines")
    c = slf.count(src, tgt, V)
    freq, lists = slf.make_lists(c, V, args.top_k, args.frequent, args.score, args.min_count,
                             not args.no_copy)
    name = os.path.basename(os.path.normpath(args.data))
    description = (f"top {args.top_k} per source piece by {args.score} over {c.pairs} "
                   f"{args.split} pairs of {name}{', copies' if not args.no_copy else ''}; "
                   f"{len(freq)} most frequent")
    header = {"description": description, "top_k": str(args.top_k),
              "frequent_pieces": str(args.frequent), "score": args.score,
              "min_count": str(args.min_count), "copy": "no" if args.no_copy else "yes",
              "data": name, "split": args.split, "pairs": str(c.pairs)}
    sl = slf.Shortlist(V, slf.vocab_sha256(vocab.id_to_piece), freq, lists, header)
    slf.write(args.out, sl)
    entries = sum(len(v) for v in lists.values())
    print(f"shortlist: {c.pairs} {args.split} pairs, {c.keys.size} co-occurring pairs of pieces; "
          f"{len(freq)} frequent pieces, lists for {len(lists)} source pieces ({entries} "
          f"entries) -> {args.out} ({time.time() - t0:.0f} s)")
    report = {"file": args.out, "pairs": c.pairs, "frequent": len(freq), "sources": len(lists),
              "entries": entries, "header": header}
    if args.report_split != "none":
        rs, rt = encode(args.report_split)
        always = [vocab.eos_id, vocab.unk_id]
        cov = slf.coverage(sl, slf.split_lines(*rs), slf.split_lines(*rt), always)
        report["coverage"] = {args.report_split: cov}
        print(f"shortlist: {args.report_split} references: {100 * cov['tokens_inside']:.2f}% of "
              f"target tokens and {100 * cov['lines_inside']:.1f}% of lines inside the union of "
              f"their source line; union {cov['union_mean']:.0f} pieces on average, at most "
              f"{cov['union_max']}, of {V}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
            f.write("\n")


def add_shortlist(sub) -> None:
    from .shortlist import SCORES
    p = sub.add_parser(
        "shortlist", help="a lexical vocabulary shortlist from the training pairs",
        description="Write the vocabulary shortlist of a corpus for `headwise-convert "
                    "--shortlist`: per source piece the --top-k target pieces that co-occur "
                    "with it most strongly, plus the --frequent most frequent target pieces. "
                    "The runtime then computes the output layer only over what a batch's "
                    "source pieces allow. Deterministic.")
    p.add_argument("--data", required=True, help="corpus directory (headwise-train data)")
    p.add_argument("--vocab", required=True,
                   help="vocabulary or checkpoint directory (source.spm, target.spm, "
                        "vocab.json) of the model the shortlist is for")
    p.add_argument("--out", required=True, help="shortlist file to write")
    p.add_argument("--split", default="train", choices=["train", "dev", "test"],
                   help="the pairs to count (default train)")
    p.add_argument("--top-k", type=int, default=100,
                   help="target pieces per source piece (default 100)")
    p.add_argument("--frequent", type=int, default=500,
                   help="most frequent target pieces always allowed (default 500)")
    p.add_argument("--score", choices=SCORES, default="dice",
                   help="dice (default): 2 c(s,t) / (c(s) + c(t)); cond: c(s,t) / c(s)")
    p.add_argument("--min-count", type=int, default=1,
                   help="pairs a (source, target) piece pair must co-occur in (default 1)")
    p.add_argument("--no-copy", action="store_true",
                   help="do not add a source piece to its own list")
    p.add_argument("--limit", type=int, default=0, help="first N pairs only")
    p.add_argument("--report-split", choices=["train", "dev", "test", "none"], default="dev",
                   help="print how much of this split's references the union of their source "
                        "line covers (default dev)")
    p.add_argument("--json", help="write the counts and the coverage report to this JSON file")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    p.set_defaults(func=cmd_shortlist)
