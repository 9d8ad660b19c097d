"""Head statistics on hand-made attention weights: confidence (EOS queries excluded), positional
offsets (self-attention only), rare-word hits, the CoNLL-U reader (text rebuilt from forms,
SpaceAfter=No, multi-word tokens, dobj -> obj, subtypes, empty nodes), words -> first subwords,
syntactic accuracy against the most-frequent-offset baseline; Michel scores on a model where one
head carries the signal; ranking comparison (Spearman with ties, top-K overlap) per attention
type."""
import os
from types import SimpleNamespace

import pytest
import torch

from conftest import SOURCES, random_model, small_config
from headwise_trainer.analysis import compare, conllu, lrp, michel, stats

SAMPLE = os.path.join(os.path.dirname(__file__), "data", "analysis_sample.conllu")


def one_hot(argmax, size, weight):
    """[B, H, T, S] weights: ``weight`` on argmax[b][h][t], the rest spread evenly."""
    a = torch.as_tensor(argmax)
    w = torch.as_tensor(weight, dtype=torch.float32).expand(a.shape)
    p = ((1.0 - w) / (size - 1))[..., None].expand(*a.shape, size).clone()
    p.scatter_(-1, a[..., None], w[..., None].clone())
    return p


def test_confidence_and_positional_on_known_weights():
    # One sentence of 5 tokens, the last is EOS (queries 0-3 count). Head 0 looks one token
    # ahead with weight 0.95; head 1 always looks at token 0 with weight 0.4.
    probs = one_hot([[[1, 2, 3, 4, 0], [0, 0, 0, 0, 0]]], 5, torch.tensor([[[0.95], [0.4]]]))
    queries = torch.tensor([[True, True, True, True, False]])
    st = stats.BlockStats("encoder_self", 2)
    st.update(probs, queries)
    assert st.confidence() == pytest.approx([0.95, 0.4])
    pos = st.positional()
    assert pos[0] == {"offset": 1, "fraction": 1.0}
    assert pos[1]["offset"] == 0 and pos[1]["fraction"] == pytest.approx(0.25)  # tie -> 0
    cross = stats.BlockStats("decoder_cross", 2)
    cross.update(probs, queries)
    assert cross.positional() == [None, None] and cross.rare_word() == [None, None]


def test_attention_sinks_share_of_mass_on_the_first_token_and_eos():
    # Two sentences of 4 keys; sentence 2 is padded (its EOS at key 2, key 3 is padding).
    # Head 0 puts 0.6 on key 0 and 0.1 on each other key; head 1 0.7 on key 1, 0.1 elsewhere.
    probs = one_hot([[[0, 0, 0, 0], [1, 1, 1, 1]]] * 2, 4, torch.tensor([[[0.7], [0.7]]]))
    probs[:, 0] = torch.tensor([0.6, 0.1, 0.1, 0.2])  # head 0, every query
    eos = torch.tensor([[False, False, False, True], [False, False, True, False]])
    queries = torch.tensor([[True, True, True, False], [True, True, False, False]])
    st = stats.BlockStats("decoder_cross", 2)
    st.update(probs, queries, eos_keys=eos)
    # Head 0: first 0.6; EOS 0.2 (sentence 1) and 0.1 (sentence 2), over 3 + 2 queries.
    # Head 1: first 0.1; EOS 0.1 in both.
    s = st.sink()
    assert s["first"] == pytest.approx([0.6, 0.1])
    assert s["eos"] == pytest.approx([(3 * 0.2 + 2 * 0.1) / 5, 0.1])
    assert s["share"] == pytest.approx([0.6 + (3 * 0.2 + 2 * 0.1) / 5, 0.2])
    # Without EOS keys (decoder self-attention) the share is the first key's alone.
    dec = stats.BlockStats("decoder_self", 2)
    dec.update(probs, queries)
    assert dec.sink()["share"] == pytest.approx(dec.sink()["first"]) and \
        dec.sink()["eos"] == [0.0, 0.0]


def test_rare_word_hits_the_least_frequent_token():
    freq = torch.tensor([0, 900, 5, 700, 3, 3, 800])   # id 0 = EOS
    ranks = stats.frequency_ranks(freq)
    assert ranks.tolist() == [6, 0, 3, 2, 4, 5, 1]
    ids = torch.tensor([[1, 4, 3, 0], [1, 3, 6, 0]])
    keys = ids != 0
    rare, ok = stats.rarest_tokens(ids, keys, freq, ranks, min_rank=3)
    assert rare.tolist() == [[False, True, False, False], [False, True, False, False]]
    assert ok.tolist() == [True, False]          # sentence 2's rarest (id 3) has rank 2 < 3
    # head 0 always attends to key 1 (the rarest in sentence 1), head 1 to key 0
    probs = one_hot([[[1, 1, 1, 1], [0, 0, 0, 0]]] * 2, 4, 0.7)
    st = stats.BlockStats("encoder_self", 2)
    st.update(probs, keys, rare, ok)
    assert st.rare_word() == [1.0, 0.0] and st.rare_n == 3 and st.rare_sentences == 1


