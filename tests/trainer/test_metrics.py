"""BLEU and chrF against values sacreBLEU itself produces (its own test suite, test/test_bleu.py
and test/test_chrf.py in github.com/mjpost/sacrebleu, 2.x) and against values derived by hand
from the formulas. Each case says where its expected value comes from."""
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "trainer"))

from headwise_trainer.evaluation.metrics import (  # noqa: E402
    bleu_from_stats, corpus_bleu, corpus_bleu_multi, corpus_chrf, tokenize_13a)


# ---------------------------------------------------------------- 13a tokenisation
@pytest.mark.parametrize("line, expected", [
    # Derived by hand from tokenizer_re.py's rules: punctuation split off...
    ("Hello, world!", "Hello , world !"),
    # ...but a period/comma between digits stays; a dash after a digit is split.
    ("Pi is 3.14, not 1,000.", "Pi is 3.14 , not 1,000 ."),
    ("pages 10-20", "pages 10 - 20"),
    # 13a's language-independent part unescapes these entities and drops <skipped>.
    ("&quot;a&quot; &amp; &lt;b&gt;<skipped>", '" a " & < b >'),
    # The apostrophe (0x27) lies between the ' -&' (0x20-0x26) and '(-+' (0x28-0x2b) ranges,
    # so it is not split off; non-ASCII letters are untouched.
    ("Größe: isn't", "Größe : isn't"),
])
def test_tokenize_13a(line, expected):
    assert tokenize_13a(line) == expected


# ---------------------------------------------------------------- BLEU
_REFS = [
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]
_HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]


def test_bleu_sacrebleu_readme_example():
    # sacreBLEU test_bleu.py test_corpus_bleu_cases: default BLEU = 48.530827 (tol 1e-8).
    assert abs(corpus_bleu_multi(_HYPS, _REFS).score - 48.530827) < 1e-6


def test_bleu_empty_hypotheses_score_zero():
    # sacreBLEU test_corpus_bleu_cases: ('', '', '') -> 0.0.
    assert corpus_bleu_multi(["", "", ""], _REFS).score == 0.0


def test_bleu_statistics_match_sacrebleu():
    # sacreBLEU test_case_statistics: counts [4, 2, 1, 0], totals [6, 5, 4, 3].
    r = corpus_bleu(["am I am a character sequence"], ["I am a symbol string sequence a a"])
    assert r.counts == [4, 2, 1, 0]
    assert r.totals == [6, 5, 4, 3]


def test_bleu_from_stats_matches_sacrebleu():
    # sacreBLEU test_case_scoring: compute_bleu([9,7,5,3], [10,8,6,4], 11, 11) = 0.8375922397.
    r = bleu_from_stats([9, 7, 5, 3], [10, 8, 6, 4], 11, 11)
    assert abs(r.score / 100 - 0.8375922397) < 1e-8


def test_bleu_perfect_match_is_100():
    # By definition: all precisions 1, BP 1.
    assert corpus_bleu(["this is a test"], ["this is a test"]).score == pytest.approx(100.0)


def test_bleu_hand_computed_with_exp_smoothing():
    # Hand count: hyp "the cat sat on the mat", ref "the cat is on the mat" (6 tokens each):
    # 1-grams 5/6, 2-grams 3/5, 3-grams 1/4, 4-grams 0/3 -> exp smoothing 1/(2*3); BP = 1.
    r = corpus_bleu(["the cat sat on the mat"], ["the cat is on the mat"])
    expected = 100 * (5 / 6 * 3 / 5 * 1 / 4 * 1 / 6) ** 0.25
    assert r.score == pytest.approx(expected, abs=1e-9)
    assert r.precisions[3] == pytest.approx(100 / 6)


def test_bleu_brevity_penalty():
    # Hyp 3 tokens ("a b c"), ref 6 tokens: precisions all 100, BP = exp(1 - 6/3) = e^-1.
    r = corpus_bleu(["a b c d"], ["a b c d e f g h"])
    assert r.bp == pytest.approx(math.exp(1 - 8 / 4))
    assert r.score == pytest.approx(100 * math.exp(-1))


