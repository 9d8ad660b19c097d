"""The analysis of one model on one set of sentences: greedy generation, then per batch one
recording teacher-forced pass on the generated translations (LRP relevance and attention
statistics), a second for the other LRP rule when asked, and one on the references (Michel);
finally an encoder pass over the CoNLL-U sentences (syntactic heads)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

import torch

from ..model import decode
from ..data.batching import length_sorted_chunks
from ..evaluation.evaluate import decode_max_len
from ..model.marian import MarianMTModel
from . import conllu, forward, lrp, michel, stats


@dataclass
class Options:
    rule: str = "attnlrp"
    both_rules: bool = False
    batch_size: int = 16
    rare_min_rank: int = stats.RARE_WORD_MIN_RANK
    syntactic_min_instances: int = conllu.MIN_INSTANCES


@dataclass
class Result:
    relevance: Dict[str, Dict[str, List[float]]] = field(default_factory=dict)  # rule -> block
    relevance_signed: Dict[str, Dict[str, List[float]]] = field(default_factory=dict)
    michel: Dict[str, List[float]] = field(default_factory=dict)
    blocks: Dict[str, stats.BlockStats] = field(default_factory=dict)
    syntactic: Optional[conllu.SyntacticStats] = None
    predictions: int = 0
    target_tokens: int = 0
    conllu_sentences: int = 0
    conllu_unmapped_words: int = 0
    seconds: float = 0.0


def generate(model: MarianMTModel, sources: Sequence[Sequence[int]], batch_size: int
             ) -> List[List[int]]:
    """Greedy translations as target ids with the generated EOS (absent when the search hit
    its length limit), in input order."""
    eos = model.config.eos_token_id
    out: List[Optional[List[int]]] = [None] * len(sources)
    for chunk in length_sorted_chunks([len(s) for s in sources], batch_size):
        batch = [list(map(int, sources[i])) for i in chunk]
        hyps = decode.greedy(model, batch, decode_max_len(model, max(len(s) for s in batch)))
        for i, h in zip(chunk, hyps):
            out[i] = list(h.ids) + ([eos] if h.finished else [])
    return out  # type: ignore[return-value]


def _queries(kind: str, batch: lrp.Batch, eos: int) -> torch.Tensor:
    if kind == "encoder_self":
        return batch.attention_mask.bool() & (batch.input_ids != eos)
    q = batch.decoder_mask.bool()
    if kind == "decoder_self":
        q = q.clone()
        q[:, 0] = False
    return q


def analyse(model: MarianMTModel, sources: Sequence[Sequence[int]],
            references: Sequence[Sequence[int]], opts: Options,
            freq: Optional[torch.Tensor] = None,
            parses: Optional[Sequence[conllu.Arcs]] = None,
            log: Callable[[str], None] = print) -> Result:
    model.eval()
    t0 = time.time()
    res = Result()
    eos = model.config.eos_token_id
    hyps = generate(model, sources, opts.batch_size)
    log(f"analyze: generated {len(hyps)} translations ({sum(map(len, hyps))} tokens) in "
        f"{time.time() - t0:.0f} s")
    rules = [opts.rule] + ([r for r in ("attnlrp", "z") if r != opts.rule] if opts.both_rules
                           else [])
    sums = {r: lrp.RelevanceSum() for r in rules}
    mich = michel.MichelSum()
    ranks = stats.frequency_ranks(freq) if freq is not None else None
    res.blocks = {name: stats.BlockStats(kind, attn.num_heads)
                  for name, kind, _, attn in model.attention_blocks()}
    chunks = length_sorted_chunks([len(h) for h in hyps], opts.batch_size)
    for n, chunk in enumerate(chunks):
        src = [list(map(int, sources[i])) for i in chunk]
        batch = lrp.Batch.make(model, src, [hyps[i] for i in chunk])
        traces: list = []
        lrp.head_relevance(model, batch, opts.rule, sums[opts.rule], traces)
        for r in rules[1:]:
            lrp.head_relevance(model, batch, r, sums[r])
        rare = rare_ok = None
        if freq is not None:
            keys = batch.attention_mask.bool() & (batch.input_ids != eos)
            rare, rare_ok = stats.rarest_tokens(batch.input_ids, keys, freq, ranks,
                                                opts.rare_min_rank)
        src_eos = batch.attention_mask.bool() & (batch.input_ids == eos)
        for block in traces[0].blocks:
            res.blocks[block.name].update(block.probs, _queries(block.kind, batch, eos),
                                          rare, rare_ok,
                                          None if block.kind == "decoder_self" else src_eos)
        del traces
        refs = lrp.Batch.make(model, src, [list(map(int, references[i])) for i in chunk])
        michel.michel_importance(model, refs, mich)
        if (n + 1) % 10 == 0 or n + 1 == len(chunks):
            log(f"analyze: {n + 1}/{len(chunks)} batches, {sums[opts.rule].predictions} "
                f"predictions, {time.time() - t0:.0f} s")
    res.relevance = {r: s.mean() for r, s in sums.items()}
    res.relevance_signed = {r: s.signed_mean() for r, s in sums.items()}
    res.predictions = sums[opts.rule].predictions
    res.target_tokens = sum(map(len, hyps))
    res.michel = mich.normalised()
    if parses:
        res.syntactic = syntactic(model, parses, opts.batch_size)
        res.conllu_sentences = len(parses)
        res.conllu_unmapped_words = sum(p.unmapped_words for p in parses)
    res.seconds = time.time() - t0
    return res


def syntactic(model: MarianMTModel, parses: Sequence[conllu.Arcs],
              batch_size: int) -> conllu.SyntacticStats:
    """Encoder self-attention over the parsed sentences (no translation needed)."""
    enc = {name: attn.num_heads for name, kind, _, attn in model.attention_blocks()
           if kind == "encoder_self"}
    out = conllu.SyntacticStats(enc)
    start = model.config.decoder_start_token_id
    for i in range(0, len(parses), batch_size):
        part = list(parses[i:i + batch_size])
        inp = lrp.pad([p.ids for p in part], model.config.pad_token_id)
        mask = lrp.pad([[1] * len(p.ids) for p in part], 0)
        with torch.no_grad():
            trace = forward.run(model, inp, mask, torch.full((len(part), 1), start), None)
        for block in trace.blocks:
            if block.kind == "encoder_self":
                out.update(block.name, block.probs, part)
    return out
