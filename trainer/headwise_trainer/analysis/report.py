"""analysis.json: format "headwise-head-analysis", version 1.

The converter stores it in the model file and the pruning sweep ranks heads by it, so the
names below are a contract: fields may be added, never renamed or removed.

    {"format", "version", "checkpoint": {"path", "model_safetensors_sha256" | null},
     "data": {"corpus", "split", "sentences", "generation": "greedy", "max_len", ...},
     "methods": {"relevance": "attnlrp" | "z", "michel": ..., ...},
     "thresholds": {"positional": 0.9, ...},
     "blocks": [{"kind", "layer", "source_heads", "name",
                 "heads": [{"head", "gate_open", "relevance", ["relevance_z" |
                            "relevance_attnlrp"], "relevance_signed", "confidence",
                            "sink", "sink_first", "sink_eos", "michel",
                            "positional": {"offset", "fraction"} | null,
                            "rare_word": float | null, "syntactic": {...} | null,
                            "roles": [...]}]}]}

One block per attention block in canonical order (encoder self layers 0.., decoder self,
decoder cross), one head entry per head of the checkpoint (source heads, in order). Relevance
sums to 1 over a block's heads (0 for closed heads; all 0 when the whole block is closed).
"""
from __future__ import annotations

import json
from typing import List, Optional

from ..model.marian import MarianMTModel
from . import conllu, stats
from .pipeline import Result
from .rules import Z_EPSILON

FORMAT, VERSION = "headwise-head-analysis", 1
DIGITS = 6


def gate_open(attn) -> List[bool]:
    g = attn.head_multipliers()
    return [True] * attn.num_heads if g is None else [bool(v != 0) for v in g.tolist()]


def _r(x: Optional[float]) -> Optional[float]:
    return None if x is None else round(float(x), DIGITS)


def build(model: MarianMTModel, res: Result, rule: str, checkpoint: dict, data: dict,
          thresholds: dict) -> dict:
    blocks = []
    for name, kind, layer, attn in model.attention_blocks():
        st = res.blocks[name]
        conf, pos, rare, sink = st.confidence(), st.positional(), st.rare_word(), st.sink()
        if res.syntactic is not None and kind == "encoder_self":
            syn, syn_roles = res.syntactic.result(name, thresholds["syntactic_min_instances"],
                                                  thresholds["syntactic_margin"])
        else:
            syn, syn_roles = [None] * attn.num_heads, [[] for _ in range(attn.num_heads)]
        heads = []
        for h, is_open in enumerate(gate_open(attn)):
            entry = {"head": h, "gate_open": is_open,
                     "relevance": _r(res.relevance[rule][name][h])}
            for other in res.relevance:
                if other != rule:
                    entry[f"relevance_{other}"] = _r(res.relevance[other][name][h])
            entry["relevance_signed"] = _r(res.relevance_signed[rule][name][h])
            entry["confidence"] = _r(conf[h])
            entry["sink"] = _r(sink["share"][h])
            entry["sink_first"] = _r(sink["first"][h])
            entry["sink_eos"] = _r(sink["eos"][h])
            entry["michel"] = _r(res.michel[name][h])
            p = pos[h]
            entry["positional"] = None if p is None else {"offset": p["offset"],
                                                          "fraction": _r(p["fraction"])}
            entry["rare_word"] = _r(rare[h])
            entry["syntactic"] = None if syn[h] is None else {
                k: {"accuracy": _r(v["accuracy"]), "baseline": _r(v["baseline"]),
                    "count": v["count"]} for k, v in syn[h].items()}
            roles = []
            if p is not None and p["fraction"] >= thresholds["positional"]:
                roles.append("positional")
            if rare[h] is not None and rare[h] >= thresholds["rare_word"]:
                roles.append("rare-word")
            entry["roles"] = roles + syn_roles[h]
            heads.append(entry)
        blocks.append({"kind": kind, "layer": layer, "source_heads": attn.num_heads,
                       "name": name, "heads": heads})
    return {"format": FORMAT, "version": VERSION, "checkpoint": checkpoint, "data": data,
            "methods": methods(rule, list(res.relevance)), "thresholds": thresholds,
            "blocks": blocks}


def default_thresholds(rare_min_rank: int = stats.RARE_WORD_MIN_RANK,
                       syntactic_min_instances: int = conllu.MIN_INSTANCES) -> dict:
    return {"positional": stats.POSITIONAL_THRESHOLD, "rare_word": stats.RARE_WORD_THRESHOLD,
            "rare_word_min_rank": rare_min_rank, "syntactic_margin": conllu.SYNTACTIC_MARGIN,
            "syntactic_min_instances": syntactic_min_instances}


def methods(rule: str, rules: List[str]) -> dict:
    lrp_text = {
        "attnlrp": "AttnLRP (epsilon 1e-6 on linear layers; softmax rule; Q K^T and A V "
                   "split 50/50; LayerNorm std detached; activations identity)",
        "z": f"z-rule weight ratios (Ding et al. 2017; biases excluded; denominators "
             f"stabilised as in the epsilon rule with e = {Z_EPSILON:g} x mean |sum "
             f"without bias| over the layer's outputs, whose share is kept; attention weights "
             f"constant; LayerNorm std detached; activations identity)"}
    return {
        "relevance": rule,
        "relevance_rules": {r: lrp_text[r] for r in rules},
        "relevance_definition": "from the top-1 logit (PAD excluded, as in decoding) of every "
                                "generated token (greedy, then teacher-forced on the "
                                "generated sequence) to each head's "
                                "output before out_proj, summed over its neurons and positions; "
                                "|R_h| / sum |R| over the heads of the block per prediction; "
                                "mean over predictions. relevance_signed: R_h / sum |R|",
        "michel": "abs mask gradient, block l2-normalised",
        "michel_loss": "teacher-forced cross-entropy of the reference, summed over tokens; "
                       "|gradient| per sentence, mean over sentences",
        "confidence": "mean max attention weight over query tokens; EOS queries and the first "
                      "decoder self-attention query (which sees only itself) excluded",
        "sink": "mean attention mass on the first key (first source token; decoder self: the "
                "start token) or the source EOS, over the queries confidence counts; "
                "sink_first, sink_eos: each part alone",
        "positional": "most frequent relative offset of the max-weight key (self-attention "
                      "only) and its share of the queries",
        "rare_word": "share of queries whose max-weight key is the sentence's least frequent "
                     "source token (training-corpus frequencies); encoder self only",
        "syntactic": "accuracy of the max-weight key against CoNLL-U arcs (first subword), "
                     "baseline = the relation's most frequent offset; encoder self only",
        "gates": "test-time gates applied: a closed head's output is 0 (relevance and michel 0); "
                 "its attention statistics are still reported",
    }


def dumps(doc: dict) -> bytes:
    return (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
