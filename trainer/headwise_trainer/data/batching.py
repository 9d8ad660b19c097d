"""Token-based batching over a tokenised parallel corpus.

Each epoch's batches are a pure function of (seed, epoch): the sentence order is a seeded
permutation sorted by (source length, target length) -- the permutation breaks ties -- packed
greedily into batches whose padded size (sentences x longest side) stays within max_tokens,
then the batch order is shuffled with the same generator. So the position in the data is
just (epoch, batch index) and a resumed run sees exactly the batches it would have seen.
With world_size > 1 every rank takes every world_size-th batch (a trailing remainder that
cannot be shared evenly is dropped, so all ranks run the same number of steps).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import List, Sequence, Tuple

import numpy as np
import torch

from .spm_vocab import Vocab


class BatchingError(ValueError):
    pass


@dataclass
class EncodedSplit:
    src: List[np.ndarray]   # int64 ids, each ending with </s>
    tgt: List[np.ndarray]
    src_text: List[str]
    tgt_text: List[str]
    dropped_too_long: int


def read_split(data_dir: str, split: str) -> Tuple[List[str], List[str], dict]:
    man_path = os.path.join(data_dir, "manifest.json")
    if not os.path.isfile(man_path):
        raise BatchingError(f"{man_path}: not found; expected a corpus directory made by "
                            "'headwise-train data'")
    with open(man_path, encoding="utf-8") as f:
        man = json.load(f)
    sides = []
    for lang in (man["source_lang"], man["target_lang"]):
        path = os.path.join(data_dir, f"{split}.{lang}")
        if not os.path.isfile(path):
            raise BatchingError(f"{path}: split file not found")
        with open(path, encoding="utf-8") as f:
            sides.append(f.read().split("\n")[:-1])
    if len(sides[0]) != len(sides[1]):
        raise BatchingError(f"{data_dir}: {split}.{man['source_lang']} has {len(sides[0])} "
                            f"lines, {split}.{man['target_lang']} has {len(sides[1])}")
    return sides[0], sides[1], man


def encode_split(vocab: Vocab, data_dir: str, split: str, max_len: int = 0) -> EncodedSplit:
    """Encodes a split; pairs with a side longer than max_len ids (0 = keep all) are dropped."""
    src_text, tgt_text, _ = read_split(data_dir, split)
    out = EncodedSplit([], [], [], [], 0)
    for s, t in zip(src_text, tgt_text):
        si = np.asarray(vocab.encode_source(s), dtype=np.int64)
        ti = np.asarray(vocab.encode_target(t), dtype=np.int64)
        if max_len and (len(si) > max_len or len(ti) > max_len):
            out.dropped_too_long += 1
            continue
        out.src.append(si)
        out.tgt.append(ti)
        out.src_text.append(s)
        out.tgt_text.append(t)
    return out


def pack_by_tokens(order: Sequence[int], src_lens: np.ndarray, tgt_lens: np.ndarray,
                   max_tokens: int) -> List[np.ndarray]:
    """Greedy packing in the given order; a batch's cost is n_sentences * longest side."""
    batches, cur, longest = [], [], 0
    for i in order:
        L = int(max(src_lens[i], tgt_lens[i]))
        if cur and (len(cur) + 1) * max(longest, L) > max_tokens:
            batches.append(np.asarray(cur, dtype=np.int64))
            cur, longest = [], 0
        cur.append(int(i))
        longest = max(longest, L)
    if cur:
        batches.append(np.asarray(cur, dtype=np.int64))
    return batches


class TokenBatcher:
    def __init__(self, src: Sequence[np.ndarray], tgt: Sequence[np.ndarray], max_tokens: int,
                 seed: int, rank: int = 0, world_size: int = 1):
        if not src:
            raise BatchingError("no training pairs: expected a non-empty train split")
        self.src_lens = np.asarray([len(x) for x in src], dtype=np.int64)
        self.tgt_lens = np.asarray([len(x) for x in tgt], dtype=np.int64)
        longest = int(max(self.src_lens.max(), self.tgt_lens.max()))
        if max_tokens < longest:
            raise BatchingError(f"--max-tokens {max_tokens} is smaller than the longest "
                                f"sentence ({longest} ids); expected at least {longest}")
        self.max_tokens, self.seed = max_tokens, seed
        self.rank, self.world_size = rank, world_size

    def epoch_batches(self, epoch: int) -> List[np.ndarray]:
        rng = np.random.Generator(np.random.PCG64([self.seed, epoch]))
        perm = rng.permutation(len(self.src_lens))
        order = perm[np.lexsort((self.tgt_lens[perm], self.src_lens[perm]))]
        batches = pack_by_tokens(order, self.src_lens, self.tgt_lens, self.max_tokens)
        batches = [batches[i] for i in rng.permutation(len(batches))]
        usable = len(batches) - len(batches) % self.world_size
        return batches[self.rank:usable:self.world_size]


def collate(src: Sequence[np.ndarray], tgt: Sequence[np.ndarray], idx: Sequence[int],
            pad_id: int, decoder_start_id: int):
    """-> input_ids [B,S], attention_mask [B,S], decoder_input_ids [B,T], labels [B,T]
    (labels padded with pad_id, which the loss ignores)."""
    b = len(idx)
    s_len = max(len(src[i]) for i in idx)
    t_len = max(len(tgt[i]) for i in idx)
    input_ids = torch.full((b, s_len), pad_id, dtype=torch.long)
    mask = torch.zeros((b, s_len), dtype=torch.long)
    labels = torch.full((b, t_len), pad_id, dtype=torch.long)
    dec_in = torch.full((b, t_len), pad_id, dtype=torch.long)
    for r, i in enumerate(idx):
        s, t = torch.from_numpy(src[i]), torch.from_numpy(tgt[i])
        input_ids[r, :len(s)] = s
        mask[r, :len(s)] = 1
        labels[r, :len(t)] = t
        dec_in[r, 0] = decoder_start_id
        dec_in[r, 1:len(t)] = t[:-1]
    return input_ids, mask, dec_in, labels


def length_sorted_chunks(lengths: Sequence[int], batch_size: int) -> List[List[int]]:
    """Indices grouped into chunks of similar length (for decoding); order restored by caller."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