def test_read_conllu():
    sents = conllu.read_conllu(SAMPLE)
    assert len(sents) == 6
    assert sents[0].text == "The old man reads a long book quickly."
    assert sents[5].text == "Close the window now."                 # rebuilt from forms
    mwt = sents[3]
    assert [w.index for w in mwt.words] == [1, 2, 3, 4, 5, 6, 7]
    assert mwt.words[1].token == (2, 3) and mwt.words[1].form == "can't"
    assert len(sents[2].words) == 8                                 # empty node 8.1 skipped
    assert conllu.relation("dobj") == "obj" and conllu.relation("nsubj:pass") == "nsubj"
    assert conllu.relation("det") is None


def test_bad_conllu_names_the_line(tmp_path):
    bad = tmp_path / "bad.conllu"
    bad.write_text("# text = a b\n1\ta\ta\n", encoding="utf-8")
    with pytest.raises(conllu.ConlluError, match=r"bad.conllu:2: expected 10"):
        conllu.read_conllu(str(bad))


class ChunkPieces:
    """A stand-in SentencePiece: whitespace words cut into pieces of <= 3 characters; the first
    piece of a word carries the space before it, as SentencePiece's offsets do."""

    def encode(self, text, out_type):
        pieces, i = [], 0
        for word in text.split(" "):
            for k in range(0, len(word), 3):
                begin = i + k - (1 if k == 0 and i > 0 else 0)
                pieces.append(SimpleNamespace(piece=("▁" if k == 0 else "") + word[k:k + 3],
                                              begin=begin, end=i + min(k + 3, len(word))))
            i += len(word) + 1
        return SimpleNamespace(pieces=pieces)


def fake_vocab():
    ids = {}
    return SimpleNamespace(source=ChunkPieces(), piece_to_id=ids, unk_id=1, eos_id=0)


def test_words_map_to_their_first_subword():
    sents = conllu.read_conllu(SAMPLE)
    a = conllu.to_subwords(sents[0], fake_vocab())
    # ▁The ▁old ▁man ▁re ads ▁a ▁lon g ▁boo k ▁qui ckl y.  + EOS
    assert len(a.ids) == 14 and a.ids[-1] == 0
    assert a.arcs == [("amod", 1, 2), ("nsubj", 2, 3), ("amod", 6, 8), ("obj", 8, 3),
                      ("advmod", 10, 3)]
    b = conllu.to_subwords(sents[3], fake_vocab())
    # ▁We ▁can 't ▁sav e ▁big ▁fil es.: ca and n't share "can't" -> 1
    assert b.arcs == [("nsubj", 0, 3), ("advmod", 1, 3), ("amod", 5, 6), ("obj", 6, 3)]
    assert conllu.to_subwords(sents[1], fake_vocab()).arcs[1][0] == "obj"   # dobj


def test_syntactic_accuracy_against_the_offset_baseline():
    arcs = [conllu.Arcs([5] * 5 + [0], [("amod", 1, 2)]),
            conllu.Arcs([5] * 5 + [0], [("amod", 0, 1), ("amod", 3, 1)])]
    # head 0: every dependent looks at its head; heads look at 1 (A) / 0 (B)
    # head 1: always the next token
    head0 = [[0, 2, 1, 0, 0, 0], [1, 0, 0, 1, 0, 0]]
    head1 = [[1, 2, 3, 4, 5, 5]] * 2
    probs = one_hot([[head0[b], head1[b]] for b in range(2)], 6, 0.9)
    syn = conllu.SyntacticStats({"enc0": 2})
    syn.update("enc0", probs, arcs)
    res, roles = syn.result("enc0", min_instances=3)
    d2h, h2d = res[0]["amod:dep->head"], res[0]["amod:head->dep"]
    assert d2h == {"accuracy": 1.0, "baseline": pytest.approx(2 / 3), "count": 3}
    assert h2d["accuracy"] == pytest.approx(2 / 3) and h2d["baseline"] == pytest.approx(2 / 3)
    assert res[1]["amod:dep->head"]["accuracy"] == pytest.approx(2 / 3)
    assert roles == [["syntactic:amod"], []]
    assert syn.result("enc0", min_instances=4)[1] == [[], []]      # too few instances


