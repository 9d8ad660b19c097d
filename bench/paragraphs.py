#!/usr/bin/python3
"""What translating a paragraph sentence by sentence buys (Translator.translate(...,
split_sentences=True), headwise-translate --split-sentences): paragraphs made of consecutive
prose sentences of a corpus split, translated whole and split, scored against the joined
references with the trainer's sacreBLEU-compatible BLEU and chrF.

    /usr/bin/python3 bench/paragraphs.py models/en-de/base.hwm models/en-de/model.hwm \
        --data ~/.cache/headwise/corpus/de --split test [--group 3] [--beams 1,4] \
        [--translate build/default] [--json OUT.json]

A paragraph is --group consecutive lines of the split (in file order) that each look like one
prose sentence on both sides: at least 5 words, a capital first and a period last, and one
sentence by the trainer's rule (ui_text.split_sentences) on each side; sources joined with a
space, references too. The test split is held out by package (models/en-de/data/README.md),
so the paragraphs are unseen text; consecutive lines may come from different packages, so a
paragraph is a stand-in for real prose, not a real one. Prints a markdown table; --json writes
the same numbers and the paragraphs' count and mean length.
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "trainer"))
from headwise_trainer.data.ui_text import split_sentences  # noqa: E402
from headwise_trainer.data.batching import BatchingError, read_split  # noqa: E402
from headwise_trainer.evaluation.metrics import corpus_bleu, corpus_chrf  # noqa: E402
from headwise_trainer.evaluation.runtime_module import build_dir_of, import_headwise  # noqa: E402

BATCH = 16  # lines per batch, as bench/bleu.py


def prose_sentence(text):
    return (len(text.split()) >= 5 and text[:1].isupper() and text.endswith(".")
            and len(split_sentences(text)) == 1)


def paragraphs(src, ref, group):
    keep = [i for i, (s, r) in enumerate(zip(src, ref)) if prose_sentence(s) and prose_sentence(r)]
    groups = [keep[i:i + group] for i in range(0, len(keep) - group + 1, group)]
    return ([" ".join(src[j] for j in g) for g in groups],
            [" ".join(ref[j] for j in g) for g in groups])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+", help=".hwm files")
    p.add_argument("--data", required=True, help="a corpus directory (headwise-train data)")
    p.add_argument("--split", default="test")
    p.add_argument("--group", type=int, default=3, help="sentences per paragraph")
    p.add_argument("--beams", default="1,4")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--translate", help="the headwise build to use (a headwise-translate binary "
                                       "or build directory); default: import headwise")
    p.add_argument("--json")
    a = p.parse_args()
    if a.group < 2:
        sys.exit("paragraphs.py: --group must be at least 2")
    headwise = import_headwise(build_dir_of(a.translate) if a.translate else None)
    try:
        src, ref, _ = read_split(a.data, a.split)
    except BatchingError as e:
        sys.exit(f"paragraphs.py: {e}")
    para_src, para_ref = paragraphs(src, ref, a.group)
    if not para_src:
        sys.exit(f"paragraphs.py: no {a.group} prose sentences in {a.data}/{a.split}")
    words = statistics.mean(len(s.split()) for s in para_src)
    recovered = sum(len(headwise.split_sentences(s)) == a.group for s in para_src)
    print(f"{len(para_src)} paragraphs of {a.group} sentences from {a.data}/{a.split} "
          f"({words:.1f} words on average; the runtime finds {a.group} sentences in "
          f"{recovered} of them)")
    print("| model | search | BLEU whole | BLEU split | change | chrF whole | chrF split | "
          "length ratio whole / split |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for model_path in a.models:
        model = headwise.Model(model_path)
        for beam in (int(b) for b in a.beams.split(",")):
            translator = headwise.Translator(model, threads=a.threads, max_batch=BATCH,
                                             max_beam=max(beam, 1))
            row = {"model": os.path.basename(model_path), "beam": beam}
            for mode, split in (("whole", False), ("split", True)):
                results = translator.translate(para_src, beam_size=beam, split_sentences=split)
                failed = [i for i, r in enumerate(results) if not r.ok]
                if failed:
                    sys.exit(f"paragraphs.py: {len(failed)} paragraphs failed ({mode}), e.g. "
                             f"{results[failed[0]].error}")
                hyps = [r.text for r in results]
                bleu = corpus_bleu(hyps, para_ref)
                row[mode] = {"bleu": bleu.score, "chrf": corpus_chrf(hyps, para_ref),
                             "length_ratio": bleu.sys_len / bleu.ref_len}
            rows.append(row)
            w, s = row["whole"], row["split"]
            print(f"| {row['model']} | {'greedy' if beam == 1 else f'beam {beam}'} | "
                  f"{w['bleu']:.2f} | {s['bleu']:.2f} | {s['bleu'] - w['bleu']:+.2f} | "
                  f"{w['chrf']:.2f} | {s['chrf']:.2f} | "
                  f"{w['length_ratio']:.3f} / {s['length_ratio']:.3f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"data": a.data, "split": a.split, "group": a.group,
                       "paragraphs": len(para_src), "mean_words": words,
                       "runtime_finds_all_sentences": recovered, "results": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
