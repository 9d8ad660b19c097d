"""Scores of one sweep point: a model (exported checkpoint, run directory or ckpt-*.pt) with a
head layout (its test-time gates, or one given), on one corpus split, as a JSON record with what
made it: heads kept per kind and layer, training steps and seconds, data size and machine.

Every point is scored with each search of ``searches`` ("greedy", "beam4": beam 4, length
penalty 1.0, the exhaustive stopping rule, as every record before the rule became an option
was scored): the record's "searches" holds BLEU/chrF per search and "segment_stats" the
per-sentence BLEU statistics (metrics.bleu_segment_stats) from which the report computes the
paired bootstrap intervals against the control; "bleu"/"chrf" at the top are greedy's. A gated
model is scored with its test-time gate values (gates.gate_masks; the gate rule and the gates
not settled are in "gates").

Records are written atomically and never recomputed: a rerun of the sweep skips a point whose
record exists (delete the file to redo it).
"""
from __future__ import annotations

import json
import os
import platform
import time
from typing import Dict, List, Mapping, Optional, Sequence

import torch

from ..threads import set_threads
from ..model import run_state
from ..data.batching import encode_split
from ..model.gates import DEFAULT_SETTLE_MARGIN, gate_masks, gates, head_layout, unsettled
from ..evaluation.metrics import bleu_segment_stats
from ..model.import_model import load_start_model, load_start_vocab
from ..pruning.prune_eval import evaluate_layout, layout_counts


