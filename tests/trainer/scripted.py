"""A stand-in for MarianMTModel whose next-token logits are a fixed function of (source, prefix),
and a plain single-sentence implementation of the decoding rules to check decode.py against."""

import random
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np
import torch
from torch import nn

from conftest import small_config

Prefix = Tuple[int, ...]


class ScriptedState:
    def __init__(self, rows: List[Tuple[int, Prefix]], length: int = 0):
        self.rows, self.length = rows, length

    def select(self, idx: torch.Tensor) -> "ScriptedState":
        return ScriptedState([self.rows[int(i)] for i in idx], self.length)


class ScriptedModel(nn.Module):
    """logits(source[0], prefix) -> [vocab]; prefix = generated tokens so far."""

    def __init__(self, logits: Callable[[int, Prefix], List[float]], vocab: int = 8):
        super().__init__()
        self.config = small_config(vocab_size=vocab, pad_token_id=vocab - 1,
                                   decoder_start_token_id=vocab - 1, eos_token_id=0)
        self.fn = logits

    def encode(self, input_ids, attention_mask):
        return input_ids[:, :1].float()

    def init_decoder_state(self, encoder_out, attention_mask):
        return ScriptedState([(int(k), None) for k in encoder_out[:, 0]])

    def decode_step(self, token_ids, state):
        rows = []
        for (key, prefix), t in zip(state.rows, token_ids.tolist()):
            rows.append((key, () if prefix is None else prefix + (t,)))
        logits = torch.tensor([self.fn(k, p) for k, p in rows], dtype=torch.float32)
        return logits, ScriptedState(rows, state.length + 1)


def random_table(seed: int, vocab: int = 8, levels: int = 4):
    """Small-integer logits (exact ties are common), fixed per (source, prefix)."""
    def fn(key: int, prefix: Prefix) -> List[float]:
        r = random.Random(hash((seed, key) + prefix))
        return [float(r.randrange(levels)) for _ in range(vocab)]
    return fn


def log_probs(logits: Sequence[float], pad: int) -> torch.Tensor:
    t = torch.tensor(logits, dtype=torch.float32)
    t[pad] = float("-inf")
    return torch.log_softmax(t, dim=-1)


def norm(raw: np.float32, length: int, lp: float) -> float:
    return float(np.float32(raw) / np.power(np.float32(length), np.float32(lp)))


def reference_beam(fn, key: int, vocab: int, eos: int, pad: int, beam: int, n: int, lp: float,
                   max_len: int, stop: str = "exhaustive") -> List[Tuple[List[int], float, bool]]:
    """The rules of include/headwise/headwise.hpp, one sentence, no batching, no tensors kept;
    `stop` is the stopping rule (exhaustive, top-eos, outscored)."""
    live = [((), np.float32(0.0))]
    finished: List[Tuple[List[int], float, bool]] = []
    for step in range(max_len):
        cands = []
        for b, (prefix, raw) in enumerate(live):
            lp_row = log_probs(fn(key, prefix), pad)
            for v in range(vocab):
                cands.append((np.float32(raw + np.float32(lp_row[v].item())), b * vocab + v, b, v))
        cands.sort(key=lambda c: (-c[0], c[1]))
        new_live = []
        for score, _, b, v in cands[:2 * beam]:
            if v == eos:
                finished.append((list(live[b][0]), norm(score, step + 1, lp), True))
            else:
                new_live.append((live[b][0] + (v,), score))
                if len(new_live) == beam:
                    break
        if len(finished) >= beam:
            break
        if new_live and len(finished) >= n:
            if stop == "top-eos" and cands[0][3] == eos:
                break
            nth = sorted((h[1] for h in finished), reverse=True)[n - 1]
            if stop == "outscored" and nth >= norm(new_live[0][1], step + 1, lp):
                break
        if step == max_len - 1:
            finished += [(list(p), norm(s, max_len, lp), False) for p, s in new_live]
            break
        live = new_live
    return sorted(finished, key=lambda h: -h[1])[:n]
