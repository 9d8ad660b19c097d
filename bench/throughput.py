#!/usr/bin/python3
"""Batch throughput matrix: target tokens per second of headwise (and, given a build of it,
CTranslate2) on the shipped base and pruned models, fp32 and int8, greedy and beam 4, batch 1,
8 and 32, 1 and 2 threads, over bench/data/throughput-ui.en and throughput-sentences.en; the
time share of each operation at batch 32; results as JSON + markdown.

    bench/throughput.py --out bench/results/2026-12-02-throughput-x86-2core
    bench/throughput.py --quick                      # batch 32, 1 thread, 100 lines: minutes
    bench/throughput.py --ct2 /path/to/ct2 ...       # the same matrix with CTranslate2 too

Models: models/en-de/base.hwm (all 96 heads) and model.hwm (pruned), every format over the whole
vocabulary: a shipped file is used as it is where its weight format matches and it carries no
vocabulary shortlist; every other cell's file is converted from models/en-de/base-checkpoint and
checkpoint with `headwise-convert --weights fp32|int8` (no --shortlist) into --scratch (never
into models/). The JSON's "models" says which file each cell ran.
Each cell is one headwise_throughput process (bench/throughput_main.cc): tokenize every line,
TranslateIdsEach over the whole file (sorted by length, batches of --batch lines), decode the
best hypotheses; tokens/s = target tokens (best hypothesis, EOS excluded) / that time. One run
per cell unless --repeat: the machine is noisy, so compare ratios within one run.

CTranslate2 (--ct2 DIR): never a dependency of the build or the tests; DIR is a build or install
of it whose Python package imports with DIR/python (or DIR) on sys.path and whose
libctranslate2 is found in DIR/lib (or DIR/build). Both engines then run on copies of the
checkpoints with the <pad> embedding row zeroed (the decoder start token's embedding, which
CTranslate2's Marian handling and headwise must agree on for identical outputs), converted for
headwise (headwise-convert) and for CTranslate2 (bench/ct2_convert.py: ctranslate2.specs and
numpy, no transformers; the closed heads of a gated checkpoint are zeroed, and CTranslate2
computes them), each engine in its own process (bench/ct2_throughput.py). CTranslate2 is set
to its fastest configuration here: for each weight format, every environment in --ct2-env
(default: as built, DNNL_MAX_CPU_ISA=AVX512_CORE_VNNI; oneDNN's AMX kernels were slower than
its VNNI ones where AMX was granted) is timed on one cell (batch 32, sentences, greedy, 1
thread) and the fastest is used for the whole matrix. Run against CTranslate2 4.8.1 built from
source with Debian's oneDNN 2.6.3 (2026-12-04).
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
INPUTS = {"ui": os.path.join(HERE, "data", "throughput-ui.en"),
          "sentences": os.path.join(HERE, "data", "throughput-sentences.en")}
MODELS = {  # name: (checkpoint directory, shipped .hwm)
    "base": ("models/en-de/base-checkpoint", "models/en-de/base.hwm"),
    "pruned": ("models/en-de/checkpoint", "models/en-de/model.hwm"),
}
PROFILE_BATCH = 32
DEFAULT_CT2_ENVS = ["", "DNNL_MAX_CPU_ISA=AVX512_CORE_VNNI"]


def csv(kind):
    return lambda s: [kind(x) for x in s.split(",") if x]


def run(cmd, env=None, check=True):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if check and r.returncode != 0:
        raise SystemExit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-3000:]}")
    return r


def inspect(convert, path):
    return json.loads(run([convert, "inspect", path, "--json"]).stdout)


def weight_format(info):
    """fp32 / fp16 / int8 from inspect --json's tensor dtypes (I8 matrices make an int8 file)."""
    dtypes = info.get("tensors", {}).get("dtypes", {})
    return "int8" if "I8" in dtypes else "fp16" if "F16" in dtypes else "fp32"


