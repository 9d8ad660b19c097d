"""The pruning-curve figure: test BLEU against heads kept, encoder-only and all three types."""
from __future__ import annotations

from typing import List, Optional


def heads(rec: dict, setting: str) -> int:
    hk = rec["heads_kept"]
    return sum(hk["encoder_self"]) if setting == "enc" else hk["kept"]


def plot(points: List[dict], png: str, title: str, base: Optional[dict],
         control: Optional[dict]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110)
    for ax, setting, label in ((axes[0], "enc", "encoder self-attention heads kept (of 48)"),
                               (axes[1], "all", "heads kept, all three types (of 96)")):
        series = [("L0 gates, fine-tuned 250 steps", lambda r: r["kind"] == "l0", "o-", "C0"),
                  ("LRP rank, no fine-tuning",
                   lambda r: r["kind"] == "rank" and r["score"] == "relevance", "s--", "C1"),
                  ("Michel rank, no fine-tuning",
                   lambda r: r["kind"] == "rank" and r["score"] == "michel", "^--", "C2")]
        full = 48 if setting == "enc" else 96
        for name, pick, style, color in series:
            pts = sorted((heads(r, setting), r["bleu"]) for r in points
                         if pick(r) and r.get("setting") == setting
                         and not (r["kind"] == "l0" and r.get("lambda") == 0))
            start = control if name.startswith("L0") else base  # the curve's unpruned end
            if pts and start:
                pts.append((full, start["bleu"]))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=name)
        if control:
            ax.axhline(control["bleu"], color="C0", ls=":",
                       label=f"lambda 0 control, 250 steps ({control['bleu']})")
        if base:
            ax.axhline(base["bleu"], color="C1", ls=":",
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
            ax.legend(fontsize=7, loc="best")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(png, metadata={"Software": None})
    plt.close(fig)
