"""The pruning-curve figure: test BLEU against heads kept, encoder-only and all three types."""
from __future__ import annotations

from typing import List, Optional


def heads(rec: dict, setting: str) -> int:
    hk = rec["heads_kept"]
    return sum(hk["encoder_self"]) if setting == "enc" else hk["kept"]


def _steps(r: dict) -> int:
    return (r.get("run") or {}).get("steps") or 0


def _control(points: List[dict], setting: str, budget: int) -> Optional[dict]:
    return next((r for r in points if r["kind"] == "l0" and r.get("lambda") == 0
                 and r.get("setting") == setting and _steps(r) == budget), None)


def plot(points: List[dict], png: str, title: str, base: Optional[dict]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), dpi=110)
    budgets = sorted({_steps(r) for r in points if r["kind"] == "l0"}, reverse=True)
    for ax, setting, label in ((axes[0], "enc", "encoder self-attention heads kept (of 48)"),
                               (axes[1], "all", "heads kept, all three types (of 96)")):
        full = 48 if setting == "enc" else 96
        series = [(f"L0 gates, {b} fine-tuning steps",
                   lambda r, b=b: r["kind"] == "l0" and _steps(r) == b, "o-" if i == 0 else "D-",
                   f"C{3 * i}", b) for i, b in enumerate(budgets)]
        series += [("LRP rank, no fine-tuning",
                    lambda r: r["kind"] == "rank" and r["score"] == "relevance", "s--", "C1", None),
                   ("Michel rank, no fine-tuning",
                    lambda r: r["kind"] == "rank" and r["score"] == "michel", "^--", "C2", None)]
        for name, pick, style, color, budget in series:
            pts = sorted((heads(r, setting), r["bleu"]) for r in points
                         if pick(r) and r.get("setting") == setting
                         and not (r["kind"] == "l0" and r.get("lambda") == 0))
            # the curve's unpruned end: the lambda-0 control of the same setting and budget
            # (the all-types one when an encoder-only control was not run), or the base
            start = base if budget is None else (
                _control(points, setting, budget) or _control(points, "all", budget))
            if pts and start:
                pts.append((full, start["bleu"]))
                if budget is not None:
                    which = "encoder-only " if start["setting"] == "enc" else ""
                    ax.axhline(start["bleu"], color=color, ls=":", lw=0.8,
                               label=f"{which}lambda-0 control, {budget} steps ({start['bleu']})")
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=name)
            if budget is not None:  # which lambda made each point
                for r in points:
                    if pick(r) and r.get("setting") == setting and r.get("lambda"):
                        ax.annotate(f"{r['lambda']:g}", (heads(r, setting), r["bleu"]),
                                    textcoords="offset points", xytext=(4, -9), fontsize=6,
                                    color=color)
        if base:
            ax.axhline(base["bleu"], color="C1", ls=":", lw=0.8,
                       label=f"base step 1200, all heads ({base['bleu']})")
        if setting == "all":
            for r in points:
                if r["kind"] == "scratch":
                    ax.plot([heads(r, "all")], [r["bleu"]], "kx", ms=9,
                            label=f"same layout from scratch ({r['run'].get('steps')} steps)")
        ax.set_xlim(0, full + 2)
        ax.set_xlabel(label)
        ax.set_ylabel("test BLEU (greedy)")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6.5, loc="best")
    fig.suptitle(title + " (numbers at L0 points: lambda)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, metadata={"Software": None})
    plt.close(fig)
