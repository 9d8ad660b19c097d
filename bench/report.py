#!/usr/bin/python3
"""Turns headwise_bench JSON (--benchmark_format=json or --benchmark_out) into markdown tables
and a PNG plot of latency vs heads kept.

    /usr/bin/python3 bench/report.py bench.json [-o report.md] [--plot heads.png]

Timings are whatever the run measured on its machine; compare rows of the same run only.
The plot needs matplotlib (python3-matplotlib, in scripts/setup.sh); without it the tables are
still written and the script says the plot was skipped.
"""
import argparse
import json
import re
import sys

UNIT_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def ms(b, key="real_time"):
    return b[key] * UNIT_TO_MS[b.get("time_unit", "ns")]


def fmt_bytes(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def load(path):
    with open(path) as f:
        data = json.load(f)
    runs = [b for b in data["benchmarks"] if b.get("run_type", "iteration") == "iteration"
            and not b.get("error_occurred")]
    for b in runs:  # "/iterations:5", "/real_time" are run settings, not part of the name
        b["name"] = re.sub(r"/(iterations:\d+|real_time|min_time:[\d.]+)", "", b["name"])
    return data.get("context", {}), runs


def heads_rows(runs):
    """(size, weights, cut, shortlist) -> [(encoder heads kept, CPU ms, work fraction)], all
    heads first; shortlist is "off" (ms_heads_K: the full vocabulary) or "on"
    (ms_heads_K_shortlist, when the run has it).

    From model/heads_sweep/SIZE/weights:W/CUT: every head count of a sweep, with and without
    the shortlist, is measured in the same iterations, round-robin, so machine load drifts hit
    all points alike."""
    series = {}
    for b in runs:
        m = re.match(r"model/heads_sweep/(\w+)/weights:(\w+)/(\w+)$", b["name"])
        if not m:
            continue
        points = {"off": [], "on": []}
        for key, value in b.items():
            k = re.match(r"ms_heads_(\d+)(_shortlist)?$", key)
            if k:
                heads = int(k.group(1))
                points["on" if k.group(2) else "off"].append((heads, value, b[f"work_heads_{heads}"]))
        for flag, pts in points.items():
            if pts:
                pts.sort(reverse=True)
                series[(m.group(1), m.group(2), m.group(3), flag)] = pts
    return series


def report(context, runs):
    parts = [f"# headwise benchmarks\n\nhost: {context.get('host_name', '?')}, "
             f"{context.get('num_cpus', '?')} CPUs, load average {context.get('load_avg', '?')}, "
             f"set: {context.get('set', '?')}, {context.get('date', '')}\n"]
    ops = [b for b in runs if b["name"].startswith("op/")]
    if ops:
        rows = []
        for b in ops:
            extra = f"{b['GFLOPS']:.1f} GFLOP/s" if "GFLOPS" in b else ""
            rows.append((b["name"][3:], f"{ms(b, 'cpu_time') * 1e3:.2f}", extra))
        parts.append("## Operators\n\n" + table(["operator", "CPU us", "rate"], rows))
    layers = [b for b in runs if b["name"].startswith("layer/")]
    if layers:
        rows = [(b["name"][6:], f"{ms(b, 'cpu_time') * 1e3:.1f}") for b in layers]
        parts.append("## Layers\n\n" + table(["layer", "CPU us"], rows))
    e2e = [b for b in runs if b["name"].startswith("model/greedy/")]
    if e2e:
        rows = []
        for b in e2e:
            rows.append((b["name"][13:], f"{ms(b):.2f}", f"{ms(b, 'cpu_time'):.2f}",
                         f"{b['tokens_per_s']:.0f}", f"{b['sentences_per_s']:.1f}",
                         fmt_bytes(b["arena_bytes"])))
        parts.append("## Encode 20 tokens + greedy 64 tokens\n\n" + table(
            ["model / batch / threads", "wall ms", "CPU ms (main thread)", "tokens/s",
             "sentences/s", "arena"], rows))
    dec = [b for b in runs if b["name"].startswith("model/decode_step_vs_matrix_ops/")]
    if dec:
        rows = [("/".join(b["name"].split("/")[2:]), f"{b['decode_step_us']:.0f}", f"{b['matrix_ops_us']:.0f}",
                 f"{b['step_over_matrix_ops']:.2f}") for b in dec]
        parts.append("## Decode step vs its matrix products alone (batch 1)\n\n" + table(
            ["model", "decode step us", "matrix ops us", "ratio"], rows))
    step = [b for b in runs if b["name"].startswith("model/decode_step_shortlist/")]
    if step:
        rows = [("/".join(b["name"].split("/")[2:]), f"{b['decode_step_us_off']:.0f}",
                 f"{b['decode_step_us_on']:.0f}", f"{b['step_speedup']:.2f}x",
                 f"{b['union']:.0f} of {b['vocab']:.0f}") for b in step]
        parts.append("## Decode step with the vocabulary shortlist (batch 1, synthetic shortlist)\n\n"
                     + table(["model", "full vocabulary us", "shortlist us", "speed-up",
                              "union"], rows))
    series = heads_rows(runs)
    if series:
        rows = []
        for (size, weights, cut, flag), points in sorted(series.items()):
            top = points[0]
            full = series.get((size, weights, cut, "off"), points)
            base = {h: t for h, t, _ in full}
            for heads, t, work in points:
                saved_work = 1 - work / top[2]
                saved_time = 1 - t / top[1]
                prop = f"{saved_time / saved_work:.2f}" if saved_work > 1e-9 else "-"
                rows.append((size, weights, cut, flag, heads, f"{t:.2f}", f"{t / top[1]:.3f}",
                             f"{work / top[2]:.3f}", prop, f"{t / base[heads]:.3f}"))
        parts.append("## Latency per remaining head count (encode 20 + greedy 64, batch 1, 1 thread)\n\n"
                     "CPU ms of the calling thread, every head count (with the vocabulary shortlist "
                     "off and on) measured in the same iterations (round robin). 'proportion' = time "
                     "saved / work saved relative to all heads of the same series (1.0 = latency falls "
                     "exactly with the multiply-adds removed; work counts the full output layer); "
                     "'vs off' = time over the full vocabulary's at the same head count.\n\n" + table(
                         ["size", "weights", "heads cut in", "shortlist", "encoder heads kept", "ms",
                          "latency rel.", "work rel.", "proportion", "vs off"], rows))
    loads = [b for b in runs if b["name"].startswith("load/")]
    if loads:
        rows = [(b["name"][5:], f"{ms(b):.1f}", fmt_bytes(b["file_bytes"]), fmt_bytes(b["weight_bytes"]),
                 fmt_bytes(b["arena_bytes"]), fmt_bytes(b["peak_rss_bytes"])) for b in loads]
        parts.append("## Load (Model::Load + Translator::Create) and memory\n\n" + table(
            ["model / weights", "load ms", "file", "weights", "arena", "peak RSS (load + 1 sentence)"], rows))
    return "\n\n".join(parts) + "\n"


def plot(runs, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report.py: matplotlib is not installed (python3-matplotlib); plot skipped", file=sys.stderr)
        return False
    series = heads_rows(runs)
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(7.5, 5))
    colors = {}
    for (size, weights, cut, flag), points in sorted(series.items()):
        heads = [p[0] for p in points]
        label = f"{size} {weights}: {cut} cut"
        # Both curves of a sweep relative to its all-heads point without the shortlist.
        top = series.get((size, weights, cut, "off"), points)[0]
        style = dict(marker="o") if flag == "off" else dict(marker="s", linestyle="-.")
        if label in colors:
            style["color"] = colors[label]
        line, = ax.plot(heads, [p[1] / top[1] for p in points],
                        label=f"{label}, latency, shortlist {flag}", **style)
        colors[label] = line.get_color()
        if flag == "off":
            ax.plot(heads, [p[2] / points[0][2] for p in points], linestyle="--",
                    color=line.get_color(), alpha=0.5, label=f"{label}, work (full vocabulary)")
    ax.set_xlabel("encoder heads kept (of 48)")
    ax.set_ylabel("relative to all heads, full vocabulary")
    ax.set_title("headwise: latency vs heads kept, vocabulary shortlist off / on\n"
                 "(encode + greedy 64 tokens, batch 1)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json")
    p.add_argument("-o", "--output", help="markdown file (default: stdout)")
    p.add_argument("--plot", help="PNG of latency vs heads kept")
    a = p.parse_args()
    context, runs = load(a.json)
    text = report(context, runs)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if a.plot and plot(runs, a.plot):
        print(f"report.py: wrote {a.plot}", file=sys.stderr)


if __name__ == "__main__":
    main()
