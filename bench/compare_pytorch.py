#!/usr/bin/python3
"""The comparison a user would make: the same checkpoint in PyTorch eager fp32, PyTorch dynamic
int8 (torch.ao.quantization.quantize_dynamic on nn.Linear) and headwise (its Python module,
python/: fp32 and any other converted formats), batch 1 greedy on the same source lines.

    /usr/bin/python3 bench/compare_pytorch.py CHECKPOINT_DIR [--translate BUILD/headwise-translate] \
        --model fp32=m.hwm [--model int8=m.int8.hwm ...] --src test.en [--limit 100] [--threads 1]

Each engine runs in its own Python process (peak RSS = that process's ru_maxrss, from wait4;
for headwise that is the interpreter with the module, the model mapping and the translator,
about 10 MiB of interpreter above what headwise-translate alone used). Time is CPU time of
translation only: PyTorch's thread_time around its greedy calls; headwise's process_time
(every thread of the process, the translator's pool included) around its translate calls, one
line per call, with the same limits headwise-translate had (--batch 1, --max-len). Wall time
is printed too. The script checks that headwise fp32 and PyTorch fp32 produce the same
translations (exit status 1 when more than --max-disagreement of lines differ).
--translate (or a --model's third field) names the headwise build to run: a headwise-translate
binary or a build directory, whose python/ module is used; default: `import headwise`, else
build/default/python. Timings are from this machine under its current load; compare ratios
from one run.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAINER = os.path.join(os.path.dirname(HERE), "trainer")


def torch_worker(args):
    """Runs in a child process: translates the lines with PyTorch, prints JSON."""
    sys.path.insert(0, TRAINER)
    import torch
    from headwise_trainer.model import decode
    from headwise_trainer.model.import_model import load_checkpoint_dir
    from headwise_trainer.data.spm_vocab import Vocab
    from headwise_trainer.threads import set_threads

    set_threads(args.threads)
    model = load_checkpoint_dir(args.checkpoint).eval()
    if args.worker == "torch-int8":
        model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    vocab = Vocab.load(args.checkpoint)
    lines = read_lines(args.src, args.limit)
    texts, cpu, wall = [], 0.0, 0.0
    with torch.no_grad():
        for line in lines:
            ids = vocab.encode_source(line)
            c0, w0 = time.thread_time(), time.perf_counter()
            hyp = decode.greedy(model, [ids], args.max_len)[0]
            cpu += time.thread_time() - c0
            wall += time.perf_counter() - w0
            texts.append(vocab.decode_target(hyp.ids))
    print(json.dumps({"texts": texts, "cpu_s": cpu, "wall_s": wall}))


def headwise_worker(args):
    """Runs in a child process: translates the lines with the headwise module, prints JSON."""
    sys.path.insert(0, TRAINER)
    from headwise_trainer.evaluation.runtime_module import import_headwise
    headwise = import_headwise(args.build)
    translator = headwise.Translator(headwise.Model(args.hwm), threads=args.threads, max_batch=1,
                                     max_target_tokens=args.max_len)
    texts, cpu, wall = [], 0.0, 0.0
    for line in read_lines(args.src, args.limit):
        c0, w0 = time.process_time(), time.perf_counter()
        r = translator.translate([line])[0]
        cpu += time.process_time() - c0
        wall += time.perf_counter() - w0
        texts.append(r.text if r.ok else "")
    print(json.dumps({"texts": texts, "cpu_s": cpu, "wall_s": wall}))


def read_lines(path, limit):
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f]
    lines = [l for l in lines if l.strip()]
    return lines[:limit] if limit else lines


def run_child(cmd, stdin_text=None):
    """Runs cmd, returns (stdout, user+sys CPU seconds, peak RSS bytes, wall seconds)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    p.stdin.write(stdin_text or "")
    p.stdin.close()
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"compare_pytorch: {' '.join(cmd[:3])} ... failed ({p.returncode}):\n{err[-2000:]}")
    return out, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, time.perf_counter() - t0


