import numpy as np
import pytest
import torch

from conftest import SOURCES, random_model, small_config
from headwise_trainer import attach_gates, beam_search, forced_logits, greedy
from headwise_trainer.model.decode import (BEAM_STOPS, DEFAULT_BEAM_STOP, Sampling, _mix, draw,
                                           sample_key, step_log_probs, uniform)
from headwise_trainer.model.gates import gates
from scripted import ScriptedModel, log_probs, random_table, reference_beam

V, EOS, PAD = 8, 0, 7


def table(entries, default=None):
    """Scripted logits: entries[prefix] -> {token: logit}, all other tokens 0."""
    def fn(key, prefix):
        row = [0.0] * V
        for t, x in entries.get(prefix, default or {}).items():
            row[t] = x
        return row
    return fn


def lp(entries, prefix, token):
    return log_probs(table(entries)(0, prefix), PAD)[token].item()


def test_pad_is_never_produced_even_with_the_highest_logit():
    entries = {(): {PAD: 50.0, 3: 2.0}, (3,): {PAD: 50.0, EOS: 3.0}}
    model = ScriptedModel(table(entries))
    assert greedy(model, [[1, 0]], 5)[0].ids == [3]
    for h in beam_search(model, [[1, 0]], 2, 2, 1.0, 5)[0]:
        assert PAD not in h.ids


def test_greedy_tie_takes_lowest_id_and_score_rules():
    entries = {(): {4: 2.0, 2: 2.0}, (2,): {EOS: 3.0}}
    h = greedy(ScriptedModel(table(entries)), [[1, 0]], 5, length_penalty=0.5)[0]
    assert h.ids == [2] and h.finished
    raw = np.float32(np.float32(lp(entries, (), 2)) + np.float32(lp(entries, (2,), EOS)))
    assert h.score == pytest.approx(float(raw / np.float32(2) ** np.float32(0.5)), abs=1e-7)


def test_greedy_unfinished_at_max_length():
    h = greedy(ScriptedModel(table({}, default={3: 5.0})), [[1, 0]], 4)[0]
    assert h.ids == [3, 3, 3, 3] and not h.finished
    assert h.score == pytest.approx(lp({(): {3: 5.0}}, (), 3), abs=1e-6)  # mean over 4 tokens


def test_beam_keeps_every_walked_eos_and_ranks_by_normalized_score():
    # Step 0: 1 > EOS > 2: hypothesis [] finishes, beams [1], [2].
    # Step 1: both beams rank EOS first, so 3 hypotheses finish (> beam 2) and search ends.
    entries = {(): {1: 4.0, EOS: 3.5, 2: 3.0}, (1,): {EOS: 6.0}, (2,): {EOS: 9.0}}
    hyps = beam_search(ScriptedModel(table(entries)), [[1, 0]], 2, 2, 1.0, 10)[0]
    s_empty = lp(entries, (), EOS)
    s1 = (lp(entries, (), 1) + lp(entries, (1,), EOS)) / 2
    s2 = (lp(entries, (), 2) + lp(entries, (2,), EOS)) / 2
    expected = sorted([([], s_empty), ([1], s1), ([2], s2)], key=lambda x: -x[1])[:2]
    assert [h.ids for h in hyps] == [e[0] for e in expected]
    assert [h.score for h in hyps] == pytest.approx([e[1] for e in expected], abs=1e-6)
    assert all(h.finished for h in hyps)


def test_beam_live_beams_become_unfinished_at_max_length():
    entries = {(): {1: 3.0, 2: 2.5, EOS: -5.0}}
    hyps = beam_search(ScriptedModel(table(entries, default={1: 1.0, EOS: -5.0})),
                       [[1, 0]], 2, 2, 1.0, 2)[0]
    assert [h.finished for h in hyps] == [False, False]
    assert [len(h.ids) for h in hyps] == [2, 2]


def test_beam_tie_break_by_beam_then_token():
    # All logits equal: every candidate ties; the walk must take b=0 first, low ids first.
    model = ScriptedModel(table({}, default={EOS: -20.0}))
    hyps = beam_search(model, [[1, 0]], 3, 3, 1.0, 2)[0]
    assert [h.ids for h in hyps] == [[1, 1], [1, 2], [1, 3]]