def test_michel_scores_single_carrier_head_and_normalisation():
    model = random_model(small_config())
    with torch.no_grad():   # encoder layer 0: only head 2 reaches out_proj
        attn = model.model.encoder.layers[0].self_attn
        for h in (0, 1, 3):
            attn.out_proj.weight[:, h * attn.head_dim:(h + 1) * attn.head_dim] = 0
    batch = lrp.Batch.make(model, SOURCES, [[3, 4, 0], [7, 0], [9, 9, 0], [2, 0]])
    acc = michel.michel_importance(model, batch)
    scores = acc.normalised()
    assert scores["model.encoder.layers.0.self_attn"] == pytest.approx([0, 0, 1, 0], abs=1e-9)
    for name, v in scores.items():
        assert sum(x * x for x in v) == pytest.approx(1.0)
    again = michel.michel_importance(model, batch).normalised()
    assert again == scores


def test_spearman_and_top_overlap_of_two_rankings():
    assert compare.ranks([0.3, 0.1, 0.3, 0.2]) == [2.5, 0.0, 2.5, 1.0]
    assert compare.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert compare.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # d = rank differences (0, 0, 1, -1): 1 - 6 * 2 / (4 * 15) = 0.8 (no ties)
    assert compare.spearman([1, 2, 3, 4], [1, 2, 4, 3]) == pytest.approx(0.8)
    assert compare.spearman([1, 1, 1], [1, 2, 3]) is None
    assert compare.top_overlap([4, 3, 2, 1], [1, 3, 4, 2], 2) == 1

    def doc(values):
        return {"blocks": [{"kind": kind, "name": f"{kind}.{layer}", "heads": [
            {"head": h, "relevance": v} for h, v in enumerate(values[kind][layer])]}
            for kind in values for layer in range(len(values[kind]))]}
    a = doc({"encoder_self": [[0.1, 0.9], [0.6, 0.4]], "decoder_cross": [[0.5, 0.5]]})
    b = doc({"encoder_self": [[0.2, 0.8], [0.7, 0.3]], "decoder_cross": [[0.5, 0.5]]})
    got = compare.compare(a, "relevance", b, "relevance", k=2)
    assert got["encoder_self"] == {"heads": 4, "spearman": pytest.approx(1.0), "top2_overlap": 2}
    assert got["decoder_cross"]["spearman"] is None and "decoder_self" not in got
    with pytest.raises(ValueError, match="no 'michel'"):
        compare.compare(a, "michel", b, "relevance")


def test_a_head_forced_onto_the_first_source_token_has_sink_share_one():
    # Encoder layer 0 sees token embeddings * scale + sinusoidal positions; with the embeddings'
    # cosine half zeroed, that half is the position's cosines alone, which sum to the most at
    # position 0. Head 0's query is a constant and its keys read that sum times 50, so its
    # attention lands on the first token (the next position's score is lower by > 100). The
    # other heads keep their random weights.
    from headwise_trainer.analysis import pipeline, report
    config = small_config()
    model = random_model(config)
    d, dh = config.d_model, config.d_model // config.encoder_attention_heads
    attn = model.model.encoder.layers[0].self_attn
    with torch.no_grad():
        model.model.shared.weight[:, d // 2:] = 0.0
        attn.q_proj.weight[:dh] = 0.0
        attn.q_proj.bias[:dh] = 1.0
        attn.k_proj.weight[:dh] = 0.0
        attn.k_proj.weight[:dh, d // 2:] = 50.0
        attn.k_proj.bias[:dh] = 0.0
    res = pipeline.analyse(model, SOURCES, [[5, 0], [6, 7, 0], [8, 0], [9, 0]],
                           pipeline.Options(batch_size=3), log=lambda *_: None)
    sink = res.blocks["model.encoder.layers.0.self_attn"].sink()
    assert sink["share"][0] == pytest.approx(1.0, abs=1e-6)
    assert sink["first"][0] == pytest.approx(1.0, abs=1e-6)
    assert max(sink["share"][1:]) < 0.9
    doc = report.build(model, res, "attnlrp", {}, {}, report.default_thresholds(500, 10))
    heads = next(b for b in doc["blocks"] if b["kind"] == "encoder_self" and b["layer"] == 0)
    assert heads["heads"][0]["sink"] == pytest.approx(1.0, abs=1e-6)
    assert heads["heads"][1]["sink"] == pytest.approx(sink["share"][1], abs=1e-6)
