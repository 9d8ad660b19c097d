"""The training loss: label-smoothed cross-entropy summed over non-pad labels."""
from __future__ import annotations

import torch
import torch.nn.functional as F


def smoothed_loss(logits: torch.Tensor, labels: torch.Tensor, pad_id: int, eps: float):
    """Sum of label-smoothed cross-entropy over non-pad labels (computed in float32 whatever
    the logits' type, e.g. bf16 under autocast), and that token count."""
    ntok = int((labels != pad_id).sum())
    loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1),
                           ignore_index=pad_id, label_smoothing=eps, reduction="sum")
    return loss, ntok