@pytest.mark.parametrize("stop", BEAM_STOPS)
@pytest.mark.parametrize("seed", range(12))
def test_beam_matches_plain_reference_on_tie_heavy_tables(seed, stop):
    fn = random_table(seed)
    model = ScriptedModel(fn)
    sources = [[k, 0] for k in range(1, 6)]
    for beam, n, penalty, max_len in [(1, 1, 1.0, 6), (2, 2, 1.0, 5), (3, 2, 0.6, 4), (3, 3, 1.3, 7),
                                      (3, 1, 1.0, 6)]:
        got = beam_search(model, sources, beam, n, penalty, max_len, stop=stop)
        for (key, _), hyps in zip(sources, got):
            ref = reference_beam(fn, key, V, EOS, PAD, beam, n, penalty, max_len, stop)
            assert [(h.ids, h.finished) for h in hyps] == [(r[0], r[2]) for r in ref]
            assert [h.score for h in hyps] == pytest.approx([r[1] for r in ref], abs=1e-6)


def _steps(model, *args, **kwargs):
    """beam_search's results and how many decoder steps it ran."""
    calls = []
    step = model.decode_step
    model.decode_step = lambda *a: calls.append(1) or step(*a)
    try:
        return beam_search(model, *args, **kwargs), len(calls)
    finally:
        del model.decode_step


def test_top_eos_ends_when_the_best_candidate_is_eos():
    # Step 0: EOS > 1 > the rest: [] finishes first, ranked best. top-eos (and outscored, as []
    # beats [1] at length 1) end there; exhaustive continues, and [1] + EOS finishes with a
    # better mean log-probability, the old result.
    entries = {(): {EOS: 5.0, 1: 4.9}, (1,): {EOS: 12.0}}
    fn = table(entries)
    exhaustive, steps_exhaustive = _steps(ScriptedModel(fn), [[1, 0]], 2, 1, 1.0, 6,
                                          stop="exhaustive")
    assert [h.ids for h in exhaustive[0]] == [[1]] and steps_exhaustive == 2
    assert [(h.ids, h.finished) for h in exhaustive[0]] == [
        (r[0], r[2]) for r in reference_beam(fn, 1, V, EOS, PAD, 2, 1, 1.0, 6)]
    for stop in ("top-eos", "outscored"):
        early, steps = _steps(ScriptedModel(fn), [[1, 0]], 2, 1, 1.0, 6, stop=stop)
        assert steps == 1 and [h.ids for h in early[0]] == [[]]
        assert early[0][0].score == pytest.approx(lp(entries, (), EOS), abs=1e-6)


def test_outscored_ends_when_no_live_beam_is_ahead():
    # Step 0: 1 > EOS: [] finishes but is not the best candidate. Step 1: [1] continues over
    # almost flat tokens (EOS unlikely), so the best live beam [1, 3]'s mean falls below []'s
    # score: outscored ends; top-eos and exhaustive continue and [1, 3] + EOS (a certain EOS)
    # finishes with the best mean.
    entries = {(): {1: 5.0, EOS: 4.9}, (1,): {3: 1.0, EOS: -10.0}, (1, 3): {EOS: 15.0}}
    fn = table(entries)
    out, steps = _steps(ScriptedModel(fn), [[1, 0]], 2, 1, 1.0, 6, stop="outscored")
    assert steps == 2 and [h.ids for h in out[0]] == [[]]
    for stop in ("top-eos", "exhaustive"):
        hyps = beam_search(ScriptedModel(fn), [[1, 0]], 2, 1, 1.0, 6, stop=stop)
        assert [h.ids for h in hyps[0]] == [[1, 3]]
        ref = reference_beam(fn, 1, V, EOS, PAD, 2, 1, 1.0, 6, stop)
        assert [(h.ids, h.finished) for h in hyps[0]] == [(r[0], r[2]) for r in ref]


def test_beam_stop_names():
    assert BEAM_STOPS == ("exhaustive", "top-eos", "outscored") and DEFAULT_BEAM_STOP in BEAM_STOPS
    with pytest.raises(ValueError, match="stop must be one of"):
        beam_search(ScriptedModel(table({})), [[1, 0]], 2, 1, 1.0, 3, stop="early")