def zero_pad_row(src_dir, dst_dir):
    """Copies a checkpoint directory with row pad_token_id of every embedding matrix zeroed
    (safetensors: 8-byte little-endian header length, JSON header, raw tensor bytes)."""
    os.makedirs(dst_dir, exist_ok=True)
    for name in os.listdir(src_dir):
        if name != "model.safetensors":
            shutil.copy2(os.path.join(src_dir, name), os.path.join(dst_dir, name))
    with open(os.path.join(src_dir, "config.json"), encoding="utf-8") as f:
        pad = int(json.load(f)["pad_token_id"])
    with open(os.path.join(src_dir, "model.safetensors"), "rb") as f:
        data = bytearray(f.read())
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    base = 8 + header_len
    item = {"F32": 4, "F16": 2, "BF16": 2}
    zeroed = []
    for name, t in header.items():
        if name == "__metadata__" or not (name.endswith("embed_tokens.weight")
                                          or name.endswith("shared.weight")):
            continue
        rows, cols = t["shape"]
        size = item[t["dtype"]]
        start = base + t["data_offsets"][0] + pad * cols * size
        data[start:start + cols * size] = bytes(cols * size)
        zeroed.append(name)
    with open(os.path.join(dst_dir, "model.safetensors"), "wb") as f:
        f.write(data)
    return zeroed


def prepare_models(a, convert, names, formats, zeroed=False):
    """{(model, format): path}: the shipped file where its format matches and it has no
    vocabulary shortlist (the matrix computes the whole vocabulary, as CTranslate2 does), else a
    conversion into the scratch directory (zeroed: always converted, from the pad-zeroed copy)."""
    out, notes = {}, {}
    for name in names:
        ckpt, shipped = (os.path.join(ROOT, p) for p in MODELS[name])
        if zeroed:
            ckpt_copy = os.path.join(a.scratch, f"{name}-checkpoint-padzero")
            if not os.path.isfile(os.path.join(ckpt_copy, "model.safetensors")):
                notes[f"{name} zeroed"] = zero_pad_row(ckpt, ckpt_copy)
            ckpt = ckpt_copy
        info = None if zeroed else inspect(convert, shipped)
        shipped_format = None if info is None or info.get("shortlist") else weight_format(info)
        for fmt in formats:
            if fmt == shipped_format:
                out[(name, fmt)] = shipped
                continue
            path = os.path.join(a.scratch, f"{name}{'-padzero' if zeroed else ''}-{fmt}.hwm")
            if not os.path.isfile(path):
                run([convert, ckpt, "-o", path, "--weights", fmt])
            out[(name, fmt)] = path
    return out, notes


def headwise_cell(a, exe, model, inp, batch, beam, threads, profile=False, output=None,
                  unsorted=False):
    cmd = [exe, "-m", model, "-i", inp, "--batch", str(batch), "--beam", str(beam),
           "--threads", str(threads), "--repeat", str(a.repeat)]
    if unsorted:
        cmd.append("--no-sort")
    if a.lines:
        cmd[4] = trimmed_input(a, inp)
    if profile:
        cmd.append("--profile")
    if output:
        cmd += ["--output", output]
    return json.loads(run(cmd).stdout)


def trimmed_input(a, inp):
    path = os.path.join(a.scratch, f"{os.path.basename(inp)}.first{a.lines}")
    if not os.path.isfile(path):
        with open(inp, encoding="utf-8") as f:
            lines = f.read().splitlines()[:a.lines]
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return path


def ct2_env(ct2_dir, extra):
    env = dict(os.environ)
    paths = [p for p in (os.path.join(ct2_dir, "python"), ct2_dir) if os.path.isdir(p)]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    libs = [p for p in (os.path.join(ct2_dir, "lib"), os.path.join(ct2_dir, "install", "lib"),
                        os.path.join(ct2_dir, "build"), ct2_dir)
            if os.path.isdir(p)]
    env["LD_LIBRARY_PATH"] = os.pathsep.join(libs + [env.get("LD_LIBRARY_PATH", "")]).rstrip(os.pathsep)
    if extra:
        key, _, value = extra.partition("=")
        env[key] = value
    return env


def ct2_cell(a, model_dir, spm_dir, inp, batch, beam, threads, fmt, env, output=None):
    cmd = [a.ct2_python, os.path.join(HERE, "ct2_throughput.py"), "--model", model_dir,
           "--spm-dir", spm_dir, "--input", trimmed_input(a, inp) if a.lines else inp,
           "--batch", str(batch), "--beam", str(beam), "--threads", str(threads),
           "--compute-type", "int8" if fmt == "int8" else "float32", "--repeat", str(a.repeat)]
    if output:
        cmd += ["--output", output]
    return json.loads(run(cmd, env=env).stdout)


