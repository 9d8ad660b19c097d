#!/usr/bin/python3
"""Writes the two committed inputs of bench/throughput.py from the en-de test split:

  bench/data/throughput-ui.en         400 short user-interface strings (1-6 words)
  bench/data/throughput-sentences.en  400 longer sentences (9 words or more)

    bench/make_throughput_inputs.py [--corpus ~/.cache/headwise/corpus/de] [--out bench/data]

The corpus directory is what `headwise-train data --lang de` writes (manifest.json, test.en,
...; models/en-de/data/README.md). The test split's English side is read in file order, each
distinct line once; a line's words are its whitespace-separated fields. Of the lines of each
kind, 400 evenly spaced ones are kept (the k-th of N kept is line floor(k * N / 400)), so both
files follow the split's mix of packages. The split's sha256 is checked against the corpus
manifest and written to bench/data/README.md with the counts, so the files can be traced back.
"""
import argparse
import hashlib
import json
import os
import sys

COUNT = 400
UI_MAX_WORDS = 6
SENTENCE_MIN_WORDS = 9


def pick(lines, count):
    if len(lines) < count:
        raise SystemExit(f"only {len(lines)} lines of this kind, {count} wanted")
    return [lines[k * len(lines) // count] for k in range(count)]


def main(argv=None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=os.path.expanduser("~/.cache/headwise/corpus/de"))
    p.add_argument("--out", default=os.path.join(here, "data"))
    a = p.parse_args(argv)
    path = os.path.join(a.corpus, "test.en")
    with open(path, "rb") as f:
        raw = f.read()
    digest = hashlib.sha256(raw).hexdigest()
    with open(os.path.join(a.corpus, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    want = manifest.get("files", {}).get("test.en")
    if want != digest:
        raise SystemExit(f"{path}: sha256 {digest} is not the manifest's {want}")
    seen, ui, sentences = set(), [], []
    for line in raw.decode("utf-8").splitlines():
        line = line.strip()
        if not line or line in seen:
            continue
        seen.add(line)
        words = len(line.split())
        if words <= UI_MAX_WORDS:
            ui.append(line)
        elif words >= SENTENCE_MIN_WORDS:
            sentences.append(line)
    os.makedirs(a.out, exist_ok=True)
    picked = {"throughput-ui.en": pick(ui, COUNT), "throughput-sentences.en": pick(sentences, COUNT)}
    for name, lines in picked.items():
        with open(os.path.join(a.out, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")

    def mean_words(lines):
        return sum(len(l.split()) for l in lines) / len(lines)

    readme = f"""# bench/data: inputs of bench/throughput.py

Written by `bench/make_throughput_inputs.py` from the en-de test split (`test.en`,
{len(seen):,} distinct lines, sha256 `{digest}`;
the corpus: models/en-de/data/README.md). Both are Debian message catalogs and package
descriptions of the test split's source packages, which training never saw.

| file | lines | rule | of | mean words |
|---|---|---|---|---|
| throughput-ui.en | {COUNT} | 1-{UI_MAX_WORDS} words | {len(ui):,} | {mean_words(picked['throughput-ui.en']):.1f} |
| throughput-sentences.en | {COUNT} | {SENTENCE_MIN_WORDS} words or more | {len(sentences):,} | {mean_words(picked['throughput-sentences.en']):.1f} |

Each file keeps {COUNT} evenly spaced lines of its kind, in the split's order.
"""
    with open(os.path.join(a.out, "README.md"), "w", encoding="utf-8") as f:
        f.write(readme)
    print(readme)
    return 0


if __name__ == "__main__":
    sys.exit(main())