def test_beam_1_equals_greedy(model):
    attach_gates(model)
    with torch.no_grad():
        for gate in gates(model).values():
            gate.log_alpha.copy_(torch.linspace(-1, 2, gate.log_alpha.numel()))
    g = greedy(model, SOURCES, 15)
    b = beam_search(model, SOURCES, 1, 1, 1.0, 15)
    assert [h.ids for h in g] == [hs[0].ids for hs in b]
    assert [h.finished for h in g] == [hs[0].finished for hs in b]
    assert [h.score for h in g] == pytest.approx([hs[0].score for hs in b], abs=1e-6)


def test_batched_equals_one_by_one():
    model = random_model(small_config(activation_function="gelu"), seed=7)
    with torch.no_grad():
        model.final_logits_bias[0, 0] += 2.0  # some hypotheses finish early
    together = beam_search(model, SOURCES, 3, 3, 0.8, 10)
    alone = [beam_search(model, [s], 3, 3, 0.8, 10)[0] for s in SOURCES]
    assert [[h.ids for h in hs] for hs in together] == [[h.ids for h in hs] for hs in alone]
    for hs_t, hs_a in zip(together, alone):
        assert [h.score for h in hs_t] == pytest.approx([h.score for h in hs_a], abs=1e-5)


def test_forced_logits_equal_incremental_steps(model):
    src, tgt = SOURCES[0], [3, 4, 59, 0, 5]
    forced = forced_logits(model, src, tgt)
    assert forced.shape == (len(tgt) + 1, 60)
    with torch.no_grad():
        ids = torch.tensor([src])
        state = model.init_decoder_state(model.encode(ids), None)
        for t, token in enumerate([59] + tgt):
            logits, state = model.decode_step(torch.tensor([token]), state)
            assert torch.allclose(logits[0], forced[t], atol=1e-5)
    assert torch.isfinite(forced[:, 59]).all()  # PAD not masked in forced logits


def test_scores_are_sums_of_forced_log_probs(model):
    """A beam hypothesis' score can be recomputed from teacher-forced logits."""
    for src, hyps in zip(SOURCES, beam_search(model, SOURCES, 3, 3, 1.0, 8)):
        for h in hyps:
            target = h.ids + ([0] if h.finished else [])
            logits = forced_logits(model, src, target)[:-1]
            logp = step_log_probs(model, logits)
            total = logp[torch.arange(len(target)), torch.tensor(target)].sum()
            assert h.score == pytest.approx(float(total) / len(target), abs=1e-4)


def test_margins_and_argument_errors(model):
    margins = []
    greedy(model, SOURCES, 5, margins=margins)
    assert len(margins) == len(SOURCES) and all(m > 0 for m in margins)
    with pytest.raises(ValueError, match="1 <= num_hypotheses <= beam"):
        beam_search(model, SOURCES, 2, 3, 1.0, 5)
    with pytest.raises(ValueError, match="id 60 outside the vocabulary"):
        greedy(model, [[60, 0]], 5)
    with pytest.raises(ValueError, match="source 0 is empty"):
        greedy(model, [[]], 5)
    with pytest.raises(ValueError, match="exceeds max_position_embeddings 64"):
        greedy(model, SOURCES, 65)


def test_prefix_of_the_own_greedy_output_changes_nothing(model):
    """Forcing the ids greedy picks anyway gives the same hypotheses and scores. (Not so for
    beam search: its forced steps keep one beam where the free search keeps several, so the
    beams that compete afterwards differ.)"""
    plain = greedy(model, SOURCES, 10)
    for k in (1, 3):
        forced = greedy(model, SOURCES, 10, prefixes=[h.ids[:k] for h in plain])
        assert [h.ids for h in forced] == [h.ids for h in plain]
        assert [h.score for h in forced] == [h.score for h in plain]


def test_prefixed_hypotheses_start_with_the_prefix_and_score_it(model):
    prefixes = [[3, 4], [], [5], [6, 6, 6]][:len(SOURCES)]
    prefixes += [[]] * (len(SOURCES) - len(prefixes))
    for hyps in ([[h] for h in greedy(model, SOURCES, 8, prefixes=prefixes)],
                 beam_search(model, SOURCES, 3, 2, 1.0, 8, prefixes=prefixes)):
        for src, prefix, hs in zip(SOURCES, prefixes, hyps):
            for h in hs:
                assert h.ids[:len(prefix)] == prefix
                target = h.ids + ([0] if h.finished else [])
                logp = step_log_probs(model, forced_logits(model, src, target)[:-1])
                total = logp[torch.arange(len(target)), torch.tensor(target)].sum()
                assert h.score == pytest.approx(float(total) / len(target), abs=1e-4)
    # A prefix as long as max_len is returned unfinished.
    h = greedy(model, SOURCES[:1], 3, prefixes=[[3, 4, 5]])[0]
    assert h.ids == [3, 4, 5] and not h.finished


