"""The pruning log: one JSON object per line in RUN_DIR/prune_log.jsonl.

Records ("event" key):
  start  the start point, gated blocks, lambda and how the penalty is normalised
  step   every --log-every steps: loss terms, learning rates, and per gated block the expected
         number of open heads (sum of P(g != 0)) and the test-time kept count (log_alpha > 0)
  dev    every --eval-every steps: dev loss/BLEU/chrF with test-time gates, heads kept
  end    the final layout (kept head indices per block), the log_alpha values and the gates
         that have not settled (|log_alpha| < settle_margin)
On resume the records of steps after the resumed checkpoint (left by an interrupted run) are
dropped, so the log reads as if the run had never stopped.
"""
from __future__ import annotations

import json
import os
from typing import Dict, List

import torch

from ..model.gates import KINDS, gates, head_layout
from ..model.marian import MarianMTModel

LOG_FILE = "prune_log.jsonl"
SHORT = {"encoder_self": "enc", "decoder_self": "dec", "decoder_cross": "cross"}


def block_stats(model: MarianMTModel) -> Dict[str, Dict[str, float]]:
    """Gated block -> {"expected_open": sum P(g != 0), "kept": heads whose test-time gate is
    above 0 (log_alpha > 0 under the hard rule), "log_alpha": every head's, to 3 decimals}: the
    step records then hold each gate's path, so a gate that has not settled can be told apart
    as still moving away from 0 or held near it (the penalty and the loss in balance)."""
    with torch.no_grad():
        return {name: {"expected_open": round(float(g.expected_l0().sum()), 3),
                       "kept": int((g.eval_gates() > 0).sum()),
                       "log_alpha": [round(float(x), 3) for x in g.log_alpha]}
                for name, g in gates(model).items()}


def kept_per_kind(model: MarianMTModel) -> Dict[str, Dict[str, object]]:
    """kind -> {"per_layer": [kept per layer], "kept": total, "total": heads} over every block."""
    layout = head_layout(model)
    out: Dict[str, Dict[str, object]] = {}
    for name, kind, _, attn in model.attention_blocks():
        k = out.setdefault(kind, {"per_layer": [], "kept": 0, "total": 0})
        k["per_layer"].append(len(layout[name]))
        k["kept"] += len(layout[name])
        k["total"] += attn.num_heads
    return out


def summary_line(model: MarianMTModel) -> str:
    """"enc 8 8 7 6 8 8 | dec 8 8 8 | cross 8 8 8 | kept 93/96 | E[open] 91.4" (gated part)."""
    stats = block_stats(model)
    per_kind = kept_per_kind(model)
    parts, kept, total = [], 0, 0
    for kind in KINDS:
        if kind in per_kind:
            k = per_kind[kind]
            parts.append(f"{SHORT[kind]} {' '.join(str(n) for n in k['per_layer'])}")
            kept, total = kept + k["kept"], total + k["total"]
    expected = sum(s["expected_open"] for s in stats.values())
    return f"{' | '.join(parts)} | kept {kept}/{total} | E[open] {expected:.1f}"


def log_alphas(model: MarianMTModel) -> Dict[str, List[float]]:
    """Gated block -> its log_alpha values, rounded to 4 digits."""
    return {name: [round(float(a), 4) for a in g.log_alpha.detach().cpu().tolist()]
            for name, g in gates(model).items()}


def layout_record(model: MarianMTModel) -> Dict[str, List[int]]:
    return {name: heads for name, heads in head_layout(model).items()}


class PruneLog:
    def __init__(self, run_dir: str, resume_step: int = -1):
        self.path = os.path.join(run_dir, LOG_FILE)
        if resume_step >= 0 and os.path.isfile(self.path):
            with open(self.path, encoding="utf-8") as f:
                keep = [line for line in f if line.strip()
                        and json.loads(line).get("step", 0) <= resume_step]
            with open(self.path, "w", encoding="utf-8") as f:
                f.writelines(keep)
        elif resume_step < 0 and os.path.exists(self.path):
            os.remove(self.path)

    def write(self, record: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")


def read_log(run_dir: str) -> List[dict]:
    with open(os.path.join(run_dir, LOG_FILE), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
