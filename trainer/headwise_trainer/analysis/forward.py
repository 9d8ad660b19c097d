"""One teacher-forced pass of MarianMTModel that records what the head analysis needs.

It computes exactly what ``MarianMTModel.forward`` computes in eval mode (test-time gates and
head masks applied; tests/trainer/test_analysis_lrp.py checks the logits), but keeps, per
attention block, the concatenated head outputs before ``out_proj`` (after the gate, so a closed
head's output is 0) and the attention weights, and runs every operation with the backward of
an LRP rule (rules.py), so that ``tensor * gradient`` is the tensor's relevance.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import torch

from ..model.marian import MarianAttention, MarianMTModel, additive_key_mask, causal_mask
from . import rules


@dataclass
class BlockTrace:
    name: str                 # state_dict prefix, e.g. model.encoder.layers.3.self_attn
    kind: str                 # encoder_self | decoder_self | decoder_cross
    layer: int
    num_heads: int
    head_dim: int
    merged: torch.Tensor      # [B, T, H * head_dim] head outputs (gated) entering out_proj
    probs: torch.Tensor       # [B, H, T, S] attention weights
    scores: torch.Tensor      # [B, H, T, S] softmax inputs (masked entries: float32 min)


@dataclass
class Trace:
    blocks: List[BlockTrace] = field(default_factory=list)
    encoder_states: List[torch.Tensor] = field(default_factory=list)  # layer inputs + output
    decoder_states: List[torch.Tensor] = field(default_factory=list)  # layer inputs + output
    memories: List[torch.Tensor] = field(default_factory=list)  # encoder output per decoder layer
    hidden: Optional[torch.Tensor] = None  # [B, T, d] final decoder states

    def block(self, kind: str, layer: int) -> BlockTrace:
        return next(b for b in self.blocks if b.kind == kind and b.layer == layer)


def _attention(attn: MarianAttention, x, kv, mask, rule, scale, name, kind, layer, trace):
    if attn.num_heads == 0:
        raise ValueError(f"{name}: a stripped block with no heads cannot be analysed; analyse "
                         f"the gated checkpoint instead")
    b, t, _ = x.shape
    h, hd = attn.num_heads, attn.head_dim

    def split(y):
        return y.view(y.shape[0], y.shape[1], h, hd).transpose(1, 2)

    q = split(rules.linear(x, attn.q_proj.weight, attn.q_proj.bias, rule) * attn.scaling)
    k = split(rules.linear(kv, attn.k_proj.weight, attn.k_proj.bias, rule))
    v = split(rules.linear(kv, attn.v_proj.weight, attn.v_proj.bias, rule))
    scores = rules.bilinear(q, k.transpose(2, 3), rule)
    if mask is not None:
        scores = scores + mask
    probs = torch.softmax(scores, dim=-1)
    heads = rules.bilinear(probs, v, rule, a_constant=True)
    g = attn.head_multipliers()
    if g is not None:
        heads = heads * g.view(1, -1, 1, 1)
    if scale is not None:
        heads = heads * scale[:, :, None, None]
    merged = heads.transpose(1, 2).reshape(b, t, h * hd)
    trace.blocks.append(BlockTrace(name, kind, layer, h, hd, merged, probs, scores))
    return rules.linear(merged, attn.out_proj.weight, attn.out_proj.bias, rule)


def _ffn(layer, x, rule):
    a = rules.activation(rules.linear(x, layer.fc1.weight, layer.fc1.bias, rule), layer.act, rule)
    return rules.linear(a, layer.fc2.weight, layer.fc2.bias, rule)


def run(model: MarianMTModel, input_ids: torch.Tensor, attention_mask: torch.Tensor,
        decoder_input_ids: torch.Tensor, decoder_attention_mask: Optional[torch.Tensor] = None,
        rule: Optional[str] = None,
        head_scale: Optional[Dict[str, torch.Tensor]] = None) -> Trace:
    """Teacher-forced pass; ``rule`` None (ordinary backward), "attnlrp" or "z". ``head_scale``
    maps block names to per-sentence head multipliers [B, H] (Michel's mask variables). The
    model must be in eval mode. The token embeddings require grad, so relevance reaches them."""
    if model.training:
        raise ValueError("analysis needs the model in eval mode (test-time gates, no dropout)")
    if rule is not None and rule not in rules.RULES:
        raise ValueError(f"rule: expected one of {', '.join(rules.RULES)}, found {rule!r}")
    head_scale = head_scale or {}
    trace = Trace()
    enc_mask = additive_key_mask(attention_mask)
    x = model._embed(model.model.encoder_embeddings, input_ids, 0).detach().requires_grad_()
    for i, layer in enumerate(model.model.encoder.layers):
        rules.mark(("encoder", i))
        trace.encoder_states.append(x)
        name = f"model.encoder.layers.{i}.self_attn"
        h = _attention(layer.self_attn, x, x, enc_mask, rule, head_scale.get(name), name,
                       "encoder_self", i, trace)
        x = rules.layer_norm(x + h, layer.self_attn_layer_norm, rule)
        x = rules.layer_norm(x + _ffn(layer, x, rule), layer.final_layer_norm, rule)
    trace.encoder_states.append(x)
    enc_out = x

    t = decoder_input_ids.shape[1]
    self_mask = causal_mask(t)
    if decoder_attention_mask is not None:
        self_mask = (self_mask + additive_key_mask(decoder_attention_mask)).clamp(
            min=torch.finfo(torch.float32).min)
    y = model._embed(model.model.decoder_embeddings, decoder_input_ids, 0).detach().requires_grad_()
    cross = []
    for i, layer in enumerate(model.model.decoder.layers):
        rules.mark(("decoder", i))
        trace.decoder_states.append(y)
        mem = enc_out.clone()  # a separate tensor per layer, so its relevance can be read
        trace.memories.append(mem)
        name = f"model.decoder.layers.{i}.self_attn"
        h = _attention(layer.self_attn, y, y, self_mask, rule, head_scale.get(name), name,
                       "decoder_self", i, trace)
        y = rules.layer_norm(y + h, layer.self_attn_layer_norm, rule)
        name = f"model.decoder.layers.{i}.encoder_attn"
        before = len(trace.blocks)
        h = _attention(layer.encoder_attn, y, mem, enc_mask, rule, head_scale.get(name), name,
                       "decoder_cross", i, trace)
        cross.append(trace.blocks.pop(before))
        y = rules.layer_norm(y + h, layer.encoder_attn_layer_norm, rule)
        y = rules.layer_norm(y + _ffn(layer, y, rule), layer.final_layer_norm, rule)
    rules.mark(("output", None))
    trace.decoder_states.append(y)
    trace.blocks.extend(cross)  # canonical order: encoder self, decoder self, decoder cross
    trace.hidden = y
    return trace


def target_logits(model: MarianMTModel, hidden: torch.Tensor, targets: torch.Tensor,
                  rule: Optional[str]) -> torch.Tensor:
    """The logits [B, T] of the tokens ``targets`` [B, T] (the top-1 tokens under analysis),
    computed as one row of the output projection each, under ``rule``."""
    w = model.output_weight()[targets]                      # [B, T, d]
    bias = model.final_logits_bias[0][targets]              # [B, T]
    zb = (hidden * w).sum(-1)
    # one weighted sum with one output per target: a trailing axis of 1 for the rule
    return rules.weighted_sum((zb + bias)[..., None], bias[..., None], rule,
                              zb[..., None])[..., 0]


def full_logits(model: MarianMTModel, hidden: torch.Tensor) -> torch.Tensor:
    return model.logits(hidden)