def test_bleu_no_match_is_zero():
    # sacreBLEU returns 0 early when no n-gram matches (issue #141).
    assert corpus_bleu(["x y z"], ["a b c"]).score == 0.0


def test_bleu_corpus_is_not_mean_of_sentences():
    # Corpus statistics are summed first: hyp1 = ref1 (4 tokens), hyp2 shares nothing (2 tokens)
    # -> matches/totals: 1-grams 4/(4+2), 2-grams 3/(3+1), 3-grams 2/2, 4-grams 1/1; BP 1.
    # (The mean of the sentence scores would be (100 + 0) / 2 = 50.)
    r = corpus_bleu(["a b c d", "x y"], ["a b c d", "e f"])
    expected = 100 * (4 / 6 * 3 / 4 * 2 / 2 * 1 / 1) ** 0.25
    assert r.score == pytest.approx(expected)


def test_bleu_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="2 hypotheses and 1 references"):
        corpus_bleu(["a", "b"], ["a"])


# ---------------------------------------------------------------- chrF
@pytest.mark.parametrize("hyps, refs, expected", [
    # sacreBLEU test_chrf.py test_cases_effective_order (beta=3, eps_smoothing=False).
    (["a"], ["a"], 100.0),
    ([""], ["reference"], 0.0),
    (["a b c"], ["a b c"], 100.0),
    (["a b c"], ["abc"], 100.0),
    ([""], ["c"], 0.0),
    (["a", "b"], ["a", "c"], 50.0),
    (["aa"], ["ab"], 25.0),
])
def test_chrf_effective_order_sacrebleu(hyps, refs, expected):
    assert corpus_chrf(hyps, refs, beta=3) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("hyps, refs, expected", [
    # sacreBLEU test_chrf.py test_cases (beta=3, eps_smoothing=True), tolerance 1e-4 there.
    (["aa"], ["ab"], 8.3333),
    (["a b c"], ["abc"], 50.0),
    ([" risk assessment must be made of those who are qualified and expertise in the sector - "
      "these are the scientists ."],
     ["risk assessment has to be undertaken by those who are qualified and expert in that area "
      "- that is the scientists ."], 63.361730),
    ([" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "],
     ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."],
     64.1302698),
])
def test_chrf_eps_smoothing_sacrebleu(hyps, refs, expected):
    assert corpus_chrf(hyps, refs, beta=3, eps_smoothing=True) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("hyp, ref, expected", [
    # sacreBLEU test_chrf.py test_sentence_level_chrf (beta=2, eps_smoothing=True).
    ("Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
     "Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře.",
     39.14078509),
    ("Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
     "Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli.",
     57.15704367),
])
def test_chrf_sentence_values_sacrebleu(hyp, ref, expected):
    assert corpus_chrf([hyp], [ref], eps_smoothing=True) == pytest.approx(expected, abs=1e-4)


def test_chrf_default_hand_computed():
    # Default chrF (beta 2, no eps smoothing), hyp "ab", ref "abc" after whitespace removal:
    # order 1: P 2/2, R 2/3; order 2: P 1/1, R 1/2; orders 3..6: the hypothesis has no n-grams
    # -> not counted. avgP = 1, avgR = (2/3 + 1/2)/2 = 7/12; F2 = 5PR / (4P + R).
    p, r = 1.0, 7 / 12
    assert corpus_chrf(["a b"], ["abc"]) == pytest.approx(100 * 5 * p * r / (4 * p + r))


def test_length_bucket_edges():
    from headwise_trainer.data.corpus import length_bucket
    assert length_bucket("Open") == "1-5"
    assert length_bucket("one two three four five") == "1-5"
    assert length_bucket("one two three four five six") == "6-15"
    assert length_bucket(" ".join(["w"] * 15)) == "6-15"
    assert length_bucket(" ".join(["w"] * 16)) == "16-40"
    assert length_bucket(" ".join(["w"] * 40)) == "16-40"
    assert length_bucket(" ".join(["w"] * 41)) == ">40"


