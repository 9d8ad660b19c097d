"""Head relevance by LRP: the recording forward computes the model's logits; relevance is
conserved layer by layer (AttnLRP: up to the softmax rule's absorption, which is accounted
for, on a bias-free model; z-rule: exactly, biases included); the softmax rule is the one
stated; one head carrying all the signal gets all the relevance; closed heads get none; two
runs agree bit for bit."""
import torch
import pytest

from conftest import SOURCES, random_model, small_config
from headwise_trainer.analysis import forward, lrp
from headwise_trainer.gates import attach_gates, gates

torch.set_num_threads(1)

TARGETS = [[3, 4, 0], [7, 0], [9, 9, 9, 9, 0], [2, 0]]


def batch(model):
    return lrp.Batch.make(model, SOURCES, TARGETS)


def zero_biases(model):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.zero_()
        model.final_logits_bias.zero_()
    return model


@pytest.mark.parametrize("rule", [None, "attnlrp", "z"])
def test_recording_forward_computes_the_model_logits(rule):
    model = random_model(small_config())
    attach_gates(model)
    with torch.no_grad():
        gates(model)["model.encoder.layers.1.self_attn"].log_alpha[1] = -2.0
    b = batch(model)
    ref = model(b.input_ids, b.attention_mask, b.decoder_input_ids, b.decoder_mask)
    trace = forward.run(model, b.input_ids, b.attention_mask, b.decoder_input_ids,
                        b.decoder_mask, rule)
    assert torch.allclose(model.logits(trace.hidden), ref, atol=1e-4)
    top = forward.target_logits(model, trace.hidden, b.targets, rule)
    assert torch.allclose(top, ref.gather(2, b.targets[..., None])[..., 0], atol=1e-4)
    assert [(x.kind, x.layer) for x in trace.blocks] == \
        [(k, i) for _, k, i, _ in model.attention_blocks()]


def relevances(model, rule, position):
    """Summed relevance of every recorded tensor for the position-``position`` targets."""
    b = batch(model)
    with lrp.frozen(model):
        tr = forward.run(model, b.input_ids, b.attention_mask, b.decoder_input_ids,
                         b.decoder_mask, rule)
        rows = b.decoder_mask.bool()[:, position]
        top = forward.target_logits(model, tr.hidden, b.targets, rule)[rows, position].sum()
        groups = {"enc": tr.encoder_states, "dec": tr.decoder_states, "mem": tr.memories,
                  "probs": [x.probs for x in tr.blocks], "scores": [x.scores for x in tr.blocks]}
        flat = [t for ts in groups.values() for t in ts]
        grads = torch.autograd.grad(top, flat, allow_unused=True)
    sums, i = {}, 0
    for key, ts in groups.items():
        sums[key] = []
        for t in ts:
            g = grads[i]
            sums[key].append(0.0 if g is None else float((t * g).double().sum()))
            i += 1
    absorbed = {(x.kind, x.layer): p - s for x, p, s in
                zip(tr.blocks, sums["probs"], sums["scores"])}
    return float(top), sums, absorbed, tr


def check_conservation(model, rule, position, rtol):
    top, r, absorbed, tr = relevances(model, rule, position)
    scale = max(abs(v) for vs in (r["enc"], r["dec"], r["mem"]) for v in vs)
    tol = rtol * max(scale, abs(top))
    assert abs(r["dec"][-1] - top) <= tol                    # output projection
    for i in range(len(r["mem"])):                           # decoder layers
        incoming = r["dec"][i] + r["mem"][i] + absorbed[("decoder_self", i)] \
            + absorbed[("decoder_cross", i)]
        assert abs(r["dec"][i + 1] - incoming) <= tol, (i, r)
    assert abs(sum(r["mem"]) - r["enc"][-1]) <= tol          # encoder output, all cross blocks
    for i in range(len(r["enc"]) - 1):                       # encoder layers
        incoming = r["enc"][i] + absorbed[("encoder_self", i)]
        assert abs(r["enc"][i + 1] - incoming) <= tol, (i, r)
    return absorbed


@pytest.mark.parametrize("position", [0, 2])
def test_attnlrp_is_conservative_layer_by_layer(position):
    # Bias-free, so only the softmax rule (and epsilon 1e-6) keeps relevance; tolerance 1e-4.
    absorbed = check_conservation(zero_biases(random_model(small_config())), "attnlrp",
                                  position, 1e-4)
    assert any(abs(v) > 1e-3 for v in absorbed.values())  # the Q/K path does get relevance


@pytest.mark.parametrize("position", [0, 2])
def test_z_rule_is_conservative_with_biases(position):
    # Biases are excluded from the weight ratios and attention weights are constants: nothing
    # is absorbed. Tolerance 1e-2 of the largest layer total: the z-rule divides by sums of
    # contributions that can nearly cancel (its known instability; stabiliser 1e-6).
    absorbed = check_conservation(random_model(small_config()), "z", position, 1e-2)
    assert all(v == 0.0 for v in absorbed.values())


