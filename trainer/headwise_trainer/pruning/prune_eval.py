"""BLEU/chrF of head layouts: the full model, the gated model with test-time gates, and models
with chosen heads kept (the converter's --keep-heads spec, model/keep_heads.py), on one
corpus split.

Each variant is evaluated with the gates taken out and a head mask in their place, so a
variant computes what the converter's stripped model computes for that layout:
  full     every head
  gated    the gates' test-time values (gates.gate_masks: 0/1 for log_alpha > 0 under the hard
           rule; the continuous gate values, which the converter folds into out_proj, under the
           continuous rule); only for gated models
  keep:SPEC  the gates' decision with SPEC applied on top (blocks SPEC does not name keep it)
"""
from __future__ import annotations

import json
import os
import time
from typing import Dict, List, Optional, Sequence

from ..threads import set_threads
from ..data.batching import encode_split
from ..evaluation.evaluate import translate_ids
from ..model.gates import gate_masks, gates, head_layout, head_masks, mask_from_layout
from ..model.import_model import check_vocab_size, load_start_model, load_start_vocab
from ..model.keep_heads import apply_spec, parse_spec, spec_text
from ..evaluation.metrics import corpus_bleu, corpus_chrf, scores_by_length
from ..model.marian import MarianMTModel
from ..data.spm_vocab import Vocab


class PruneEvalError(ValueError):
    pass


def layout_counts(model: MarianMTModel, layout: Dict[str, Sequence[int]]) -> Dict[str, object]:
    """kind -> kept per layer, plus the totals."""
    out: Dict[str, object] = {}
    kept = total = 0
    for name, kind, _, attn in model.attention_blocks():
        out.setdefault(kind, []).append(len(layout[name]))
        kept, total = kept + len(layout[name]), total + attn.num_heads
    out["kept"], out["total"] = kept, total
    return out


def variant_layouts(model: MarianMTModel, specs: Sequence[str],
                    names: Sequence[str]) -> List[tuple]:
    """[(variant name, layout)] in the order full, gated, keep specs."""
    full = {name: list(range(attn.num_heads)) for name, _, _, attn in model.attention_blocks()}
    out = []
    for n in names:
        if n == "full":
            out.append(("full", full))
        elif n == "gated":
            if not gates(model):
                raise PruneEvalError("variant 'gated': the model has no head gates")
            out.append(("gated", head_layout(model)))
        else:
            raise PruneEvalError(f"--variants: unknown variant {n!r}; expected full, gated")
    for s in specs:
        text = spec_text(s)
        out.append((f"keep:{' '.join(text.split())}", apply_spec(parse_spec(text), model)))
    return out


def evaluate_layout(model: MarianMTModel, layout, sources, references, vocab: Vocab,
                    beam: int, batch_size: int, length_penalty: float, masks=None,
                    beam_stop: Optional[str] = None) -> dict:
    """Scores of ``model`` with its gates replaced by the 0/1 mask of ``layout`` (or by
    ``masks``, per-head multipliers, when given); ``beam_stop`` is the beam search's stopping
    rule (None: decode's default)."""
    masks = mask_from_layout(model, layout) if masks is None else masks
    saved = {name: attn.head_gate for name, _, _, attn in model.attention_blocks()}
    try:
        for _, _, _, attn in model.attention_blocks():
            attn.head_gate = None
        with head_masks(model, masks):
            t0 = time.time()
            ids = translate_ids(model, sources, beam=beam, batch_size=batch_size,
                                length_penalty=length_penalty, beam_stop=beam_stop)
            seconds = time.time() - t0
    finally:
        for name, _, _, attn in model.attention_blocks():
            attn.head_gate = saved[name]
    hyps = [vocab.decode_target(x) for x in ids]
    bleu = corpus_bleu(hyps, references)
    return {"bleu": round(bleu.score, 2), "bleu_detail": str(bleu),
            "chrf": round(corpus_chrf(hyps, references), 2),
            "decode_seconds": round(seconds, 1), "hyps": hyps}