def test_scores_by_length_scores_each_bucket_alone():
    from headwise_trainer.evaluation.metrics import corpus_bleu, scores_by_length
    long_src = " ".join(["word"] * 8)
    sources = ["Open the file", long_src, "Close it", long_src]
    refs = ["Datei öffnen", "a b c d e f g h", "Schließen", "i j k l m n o p"]
    hyps = ["Datei öffnen", "a b c d e f g h", "Öffnen", "x y z"]
    got = scores_by_length(sources, hyps, refs)
    assert set(got) == {"1-5", "6-15"}
    assert got["1-5"]["sentences"] == 2 and got["6-15"]["sentences"] == 2
    assert got["1-5"]["bleu"] == round(corpus_bleu(hyps[0::2], refs[0::2]).score, 2)
    assert got["6-15"]["bleu"] == round(corpus_bleu(hyps[1::2], refs[1::2]).score, 2)
    with pytest.raises(ValueError):
        scores_by_length(sources[:3], hyps, refs)


def test_segment_stats_sum_to_the_corpus_bleu():
    from headwise_trainer.evaluation.metrics import bleu_of_stats, bleu_segment_stats
    hyps = ["The cat sat on the mat.", "A dog, barking loudly", "x"]
    refs = ["The cat sat on a mat.", "The dog was barking loudly.", "x y"]
    stats = bleu_segment_stats(hyps, refs)
    summed = [sum(col) for col in zip(*stats)]
    assert bleu_of_stats(summed) == corpus_bleu(hyps, refs).score
    assert stats[2] == [1, 2, 1, 0, 0, 0, 1, 0, 0, 0]


def test_paired_bootstrap_against_a_hand_computation():
    """Three segments, three given resamples; every BLEU computed here by hand from the
    n-gram counts (sacreBLEU's formula: exp smoothing halves the missing counts)."""
    from headwise_trainer.evaluation.metrics import bleu_segment_stats, paired_bootstrap
    refs = ["a b c d", "a c", "x y z w"]
    system = ["a b c d", "a b", "x y z w"]
    control = ["a b c e", "a c", "x y z"]
    s, c = bleu_segment_stats(system, refs), bleu_segment_stats(control, refs)
    assert s == [[4, 4, 4, 3, 2, 1, 4, 3, 2, 1], [2, 2, 1, 0, 0, 0, 2, 1, 0, 0],
                 [4, 4, 4, 3, 2, 1, 4, 3, 2, 1]]
    assert c == [[4, 4, 3, 2, 1, 0, 4, 3, 2, 1], [2, 2, 2, 1, 0, 0, 2, 1, 0, 0],
                 [3, 4, 3, 2, 1, 0, 3, 2, 1, 0]]

    def bleu(precisions, sys_len, ref_len):
        bp = 1.0 if sys_len >= ref_len else math.exp(1 - ref_len / sys_len)
        return bp * math.exp(sum(math.log(p) for p in precisions) / 4)

    # Resample [0, 1, 2] (all segments) and [2, 1, 0] (the same sums).
    s_all = bleu([90, 600 / 7, 100, 100], 10, 10)
    c_all = bleu([800 / 9, 500 / 6, 200 / 3, 100 / 2], 9, 10)  # 4-grams 0/1: 1/(2*1)
    # Resample [0, 0, 2]: the system is perfect; the control's 4-grams 0/2 -> 1/(2*2).
    s_002 = 100.0
    c_002 = bleu([900 / 11, 600 / 8, 300 / 5, 100 / 4], 11, 12)
    got = paired_bootstrap(s, c, indices=[[0, 1, 2], [0, 0, 2], [2, 1, 0]])
    deltas = sorted([s_all - c_all, s_002 - c_002, s_all - c_all])
    assert got["delta"] == pytest.approx(s_all - c_all)
    assert got["delta_mean"] == pytest.approx(sum(deltas) / 3)
    # 3 resamples: 3 // 40 = 0, so the interval is [min, max].
    assert got["delta_low"] == pytest.approx(deltas[0])
    assert got["delta_high"] == pytest.approx(deltas[-1])
    assert got["delta_ci"] == pytest.approx((deltas[-1] - deltas[0]) / 2)
    assert got["system_mean"] == pytest.approx((2 * s_all + s_002) / 3)
    assert got["control_mean"] == pytest.approx((2 * c_all + c_002) / 3)
    # p: centred |d| = |d| - mean|d|; count those above the observed |d|, (c + 1) / (N + 1).
    absd = [abs(s_all - c_all), abs(s_002 - c_002), abs(s_all - c_all)]
    centred = [a - sum(absd) / 3 for a in absd]
    count = sum(x > abs(s_all - c_all) for x in centred)
    assert got["p_value"] == pytest.approx((count + 1) / 4)
    assert got["samples"] == 3