def run_torch(args, kind):
    cmd = [sys.executable, os.path.abspath(__file__), args.checkpoint, "--worker", kind,
           "--src", args.src, "--limit", str(args.limit), "--threads", str(args.threads),
           "--max-len", str(args.max_len)]
    out, _, rss, _ = run_child(cmd)
    r = json.loads(out)
    n = len(r["texts"])
    return {"engine": f"pytorch {kind[6:]}", "texts": r["texts"], "cpu_ms": 1e3 * r["cpu_s"] / n,
            "wall_ms": 1e3 * r["wall_s"] / n, "rss": rss}


def run_headwise(args, label, model, build):
    cmd = [sys.executable, os.path.abspath(__file__), args.checkpoint, "--worker", "headwise",
           "--hwm", model, "--src", args.src, "--limit", str(args.limit), "--threads",
           str(args.threads), "--max-len", str(args.max_len)]
    if build:
        cmd += ["--build", build]
    out, _, rss, _ = run_child(cmd)
    r = json.loads(out)
    n = len(r["texts"])
    return {"engine": f"headwise {label}", "texts": r["texts"], "cpu_ms": 1e3 * r["cpu_s"] / n,
            "wall_ms": 1e3 * r["wall_s"] / n, "rss": rss}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint")
    p.add_argument("--translate", help="the headwise build to run (its headwise-translate "
                                       "binary or build directory); default: import headwise")
    p.add_argument("--model", action="append", default=[], metavar="LABEL=PATH[=TRANSLATE]",
                   help="a converted model, e.g. fp32=m.hwm (fp32 is compared for agreement); "
                        "a third field runs it with another build (its headwise-translate or "
                        "build directory, e.g. a build of the previous commit, to compare both "
                        "in one run)")
    p.add_argument("--src", required=True)
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--max-len", type=int, default=128)
    p.add_argument("--max-disagreement", type=float, default=0.02)
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--worker", choices=["torch-fp32", "torch-int8", "headwise"],
                   help=argparse.SUPPRESS)
    p.add_argument("--hwm", help=argparse.SUPPRESS)
    p.add_argument("--build", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker == "headwise":
        headwise_worker(args)
        return 0
    if args.worker:
        torch_worker(args)
        return 0
    if not args.model:
        p.error("at least one --model")
    sys.path.insert(0, TRAINER)
    from headwise_trainer.evaluation.runtime_module import build_dir_of

    results = [run_torch(args, "torch-fp32"), run_torch(args, "torch-int8")]
    for spec in args.model:
        label, _, rest = spec.partition("=")
        path, _, translate = rest.partition("=")
        build = translate or args.translate
        results.append(run_headwise(args, label, path, build_dir_of(build) if build else None))
    torch_fp32 = results[0]
    n = len(torch_fp32["texts"])
    print(f"{n} lines of {args.src}, batch 1 greedy (max {args.max_len} tokens), "
          f"{args.threads} thread(s); load average {os.getloadavg()[0]:.1f}")
    print("| engine | CPU ms/line | wall ms/line | peak RSS MiB | speed vs PyTorch fp32 (CPU) "
          "| RSS vs PyTorch fp32 | identical to PyTorch fp32 |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        same = sum(a == b for a, b in zip(r["texts"], torch_fp32["texts"]))
        r["identical_to_torch_fp32"] = same
        print(f"| {r['engine']} | {r['cpu_ms']:.1f} | {r['wall_ms']:.1f} | {r['rss'] / 2**20:.0f} | "
              f"{torch_fp32['cpu_ms'] / r['cpu_ms']:.1f}x | {r['rss'] / torch_fp32['rss']:.2f} | "
              f"{same}/{n} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"lines": n, "threads": args.threads, "results": results}, f, indent=1)
    hw = [r for r in results if r["engine"] == "headwise fp32"]
    if hw and n - hw[0]["identical_to_torch_fp32"] > args.max_disagreement * n:
        print("compare_pytorch: headwise fp32 and PyTorch fp32 disagree on "
              f"{n - hw[0]['identical_to_torch_fp32']} of {n} lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
