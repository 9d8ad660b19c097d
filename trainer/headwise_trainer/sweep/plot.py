"""The pruning-curve figure: test BLEU against heads kept, encoder-only (left) and all three
types (right), one row per search; L0 points per fine-tuning budget (seed 1 as the curve, other
seeds as hollow markers), rank-pruning curves per score, the random orders as a band, the
lambda-0 controls and the base as lines."""
from __future__ import annotations

from typing import List, Optional, Sequence

from .points import bleu, is_pruned_l0, kept, seed, source_heads, steps


def heads(rec: dict, setting: str) -> int:
    return kept(rec)[0] if setting == "enc" else sum(kept(rec))


def _control(points: List[dict], setting: str, budget: int) -> Optional[dict]:
    for s in ([setting, "all"] if setting == "enc" else [setting]):
        c = next((r for r in points if r["kind"] == "l0" and r.get("lambda") == 0
                  and r.get("setting") == s and steps(r) == budget and seed(r) == 1), None)
        if c is not None:
            return c
    return None


def plot(points: List[dict], png: str, title: str, base: Optional[dict],
         searches: Sequence[str] = ("greedy",)) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    searches = list(searches) or ["greedy"]
    fig, grid = plt.subplots(len(searches), 2, figsize=(11, 4.4 * len(searches)), dpi=110,
                             squeeze=False)
    budgets = sorted({steps(r) for r in points if r["kind"] == "l0"}, reverse=True)
    scores = sorted({r["score"] for r in points if r["kind"] == "rank"} - {"random"})
    for row, search in zip(grid, searches):
        for ax, setting in zip(row, ("enc", "all")):
            full = None
            for i, b in enumerate(budgets):
                pts = sorted((heads(r, setting), bleu(r, search), r.get("lambda"))
                             for r in points if is_pruned_l0(r) and r["setting"] == setting
                             and steps(r) == b and seed(r) == 1 and bleu(r, search) is not None)
                c = _control(points, setting, b)
                if c is not None and bleu(c, search) is not None:
                    full = sum(source_heads(c)) if setting == "all" else source_heads(c)[0]
                    pts.append((full, bleu(c, search), 0))
                    ax.axhline(bleu(c, search), color=f"C{3 * i}", ls=":", lw=0.8,
                               label=f"{c['name']} (lambda 0, {b} steps): "
                                     f"{bleu(c, search):.2f}")
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=f"C{3 * i}",
                            label=f"L0 gates, {b} fine-tuning steps")
                    for x, y, lam in pts:
                        if lam:
                            ax.annotate(f"{lam:g}", (x, y), textcoords="offset points",
                                        xytext=(4, -9), fontsize=6, color=f"C{3 * i}")
                # The other seeds of a point (and of the control) as hollow markers at their own
                # head counts, so the figure shows the seeds' spread beside seed 1's curve.
                more = [(heads(r, setting), bleu(r, search)) for r in points
                        if r["kind"] == "l0" and r.get("setting") == setting and steps(r) == b
                        and seed(r) != 1 and bleu(r, search) is not None]
                if more:
                    ax.plot([p[0] for p in more], [p[1] for p in more], "o", mfc="none",
                            color=f"C{3 * i}", ms=6, label=f"other seeds, {b} steps")
            for j, score in enumerate(scores):
                pts = sorted((heads(r, setting), bleu(r, search)) for r in points
                             if r["kind"] == "rank" and r["score"] == score
                             and r["setting"] == setting and bleu(r, search) is not None)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], "s--", color=f"C{j + 4}",
                            ms=4, label=f"{score} rank, no fine-tuning")
            rand = {}
            for r in points:
                if r["kind"] == "rank" and r["score"] == "random" and r["setting"] == setting \
                        and bleu(r, search) is not None:
                    rand.setdefault(heads(r, setting), []).append(bleu(r, search))
            if rand:
                xs = sorted(rand)
                ax.fill_between(xs, [min(rand[x]) for x in xs], [max(rand[x]) for x in xs],
                                color="0.7", alpha=0.5, label="random orders (range)")
            if base is not None and bleu(base, search) is not None:
                ax.axhline(bleu(base, search), color="C1", ls="--", lw=0.8,
                           label=f"{base['name']}, all heads ({bleu(base, search):.2f})")
            for r in points:
                if r["kind"] == "scratch" and setting == "all" and bleu(r, search) is not None:
                    ax.plot([heads(r, "all")], [bleu(r, search)], "kx", ms=9,
                            label=f"{r['name']}: same layout from scratch ({steps(r)} steps)")
            if full:
                ax.set_xlim(0, full + 2)
            ax.set_xlabel("encoder self-attention heads kept" if setting == "enc"
                          else "heads kept, all three types")
            ax.set_ylabel(f"test BLEU ({search})")
            ax.grid(alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=6, loc="best")
    fig.suptitle(title + " (numbers at L0 points: lambda)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, metadata={"Software": None})
    plt.close(fig)
