"""Corpus BLEU and chrF computed as sacreBLEU 2.x computes them (single reference).

BLEU: sacrebleu.metrics.bleu.BLEU() defaults: 13a tokenisation (tokenizers/tokenizer_13a.py +
tokenizer_re.py), mixed case, smooth_method='exp', max n-gram order 4, no effective order,
closest-reference-length brevity penalty, corpus statistics summed before the score.
chrF: sacrebleu.metrics.chrf.CHRF() defaults: char order 6, word order 0, beta 2, whitespace
removed before extracting n-grams (''.join(line.split())), no eps smoothing (effective order
averaging of precision and recall over orders, then F-beta).
Both return scores on a 0..100 scale, like sacreBLEU's `.score`.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

from ..data.corpus import LENGTH_BUCKETS, length_bucket, length_bucket_name

MAX_NGRAM_ORDER = 4

# tokenizer_re.TokenizerRegexp, applied after 13a's language-independent replacements.
_13A_RULES = [
    # punctuation and symbols: {|}~ [\]^_` space!"#$%& ()*+ :;<=>?@ /
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    # period and comma unless preceded by a digit
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    # period and comma unless followed by a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    # dash when preceded by a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]


def tokenize_13a(line: str) -> str:
    """sacreBLEU's Tokenizer13a (mteval-v13a)."""
    line = line.replace("<skipped>", "")
    line = line.replace("-\n", "")
    line = line.replace("\n", " ")
    line = line.replace("&quot;", '"')
    line = line.replace("&amp;", "&")
    line = line.replace("&lt;", "<")
    line = line.replace("&gt;", ">")
    line = f" {line} "
    for rx, repl in _13A_RULES:
        line = rx.sub(repl, line)
    return " ".join(line.strip().split())


def _my_log(x: float) -> float:
    return -9999999999 if x == 0.0 else math.log(x)


@dataclass
class BleuResult:
    score: float
    counts: List[int]
    totals: List[int]
    precisions: List[float]
    bp: float
    sys_len: int
    ref_len: int

    def __str__(self) -> str:
        prec = "/".join(f"{p:.1f}" for p in self.precisions)
        ratio = self.sys_len / self.ref_len if self.ref_len else 0
        return (f"BLEU = {self.score:.2f} {prec} (BP = {self.bp:.3f} ratio = {ratio:.3f} "
                f"hyp_len = {self.sys_len} ref_len = {self.ref_len})")


def _word_ngrams(tokens: List[str], max_order: int) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for n in range(1, max_order + 1)
                   for i in range(len(tokens) - n + 1))


def _check_lengths(hyps: Sequence[str], refs: Sequence[str]) -> None:
    if isinstance(hyps, str) or isinstance(refs, str):
        raise TypeError("expected sequences of sentences, found a single string")
    if len(hyps) != len(refs):
        raise ValueError(f"expected as many hypotheses as references, found {len(hyps)} "
                         f"hypotheses and {len(refs)} references")


def bleu_from_stats(correct: List[int], total: List[int], sys_len: int,
                    ref_len: int) -> BleuResult:
    """sacreBLEU BLEU.compute_bleu with smooth_method='exp', effective_order=False."""
    order = len(correct)
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    else:
        bp = 1.0
    precisions = [0.0] * order
    if not any(correct):
        return BleuResult(0.0, list(correct), list(total), precisions, bp, sys_len, ref_len)
    smooth_mteval = 1.0
    for n in range(order):
        if total[n] == 0:
            break
        if correct[n] == 0:
            smooth_mteval *= 2
            precisions[n] = 100.0 / (smooth_mteval * total[n])
        else:
            precisions[n] = 100.0 * correct[n] / total[n]
    score = bp * math.exp(sum(_my_log(p) for p in precisions) / order)
    return BleuResult(score, list(correct), list(total), precisions, bp, sys_len, ref_len)


def corpus_bleu(hyps: Sequence[str], refs: Sequence[str],
                max_order: int = MAX_NGRAM_ORDER) -> BleuResult:
    """Corpus BLEU of hypotheses against one reference each, as sacreBLEU 2.x defaults."""
    return corpus_bleu_multi(hyps, [refs], max_order)


