"""Greedy and beam search: the reference the C++ runtime is tested against token for token.

Rules (include/headwise/headwise.hpp, made precise here):
  - Sources are encoder inputs as given (each ends with EOS); sentences of a batch are padded
    with PAD and masked, and are decoded independently.
  - The decoder starts from decoder_start_token_id at position 0 and uses the incremental cache.
  - Each step: logits in float32, the PAD logit set to -inf, log_softmax in float32.
  - A hypothesis' raw score is the float32 running sum of the log-probabilities of its generated
    tokens (EOS included); its score is raw / length**length_penalty (float32), length = number
    of generated tokens including EOS.
  - Greedy: argmax (lowest id on ties) until EOS or max_len generated tokens.
  - Beam: the first step has one live beam. Each step ranks, over all live beams b (in order) and
    tokens v, raw_b + logp(b, v) descending, ties by lower b * vocab + v, and walks the best
    2 * beam candidates in that order: an EOS candidate becomes a finished hypothesis (every EOS
    candidate met before the walk stops is kept, so more than beam_size may finish), any other
    token becomes the next live beam (in walk order), until beam_size beams continue.
    After the step: if at least beam_size hypotheses have finished, or the stopping rule
    ``stop`` says so, the search ends and the live beams are dropped; otherwise, if max_len
    tokens have been generated, the live beams become unfinished hypotheses (finished=False)
    and the search ends. ``stop`` (BEAM_STOPS; the runtime's SearchOptions::beam_stop) applies
    once at least num_hypotheses hypotheses have finished (this step's included):
      "exhaustive": never;
      "top-eos": the walk's first candidate (the step's best) was EOS;
      "outscored": the num_hypotheses-th best score among the finished hypotheses is >=
        normalized_score(raw score of the first continuing beam, step + 1).
    All hypotheses are sorted by score, best first (a stable sort: ties keep the order in which
    they were made, finished ones first in step order, then the unfinished in beam order), and
    the first num_hypotheses are returned.
  - Returned ids exclude decoder_start_token_id and the final EOS.
  - Target prefix (``prefixes``, one id list per source, optional): the first len(prefix) steps
    of that sentence are forced: the prefix's next id is appended to its one live beam and its
    log-probability added to the raw score; a forced step finishes nothing and makes no
    decision (no margin). The rules above then go on from that beam; ``step`` counts every
    generated token, the prefix's included. A prefix id must not be PAD or EOS, and a prefix
    may not be longer than max_len (one as long is returned unfinished).
  - Minimum length (``min_len``): at steps < min_len EOS is not a choice (greedy takes the
    best other id, beam search ranks the other candidates only, sampling draws from the
    others); log_softmax still normalises over every id, so scores stay the model's.
  - Sampling (greedy's ``sampling``, a Sampling): each free step draws its id by ``draw``
    (headwise.hpp, "Sampling": candidates, float64 weights exp((x - max) / temperature) of
    the step's float32 logits, id order or logit order cut by top_k and by top_p against the
    cut list's weight summed in id order without top_k, in logit order with it, the first
    running sum above u * W) with u = ``uniform(key, step)``, key = ``sample_key(seed,
    source ids)``; the score is the drawn ids' log-probabilities.
  - Vocabulary shortlist (``allowed``, one id list per source, optional): every id outside
    its source's list has logit -inf before the PAD mask and log_softmax, so log_softmax is
    normalised over the list and greedy, beam ranking and sampling only see its ids: the
    runtime's shortlist, which keeps each line to the list the model's shortlist allows for
    that line alone (runtime/src/shortlist.h). Each list must hold EOS and more than
    2 * beam ids besides PAD.
With beam_size 1 the beam rules give exactly greedy.

``margins`` (optional list) receives, per sentence, the smallest score gap any decision of the
search depended on (greedy: best minus second log-probability; beam: consecutive gaps among the
walked candidates plus the first one not walked, and among the num_hypotheses + 1 best final
scores; with stop "outscored" also the difference of the two scores the rule compares, at every
step it is checked; min_len: gaps among the ids other than EOS; sampling: the distance of
u * W to the nearest running sum around the drawn id and of top_p * W to the cut, both over W,
and the logit gaps between the drawn id and its neighbours in logit order). Test data
generators use it to avoid near-ties that float rounding could flip.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch

from .beam_stop import BEAM_STOPS, DEFAULT_BEAM_STOP
from .marian import MarianMTModel


_MASK64 = (1 << 64) - 1


@dataclass(frozen=True)
class Sampling:
    """Random sampling settings (the runtime's SearchOptions sample, seed, top_k, top_p,
    temperature)."""
    seed: int = 0
    top_k: int = 0          # 0 = every id
    top_p: float = 1.0      # (0, 1]; 1 = off
    temperature: float = 1.0

    def __post_init__(self):
        if not 0 <= self.seed <= _MASK64:
            raise ValueError(f"seed must be in [0, 2**64), found {self.seed}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0, found {self.top_k}")
        if not 0.0 < np.float32(self.top_p) <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], found {self.top_p}")
        if not (np.isfinite(self.temperature) and np.float32(self.temperature) > 0):
            raise ValueError(f"temperature must be finite and > 0, found {self.temperature}")


def _mix(z: int) -> int:
    """SplitMix64's output for state z."""
    z = (z + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def sample_key(seed: int, source: Sequence[int]) -> int:
    key = _mix(seed)
    for i in source:
        key = _mix(key ^ (int(i) & 0xFFFFFFFF))
    return key


def uniform(key: int, step: int) -> float:
    return float(_mix((key + step) & _MASK64) >> 11) * 2.0 ** -53


def draw(logits: np.ndarray, rule: Sampling, excluded: int, u: float,
         fallback: int) -> Tuple[int, float]:
    """The id drawn from a float32 row of logits (PAD already -inf) and the decision margin."""
    x = np.asarray(logits, dtype=np.float32)
    cand = [v for v in range(x.shape[0]) if np.isfinite(x[v]) and v != excluded]
    if not cand:
        return fallback, float("inf")
    m = max(float(x[v]) for v in cand)
    top_p = float(np.float32(rule.top_p))
    temperature = float(np.float32(rule.temperature))
    ranked = rule.top_k > 0 or top_p < 1.0
    margin = float("inf")
    if ranked:
        cand.sort(key=lambda v: (-float(x[v]), v))
        if rule.top_k > 0:
            if len(cand) > rule.top_k:
                margin = float(x[cand[rule.top_k - 1]] - x[cand[rule.top_k]])
            cand = cand[:rule.top_k]
    w = [float(np.exp((float(x[v]) - m) / temperature)) for v in cand]
    total = 0.0  # over the cut list: in logit order with top_k, else in ascending id order
    weight_of = dict(zip(cand, w))
    for v in (cand if rule.top_k > 0 else sorted(cand)):
        total += weight_of[v]
    if top_p < 1.0:
        need = top_p * total
        run, keep = 0.0, 0
        while keep < len(cand):
            before = run
            run += w[keep]
            keep += 1
            if run >= need:
                margin = min(margin, (run - need) / total, (need - before) / total)
                break
        cand, w, total = cand[:keep], w[:keep], run
    target = u * total
    run, pick = 0.0, len(cand) - 1
    for i, wi in enumerate(w):
        before = run
        run += wi
        if run > target:
            pick = i
            margin = min(margin, (target - before) / total, (run - target) / total)
            break
    if ranked:
        for j in (pick - 1, pick + 1):
            if 0 <= j < len(cand):
                margin = min(margin, abs(float(x[cand[pick]] - x[cand[j]])))
    return cand[pick], margin


@dataclass
class Hypothesis:
    ids: List[int]
    score: float
    finished: bool
    raw_score: float = field(default=0.0, compare=False)  # sum of log-probabilities


@contextlib.contextmanager
def eval_mode(model: torch.nn.Module):
    """Eval mode (0/1 gates, no dropout) and no autograd; restores the previous mode."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield model
    finally:
        model.train(was_training)


def normalized_score(raw: float, length: int, length_penalty: float) -> float:
    raw32 = np.float32(raw)
    return float(raw32 / np.power(np.float32(length), np.float32(length_penalty)))


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids [B, S] and attention mask [B, S] (1 = token)."""
    if len(sequences) == 0:
        raise ValueError("empty batch: expected at least one source sequence")
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for i, s in enumerate(sequences):
        if len(s) == 0:
            raise ValueError(f"source {i} is empty: expected ids ending with EOS")
        ids[i, :len(s)] = torch.as_tensor(list(s), dtype=torch.long)
        mask[i, :len(s)] = 1
    return ids, mask


def _check_sources(model: MarianMTModel, src_ids: Sequence[Sequence[int]]) -> None:
    v = model.config.vocab_size
    for i, s in enumerate(src_ids):
        for t in s:
            if not 0 <= int(t) < v:
                raise ValueError(f"source {i}: id {t} outside the vocabulary [0, {v})")


def _check_max_len(model: MarianMTModel, max_len: int) -> None:
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, found {max_len}")
    if max_len > model.config.max_position_embeddings:
        raise ValueError(f"max_len {max_len} exceeds max_position_embeddings "
                         f"{model.config.max_position_embeddings}")


def step_log_probs(model: MarianMTModel, logits: torch.Tensor,
                   outside: Optional[torch.Tensor] = None) -> torch.Tensor:
    """float32 log_softmax with PAD excluded (its logit set to -inf), and with ``outside``
    (bool, the logits' shape: ids outside each row's shortlist) those too."""
    logits = logits.float().clone()
    if outside is not None:
        logits[outside] = float("-inf")
    logits[:, model.config.pad_token_id] = float("-inf")
    return torch.log_softmax(logits, dim=-1)


def _outside_lists(model: MarianMTModel, allowed, n: int, beam: int = 1) -> Optional[torch.Tensor]:
    """[n, vocab] bool, True where an id is outside its source's list; None without lists."""
    if allowed is None:
        return None
    if len(allowed) != n:
        raise ValueError(f"{len(allowed)} shortlist lists for {n} sources")
    cfg = model.config
    out = torch.ones(n, cfg.vocab_size, dtype=torch.bool)
    for i, ids in enumerate(allowed):
        ids = [int(v) for v in ids]
        if any(not 0 <= v < cfg.vocab_size for v in ids):
            raise ValueError(f"shortlist list {i}: an id outside the vocabulary")
        out[i, ids] = False
        if bool(out[i, cfg.eos_token_id]):
            raise ValueError(f"shortlist list {i} lacks EOS")
        usable = int((~out[i]).sum()) - int(not bool(out[i, cfg.pad_token_id]))
        if usable <= 2 * beam:
            raise ValueError(f"shortlist list {i} has {usable} ids besides PAD; a search needs "
                             f"more than 2 * beam = {2 * beam}")
    return out


def _start(model: MarianMTModel, src_ids):
    _check_sources(model, src_ids)
    input_ids, mask = pad_batch(src_ids, model.config.pad_token_id)
    encoder_out = model.encode(input_ids, mask)
    return model.init_decoder_state(encoder_out, mask)


def _check_prefixes(model: MarianMTModel, prefixes, n: int, max_len: int) -> List[List[int]]:
    if prefixes is None:
        return [[] for _ in range(n)]
    if len(prefixes) != n:
        raise ValueError(f"{len(prefixes)} prefixes for {n} sources")
    cfg = model.config
    out = []
    for i, p in enumerate(prefixes):
        p = [int(v) for v in p]
        if len(p) > max_len:
            raise ValueError(f"prefix {i} has {len(p)} ids, more than max_len {max_len}")
        for v in p:
            if not 0 <= v < cfg.vocab_size or v in (cfg.pad_token_id, cfg.eos_token_id):
                raise ValueError(f"prefix {i}: id {v} is outside the vocabulary, PAD or EOS")
        out.append(p)
    return out


def _check_min_len(min_len: int, max_len: int) -> None:
    if not 0 <= min_len < max_len:
        raise ValueError(f"min_len must be in [0, max_len = {max_len}), found {min_len}")


def _eos_held_back(logp: torch.Tensor, eos: int, step: int, min_len: int) -> torch.Tensor:
    """The log-probabilities a step chooses among: EOS at -inf below min_len (a copy then)."""
    if step >= min_len:
        return logp
    held = logp.clone()
    held[:, eos] = float("-inf")
    return held


def greedy(model: MarianMTModel, src_ids: Sequence[Sequence[int]], max_len: int,
           length_penalty: float = 1.0,
           margins: Optional[List[float]] = None,
           prefixes: Optional[Sequence[Sequence[int]]] = None,
           min_len: int = 0, sampling: Optional[Sampling] = None,
           allowed: Optional[Sequence[Sequence[int]]] = None) -> List[Hypothesis]:
    """One hypothesis per source (see the module rules)."""
    _check_max_len(model, max_len)
    _check_min_len(min_len, max_len)
    forced = _check_prefixes(model, prefixes, len(src_ids), max_len)
    outside = _outside_lists(model, allowed, len(src_ids))
    eos, start = model.config.eos_token_id, model.config.decoder_start_token_id
    keys = [sample_key(sampling.seed, s) for s in src_ids] if sampling is not None else None
    with eval_mode(model):
        state = _start(model, src_ids)
        n = len(src_ids)
        rows = list(range(n))  # sentence of each live row
        tokens: List[List[int]] = [[] for _ in range(n)]
        raw = torch.zeros(n, dtype=torch.float32)
        done: List[Optional[Hypothesis]] = [None] * n
        gaps = [float("inf")] * n
        last = torch.full((n,), start, dtype=torch.long)
        for step in range(max_len):
            logits, state = model.decode_step(last, state)
            row_outside = outside[rows] if outside is not None else None
            logp = step_log_probs(model, logits, row_outside)
            choice = _eos_held_back(logp, eos, step, min_len)
            top2 = torch.topk(choice, 2, dim=-1).values
            best = torch.argmax(choice, dim=-1)  # first maximum = lowest id
            keep, next_tokens = [], []
            for r, s in enumerate(rows):
                if step < len(forced[s]):
                    v = forced[s][step]
                elif sampling is not None:
                    row = logits[r].float().clone()
                    if row_outside is not None:
                        row[row_outside[r]] = float("-inf")
                    row[model.config.pad_token_id] = float("-inf")
                    v, gap = draw(row.numpy(), sampling, eos if step < min_len else -1,
                                  uniform(keys[s], step), eos)
                    gaps[s] = min(gaps[s], gap)
                else:
                    v = int(best[r])
                    gaps[s] = min(gaps[s], float(top2[r, 0] - top2[r, 1]))
                raw[s] = raw[s] + logp[r, v]
                if v == eos or step == max_len - 1:
                    finished = v == eos
                    ids = tokens[s] if finished else tokens[s] + [v]
                    done[s] = Hypothesis(ids, normalized_score(float(raw[s]), step + 1,
                                                               length_penalty),
                                         finished, float(raw[s]))
                else:
                    tokens[s].append(v)
                    keep.append(r)
                    next_tokens.append(v)
            if not keep:
                break
            rows = [rows[r] for r in keep]
            state = state.select(torch.tensor(keep, dtype=torch.long))
            last = torch.tensor(next_tokens, dtype=torch.long)
    if margins is not None:
        margins.extend(gaps)
    return done  # type: ignore[return-value]


@dataclass
class _Beam:
    tokens: List[int]
    raw: torch.Tensor  # float32 scalar


def _walk(flat: torch.Tensor, beams: List[_Beam], vocab: int, eos: int, beam_size: int,
          length_penalty: float, step: int, finished: List[Hypothesis]):
    """One sentence's beam step over its candidate scores ``flat`` [nb * vocab]. Returns the
    continuing (parent index, token, raw score), the smallest gap among walked candidates and
    whether the first walked candidate was EOS."""
    order = torch.sort(flat, descending=True, stable=True)
    values, indices = order.values[:2 * beam_size], order.indices[:2 * beam_size]
    continuing = []
    walked = 0
    for value, index in zip(values, indices):
        walked += 1
        b, v = divmod(int(index), vocab)
        if v == eos:
            finished.append(Hypothesis(list(beams[b].tokens),
                                       normalized_score(float(value), step + 1, length_penalty),
                                       True, float(value)))
        else:
            continuing.append((b, v, value))
            if len(continuing) == beam_size:
                break
    considered = order.values[:walked + 1]
    gap = float((considered[:-1] - considered[1:]).min()) if considered.numel() > 1 else float("inf")
    return continuing, gap, int(indices[0]) % vocab == eos


def _stops_early(stop: str, finished: List[Hypothesis], num_hypotheses: int, top_eos: bool,
                 continuing, step: int, length_penalty: float) -> Tuple[bool, float]:
    """The rule ``stop`` after a step's walk: (whether it ends the search, the score gap its
    decision depended on, inf when it compared no scores)."""
    if len(finished) < num_hypotheses or stop == "exhaustive":
        return False, float("inf")
    if stop == "top-eos":
        return top_eos, float("inf")
    nth = sorted((h.score for h in finished), reverse=True)[num_hypotheses - 1]
    live = normalized_score(float(continuing[0][2]), step + 1, length_penalty)
    return nth >= live, abs(nth - live)


def beam_search(model: MarianMTModel, src_ids: Sequence[Sequence[int]], beam: int,
                num_hypotheses: int, length_penalty: float, max_len: int,
                margins: Optional[List[float]] = None,
                stop: str = DEFAULT_BEAM_STOP,
                prefixes: Optional[Sequence[Sequence[int]]] = None,
                min_len: int = 0,
                allowed: Optional[Sequence[Sequence[int]]] = None) -> List[List[Hypothesis]]:
    """num_hypotheses hypotheses per source, best first (see the module rules)."""
    if beam < 1 or not 1 <= num_hypotheses <= beam:
        raise ValueError(f"need beam >= 1 and 1 <= num_hypotheses <= beam, found beam {beam}, "
                         f"num_hypotheses {num_hypotheses}")
    if stop not in BEAM_STOPS:
        raise ValueError(f"stop must be one of {', '.join(BEAM_STOPS)}, found {stop!r}")
    _check_max_len(model, max_len)
    _check_min_len(min_len, max_len)
    forced = _check_prefixes(model, prefixes, len(src_ids), max_len)
    cfg = model.config
    vocab, eos = cfg.vocab_size, cfg.eos_token_id
    if 2 * beam > vocab - 1:
        raise ValueError(f"beam {beam} too large for vocabulary {vocab}: 2 * beam candidates "
                         f"must exist besides PAD")
    outside = _outside_lists(model, allowed, len(src_ids), beam)
    with eval_mode(model):
        state = _start(model, src_ids)
        n = len(src_ids)
        live: List[List[_Beam]] = [[_Beam([], torch.zeros((), dtype=torch.float32))]
                                   for _ in range(n)]
        finished: List[List[Hypothesis]] = [[] for _ in range(n)]
        results: List[Optional[List[Hypothesis]]] = [None] * n
        gaps = [float("inf")] * n
        active = list(range(n))  # sentences with live beams; rows are their beams in order
        last = torch.full((n,), cfg.decoder_start_token_id, dtype=torch.long)
        for step in range(max_len):
            logits, state = model.decode_step(last, state)
            row_outside = None
            if outside is not None:  # each row is a live beam of an active sentence, in order
                row_outside = outside[[s for s in active for _ in live[s]]]
            logp = step_log_probs(model, logits, row_outside)
            ranked = _eos_held_back(logp, eos, step, min_len)  # what the walk ranks
            row = 0
            parents, next_tokens, still_active = [], [], []
            for s in active:
                beams = live[s]
                nb = len(beams)
                raws = torch.stack([b.raw for b in beams])
                if step < len(forced[s]):  # one live beam, its next id the prefix's
                    v = forced[s][step]
                    continuing, top_eos = [(0, v, raws[0] + logp[row, v])], False
                else:
                    flat = (raws[:, None] + ranked[row:row + nb]).reshape(-1)
                    continuing, gap, top_eos = _walk(flat, beams, vocab, eos, beam,
                                                     length_penalty, step, finished[s])
                    gaps[s] = min(gaps[s], gap)
                new_beams = [_Beam(beams[b].tokens + [v], value) for b, v, value in continuing]
                early = False
                if step < len(forced[s]):
                    pass  # a forced step ends nothing
                elif len(finished[s]) < beam and continuing:
                    early, gap = _stops_early(stop, finished[s], num_hypotheses, top_eos,
                                              continuing, step, length_penalty)
                    gaps[s] = min(gaps[s], gap)
                if step >= len(forced[s]) and (len(finished[s]) >= beam or early):
                    results[s] = finished[s]
                elif step == max_len - 1:
                    results[s] = finished[s] + [
                        Hypothesis(list(b.tokens), normalized_score(float(b.raw), step + 1,
                                                                    length_penalty),
                                   False, float(b.raw)) for b in new_beams]
                else:
                    live[s] = new_beams
                    still_active.append(s)
                    parents.extend(row + b for b, _, _ in continuing)
                    next_tokens.extend(v for _, v, _ in continuing)
                row += nb
            active = still_active
            if not active:
                break
            state = state.select(torch.tensor(parents, dtype=torch.long))
            last = torch.tensor(next_tokens, dtype=torch.long)
    out = []
    for s in range(n):
        ranked = sorted(results[s], key=lambda h: -h.score)  # stable
        top = ranked[:num_hypotheses + 1]
        for a, b in zip(top, top[1:]):
            gaps[s] = min(gaps[s], a.score - b.score)
        out.append(ranked[:num_hypotheses])
    if margins is not None:
        margins.extend(gaps)
    return out


def forced_logits(model: MarianMTModel, src_ids: Sequence[int],
                  tgt_ids: Sequence[int]) -> torch.Tensor:
    """Logits [len(tgt_ids) + 1, vocab] (PAD not masked) of the decoder fed
    [decoder_start] + tgt_ids after encoding ``src_ids`` (a full, non-incremental pass)."""
    _check_sources(model, [src_ids, tgt_ids])
    with eval_mode(model):
        src = torch.as_tensor([list(src_ids)], dtype=torch.long)
        dec = torch.as_tensor([[model.config.decoder_start_token_id] + list(tgt_ids)],
                              dtype=torch.long)
        return model(src, torch.ones_like(src), dec)[0]
