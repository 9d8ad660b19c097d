#!/usr/bin/python3
"""Quality cost of each weight format: converts a checkpoint with headwise-convert --weights
fp32|fp16|int8, translates the source side of a test split with the headwise runtime (its
Python module, python/; greedy, the same options for every format, batched as
`headwise-translate --batch 16` batches: windows of 256 lines sorted by length, batches of 16
lines), and scores each against the references with the
trainer's sacreBLEU-compatible BLEU and chrF (trainer/headwise_trainer/evaluation/metrics.py).

    /usr/bin/python3 bench/bleu.py CHECKPOINT_DIR --convert BUILD/headwise-convert \
        [--translate BUILD/headwise-translate] --src test.en --ref test.de [--out DIR] [--limit N]

--translate names the build whose module runs the models (a headwise-translate binary or a
build directory; its python/ directory is used); default: `import headwise`, else
build/default/python of this checkout.

Prints a markdown table (BLEU, chrF, difference to fp32, share of lines identical to fp32, file
size) and says whether int8 is within --bar BLEU (default 0.3) of fp32. --json writes the same.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "trainer"))
from headwise_trainer.evaluation.metrics import corpus_bleu, corpus_chrf  # noqa: E402
from headwise_trainer.evaluation.runtime_module import build_dir_of, import_headwise  # noqa: E402

BATCH = 16  # lines per batch, as headwise-translate --batch 16 (windows of 16 x 16 lines)


def translate(headwise, model_path, src, beam, threads):
    """The runtime's best translation of each line (line breaks inside a text become spaces,
    as headwise-translate prints them); exits naming the failed lines, if any."""
    translator = headwise.Translator(headwise.Model(model_path), threads=threads,
                                     max_batch=BATCH, max_beam=beam)
    hyps, failed = [], []
    # One call: the library sorts and batches each window of 16 x BATCH lines as the CLI does.
    for i, r in enumerate(translator.translate(src, beam_size=beam)):
        if not r.ok:
            failed.append(f"line {i + 1}: {r.error}")
        hyps.append(r.text.replace("\n", " ").replace("\r", " ") if r.ok else "")
    if failed:
        sys.exit(f"bleu.py: {len(failed)} lines failed with {model_path}: " + "; ".join(failed[:5]))
    return hyps


def read(path, limit):
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f]
    return lines[:limit] if limit else lines


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint")
    p.add_argument("--convert", required=True)
    p.add_argument("--translate", help="the headwise build to use (a headwise-translate binary "
                                       "or build directory); default: import headwise")
    p.add_argument("--src", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--formats", default="fp32,fp16,int8")
    p.add_argument("--keep-heads", help="passed to headwise-convert")
    p.add_argument("--out", help="directory for the models and translations (default: temporary)")
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--bar", type=float, default=0.3)
    p.add_argument("--json")
    a = p.parse_args()
    headwise = import_headwise(build_dir_of(a.translate) if a.translate else None)
    out = a.out or tempfile.mkdtemp(prefix="headwise_bleu_")
    os.makedirs(out, exist_ok=True)
    src, ref = read(a.src, a.limit), read(a.ref, a.limit)
    if len(src) != len(ref):
        sys.exit(f"bleu.py: {a.src} has {len(src)} lines, {a.ref} has {len(ref)}")
    results = []
    for fmt in a.formats.split(","):
        model = os.path.join(out, f"model.{fmt}.hwm")
        cmd = [a.convert, a.checkpoint, "-o", model, "--force", "--weights", fmt]
        if a.keep_heads:
            cmd += ["--keep-heads", a.keep_heads]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        hyps = translate(headwise, model, src, a.beam, a.threads)
        with open(os.path.join(out, f"hyp.{fmt}.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(hyps) + "\n")
        results.append({"format": fmt, "bleu": corpus_bleu(hyps, ref).score,
                        "chrf": corpus_chrf(hyps, ref), "hyps": hyps,
                        "file_bytes": os.path.getsize(model)})
    base = next((r for r in results if r["format"] == "fp32"), results[0])
    print(f"{len(src)} lines of {a.src}, beam {a.beam}; checkpoint {a.checkpoint}")
    print("| weights | BLEU | chrF | BLEU - fp32 | lines identical to fp32 | file MiB |")
    print("|---|---|---|---|---|---|")
    for r in results:
        same = sum(x == y for x, y in zip(r["hyps"], base["hyps"]))
        r["identical_to_fp32"] = same
        print(f"| {r['format']} | {r['bleu']:.2f} | {r['chrf']:.2f} | {r['bleu'] - base['bleu']:+.2f} | "
              f"{same}/{len(src)} | {r['file_bytes'] / 2**20:.1f} |")
    for r in results:
        if r["format"] == "int8":
            ok = r["bleu"] >= base["bleu"] - a.bar
            print(f"int8 within {a.bar} BLEU of fp32: {'yes' if ok else 'NO'} "
                  f"({r['bleu'] - base['bleu']:+.2f})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"lines": len(src), "checkpoint": a.checkpoint,
                       "results": [{k: v for k, v in r.items() if k != "hyps"} for r in results]},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