def corpus_bleu_multi(hyps: Sequence[str], ref_streams: Sequence[Sequence[str]],
                      max_order: int = MAX_NGRAM_ORDER) -> BleuResult:
    """Several reference streams (sacrebleu.corpus_bleu(hyps, [refs1, refs2, ...])): n-gram
    counts clipped by the maximum over references, the closest reference length (shorter on
    ties) for the brevity penalty."""
    if not ref_streams:
        raise ValueError("expected at least one reference stream, found none")
    for refs in ref_streams:
        _check_lengths(hyps, refs)
    correct = [0] * max_order
    total = [0] * max_order
    sys_len = ref_len = 0
    for i, hyp in enumerate(hyps):
        h = tokenize_13a(hyp.rstrip()).split()
        r_ngrams: Counter = Counter()
        closest_diff, closest_len = -1, -1
        for refs in ref_streams:
            r = tokenize_13a(refs[i].rstrip()).split()
            for ng, cnt in _word_ngrams(r, max_order).items():
                r_ngrams[ng] = max(r_ngrams[ng], cnt)
            diff = abs(len(h) - len(r))
            if closest_diff == -1 or diff < closest_diff:
                closest_diff, closest_len = diff, len(r)
            elif diff == closest_diff and len(r) < closest_len:
                closest_len = len(r)
        sys_len += len(h)
        ref_len += closest_len
        for ng, cnt in _word_ngrams(h, max_order).items():
            n = len(ng) - 1
            total[n] += cnt
            if ng in r_ngrams:
                correct[n] += min(cnt, r_ngrams[ng])
    return bleu_from_stats(correct, total, sys_len, ref_len)


def _char_ngrams(line: str, max_order: int) -> List[Counter]:
    line = "".join(line.split())
    return [Counter(line[i:i + n] for i in range(len(line) - n + 1))
            for n in range(1, max_order + 1)]


def chrf_from_stats(stats: List[int], order: int, beta: float,
                    eps_smoothing: bool = False) -> float:
    """sacreBLEU CHRF._compute_f_score (default eps_smoothing=False: average precision and
    recall over the orders that have n-grams on both sides, then F-beta; True: chrF++.py-style
    mean of per-order F-beta with 1e-16 for empty orders)."""
    eps = 1e-16
    factor = beta ** 2
    score = avg_prec = avg_rec = 0.0
    effective_order = 0
    for i in range(order):
        n_hyp, n_ref, n_match = stats[3 * i:3 * i + 3]
        prec = n_match / n_hyp if n_hyp > 0 else eps
        rec = n_match / n_ref if n_ref > 0 else eps
        denom = factor * prec + rec
        score += ((1 + factor) * prec * rec / denom) if denom > 0 else eps
        if n_hyp > 0 and n_ref > 0:
            avg_prec += prec
            avg_rec += rec
            effective_order += 1
    if eps_smoothing:
        return 100 * score / order
    if effective_order == 0:
        return 0.0
    avg_prec /= effective_order
    avg_rec /= effective_order
    if avg_prec + avg_rec:
        return 100 * (1 + factor) * avg_prec * avg_rec / (factor * avg_prec + avg_rec)
    return 0.0


def chrf_stats(hyp: str, ref: str, char_order: int = 6) -> List[int]:
    """[hyp, ref, match] counts per character order for one segment."""
    stats: List[int] = []
    for h, r in zip(_char_ngrams(hyp, char_order), _char_ngrams(ref, char_order)):
        match = sum(min(c, r[ng]) for ng, c in h.items() if ng in r)
        stats += [sum(h.values()) if r else 0, sum(r.values()), match]
    return stats


def corpus_chrf(hyps: Sequence[str], refs: Sequence[str], char_order: int = 6,
                beta: float = 2, eps_smoothing: bool = False) -> float:
    """Corpus chrF (sacreBLEU 2.x CHRF() defaults: nc=6, nw=0, beta=2, no whitespace)."""
    _check_lengths(hyps, refs)
    total = [0] * (3 * char_order)
    for hyp, ref in zip(hyps, refs):
        for i, v in enumerate(chrf_stats(hyp, ref, char_order)):
            total[i] += v
    return chrf_from_stats(total, char_order, beta, eps_smoothing)


def bleu_chrf(hyps: Sequence[str], refs: Sequence[str]) -> Tuple[BleuResult, float]:
    return corpus_bleu(hyps, refs), corpus_chrf(hyps, refs)