def test_prefix_errors(model):
    with pytest.raises(ValueError, match="1 prefixes for"):
        greedy(model, SOURCES, 5, prefixes=[[3]])
    with pytest.raises(ValueError, match="more than max_len 2"):
        greedy(model, SOURCES[:1], 2, prefixes=[[3, 4, 5]])
    with pytest.raises(ValueError, match="PAD or EOS"):
        beam_search(model, SOURCES[:1], 2, 1, 1.0, 5, prefixes=[[3, 0]])


def test_uniform_numbers_are_splitmix64():
    # SplitMix64 seeded with 1234567: its published first outputs.
    assert _mix(1234567) == 6457827717110365317
    assert _mix((1234567 + 0x9E3779B97F4A7C15) % 2 ** 64) == 3203168211198807973
    key = sample_key(7, [5, 9, 2])
    assert key == _mix(_mix(_mix(_mix(7) ^ 5) ^ 9) ^ 2)
    assert uniform(key, 4) == (_mix(key + 4) >> 11) / 2.0 ** 53
    assert sample_key(7, [5, 9]) != key and sample_key(8, [5, 9, 2]) != key


def test_draw_rules():
    x = np.array([1.0, 2.5, -np.inf, 0.0, 2.0, np.nan, 1.5], dtype=np.float32)
    # u = 0 takes the first candidate of the order: id order, or logit order when cut.
    assert draw(x, Sampling(), -1, 0.0, 99)[0] == 0
    assert draw(x, Sampling(top_k=3), -1, 0.0, 99)[0] == 1
    assert draw(x, Sampling(top_k=3), 1, 0.0, 99)[0] == 4  # id 1 left out
    assert draw(x, Sampling(top_p=1e-6), -1, 0.99, 99)[0] == 1  # the nucleus of one
    assert draw(x, Sampling(top_k=2), -1, np.nextafter(1.0, 0.0), 99)[0] == 4
    assert draw(np.full(4, -np.inf, dtype=np.float32), Sampling(), -1, 0.5, 99)[0] == 99
    # Frequencies over many numbers follow softmax(x / T) over the top 3.
    rule = Sampling(top_k=3, temperature=0.5)
    key = sample_key(11, [1, 2, 3])
    counts = np.zeros(len(x))
    for step in range(20000):
        counts[draw(x, rule, -1, uniform(key, step), 99)[0]] += 1
    p = np.zeros(len(x))
    for v in (1, 4, 6):
        p[v] = np.exp(x[v] / 0.5)
    p /= p.sum()
    assert np.abs(counts / 20000 - p).max() < 0.015
    with pytest.raises(ValueError, match="top_p must be in"):
        Sampling(top_p=0.0)
    with pytest.raises(ValueError, match="temperature must be finite"):
        Sampling(temperature=0.0)
    with pytest.raises(ValueError, match="top_k must be >= 0"):
        Sampling(top_k=-1)


def test_sampling_depends_on_seed_and_source_only(model):
    rule = Sampling(seed=3, temperature=1.5)
    together = greedy(model, SOURCES, 10, sampling=rule)
    alone = [greedy(model, [s], 10, sampling=rule)[0] for s in SOURCES]
    assert [h.ids for h in together] == [h.ids for h in alone]
    assert [h.ids for h in greedy(model, SOURCES, 10, sampling=rule)] == [h.ids for h in together]
    seeds = {tuple(greedy(model, SOURCES[:1], 10, sampling=Sampling(seed=s, temperature=1.5))[0].ids)
             for s in range(12)}
    assert len(seeds) >= 3
    # top_k 1 is greedy; scores are the model's log-probabilities of the drawn ids.
    plain = greedy(model, SOURCES, 10)
    top1 = greedy(model, SOURCES, 10, sampling=Sampling(seed=5, top_k=1, temperature=0.3))
    assert [h.ids for h in top1] == [h.ids for h in plain]
    assert [h.score for h in top1] == [h.score for h in plain]
    for src, h in zip(SOURCES, together):
        target = h.ids + ([0] if h.finished else [])
        logp = step_log_probs(model, forced_logits(model, src, target)[:-1])
        total = logp[torch.arange(len(target)), torch.tensor(target)].sum()
        assert h.score == pytest.approx(float(total) / len(target), abs=1e-4)


