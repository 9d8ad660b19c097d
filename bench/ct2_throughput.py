#!/usr/bin/env python3
"""CTranslate2's side of bench/throughput.py, run in CTranslate2's Python (PYTHONPATH and
LD_LIBRARY_PATH set by throughput.py --ct2 DIR). Never imported by headwise's build or tests.

Run against CTranslate2 4.8.1 built from source with Debian's oneDNN 2.6.3 (2026-12-04).

Convert (a Hugging Face MarianMT checkpoint directory, with bench/ct2_convert.py: numpy and
ctranslate2.specs, no transformers; closed heads of a gated checkpoint are zeroed):

    ct2_throughput.py --convert CKPT_DIR --out CT2_DIR --quantization int8|float32

Measure one cell (prints one JSON object, the fields headwise_throughput prints):

    ct2_throughput.py --model CT2_DIR --spm-dir CKPT_DIR --input LINES.txt --batch 32 --beam 4
        --threads 1 --compute-type int8|float32 [--repeat R] [--output FILE]

One run = SentencePiece pieces of every line plus "</s>" (what MarianTokenizer.encode gives,
as CTranslate2's Marian examples feed it; source.spm from --spm-dir), then
Translator.translate_batch(max_batch_size=--batch, batch_type="examples", beam_size,
num_hypotheses=1, max_decoding_length=256), then target.spm's decode of each best hypothesis.
translate_batch sorts the input by length before it cuts batches and restores the order, as
headwise does. Target tokens = the best hypothesis' tokens (no EOS). The Translator has
inter_threads=1 and intra_threads=--threads, device "cpu".
"""
import argparse
import json
import os
import sys
import time


def convert(a):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import ct2_convert
    ct2_convert.convert(a.convert, a.out, quantization=a.quantization, force=True)
    return 0


def measure(a):
    import ctranslate2
    import sentencepiece as spm
    import os
    src = spm.SentencePieceProcessor(model_file=os.path.join(a.spm_dir, "source.spm"))
    tgt = spm.SentencePieceProcessor(model_file=os.path.join(a.spm_dir, "target.spm"))
    with open(a.input, encoding="utf-8") as f:
        lines = f.read().splitlines()
    translator = ctranslate2.Translator(a.model, device="cpu", compute_type=a.compute_type,
                                        inter_threads=1, intra_threads=a.threads)

    def one_run(subset):
        t0 = time.perf_counter()
        tokens = [pieces + ["</s>"] for pieces in src.encode(subset, out_type=str)]
        t1 = time.perf_counter()
        results = translator.translate_batch(tokens, max_batch_size=a.batch,
                                             batch_type="examples", beam_size=a.beam,
                                             num_hypotheses=1, max_decoding_length=256)
        t2 = time.perf_counter()
        best = [r.hypotheses[0] for r in results]
        texts = [tgt.decode(h) for h in best]
        t3 = time.perf_counter()
        return {"tokenize_s": t1 - t0, "translate_s": t2 - t1, "detokenize_s": t3 - t2,
                "total_s": t3 - t0, "target_tokens": sum(len(h) for h in best),
                "source_tokens": sum(len(t) for t in tokens), "texts": texts}

    one_run(lines[:a.batch])  # warm-up, as headwise_throughput
    runs = [one_run(lines) for _ in range(a.repeat)]
    median = sorted(runs, key=lambda r: r["total_s"])[len(runs) // 2]
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            for t in runs[-1]["texts"]:
                f.write(t.replace("\n", " ") + "\n")
    out = {"engine": "ctranslate2", "version": getattr(ctranslate2, "__version__", "?"),
           "model": a.model, "compute_type": a.compute_type, "input": a.input,
           "lines": len(lines), "batch": a.batch, "beam": a.beam, "threads": a.threads,
           "env": {k: v for k, v in os.environ.items() if k.startswith(("CT2_", "DNNL_", "OMP_"))},
           "source_tokens": median["source_tokens"], "target_tokens": median["target_tokens"],
           "runs": [{k: r[k] for k in ("tokenize_s", "translate_s", "detokenize_s", "total_s")}
                    for r in runs],
           "tokens_per_s": median["target_tokens"] / median["total_s"],
           "model_tokens_per_s": median["target_tokens"] / median["translate_s"]}
    print(json.dumps(out))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--convert", help="checkpoint directory to convert")
    p.add_argument("--out")
    p.add_argument("--quantization", default="float32")
    p.add_argument("--model")
    p.add_argument("--spm-dir")
    p.add_argument("--input")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--compute-type", default="float32")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--output")
    a = p.parse_args(argv)
    if a.convert:
        if not a.out:
            p.error("--convert needs --out")
        return convert(a)
    if not (a.model and a.spm_dir and a.input):
        p.error("--model, --spm-dir and --input are required")
    return measure(a)


if __name__ == "__main__":
    sys.exit(main())