def scores_by_length(sources: Sequence[str], hyps: Sequence[str],
                     refs: Sequence[str]) -> Dict[str, dict]:
    """Corpus BLEU and chrF per source-length bucket, each over the sentences of that bucket
    only (buckets without sentences are left out)."""
    _check_lengths(hyps, refs)
    if len(sources) != len(hyps):
        raise ValueError(f"expected one source per hypothesis, found {len(sources)} sources "
                         f"and {len(hyps)} hypotheses")
    groups: Dict[str, List[int]] = {}
    for i, src in enumerate(sources):
        groups.setdefault(length_bucket(src), []).append(i)
    out: Dict[str, dict] = {}
    for lo, hi in LENGTH_BUCKETS:
        name = length_bucket_name(lo, hi)
        idx = groups.get(name)
        if not idx:
            continue
        h = [hyps[i] for i in idx]
        r = [refs[i] for i in idx]
        out[name] = {"sentences": len(idx), "bleu": round(corpus_bleu(h, r).score, 2),
                     "chrf": round(corpus_chrf(h, r), 2)}
    return out


# ---- Paired bootstrap resampling (sacreBLEU 2.x, sacrebleu/significance.py) ---------------
#
# sacreBLEU's paired bootstrap test (`sacrebleu --paired-bs`): segment statistics per system;
# N_SAMPLES resamples of the segment indices, drawn once as
# numpy.random.default_rng(SEED).choice(n, size=(N_SAMPLES, n), replace=True) and used for
# both systems (that is what makes it paired); each resample's score from its summed
# statistics. sacreBLEU reports each system's mean +- ci with estimate_ci (sort the resampled
# scores, lower = the (N // 40)-th, upper = the (N - N // 40 - 1)-th, ci = (upper - lower) / 2)
# and the p-value (c + 1) / (N + 1), c = the resamples whose centred |difference|
# (|d_i| - mean |d|) exceeds the observed |difference|. For a "vs control" difference we
# apply the same estimate_ci to the resampled differences d_i = score_i(system) -
# score_i(control): the 95% interval is [lower, upper] of the sorted d_i.
BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 12345


def bleu_segment_stats(hyps: Sequence[str], refs: Sequence[str],
                       max_order: int = MAX_NGRAM_ORDER) -> List[List[int]]:
    """Per segment [sys_len, ref_len, correct_1..N, total_1..N] (sacreBLEU's BLEU statistics);
    their sums give corpus_bleu."""
    _check_lengths(hyps, refs)
    out = []
    for hyp, ref in zip(hyps, refs):
        h = tokenize_13a(hyp.rstrip()).split()
        r = tokenize_13a(ref.rstrip()).split()
        r_ngrams = _word_ngrams(r, max_order)
        correct, total = [0] * max_order, [0] * max_order
        for ng, cnt in _word_ngrams(h, max_order).items():
            total[len(ng) - 1] += cnt
            correct[len(ng) - 1] += min(cnt, r_ngrams.get(ng, 0))
        out.append([len(h), len(r)] + correct + total)
    return out


def bleu_of_stats(summed: Sequence[float]) -> float:
    """BLEU of summed segment statistics (bleu_segment_stats' layout)."""
    order = (len(summed) - 2) // 2
    return bleu_from_stats([int(x) for x in summed[2:2 + order]],
                           [int(x) for x in summed[2 + order:]], int(summed[0]),
                           int(summed[1])).score


def bootstrap_indices(n_segments: int, n_samples: int = BOOTSTRAP_SAMPLES,
                      seed: int = BOOTSTRAP_SEED):
    """The resampled segment indices [n_samples, n_segments], as sacreBLEU draws them."""
    import numpy as np
    return np.random.default_rng(seed).choice(n_segments, size=(n_samples, n_segments),
                                              replace=True)


def estimate_ci(scores) -> Tuple[float, float, float, float]:
    """sacreBLEU's estimate_ci: (mean, ci, lower, upper) of resampled scores."""
    import numpy as np
    s = np.sort(np.asarray(scores, dtype=np.float64))
    lo = len(s) // 40
    lower, upper = float(s[lo]), float(s[len(s) - lo - 1])
    return float(s.mean()), 0.5 * (upper - lower), lower, upper


def _resampled_bleu(stats, idx):
    """BLEU of each resample (rows of idx) of one system's segment statistics."""
    import numpy as np
    st = np.asarray(stats, dtype=np.float32)
    return np.array([bleu_of_stats(x.sum(0)) for x in st[idx]])


