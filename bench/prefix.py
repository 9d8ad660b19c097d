#!/usr/bin/python3
"""What a target prefix buys (Translator.translate(..., target_prefix=), headwise-translate
--prefix-file): interactive translation simulated on a corpus split. For each line whose
reference has more than K words, the first k <= K words of the reference are given as the
prefix (k = 0: none), and the rest is the model's. Scored per k, over the same lines for every
k, with the trainer's sacreBLEU-compatible BLEU:

  - next word: the share of lines whose output's word k (the first after the prefix) is the
    reference's word k, what an autocomplete would propose;
  - continuation BLEU: the outputs' words after the prefix against the references' (the
    prefix's own words would inflate a whole-sentence BLEU);
  - kept: the share of outputs that begin with the prefix as written (detokenization may
    normalize a prefix's spacing; every hypothesis begins with the prefix's pieces);
  - the same two scores of the unprefixed outputs (k = 0) at the same positions: what the
    model's own translation gives from word k on, the baseline each prefix is compared with.

    /usr/bin/python3 bench/prefix.py models/en-de/model.hwm models/en-de/base.hwm \
        --data ~/.cache/headwise/corpus/de --split test [--words 3] [--beams 1,4] \
        [--translate build/default] [--json OUT.json]

Prints a markdown table; --json writes the same numbers.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "trainer"))
from headwise_trainer.data.batching import BatchingError, read_split  # noqa: E402
from headwise_trainer.evaluation.metrics import corpus_bleu  # noqa: E402
from headwise_trainer.evaluation.runtime_module import build_dir_of, import_headwise  # noqa: E402

BATCH = 16  # lines per batch, as bench/bleu.py


def score(outputs, refs, k):
    """(next-word share, continuation BLEU, kept share) of outputs given k reference words."""
    nxt = cont_h = cont_r = 0
    hyps, conts = [], []
    kept = 0
    for out, ref in zip(outputs, refs):
        ow, rw = out.split(), ref.split()
        prefix = " ".join(rw[:k])
        kept += out.startswith(prefix)
        nxt += len(ow) > k and ow[k] == rw[k]
        hyps.append(" ".join(ow[k:]))
        conts.append(" ".join(rw[k:]))
    n = len(outputs)
    return nxt / n, corpus_bleu(hyps, conts).score, kept / n


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+", help=".hwm files")
    p.add_argument("--data", required=True, help="a corpus directory (headwise-train data)")
    p.add_argument("--split", default="test")
    p.add_argument("--words", type=int, default=3, help="the most prefix words K")
    p.add_argument("--beams", default="1,4")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--translate", help="the headwise build to use (a headwise-translate binary "
                                       "or build directory); default: import headwise")
    p.add_argument("--json")
    a = p.parse_args()
    headwise = import_headwise(build_dir_of(a.translate) if a.translate else None)
    try:
        src, ref, _ = read_split(a.data, a.split)
    except BatchingError as e:
        sys.exit(f"prefix.py: {e}")
    keep = [i for i, r in enumerate(ref) if len(r.split()) > a.words]
    # A prefix whose pieces the vocabulary lacks is refused (Model.encode_target): such lines
    # are left out, and counted.
    first = headwise.Model(a.models[0])
    encodable = []
    for i in keep:
        try:
            for k in range(1, a.words + 1):
                first.encode_target(" ".join(ref[i].split()[:k]))
            encodable.append(i)
        except headwise.TokenizerError:
            pass
    print(f"{len(encodable)} lines of {a.data}/{a.split} whose reference has more than "
          f"{a.words} words ({len(keep) - len(encodable)} more whose first words hold a piece "
          f"the vocabulary lacks)")
    left_out = len(keep) - len(encodable)
    src, ref = [src[i] for i in encodable], [ref[i] for i in encodable]
    print("| model | search | prefix words | next word: with / without | "
          "continuation BLEU: with / without | kept |")
    print("|---|---|---|---|---|---|")
    rows = []
    for model_path in a.models:
        model = headwise.Model(model_path)
        for beam in (int(b) for b in a.beams.split(",")):
            translator = headwise.Translator(model, threads=a.threads, max_batch=BATCH,
                                             max_beam=max(beam, 1))
            plain = None
            for k in range(a.words + 1):
                prefixes = [" ".join(r.split()[:k]) for r in ref]
                results = translator.translate(src, beam_size=beam, target_prefix=prefixes)
                failed = [i for i, r in enumerate(results) if not r.ok]
                if failed:
                    sys.exit(f"prefix.py: {len(failed)} lines failed (k {k}), e.g. "
                             f"{results[failed[0]].error}")
                outputs = [r.text for r in results]
                plain = plain or outputs  # k = 0 comes first
                nxt, bleu, kept = score(outputs, ref, k)
                nxt0, bleu0, _ = score(plain, ref, k)
                row = {"model": os.path.basename(model_path), "beam": beam, "prefix_words": k,
                       "next_word": nxt, "continuation_bleu": bleu, "kept": kept,
                       "next_word_without": nxt0, "continuation_bleu_without": bleu0}
                rows.append(row)
                print(f"| {row['model']} | {'greedy' if beam == 1 else f'beam {beam}'} | {k} | "
                      f"{100 * nxt:.1f}% / {100 * nxt0:.1f}% | {bleu:.2f} / {bleu0:.2f} | "
                      f"{100 * kept:.1f}% |", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"data": a.data, "split": a.split, "lines": len(src),
                       "left_out_unencodable": left_out, "words": a.words,
                       "results": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
