"""PNG heatmaps of analysis.json, after Figure 1 of Voita et al. (2019): one figure per
statistic, one panel per attention type, layers (rows) x heads (columns). Cells are marked by
role (P = positional, with its offset; R = rare-word; S = syntactic) and closed heads are
hatched grey with an x; the positional figure prints each head's most frequent offset. Uses
matplotlib's Agg backend (no display needed)."""
from __future__ import annotations

import os
from typing import Callable, Dict, List, Optional

KINDS = ("encoder_self", "decoder_self", "decoder_cross")
TITLES = {"encoder_self": "encoder self-attention", "decoder_self": "decoder self-attention",
          "decoder_cross": "decoder-encoder attention"}


def _syntactic_margin(head: dict) -> Optional[float]:
    syn = head.get("syntactic")
    if not syn:
        return None
    return max(v["accuracy"] - v["baseline"] for v in syn.values())


STATISTICS: Dict[str, Callable[[dict], Optional[float]]] = {
    "relevance": lambda h: h.get("relevance"),
    "relevance_z": lambda h: h.get("relevance_z"),
    "relevance_attnlrp": lambda h: h.get("relevance_attnlrp"),
    "confidence": lambda h: h.get("confidence"),
    "michel": lambda h: h.get("michel"),
    "positional": lambda h: h["positional"]["fraction"] if h.get("positional") else None,
    "rare_word": lambda h: h.get("rare_word"),
    "syntactic": _syntactic_margin,
}
LABELS = {"syntactic": "best accuracy minus baseline", "positional": "share of the top offset"}


def _marks(head: dict) -> str:
    out = []
    for role in head.get("roles", []):
        if role == "positional":
            out.append(f"P{head['positional']['offset']:+d}")
        elif role == "rare-word":
            out.append("R")
        elif role.startswith("syntactic:") and "S" not in out:
            out.append("S")
    return "\n".join(out)


def plot_statistic(doc: dict, stat: str, path: str) -> bool:
    """Writes one figure; False (and nothing written) when no head has the statistic."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    get = STATISTICS[stat]
    if all(get(h) is None for b in doc["blocks"] for h in b["heads"]):
        return False
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), squeeze=False)
    vmax = max([get(h) for b in doc["blocks"] for h in b["heads"] if get(h) is not None] + [1e-9])
    vmin = min([get(h) for b in doc["blocks"] for h in b["heads"] if get(h) is not None] + [0.0])
    image = None
    for ax, kind in zip(axes[0], KINDS):
        blocks = sorted((b for b in doc["blocks"] if b["kind"] == kind), key=lambda b: b["layer"])
        ax.set_title(TITLES[kind])
        if not blocks:
            ax.axis("off")
            continue
        width = max(b["source_heads"] for b in blocks)
        grid = np.full((len(blocks), width), np.nan)
        for r, b in enumerate(blocks):
            for h in b["heads"]:
                v = get(h)
                grid[r, h["head"]] = np.nan if v is None else v
        image = ax.imshow(grid, cmap="viridis", vmin=vmin, vmax=vmax, aspect="auto",
                          origin="upper")
        for r, b in enumerate(blocks):
            for h in b["heads"]:
                c = h["head"]
                if not h["gate_open"]:
                    ax.add_patch(matplotlib.patches.Rectangle(
                        (c - 0.5, r - 0.5), 1, 1, facecolor=(0.6, 0.6, 0.6, 0.75),
                        hatch="///", edgecolor="black", linewidth=0.0))
                    ax.text(c, r, "x", ha="center", va="center", color="black", fontsize=11)
                marks = _marks(h)
                if marks:
                    ax.text(c, r, marks, ha="center", va="center", color="red",
                            fontsize=7, fontweight="bold")
                if stat == "positional" and h.get("positional") and not marks:
                    ax.text(c, r + 0.3, f"{h['positional']['offset']:+d}", ha="center",
                            va="center", color="white", fontsize=6)
                if get(h) is None and h["gate_open"]:
                    ax.text(c, r, "n/a", ha="center", va="center", color="grey", fontsize=6)
        ax.set_xticks(range(width))
        ax.set_yticks(range(len(blocks)))
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
    if image is not None:
        fig.colorbar(image, ax=axes[0].tolist(), shrink=0.85, label=LABELS.get(stat, stat))
    closed = sum(1 for b in doc["blocks"] for h in b["heads"] if not h["gate_open"])
    fig.suptitle(f"{stat} per head ({doc['methods']['relevance'] if stat == 'relevance' else ''}"
                 f"{'; ' if stat == 'relevance' else ''}P=positional, R=rare-word, S=syntactic"
                 f"{f', x=closed ({closed})' if closed else ''})")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_all(doc: dict, out_dir: str) -> List[str]:
    """One PNG per statistic present in ``doc``; returns the file names written."""
    written = []
    for stat in STATISTICS:
        tmp = os.path.join(out_dir, f".{stat}.png.{os.getpid()}.tmp")
        if plot_statistic(doc, stat, tmp + ".png"):
            os.replace(tmp + ".png", os.path.join(out_dir, f"{stat}.png"))
            written.append(f"{stat}.png")
    return written


def main(argv=None) -> int:
    """python3 -m headwise_trainer.analysis.plots ANALYSIS_JSON OUT_DIR: redraw the figures."""
    import json
    import sys
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python3 -m headwise_trainer.analysis.plots ANALYSIS_JSON OUT_DIR",
              file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        doc = json.load(f)
    os.makedirs(argv[1], exist_ok=True)
    print(" ".join(plot_all(doc, argv[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