def prepare_ct2(a, names, formats):
    """{(model, format): CTranslate2 model dir} from the pad-zeroed checkpoint copies."""
    out = {}
    for name in names:
        ckpt = os.path.join(a.scratch, f"{name}-checkpoint-padzero")
        for fmt in formats:
            path = os.path.join(a.scratch, f"ct2-{name}-{fmt}")
            if not os.path.isfile(os.path.join(path, "model.bin")):
                run([a.ct2_python, os.path.join(HERE, "ct2_throughput.py"), "--convert", ckpt,
                     "--out", path, "--quantization", "int8" if fmt == "int8" else "float32"],
                    env=ct2_env(a.ct2, ""))
            out[(name, fmt)] = path
    return out


def same_lines(p, q):
    with open(p, encoding="utf-8") as f, open(q, encoding="utf-8") as g:
        x, y = f.read().splitlines(), g.read().splitlines()
    return sum(1 for u, v in zip(x, y) if u == v), len(x)


def markdown(results):
    cells = results["headwise"]
    lines = [f"# Batch throughput, {results['date']}", "",
             f"Machine: {results['machine']}. Command: `{results['command']}` (commit "
             f"{results['commit']}). One process per cell, {results['repeat']} run(s) each; "
             "the machine is shared and noisy, so only ratios measured in this one run mean "
             "anything.", "",
             "Target tokens per second (best hypothesis, EOS excluded) over tokenize + translate "
             "+ decode, the whole file one sort window; wall time, and in parentheses per CPU "
             "second of the process (steadier on a shared machine; with 2 threads it counts "
             "both threads' time, so thread scaling is read from the wall figures):", ""]
    keys = sorted({(c["model_name"], c["weights"], c["beam"], c["threads"]) for c in cells},
                  key=lambda k: (k[0], k[1], k[2], k[3]))
    batches = sorted({c["batch"] for c in cells})
    inputs = [i for i in ("ui", "sentences") if any(c["input_name"] == i for c in cells)]
    head = "| model | weights | search | threads | " + " | ".join(
        f"{i} b{b}" for i in inputs for b in batches) + " |"
    lines += [head, "|" + "---|" * (4 + len(inputs) * len(batches))]
    index = {(c["model_name"], c["weights"], c["beam"], c["threads"], c["input_name"], c["batch"]): c
             for c in cells}
    for k in keys:
        row = [k[0], k[1], "greedy" if k[2] == 1 else f"beam {k[2]}", str(k[3])]
        for i in inputs:
            for b in batches:
                c = index.get(k + (i, b))
                row.append(f"{c['tokens_per_s']:,.0f} ({c['cpu_tokens_per_s']:,.0f})" if c else "-")
        lines.append("| " + " | ".join(row) + " |")
    # Ratios within the run.
    lines += ["", "Ratios (same run; 1-thread ratios from tokens per CPU second, the thread ratio "
              "from wall time):", "",
              "| model | weights | search | input | b32 / b1 (1 thread) | 2 threads / 1 (b32) | "
              "int8 / fp32 (b32, 1 thread) | sorted / input order (b32, 1 thread) |",
              "|---|---|---|---|---|---|---|---|"]
    unsorted = {(c["model_name"], c["weights"], c["beam"], c["input_name"]): c
                for c in results.get("unsorted", [])}
    for (m, w, beam, t) in keys:
        if t != 1:
            continue
        for i in inputs:
            b1, b32 = index.get((m, w, beam, 1, i, 1)), index.get((m, w, beam, 1, i, 32))
            t2 = index.get((m, w, beam, 2, i, 32))
            f32 = index.get((m, "fp32", beam, 1, i, 32))

            u = unsorted.get((m, w, beam, i))

            def ratio(x, y, key="cpu_tokens_per_s"):
                return f"{x[key] / y[key]:.2f}x" if x and y else "-"
            lines.append(f"| {m} | {w} | {'greedy' if beam == 1 else f'beam {beam}'} | {i} | "
                         f"{ratio(b32, b1)} | {ratio(t2, b32, 'tokens_per_s')} | "
                         f"{ratio(b32, f32) if w != 'fp32' else '-'} | {ratio(b32, u)} |")
    prof = results.get("profile", [])
    if prof:
        lines += ["", f"Time share by operation, batch {PROFILE_BATCH}, 1 thread (`--profile`: "
                  "the runtime's operation timers, runtime/src/op_profile.h; other = embeddings, "
                  "beam cache copies, batching, result copies):", "",
                  "| model | weights | search | input | projections | attention | feed-forward "
                  "| output layer | search | tokenization | other |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for c in prof:
            s = c["profile"]["shares"]
            lines.append(f"| {c['model_name']} | {c['weights']} | "
                         f"{'greedy' if c['beam'] == 1 else 'beam ' + str(c['beam'])} | "
                         f"{c['input_name']} | " + " | ".join(
                             f"{100 * s[k]:.1f}%" for k in ("projections", "attention",
                                                           "feed_forward", "output_layer",
                                                           "search", "tokenization", "other"))
                         + " |")
    ct2 = results.get("ct2")
    if ct2:
        lines += ["", "CTranslate2 (same matrix, pad-zeroed copies for both engines, "
                  f"configuration per format: {json.dumps(ct2['chosen_env'])}):", "",
                  "| model | weights | search | threads | input | batch | headwise | CT2 | "
                  "headwise / CT2 | identical lines |", "|---|---|---|---|---|---|---|---|---|---|"]
        for c in ct2["cells"]:
            h = c["headwise"]
            lines.append(f"| {c['model_name']} | {c['weights']} | "
                         f"{'greedy' if c['beam'] == 1 else 'beam ' + str(c['beam'])} | "
                         f"{c['threads']} | {c['input_name']} | {c['batch']} | "
                         f"{h['tokens_per_s']:,.0f} | {c['ct2']['tokens_per_s']:,.0f} | "
                         f"{h['tokens_per_s'] / c['ct2']['tokens_per_s']:.2f}x | "
                         f"{c.get('identical', '-')} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--build", default=os.path.join(ROOT, "build", "default"))
    p.add_argument("--scratch", default="/tmp/headwise-throughput")
    p.add_argument("--out", help="write OUT.json and OUT.md (e.g. bench/results/DATE-throughput-x86-2core)")
    p.add_argument("--models", type=csv(str), default=["base", "pruned"])
    p.add_argument("--weights", type=csv(str), default=["fp32", "int8"])
    p.add_argument("--beams", type=csv(int), default=[1, 4])
    p.add_argument("--batches", type=csv(int), default=[1, 8, 32])
    p.add_argument("--threads", type=csv(int), default=[1, 2])
    p.add_argument("--inputs", type=csv(str), default=["ui", "sentences"])
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--lines", type=int, default=0, help="only the first N lines of each input")
    p.add_argument("--no-profile", action="store_true")
    p.add_argument("--no-unsorted", action="store_true",
                   help="skip the input-order (--no-sort) cells at batch 32, 1 thread")
    p.add_argument("--quick", action="store_true", help="batch 32, 1 thread, 100 lines")
    p.add_argument("--ct2", help="a CTranslate2 build or install directory")
    p.add_argument("--ct2-python", default=sys.executable)
    p.add_argument("--ct2-env", type=csv(str), default=None,
                   help="comma-separated environments to try (KEY=VALUE, empty = as built)")
    a = p.parse_args(argv)
    if a.quick:
        a.batches, a.threads, a.lines = [32], [1], a.lines or 100
    os.makedirs(a.scratch, exist_ok=True)
    if a.out:  # before the minutes of measuring, not after: a missing folder lost a whole run
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    convert = os.path.join(a.build, "converter", "headwise-convert")
    exe = os.path.join(a.build, "bench", "headwise_throughput")
    for tool in (convert, exe):
        if not os.path.isfile(tool):
            raise SystemExit(f"{tool} missing: cmake --build --preset default --target "
                             "headwise-convert headwise_throughput")
    models, _ = prepare_models(a, convert, a.models, a.weights)
    commit = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], check=False).stdout.strip()
    results = {
        "date": datetime.date.today().isoformat(),
        "command": " ".join(["bench/throughput.py"] + (argv if argv is not None else sys.argv[1:])),
        "commit": commit,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load average "
                   f"{os.getloadavg()[0]:.1f} at start",
        "repeat": a.repeat,
        "models": {f"{m}-{w}": dict(path=os.path.relpath(path, ROOT) if path.startswith(ROOT) else path,
                                    **{k: v for k, v in inspect(convert, path).items()
                                       if k in ("provenance", "file_bytes", "tensors", "heads", "shortlist")})
                   for (m, w), path in models.items()},
        "headwise": [], "profile": [], "unsorted": [],
    }
    total = len(models) * len(a.beams) * len(a.batches) * len(a.threads) * len(a.inputs)
    done = 0
    for (m, w), path in models.items():
        for beam in a.beams:
            for inp in a.inputs:
                for t in a.threads:
                    for b in a.batches:
                        c = headwise_cell(a, exe, path, INPUTS[inp], b, beam, t)
                        c.update(model_name=m, weights=w, input_name=inp)
                        results["headwise"].append(c)
                        done += 1
                        print(f"[{done}/{total}] {m} {w} beam {beam} {inp} threads {t} batch {b}: "
                              f"{c['tokens_per_s']:,.0f} tok/s", file=sys.stderr, flush=True)
                if not a.no_unsorted and PROFILE_BATCH in a.batches and 1 in a.threads:
                    c = headwise_cell(a, exe, path, INPUTS[inp], PROFILE_BATCH, beam, 1,
                                      unsorted=True)
                    c.update(model_name=m, weights=w, input_name=inp)
                    results["unsorted"].append(c)
                if not a.no_profile and PROFILE_BATCH in a.batches:
                    c = headwise_cell(a, exe, path, INPUTS[inp], PROFILE_BATCH, beam, 1, profile=True)
                    c.update(model_name=m, weights=w, input_name=inp)
                    results["profile"].append(c)
    results["load_average_end"] = os.getloadavg()[0]

    if a.ct2:
        envs = a.ct2_env if a.ct2_env is not None else DEFAULT_CT2_ENVS
        zeroed, notes = prepare_models(a, convert, a.models, a.weights, zeroed=True)
        ct2_models = prepare_ct2(a, a.models, a.weights)
        chosen = {}
        for w in a.weights:  # the fastest configuration per format, on one cell
            m0 = a.models[0]
            trial = {}
            for e in envs:
                r = ct2_cell(a, ct2_models[(m0, w)], zeroed_spm(a, m0), INPUTS["sentences"], 32, 1,
                             1, w, ct2_env(a.ct2, e))
                trial[e] = r["tokens_per_s"]
            chosen[w] = max(trial, key=trial.get)
            print(f"CTranslate2 {w}: {trial} -> {chosen[w]!r}", file=sys.stderr, flush=True)
        cells = []
        for (m, w) in zeroed:
            for beam in a.beams:
                for inp in a.inputs:
                    for t in a.threads:
                        for b in a.batches:
                            hout = os.path.join(a.scratch, "out-headwise.txt")
                            cout = os.path.join(a.scratch, "out-ct2.txt")
                            h = headwise_cell(a, exe, zeroed[(m, w)], INPUTS[inp], b, beam, t,
                                              output=hout)
                            c = ct2_cell(a, ct2_models[(m, w)], zeroed_spm(a, m), INPUTS[inp], b,
                                         beam, t, w, ct2_env(a.ct2, chosen[w]), output=cout)
                            same, n = same_lines(hout, cout)
                            print(f"[CTranslate2] {m} {w} beam {beam} {inp} threads {t} batch {b}: "
                                  f"headwise {h['tokens_per_s']:,.0f}, CTranslate2 "
                                  f"{c['tokens_per_s']:,.0f} tok/s ({h['tokens_per_s'] / c['tokens_per_s']:.2f}x), "
                                  f"identical {same}/{n}", file=sys.stderr, flush=True)
                            cells.append(dict(model_name=m, weights=w, beam=beam, input_name=inp,
                                              threads=t, batch=b, headwise=h, ct2=c,
                                              identical=f"{same}/{n}"))
        results["ct2"] = {"dir": a.ct2, "chosen_env": chosen, "zeroed": notes, "cells": cells,
                          "version": cells[0]["ct2"].get("version") if cells else None}

    text = json.dumps(results, indent=1)
    md = markdown(results)
    if a.out:
        with open(a.out + ".json", "w", encoding="utf-8") as f:
            f.write(text + "\n")
        with open(a.out + ".md", "w", encoding="utf-8") as f:
            f.write(md)
    print(md)
    return 0


def zeroed_spm(a, model):
    return os.path.join(a.scratch, f"{model}-checkpoint-padzero")


if __name__ == "__main__":
    sys.exit(main())
