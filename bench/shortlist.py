#!/usr/bin/python3
"""What the vocabulary shortlist costs in quality and gains in speed on a trained checkpoint:
converts it with `headwise-convert --weights FORMAT --shortlist FILE` into --out (never into
models/), then, with the headwise Python module, for each weight format and beam size:

  quality  the source side of a corpus split translated with the shortlist on and off (two
           Translators on the same model file), --batch lines per call; BLEU and chrF with the
           trainer's sacreBLEU-compatible code, the difference on - off, lines identical;
  speed    the first --speed-lines lines one at a time (batch 1), on and off alternating line by
           line (so a change in machine load hits both alike): decode time = thread CPU time of
           the full translation minus that of the same line with max_length 1 (the encoder, the
           first step and the call overhead cancel), summed over the lines; on / off = the
           speed-up of the decode steps; per generated token too;
  union    the mean size of the shortlist's union per line (batch 1) and per --batch lines.

    /usr/bin/python3 bench/shortlist.py models/en-de/checkpoint --shortlist SL.tsv \\
        --convert build/default/converter/headwise-convert --data ~/.cache/headwise/corpus/de \\
        --split test --out /tmp/headwise-shortlist [--formats int8,fp32] [--beams 1,4] \\
        [--json out.json]

Prints markdown tables; --json writes every number. Threads: 1 (--threads).
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "trainer"))
from headwise_trainer.evaluation.metrics import corpus_bleu, corpus_chrf  # noqa: E402
from headwise_trainer.evaluation.runtime_module import build_dir_of, import_headwise  # noqa: E402
from headwise_trainer.data import shortlist as sl_file  # noqa: E402


def read_split(data, split, limit):
    with open(os.path.join(data, "manifest.json"), encoding="utf-8") as f:
        man = json.load(f)
    out = []
    for lang in (man["source_lang"], man["target_lang"]):
        with open(os.path.join(data, f"{split}.{lang}"), encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        out.append(lines[:limit] if limit else lines)
    return out


def translate_all(translator, src, beam, batch):
    hyps, failed = [], 0
    for start in range(0, len(src), batch):
        for r in translator.translate(src[start:start + batch], beam_size=beam):
            failed += not r.ok
            hyps.append(r.text.replace("\n", " ") if r.ok else "")
    if failed:
        sys.exit(f"shortlist.py: {failed} lines failed")
    return hyps


def decode_times(on, off, lines, beam):
    """Per engine: summed decode CPU seconds and generated tokens over `lines` (batch 1)."""
    total = {"on": [0.0, 0], "off": [0.0, 0]}
    for line in lines:
        for name, t in (("on", on), ("off", off)):
            t0 = time.thread_time()
            full = t.translate([line], beam_size=beam)[0]
            t1 = time.thread_time()
            t.translate([line], beam_size=beam, max_length=1)
            t2 = time.thread_time()
            if not full.ok or not full.ids:
                continue
            total[name][0] += (t1 - t0) - (t2 - t1)
            total[name][1] += len(full.ids)
    return total


def union_sizes(model, shortlist, src, batch):
    """Mean union size per line and per `batch` lines (what the runtime computes)."""
    info = model.info
    always = [info.config.eos_token_id, info.config.unk_token_id]
    ids = [model.encode(s) for s in src]
    one = [len(shortlist.union([i], always)) for i in ids]
    many = [len(shortlist.union(ids[k:k + batch], always)) for k in range(0, len(ids), batch)]
    return sum(one) / len(one), sum(many) / len(many)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint")
    p.add_argument("--shortlist", required=True, help="headwise-train shortlist's file")
    p.add_argument("--convert", required=True, help="headwise-convert binary")
    p.add_argument("--translate", help="the headwise build whose Python module runs the models "
                                       "(its headwise-translate or build directory); default: "
                                       "import headwise, else build/default/python")
    p.add_argument("--data", required=True, help="corpus directory (headwise-train data)")
    p.add_argument("--split", default="test")
    p.add_argument("--out", required=True, help="scratch directory for the converted models")
    p.add_argument("--formats", default="int8,fp32")
    p.add_argument("--beams", default="1,4")
    p.add_argument("--batch", type=int, default=16, help="lines per translate call (quality)")
    p.add_argument("--limit", type=int, default=0, help="first N lines only (quality)")
    p.add_argument("--speed-lines", type=int, default=300)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json")
    a = p.parse_args()
    headwise = import_headwise(build_dir_of(a.translate) if a.translate else None)
    os.makedirs(a.out, exist_ok=True)
    src, ref = read_split(a.data, a.split, a.limit)
    shortlist = sl_file.read(a.shortlist)
    name = os.path.basename(os.path.normpath(a.checkpoint))
    results = {"checkpoint": a.checkpoint, "shortlist": a.shortlist,
               "shortlist_header": shortlist.header, "split": a.split, "lines": len(src),
               "batch": a.batch, "speed_lines": min(a.speed_lines, len(src)), "runs": []}
    for fmt in a.formats.split(","):
        path = os.path.join(a.out, f"{name}.{fmt}.shortlist.hwm")
        subprocess.run([a.convert, a.checkpoint, "-o", path, "--force", "--weights", fmt,
                        "--shortlist", a.shortlist], check=True, stdout=subprocess.DEVNULL)
        model = headwise.Model(path)
        if model.info.shortlist is None:
            sys.exit(f"shortlist.py: {path} has no shortlist")
        mean_one, mean_batch = union_sizes(model, shortlist, src, a.batch)
        for beam in (int(b) for b in a.beams.split(",")):
            kw = dict(threads=a.threads, max_batch=a.batch, max_beam=beam)
            on = headwise.Translator(model, shortlist=True, **kw)
            off = headwise.Translator(model, shortlist=False, **kw)
            assert on.uses_shortlist and not off.uses_shortlist
            h_on = translate_all(on, src, beam, a.batch)
            h_off = translate_all(off, src, beam, a.batch)
            speed = decode_times(on, off, src[:a.speed_lines], beam)
            run = {"format": fmt, "beam": beam,
                   "bleu_on": corpus_bleu(h_on, ref).score, "bleu_off": corpus_bleu(h_off, ref).score,
                   "chrf_on": corpus_chrf(h_on, ref), "chrf_off": corpus_chrf(h_off, ref),
                   "identical": sum(x == y for x, y in zip(h_on, h_off)),
                   "decode_s_on": speed["on"][0], "decode_s_off": speed["off"][0],
                   "tokens_on": speed["on"][1], "tokens_off": speed["off"][1],
                   "union_mean_line": mean_one, "union_mean_batch": mean_batch,
                   "vocab_size": model.info.config.vocab_size, "file_bytes": os.path.getsize(path)}
            run["bleu_change"] = run["bleu_on"] - run["bleu_off"]
            run["decode_speedup"] = run["decode_s_off"] / max(run["decode_s_on"], 1e-12)
            results["runs"].append(run)
            on.close()
            off.close()
            print(f"{fmt} beam {beam}: BLEU {run['bleu_on']:.2f} on, {run['bleu_off']:.2f} off; "
                  f"decode x{run['decode_speedup']:.2f}", flush=True)
        model.close()
    print(f"\n{name}, {a.split} split ({len(src)} lines, {a.batch} per call), shortlist "
          f"{a.shortlist} ({shortlist.header.get('description', '')})")
    print("| weights | beam | BLEU on | BLEU off | change | chrF on | chrF off | identical lines |"
          " union / line | union / batch | decode ms/token on | off | decode speed-up |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results["runs"]:
        per_on = 1e3 * r["decode_s_on"] / max(r["tokens_on"], 1)
        per_off = 1e3 * r["decode_s_off"] / max(r["tokens_off"], 1)
        print(f"| {r['format']} | {r['beam']} | {r['bleu_on']:.2f} | {r['bleu_off']:.2f} | "
              f"{r['bleu_change']:+.2f} | {r['chrf_on']:.2f} | {r['chrf_off']:.2f} | "
              f"{r['identical']}/{len(src)} | {r['union_mean_line']:.0f} | "
              f"{r['union_mean_batch']:.0f} of {r['vocab_size']} | {per_on:.3f} | {per_off:.3f} | "
              f"{r['decode_speedup']:.2f}x |")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