def machine() -> Dict[str, object]:
    """Where a number was measured (the CPU model, cores, torch threads and version)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__, "load_average": [round(x, 1) for x in os.getloadavg()]}


def run_facts(run_dir: Optional[str]) -> Dict[str, object]:
    """Steps, training seconds and settings of the newest checkpoint of a training or pruning
    run, or of one ckpt-*.pt (empty when there is none)."""
    if run_dir and run_dir.endswith(".pt") and (os.path.isfile(run_dir)
                                                 or run_state.is_shard_dir(run_dir)):
        ckpts = [(0, run_dir)]  # one checkpoint (a file, or a directory of shards)
    elif run_dir and os.path.isdir(run_dir):
        ckpts = run_state.list_checkpoints(run_dir)
    else:
        return {}
    if not ckpts:
        return {}
    state = run_state.read_checkpoint(ckpts[-1][1])
    a = state.get("prune_args") or state.get("train_args") or {}
    keys = ("lam", "types", "encoder_only", "lr", "gate_lr", "warmup", "max_tokens", "seed",
            "steps", "head_layout", "penalty", "init_log_alpha", "gate_lr_schedule", "gate_rule",
            "settle_margin", "settle_steps", "settle_push", "label_smoothing", "clip_norm", "lr_schedule", "update_freq",
            "precision", "device")
    return {"checkpoint": ckpts[-1][1], "steps": state["step"],
            "train_seconds": round(float(state.get("train_seconds", 0.0)), 1),
            "start": state.get("start"), "args": {k: a[k] for k in keys if k in a},
            "dev_history": state.get("history", [])}


def count_lines(data: str, split: str) -> Optional[int]:
    """Sentence pairs in a corpus split (lines of its first SPLIT.* file)."""
    names = sorted(n for n in os.listdir(data) if n.startswith(split + "."))
    if not names:
        return None
    with open(os.path.join(data, names[0]), "rb") as f:
        return sum(1 for _ in f)


def write_json(path: str, record: dict) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)


SEARCHES = {"greedy": 1, "beam4": 4}
BEAM_STOP = "exhaustive"  # the records' beam search (module docstring)


def parse_searches(text: str) -> List[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [n for n in names if n not in SEARCHES]
    if bad or not names:
        raise ValueError(f"--searches {text!r}: expected a comma-separated subset of "
                         f"{', '.join(SEARCHES)}")
    return names


def source_counts(model) -> Dict[str, int]:
    """kind -> heads of the model before pruning."""
    out: Dict[str, int] = {}
    for _, kind, _, attn in model.attention_blocks():
        out[kind] = out.get(kind, 0) + attn.num_heads
    return out


def gate_facts(model, margin: float) -> Dict[str, object]:
    """The test-time rule of a gated model and its gates that have not settled."""
    g = gates(model)
    if not g:
        return {}
    loose = unsettled(model, margin)
    return {"rule": model.config.gate_rule, "settle_margin": margin,
            "unsettled": sum(len(v) for v in loose.values()), "unsettled_heads": loose,
            "log_alpha": {n: [round(float(a), 4) for a in x.log_alpha.detach().tolist()]
                          for n, x in g.items()}}


def evaluate_point(model_path: str, data: str, out_json: str, *, vocab: Optional[str] = None,
                   layout: Optional[Mapping[str, Sequence[int]]] = None, split: str = "test",
                   limit: int = 0, threads: int = 1, run_dir: Optional[str] = None,
                   extra: Optional[dict] = None, searches: Sequence[str] = ("greedy",),
                   log=print) -> dict:
    """Scores ``model_path`` with ``layout`` (default: its test-time gates) with each of
    ``searches`` on ``split`` and writes the record to ``out_json``; returns the existing
    record if there is one."""
    if os.path.isfile(out_json):
        with open(out_json, encoding="utf-8") as f:
            return json.load(f)
    set_threads(threads)
    start = load_start_model(model_path)
    model = start.model.eval()
    weights = "as stored"
    if start.state is not None:  # a training checkpoint (F32): score it as its F16 export
        with torch.no_grad():
            for name, p in model.named_parameters():
                if ".head_gate." not in name:
                    p.copy_(p.half().float())
        weights = "F16-rounded, as exported (gates F32)"
    voc, _ = load_start_vocab(start, vocab, model_path)
    masks = gate_masks(model) if layout is None else None
    layout = head_layout(model) if layout is None else layout
    corpus = encode_split(voc, data, split)
    n = min(limit, len(corpus.src)) if limit else len(corpus.src)
    refs = corpus.tgt_text[:n]
    facts = run_facts(run_dir)
    margin = float((facts.get("args") or {}).get("settle_margin") or DEFAULT_SETTLE_MARGIN)
    t0 = time.time()
    results, segments = {}, {}
    for search in searches:
        scores = evaluate_layout(model, layout, corpus.src[:n], refs, voc, SEARCHES[search], 64,
                                 1.0, masks, beam_stop=BEAM_STOP)
        segments[search] = bleu_segment_stats(scores.pop("hyps"), refs)
        results[search] = scores
    first = results[searches[0]]
    train_pairs = count_lines(data, "train")
    record = {**(extra or {}), "model": start.description, "weights": weights, "split": split,
              "sentences": n, "search": searches[0],
              "bleu": first["bleu"], "chrf": first["chrf"], "bleu_detail": first["bleu_detail"],
              "decode_seconds": first["decode_seconds"], "searches": results,
              "heads_kept": layout_counts(model, layout), "heads_source": source_counts(model),
              "layout": {k: list(v) for k, v in layout.items()},
              "gates": gate_facts(model, margin) if masks is not None else {},
              "run": facts, "train_pairs": train_pairs, "machine": machine(),
              "eval_seconds": round(time.time() - t0, 1),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "segment_stats": segments}
    os.makedirs(os.path.dirname(out_json) or ".", exist_ok=True)
    write_json(out_json, record)
    hk = record["heads_kept"]
    log(f"sweep: {out_json}: " + "; ".join(f"{s} BLEU {r['bleu']} chrF {r['chrf']}"
                                          for s, r in results.items())
        + f" | heads {sum(hk['encoder_self'])}/{sum(hk['decoder_self'])}/"
          f"{sum(hk['decoder_cross'])} | {record['eval_seconds']} s")
    return record
