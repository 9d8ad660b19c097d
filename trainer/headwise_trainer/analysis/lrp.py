"""Head relevance by layer-wise relevance propagation (Voita et al. 2019, section 4.1).

For every generated token (greedy generation, then one teacher-forced pass over the generated
sequence) the relevance starts at its top-1 logit and is propagated back to every head's output
before ``out_proj`` (rules.py: "attnlrp" or the paper's "z" rule). A head's relevance for that
prediction is the sum over its output neurons and positions; it is normalised over the heads
of its block: |R_h| / sum_h' |R_h'| (LRP relevance is signed; a head that works against the
prediction matters as well), so the heads of a block share 1 per prediction. The reported value
is the mean over all predictions. A closed head's output is 0, so its relevance is 0.

Sentences are independent, so one backward pass per target position t serves the whole
batch: the target is the sum over sentences of each one's position-t top-1 logit.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import torch

from ..model.marian import MarianMTModel
from . import forward


@contextlib.contextmanager
def frozen(model: MarianMTModel):
    """Parameters without gradients (only activations are differentiated); restored after."""
    flags = [(p, p.requires_grad) for p in model.parameters()]
    for p, _ in flags:
        p.requires_grad_(False)
    try:
        yield model
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)


def pad(rows: Sequence[Sequence[int]], value: int) -> torch.Tensor:
    width = max(len(r) for r in rows)
    out = torch.full((len(rows), width), value, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, :len(r)] = torch.as_tensor(list(r), dtype=torch.long)
    return out


@dataclass
class Batch:
    """Sources (ids ending with EOS) and the generated targets (ids, EOS included when the
    search finished) as the padded tensors of one teacher-forced pass."""
    input_ids: torch.Tensor         # [B, S]
    attention_mask: torch.Tensor    # [B, S]
    decoder_input_ids: torch.Tensor  # [B, T] start token + targets[:-1]
    decoder_mask: torch.Tensor      # [B, T]
    targets: torch.Tensor           # [B, T] (PAD beyond each target's length)

    @classmethod
    def make(cls, model: MarianMTModel, sources: Sequence[Sequence[int]],
             targets: Sequence[Sequence[int]]) -> "Batch":
        cfg = model.config
        if any(len(t) == 0 for t in targets):
            raise ValueError("every target needs at least one token (the generated EOS counts)")
        inp = pad(sources, cfg.pad_token_id)
        tgt = pad(targets, cfg.pad_token_id)
        dec_in = pad([[cfg.decoder_start_token_id] + list(t[:-1]) for t in targets],
                     cfg.pad_token_id)
        dmask = pad([[1] * len(t) for t in targets], 0)
        return cls(inp, (pad([[1] * len(s) for s in sources], 0)), dec_in, dmask, tgt)


@dataclass
class RelevanceSum:
    """Per block: summed normalised |relevance| [H], summed signed share [H], predictions."""
    abs_sum: Dict[str, torch.Tensor] = field(default_factory=dict)
    signed_sum: Dict[str, torch.Tensor] = field(default_factory=dict)
    predictions: int = 0

    def add(self, name: str, per_head: torch.Tensor) -> None:
        """``per_head`` [N, H]: raw relevance of each head for N predictions."""
        per_head = per_head.double()
        total = per_head.abs().sum(1, keepdim=True)
        safe = torch.where(total > 0, total, torch.ones_like(total))
        share = per_head / safe
        for acc, value in ((self.abs_sum, share.abs()), (self.signed_sum, share)):
            acc[name] = acc.get(name, torch.zeros(per_head.shape[1], dtype=torch.float64)) \
                + value.sum(0)

    def mean(self) -> Dict[str, List[float]]:
        n = max(self.predictions, 1)
        return {k: (v / n).tolist() for k, v in self.abs_sum.items()}

    def signed_mean(self) -> Dict[str, List[float]]:
        n = max(self.predictions, 1)
        return {k: (v / n).tolist() for k, v in self.signed_sum.items()}


def head_relevance(model: MarianMTModel, batch: Batch, rule: str,
                   acc: Optional[RelevanceSum] = None, trace_out: Optional[list] = None
                   ) -> RelevanceSum:
    """Adds the per-prediction normalised head relevances of ``batch`` to ``acc``. With
    ``trace_out`` (a list) the forward trace is appended to it (its attention weights feed the
    statistics)."""
    acc = RelevanceSum() if acc is None else acc
    with frozen(model), torch.enable_grad():
        trace = forward.run(model, batch.input_ids, batch.attention_mask,
                            batch.decoder_input_ids, batch.decoder_mask, rule)
        logits = forward.target_logits(model, trace.hidden, batch.targets, rule)
        merged = [b.merged for b in trace.blocks]
        valid = batch.decoder_mask.bool()
        for t in range(batch.targets.shape[1]):
            rows = valid[:, t]
            grads = torch.autograd.grad(logits[rows, t].sum(), merged,
                                        retain_graph=t + 1 < batch.targets.shape[1])
            with torch.no_grad():
                for block, g in zip(trace.blocks, grads):
                    r = (block.merged * g)[rows]
                    r = r.view(r.shape[0], r.shape[1], block.num_heads, block.head_dim)
                    acc.add(block.name, r.sum(dim=(1, 3)))
            acc.predictions += int(rows.sum())
    if trace_out is not None:
        trace_out.append(trace)
    return acc