def run_prune_eval(args, log=print) -> dict:
    set_threads(args.threads)
    start = load_start_model(args.model)
    model = start.model.eval()
    vocab, vocab_dir = load_start_vocab(start, args.vocab, args.model)
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    if "gated" in names and not gates(model) and args.variants == DEFAULT_VARIANTS:
        names.remove("gated")  # the default asks for it only where there are gates
    variants = variant_layouts(model, args.keep_heads or [], names)
    split = encode_split(vocab, args.data, args.split)
    n = min(args.limit, len(split.src)) if args.limit else len(split.src)
    result = {"model": start.description, "split": args.split, "sentences": n,
              "search": "greedy" if args.beam <= 1 else f"beam {args.beam}",
              "length_penalty": args.length_penalty,
              "beam_stop": None if args.beam <= 1 else args.beam_stop, "variants": []}
    runs = [(model, name, layout) for name, layout in variants]
    masks = {"gated": gate_masks(model)}
    if args.baseline:
        base_start = load_start_model(args.baseline)
        base = base_start.model.eval()
        check_vocab_size(base, len(vocab), vocab_dir)
        result["baseline"] = base_start.description
        full = {name: list(range(attn.num_heads)) for name, _, _, attn in base.attention_blocks()}
        runs.insert(0, (base, "baseline", full))
    if args.pruning_run:
        result["pruning_run"] = pruning_run_facts(args.pruning_run)
    for model, name, layout in runs:
        scores = evaluate_layout(model, layout, split.src[:n], split.tgt_text[:n], vocab,
                                 args.beam, args.batch_size, args.length_penalty,
                                 masks.get(name) if name == "gated" else None,
                                 args.beam_stop)
        hyps = scores.pop("hyps")
        if args.hyps_dir:
            os.makedirs(args.hyps_dir, exist_ok=True)
            fname = name if ":" not in name else f"keep{len(result['variants'])}"
            with open(os.path.join(args.hyps_dir, f"{fname}.{args.split}.txt"), "w",
                      encoding="utf-8") as f:
                f.writelines(h + "\n" for h in hyps)
        rec = {"variant": name, **scores,
               "by_source_length": scores_by_length(split.src_text[:n], hyps,
                                                    split.tgt_text[:n]),
               "heads_kept": layout_counts(model, layout),
               "layout": {k: list(v) for k, v in layout.items()}}
        result["variants"].append(rec)
        log(f"prune-eval: {name}: BLEU {rec['bleu']} chrF {rec['chrf']} | heads kept "
            f"{rec['heads_kept']['kept']}/{rec['heads_kept']['total']} | "
            f"{rec['decode_seconds']} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2, ensure_ascii=False)
            f.write("\n")
    return result


DEFAULT_VARIANTS = "full,gated"


def pruning_run_facts(run_dir: str) -> dict:
    """What a pruning run did (its newest checkpoint, or the ckpt-*.pt given): start point,
    penalty, steps, time, dev history."""
    from . import prune_log
    from ..model import run_state
    if os.path.isfile(run_dir):  # one checkpoint of the run
        ckpt, run_dir = run_dir, os.path.dirname(run_dir) or "."
    else:
        ckpts = run_state.list_checkpoints(run_dir)
        if not ckpts:
            raise PruneEvalError(f"--pruning-run {run_dir}: no ckpt-*.pt found")
        ckpt = ckpts[-1][1]
    state = run_state.load_checkpoint_file(ckpt)
    if "prune_args" not in state:
        raise PruneEvalError(f"--pruning-run {run_dir}: expected a pruning run, found a "
                             f"training run")
    a = state["prune_args"]
    start = next((r for r in prune_log.read_log(run_dir) if r["event"] == "start"), {})
    return {"from": state["start"], "checkpoint": ckpt, "steps": state["step"],
            "train_seconds": round(float(state.get("train_seconds", 0.0)), 1),
            "lambda": a["lam"], "penalty": a["penalty"],
            "penalty_meaning": start.get("penalty_meaning"), "types": a["types"],
            "encoder_only": a["encoder_only"], "lr": a["lr"], "gate_lr": a["gate_lr"],
            "warmup": a["warmup"], "max_tokens": a["max_tokens"],
            "init_log_alpha": a["init_log_alpha"], "dev_history": state.get("history", [])}