def _corpus_bleu(stats) -> float:
    """BLEU of all of one system's segment statistics."""
    import numpy as np
    return bleu_of_stats(np.asarray(stats, dtype=np.float32).sum(0))


def _check_pair(system_stats, control_stats) -> None:
    if len(system_stats) != len(control_stats) or not len(system_stats):
        raise ValueError(f"paired bootstrap: expected the same non-zero number of segments, "
                         f"found {len(system_stats)} and {len(control_stats)}")


def paired_bootstrap(system_stats: Sequence[Sequence[int]],
                     control_stats: Sequence[Sequence[int]], indices=None) -> dict:
    """BLEU of a system against a control on the same segments, with sacreBLEU's paired
    bootstrap: {"delta", "delta_mean", "delta_ci", "delta_low", "delta_high" (the 95% interval
    of the difference), "system_mean", "system_ci", "control_mean", "control_ci", "p_value",
    "samples", "seed"}. ``indices`` (default bootstrap_indices) are the resamples."""
    import numpy as np
    _check_pair(system_stats, control_stats)
    idx = bootstrap_indices(len(system_stats)) if indices is None else np.asarray(indices)
    sys_scores = _resampled_bleu(system_stats, idx)
    ctl_scores = _resampled_bleu(control_stats, idx)
    observed = _corpus_bleu(system_stats) - _corpus_bleu(control_stats)
    d_mean, d_ci, d_low, d_high = estimate_ci(sys_scores - ctl_scores)
    s_mean, s_ci, _, _ = estimate_ci(sys_scores)
    c_mean, c_ci, _, _ = estimate_ci(ctl_scores)
    return {"delta": observed, "delta_mean": d_mean, "delta_ci": d_ci, "delta_low": d_low,
            "delta_high": d_high, "system_mean": s_mean, "system_ci": s_ci,
            "control_mean": c_mean, "control_ci": c_ci,
            "p_value": _bootstrap_p(sys_scores - ctl_scores, observed),
            "samples": int(idx.shape[0]),
            "seed": BOOTSTRAP_SEED if indices is None else None}


def paired_bootstrap_mean(pairs: Sequence[Tuple[Sequence[Sequence[int]],
                                                Sequence[Sequence[int]]]],
                          indices=None) -> dict:
    """The mean over several (system, control) pairs of their BLEU difference, all on the same
    segments (for example one pruned point and its control trained with each of 3 seeds), with
    the paired bootstrap drawn once for all pairs: resample i scores every system and control
    on the same segments, and its difference is the mean over the pairs. So the interval is
    that of the seed-averaged difference under test-set resampling; the seeds' own spread is
    in "deltas" (each pair's observed difference). Keys: those of paired_bootstrap for the
    difference ("delta" is the mean of "deltas"), plus "deltas" and "pairs"."""
    import numpy as np
    if not pairs:
        raise ValueError("paired bootstrap over pairs: no pair given")
    n = len(pairs[0][0])
    for s, c in pairs:
        _check_pair(s, c)
        if len(s) != n:
            raise ValueError(f"paired bootstrap over pairs: every pair must score the same "
                             f"segments, found {n} and {len(s)}")
    idx = bootstrap_indices(n) if indices is None else np.asarray(indices)
    diffs = np.zeros(idx.shape[0])
    deltas = []
    for s, c in pairs:
        diffs += _resampled_bleu(s, idx) - _resampled_bleu(c, idx)
        deltas.append(_corpus_bleu(s) - _corpus_bleu(c))
    diffs /= len(pairs)
    observed = float(np.mean(deltas))
    d_mean, d_ci, d_low, d_high = estimate_ci(diffs)
    return {"delta": observed, "delta_mean": d_mean, "delta_ci": d_ci, "delta_low": d_low,
            "delta_high": d_high, "deltas": deltas, "pairs": len(pairs),
            "p_value": _bootstrap_p(diffs, observed), "samples": int(idx.shape[0]),
            "seed": BOOTSTRAP_SEED if indices is None else None}


def _bootstrap_p(diffs, observed: float) -> float:
    """sacreBLEU's p-value: (c + 1) / (N + 1), c the resamples whose centred |difference|
    exceeds the observed |difference|."""
    import numpy as np
    abs_diff = np.abs(diffs)
    centred = abs_diff - abs_diff.mean()
    return (int(np.sum(centred > abs(observed))) + 1) / (len(centred) + 1)
