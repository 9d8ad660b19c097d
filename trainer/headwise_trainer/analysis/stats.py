"""Attention-weight statistics of every head (Voita et al. 2019, sections 4.2-5), accumulated
over the batches of a teacher-forced pass on the generated translations.

  confidence   mean over query tokens of the head's maximum attention weight; EOS queries
               excluded (the source's final EOS; the generated EOS is never a decoder input),
               and in decoder self-attention the first position, which sees only itself and so
               always has weight 1. All three attention types.
  positional   the most frequent relative offset (key - query) of the maximum-weight key and how
               often it occurs; a head is positional when one offset holds >= 0.9 of the
               queries. Self-attention only (encoder, decoder): in decoder-encoder attention
               the query and the key live in different sequences, so offsets mean nothing.
  rare_word    the share of queries whose maximum-weight key is the sentence's least frequent
               source token (ties count; frequencies over the training corpus' source side,
               tokenised with the model's source SentencePiece), over sentences whose rarest
               token is outside the MIN_RANK most frequent. Encoder self-attention only: the
               frequencies are of source tokens and the paper's rare-word head is an encoder
               head; a decoder-encoder query attends to the rare word only when translating it.
  sink         attention sinks: the share of the head's attention mass on the first key (the
               first source token; in decoder self-attention the decoder start token) or on
               the source EOS (encoder self and decoder-encoder attention), averaged over the
               queries confidence counts; also each part alone (sink_first, sink_eos).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional

import torch

POSITIONAL_THRESHOLD = 0.9
RARE_WORD_THRESHOLD = 0.5
RARE_WORD_MIN_RANK = 500


@dataclass
class BlockStats:
    kind: str
    num_heads: int
    conf_sum: torch.Tensor = None
    conf_n: int = 0
    offsets: Dict[int, torch.Tensor] = field(default_factory=dict)  # offset -> count per head
    pos_n: int = 0
    rare_hits: torch.Tensor = None
    rare_n: int = 0
    rare_sentences: int = 0
    sink_sum: torch.Tensor = None        # mass on the first key or EOS, per head
    sink_first_sum: torch.Tensor = None
    sink_eos_sum: torch.Tensor = None

    def __post_init__(self):
        self.conf_sum = torch.zeros(self.num_heads, dtype=torch.float64)
        self.rare_hits = torch.zeros(self.num_heads, dtype=torch.float64)
        self.sink_sum = torch.zeros(self.num_heads, dtype=torch.float64)
        self.sink_first_sum = torch.zeros(self.num_heads, dtype=torch.float64)
        self.sink_eos_sum = torch.zeros(self.num_heads, dtype=torch.float64)

    def update(self, probs: torch.Tensor, queries: torch.Tensor,
               rare_keys: Optional[torch.Tensor] = None,
               rare_sentences: Optional[torch.Tensor] = None,
               eos_keys: Optional[torch.Tensor] = None) -> None:
        """``probs`` [B, H, T, S]; ``queries`` [B, T] bool: the query positions counted;
        ``rare_keys`` [B, S] bool: the rarest source tokens (encoder self only) and
        ``rare_sentences`` [B] bool: sentences whose rarest token counts; ``eos_keys`` [B, S]
        bool: the keys holding the source EOS (None: no EOS among the keys)."""
        probs = probs.detach()
        top, arg = probs.max(dim=-1)                             # [B, H, T]
        q = queries[:, None, :].expand_as(top)
        self.conf_sum += (top * q).sum(dim=(0, 2)).double()
        self.conf_n += int(queries.sum())
        first = torch.zeros(probs.shape[0], probs.shape[3], dtype=torch.bool)
        first[:, 0] = True
        eos = torch.zeros_like(first) if eos_keys is None else eos_keys.bool()
        for acc, keys in ((self.sink_first_sum, first), (self.sink_eos_sum, eos),
                          (self.sink_sum, first | eos)):
            mass = (probs * keys[:, None, None, :]).sum(dim=-1)  # [B, H, T]
            acc += (mass * q).sum(dim=(0, 2)).double()
        if self.kind in ("encoder_self", "decoder_self"):
            pos = torch.arange(probs.shape[2])[None, None, :]
            off = arg - pos
            for o in torch.unique(off[q]).tolist():
                hits = ((off == o) & q).sum(dim=(0, 2)).double()
                self.offsets[o] = self.offsets.get(o, 0) + hits
            self.pos_n += int(queries.sum())
        if self.kind == "encoder_self" and rare_keys is not None:
            qr = q & rare_sentences[:, None, None]
            hit = torch.gather(rare_keys[:, None, :].expand(-1, probs.shape[1], -1), 2, arg)
            self.rare_hits += (hit & qr).sum(dim=(0, 2)).double()
            self.rare_n += int((queries & rare_sentences[:, None]).sum())
            self.rare_sentences += int(rare_sentences.sum())

    def confidence(self) -> List[float]:
        return (self.conf_sum / max(self.conf_n, 1)).tolist()

    def sink(self) -> dict:
        """{"share", "first", "eos"} -> per head mean attention mass on those keys."""
        n = max(self.conf_n, 1)
        return {"share": (self.sink_sum / n).tolist(), "first": (self.sink_first_sum / n).tolist(),
                "eos": (self.sink_eos_sum / n).tolist()}

    def positional(self) -> List[Optional[dict]]:
        if self.kind not in ("encoder_self", "decoder_self") or self.pos_n == 0:
            return [None] * self.num_heads
        out = []
        for h in range(self.num_heads):
            # ties: the offset closest to 0, then the negative one (deterministic)
            best = max(self.offsets, key=lambda o: (float(self.offsets[o][h]), -abs(o), -o))
            out.append({"offset": int(best),
                        "fraction": float(self.offsets[best][h]) / self.pos_n})
        return out

    def rare_word(self) -> List[Optional[float]]:
        if self.kind != "encoder_self" or self.rare_n == 0:
            return [None] * self.num_heads
        return (self.rare_hits / self.rare_n).tolist()


def token_frequencies(vocab, lines: Iterable[str]) -> torch.Tensor:
    """Counts [vocab size] of the model ids of ``lines`` tokenised with the source
    SentencePiece (as Vocab.encode_source, without the EOS)."""
    counts: Counter = Counter()
    unk = vocab.unk_id
    lines = [ln for ln in lines if ln]
    for pieces in vocab.source.encode(lines, out_type=str):
        counts.update(vocab.piece_to_id.get(p, unk) for p in pieces)
    freq = torch.zeros(len(vocab), dtype=torch.long)
    for i, c in counts.items():
        freq[i] = c
    return freq


def frequency_ranks(freq: torch.Tensor) -> torch.Tensor:
    """Rank of each id by descending frequency (0 = most frequent; ties by lower id)."""
    order = sorted(range(len(freq)), key=lambda i: (-int(freq[i]), i))
    ranks = torch.empty(len(freq), dtype=torch.long)
    ranks[torch.as_tensor(order)] = torch.arange(len(freq))
    return ranks


def rarest_tokens(input_ids: torch.Tensor, keys: torch.Tensor, freq: torch.Tensor,
                  ranks: torch.Tensor, min_rank: int):
    """([B, S] bool: the keys holding the sentence's least frequent token, [B] bool: the
    sentence's rarest token is outside the ``min_rank`` most frequent). ``keys`` [B, S] bool
    marks the candidate tokens (real tokens, EOS excluded)."""
    f = freq[input_ids].double().masked_fill(~keys, float("inf"))
    low = f.min(dim=1, keepdim=True).values
    rare = keys & (f == low)
    has = keys.any(dim=1)
    rank = torch.where(rare, ranks[input_ids], torch.full_like(input_ids, -1)).max(dim=1).values
    return rare, has & (rank >= min_rank)