def test_paired_bootstrap_mean_averages_the_seeds_on_shared_resamples():
    """The seed-averaged difference: with one pair it is paired_bootstrap's; with two, each
    resample's difference is the mean of the pairs' differences on the same segments."""
    from headwise_trainer.evaluation.metrics import (bleu_segment_stats, paired_bootstrap,
                                                     paired_bootstrap_mean)
    refs = ["a b c d", "a c", "x y z w"]
    s1 = bleu_segment_stats(["a b c d", "a b", "x y z w"], refs)
    c1 = bleu_segment_stats(["a b c e", "a c", "x y z"], refs)
    s2 = bleu_segment_stats(["a b c d", "a c", "x y z"], refs)
    c2 = bleu_segment_stats(["a b c d", "a c", "x y z w"], refs)
    idx = [[0, 1, 2], [0, 0, 2], [2, 1, 1], [1, 1, 1]]
    one = paired_bootstrap(s1, c1, indices=idx)
    got1 = paired_bootstrap_mean([(s1, c1)], indices=idx)
    for k in ("delta", "delta_mean", "delta_low", "delta_high", "p_value"):
        assert got1[k] == pytest.approx(one[k])
    two = paired_bootstrap(s2, c2, indices=idx)
    got = paired_bootstrap_mean([(s1, c1), (s2, c2)], indices=idx)
    assert got["pairs"] == 2 and got["deltas"] == pytest.approx([one["delta"], two["delta"]])
    assert got["delta"] == pytest.approx((one["delta"] + two["delta"]) / 2)
    assert got["delta_mean"] == pytest.approx((one["delta_mean"] + two["delta_mean"]) / 2)
    # The same resamples in both pairs: the per-resample differences add before sorting, so
    # the interval is not the mean of the two intervals unless they move together.
    per = [0.5 * (a + b) for a, b in zip(_resample_diffs(s1, c1, idx), _resample_diffs(s2, c2, idx))]
    assert got["delta_low"] == pytest.approx(min(per))
    assert got["delta_high"] == pytest.approx(max(per))
    with pytest.raises(ValueError, match="same segments"):
        paired_bootstrap_mean([(s1, c1), (s1[:2], c1[:2])])
    with pytest.raises(ValueError, match="no pair"):
        paired_bootstrap_mean([])


def _resample_diffs(s, c, idx):
    from headwise_trainer.evaluation.metrics import bleu_of_stats
    out = []
    for row in idx:
        a = [sum(s[i][j] for i in row) for j in range(len(s[0]))]
        b = [sum(c[i][j] for i in row) for j in range(len(c[0]))]
        out.append(bleu_of_stats(a) - bleu_of_stats(b))
    return out


def test_bootstrap_indices_are_sacrebleus_draw():
    import numpy as np
    from headwise_trainer.evaluation.metrics import bootstrap_indices
    idx = bootstrap_indices(7, 5)
    want = np.random.default_rng(12345).choice(7, size=(5, 7), replace=True)
    assert idx.shape == (5, 7) and (idx == want).all()
    with pytest.raises(ValueError, match="same non-zero number of segments"):
        from headwise_trainer.evaluation.metrics import paired_bootstrap
        paired_bootstrap([[1] * 10], [[1] * 10, [1] * 10])
