"""`headwise-train plot-run`: dev BLEU and dev loss against the step of a training run, one
PNG for the model card (the run's history.json, else the history in its newest checkpoint;
the best evaluation is marked).

A run warm-started from another (`train --init-from`) is drawn after the run it continues:
--prior RUN_OR_HISTORY draws that run's evaluations first, and --offset STEP shifts this run's
steps by the prior run's step at which it began (a dotted line marks it), so the x axis counts
the optimiser steps since the random initialisation."""
from __future__ import annotations

import json
import os
from typing import List, Optional

from ..model import run_state
from .dev_eval import HISTORY_FILE, best_record


class PlotError(ValueError):
    pass


def read_history(run_dir: str) -> List[dict]:
    """The dev evaluations of a run directory, or of a history.json file itself."""
    if os.path.isfile(run_dir) and run_dir.endswith(".json"):
        with open(run_dir, encoding="utf-8") as f:
            return json.load(f)["history"]
    path = os.path.join(run_dir, HISTORY_FILE)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)["history"]
    ckpts = run_state.list_checkpoints(run_dir)
    if not ckpts:
        raise PlotError(f"{run_dir}: no {HISTORY_FILE} and no ckpt-*.pt; expected a training "
                        f"run directory")
    return run_state.load_checkpoint_file(ckpts[-1][1]).get("history", [])


def plot(history: List[dict], png: str, title: str, prior: Optional[List[dict]] = None,
         offset: int = 0) -> None:
    if not history:
        raise PlotError("the run has no dev evaluations yet (train with --eval-every N)")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    steps = [r["step"] + offset for r in history]
    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=110)
    ax2 = ax.twinx()
    if prior:
        pst = [r["step"] for r in prior]
        ax.plot(pst, [r["dev_bleu"] for r in prior], "o-", color="C0", ms=3, alpha=0.35,
                label="dev BLEU, the run it started from")
        ax2.plot(pst, [r["dev_nll"] for r in prior], "s--", color="C1", ms=3, alpha=0.35)
    if offset:
        ax.axvline(offset, color="grey", ls=":", lw=1)
    ax.plot(steps, [r["dev_bleu"] for r in history], "o-", color="C0", ms=3,
            label="dev BLEU (greedy)")
    ax.set_xlabel("training step" + (f" (this run from step {offset:,})" if offset else ""))
    ax.set_ylabel("dev BLEU", color="C0")
    best: Optional[dict] = best_record(history)
    if best is not None:
        ax.plot([best["step"] + offset], [best["dev_bleu"]], "*", color="C3", ms=12,
                label=f"best {best['dev_bleu']:.2f} at step {best['step']}")
    ax2.plot(steps, [r["dev_nll"] for r in history], "s--", color="C1", ms=3,
             label="dev loss (NLL per token)")
    ax2.set_ylabel("dev loss", color="C1")
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="center right", fontsize=8)
    n = history[-1].get("dev_sentences")
    ax.set_title(title + (f"  ({n} dev sentences)" if n else ""), fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    tmp = f"{png}.{os.getpid()}.tmp.png"
    fig.savefig(tmp)
    plt.close(fig)
    os.replace(tmp, png)


def run_plot(args, log=print) -> None:
    history = read_history(args.run)
    prior = read_history(args.prior) if getattr(args, "prior", None) else None
    if getattr(args, "offset", 0) and not prior:
        raise PlotError(f"--offset {args.offset}: expected --prior, the run this one "
                        f"continues")
    plot(history, args.out, args.title or os.path.basename(os.path.normpath(args.run)),
         prior, getattr(args, "offset", 0))
    log(f"plot-run: {len(history)} evaluations -> {args.out}")