def test_attnlrp_softmax_rule():
    model = random_model(small_config())
    b = batch(model)
    with lrp.frozen(model):
        tr = forward.run(model, b.input_ids, b.attention_mask, b.decoder_input_ids,
                         b.decoder_mask, "attnlrp")
        top = forward.target_logits(model, tr.hidden, b.targets, "attnlrp")[:, 0].sum()
        blk = tr.block("encoder_self", 1)
        gp, gs = torch.autograd.grad(top, [blk.probs, blk.scores])
    r_out = blk.probs * gp
    expected = blk.scores * (r_out - blk.probs * r_out.sum(-1, keepdim=True))
    keys = b.attention_mask.bool()[:, None, None, :].expand_as(expected)
    assert torch.allclose((blk.scores * gs)[keys], expected[keys], atol=1e-5)


def single_head_model(carrier):
    """Every block's heads except ``carrier(kind, layer)`` have zero value and out_proj weights."""
    model = random_model(small_config())
    with torch.no_grad():
        for _, kind, layer, attn in model.attention_blocks():
            keep = carrier(kind, layer)
            for h in range(attn.num_heads):
                if h == keep:
                    continue
                s = slice(h * attn.head_dim, (h + 1) * attn.head_dim)
                attn.v_proj.weight[s] = 0
                attn.v_proj.bias[s] = 0
                attn.out_proj.weight[:, s] = 0
    return model


@pytest.mark.parametrize("rule", ["attnlrp", "z"])
def test_the_head_that_carries_the_signal_gets_the_relevance(rule):
    kinds = {"encoder_self": 0, "decoder_self": 1, "decoder_cross": 2}
    carrier = lambda kind, layer: (kinds[kind] + layer + 1) % 2  # noqa: E731  (2 or 4 heads)
    model = single_head_model(carrier)
    acc = lrp.head_relevance(model, batch(model), rule)
    assert acc.predictions == sum(len(t) for t in TARGETS)
    means = acc.mean()
    for name, kind, layer, attn in model.attention_blocks():
        expected = [1.0 if h == carrier(kind, layer) else 0.0 for h in range(attn.num_heads)]
        assert means[name] == pytest.approx(expected, abs=1e-6), name


def test_closed_heads_get_no_relevance_and_open_ones_share_one():
    model = random_model(small_config())
    attach_gates(model)
    with torch.no_grad():
        gates(model)["model.encoder.layers.0.self_attn"].log_alpha[[0, 2]] = -1.0
        gates(model)["model.decoder.layers.1.encoder_attn"].log_alpha[:] = -1.0
    means = lrp.head_relevance(model, batch(model), "attnlrp").mean()
    assert means["model.encoder.layers.0.self_attn"][0] == 0.0
    assert means["model.encoder.layers.0.self_attn"][2] == 0.0
    assert means["model.decoder.layers.1.encoder_attn"] == [0.0, 0.0]
    for name, values in means.items():
        if name != "model.decoder.layers.1.encoder_attn":
            assert sum(values) == pytest.approx(1.0, abs=1e-9), name
            assert all(v > 0 for i, v in enumerate(values)
                       if not (name.endswith("encoder.layers.0.self_attn") and i in (0, 2)))


def test_relevance_is_deterministic():
    model = random_model(small_config())
    a = lrp.head_relevance(model, batch(model), "attnlrp")
    b = lrp.head_relevance(model, batch(model), "attnlrp")
    assert a.mean() == b.mean() and a.signed_mean() == b.signed_mean()


@pytest.mark.parametrize("rule", ["attnlrp", "z"])
def test_a_sentence_gets_the_same_relevance_alone_or_in_a_padded_batch(rule):
    # One backward pass per position serves the whole batch only if sentences stay independent
    # (padding masked, per-sentence sums): the batch total equals the sum of solo runs.
    model = random_model(small_config())
    together = lrp.head_relevance(model, batch(model), rule)
    alone = lrp.RelevanceSum()
    for s, t in zip(SOURCES, TARGETS):
        lrp.head_relevance(model, lrp.Batch.make(model, [s], [t]), rule, alone)
    # float32 rounding differs between batch shapes; a padding leak would be far larger
    assert together.predictions == alone.predictions
    for name in together.abs_sum:
        diff = (together.abs_sum[name] - alone.abs_sum[name]).abs().max()
        sdiff = (together.signed_sum[name] - alone.signed_sum[name]).abs().max()
        assert max(diff, sdiff) < 1e-3 * together.predictions, (name, diff, sdiff)