def test_min_len_holds_eos_back_and_keeps_the_models_scores():
    # EOS is the best id at every step; min_len 2 passes it over twice.
    entries = {(): {EOS: 5.0, 3: 2.0, 4: 1.0}, (3,): {EOS: 5.0, 4: 3.0}, (3, 4): {EOS: 5.0}}
    model = ScriptedModel(table(entries))
    h = greedy(model, [[1, 0]], 6, min_len=2)[0]
    assert h.ids == [3, 4] and h.finished
    raw = np.float32(lp(entries, (), 3)) + np.float32(lp(entries, (3,), 4)) + \
        np.float32(lp(entries, (3, 4), EOS))
    assert h.score == pytest.approx(float(raw) / 3, abs=1e-6)
    assert greedy(model, [[1, 0]], 6)[0].ids == []
    for hyp in beam_search(model, [[1, 0]], 2, 2, 1.0, 6, min_len=2)[0]:
        assert len(hyp.ids) >= 2
    drawn = greedy(model, [[1, 0]], 6, min_len=2, sampling=Sampling(seed=1))[0]
    assert len(drawn.ids) >= 2
    with pytest.raises(ValueError, match=r"min_len must be in \[0, max_len = 6\)"):
        greedy(model, [[1, 0]], 6, min_len=6)
    with pytest.raises(ValueError, match="min_len must be in"):
        beam_search(model, [[1, 0]], 2, 1, 1.0, 6, min_len=-1)


def test_shortlist_lists_restrict_and_renormalise_per_source():
    # Two sources in one batch with different lists: each produces only its own list's ids, its
    # log-probabilities are normalised over its list, and a list holding every id changes
    # nothing.
    entries = {(): {3: 5.0, 4: 4.0, 5: 1.0}, (3,): {EOS: 6.0}, (4,): {EOS: 6.0},
               (5,): {EOS: 6.0}}
    model = ScriptedModel(table(entries))
    sources = [[1, 0], [2, 0]]
    lists = [[EOS, 4, 5, 6], [EOS, 1, 2, 3]]
    got = greedy(model, sources, 5, allowed=lists)
    assert [h.ids for h in got] == [[4], [3]]

    def listed(prefix, token):  # log-probability over list 0 only (PAD is not in it)
        row = torch.tensor(table(entries)(0, prefix), dtype=torch.float32)
        outside = torch.ones(V, dtype=torch.bool)
        outside[lists[0]] = False
        row[outside] = float("-inf")
        return torch.log_softmax(row, dim=-1)[token]

    want = listed((), 4) + listed((4,), EOS)
    assert got[0].raw_score == pytest.approx(want.item(), abs=1e-6)
    assert got[0].raw_score > lp(entries, (), 4) + lp(entries, (4,), EOS)  # fewer terms summed
    every = [list(range(V))] * 2
    assert [h.ids for h in greedy(model, sources, 5, allowed=every)] == \
        [h.ids for h in greedy(model, sources, 5)]
    for beam_hyps, unrestricted in zip(beam_search(model, sources, 2, 2, 1.0, 5, allowed=every),
                                       beam_search(model, sources, 2, 2, 1.0, 5)):
        assert [(h.ids, h.score) for h in beam_hyps] == [(h.ids, h.score) for h in unrestricted]
    for hyps, lst in zip(beam_search(model, sources, 1, 1, 1.0, 5, allowed=lists), lists):
        assert all(i in lst for h in hyps for i in h.ids)


def test_shortlist_lists_are_checked():
    model = ScriptedModel(table({}))
    with pytest.raises(ValueError, match="lacks EOS"):
        greedy(model, [[1, 0]], 3, allowed=[[1, 2, 3, 4]])
    with pytest.raises(ValueError, match="2 shortlist lists for 1 sources"):
        greedy(model, [[1, 0]], 3, allowed=[[EOS, 1, 2], [EOS, 1, 2]])
    with pytest.raises(ValueError, match="more than 2 \\* beam"):
        beam_search(model, [[1, 0]], 2, 1, 1.0, 3, allowed=[[EOS, 1, 2, PAD]])
