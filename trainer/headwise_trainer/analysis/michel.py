"""Michel, Levy, Neubig (2019) head importance: I_h = E_x |dL(x)/d xi_h| at xi_h = 1, where xi_h
multiplies head h's output (the same as |A_h(x)^T dL/dA_h(x)|), then l2-normalised over the
heads of each block. L(x) is the teacher-forced cross-entropy (summed over tokens) of a
sentence's reference translation; the expectation is over sentences. Applies to all three
attention types. Each sentence gets its own mask variables, so one backward pass gives every
sentence's gradient. A closed head's output is 0, so its score is 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List

import torch
import torch.nn.functional as F

from ..model.marian import MarianMTModel
from . import forward
from .lrp import Batch, frozen


@dataclass
class MichelSum:
    abs_grad: Dict[str, torch.Tensor] = field(default_factory=dict)
    sentences: int = 0

    def normalised(self) -> Dict[str, List[float]]:
        out = {}
        for name, v in self.abs_grad.items():
            mean = v / max(self.sentences, 1)
            norm = float(mean.norm())
            out[name] = (mean / norm if norm > 0 else mean).tolist()
        return out


def michel_importance(model: MarianMTModel, batch: Batch, acc: MichelSum = None) -> MichelSum:
    """Adds |d loss / d head mask| of every sentence of ``batch`` (targets = references)."""
    acc = MichelSum() if acc is None else acc
    b = batch.input_ids.shape[0]
    with frozen(model), torch.enable_grad():
        scales = {name: torch.ones(b, attn.num_heads, requires_grad=True)
                  for name, _, _, attn in model.attention_blocks()}
        trace = forward.run(model, batch.input_ids, batch.attention_mask,
                            batch.decoder_input_ids, batch.decoder_mask, None, scales)
        logp = F.log_softmax(model.logits(trace.hidden), dim=-1)
        nll = -logp.gather(2, batch.targets[..., None])[..., 0]
        loss = (nll * batch.decoder_mask).sum()
        grads = torch.autograd.grad(loss, list(scales.values()))
    for name, g in zip(scales, grads):
        acc.abs_grad[name] = acc.abs_grad.get(name, 0) + g.abs().double().sum(0)
    acc.sentences += b
    return acc
