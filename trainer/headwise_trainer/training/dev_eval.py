"""Dev evaluation and early stopping of `headwise-train train`.

An evaluation scores a fixed, evenly spaced subset of the dev split (every k-th pair, so that
a split ordered by package is sampled across packages): mean per-token NLL (teacher-forced, no
label smoothing, fp32) on up to --dev-loss-sentences pairs and greedy BLEU/chrF (sacreBLEU's
definitions) on up to --dev-bleu-sentences. Early stopping is a pure function of the history:
stop when the best BLEU of the last `patience` evaluations is below the best before them plus
`min_delta`.
"""
from __future__ import annotations

import json
import math
import os
import time
from typing import List, Optional, Sequence

import torch

from ..data.batching import TokenBatcher, collate
from .losses import smoothed_loss

HISTORY_FILE = "history.json"


def spread(n_total: int, n: int) -> List[int]:
    """n evenly spaced indices of range(n_total) (all of them when n is 0 or >= n_total)."""
    if n <= 0 or n >= n_total:
        return list(range(n_total))
    return [i * n_total // n for i in range(n)]


@torch.no_grad()
def dev_loss(model, src: Sequence, tgt: Sequence, pad_id: int, start_id: int, max_tokens: int,
             device: torch.device = torch.device("cpu")) -> float:
    """Mean per-token NLL (no smoothing, fp32) of the pairs (src, tgt)."""
    was_training = model.training
    model.eval()
    batches = TokenBatcher(src, tgt, max_tokens, seed=0).epoch_batches(0)
    total, ntok = 0.0, 0
    for idx in batches:
        x, m, d, y = (t.to(device) for t in collate(src, tgt, idx, pad_id, start_id))
        loss, n = smoothed_loss(model(x, m, d), y, pad_id, 0.0)
        total, ntok = total + float(loss), ntok + n
    model.train(was_training)
    return total / max(ntok, 1)


def cpu_copy(model):
    """An eval-mode CPU model equal to `model` (for decoding a model that trains on a GPU)."""
    from ..model.import_model import model_from_state
    from ..model.run_state import to_cpu
    state = {"config": model.config.to_dict(), "model": to_cpu(model.state_dict())}
    return model_from_state(state, "the training model")


def evaluate_dev(model, dev, vocab, args, step: int, epoch: int,
                 device: torch.device = torch.device("cpu")) -> dict:
    from ..evaluation.evaluate import translate_ids
    from ..evaluation.metrics import corpus_bleu, corpus_chrf
    t0 = time.time()
    cfg = model.config
    li = spread(len(dev.src), getattr(args, "dev_loss_sentences", 0))
    nll = dev_loss(model, [dev.src[i] for i in li], [dev.tgt[i] for i in li], cfg.pad_token_id,
                   cfg.decoder_start_token_id, args.max_tokens, device)
    bi = spread(len(dev.src), args.dev_bleu_sentences)
    decoder = model if device.type == "cpu" else cpu_copy(model)
    was_training = model.training
    hyps = [vocab.decode_target(ids)
            for ids in translate_ids(decoder, [dev.src[i] for i in bi], beam=1)]
    model.train(was_training)
    refs = [dev.tgt_text[i] for i in bi]
    bleu, chrf = corpus_bleu(hyps, refs), corpus_chrf(hyps, refs)
    return {"step": step, "epoch": epoch, "dev_nll": round(nll, 4),
            "dev_ppl": round(math.exp(min(nll, 50.0)), 3), "dev_bleu": round(bleu.score, 2),
            "dev_chrf": round(chrf, 2), "dev_sentences": len(bi), "dev_loss_sentences": len(li),
            "eval_seconds": round(time.time() - t0, 1)}


def best_record(history: Sequence[dict]) -> Optional[dict]:
    """The evaluation with the highest dev BLEU (the earliest of equals), or None."""
    best = None
    for r in history:
        if best is None or r["dev_bleu"] > best["dev_bleu"]:
            best = r
    return best


def should_stop(history: Sequence[dict], patience: int, min_delta: float) -> bool:
    """True when the last `patience` evaluations did not raise dev BLEU by `min_delta` over the
    best of the evaluations before them (never with patience 0 or too short a history)."""
    if patience <= 0 or len(history) <= patience:
        return False
    before = max(r["dev_bleu"] for r in history[:-patience])
    recent = max(r["dev_bleu"] for r in history[-patience:])
    return recent < before + min_delta


def write_history(run_dir: str, history: Sequence[dict], extra: dict) -> None:
    """run_dir/history.json (atomically): {"history": [...], **extra}."""
    path = os.path.join(run_dir, HISTORY_FILE)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(dict(extra, history=list(history)), f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
