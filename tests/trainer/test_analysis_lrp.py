"""Head relevance by LRP: the recording forward computes the model's logits; relevance is
conserved layer by layer, biases included, to float rounding once what each rule keeps is
counted (the stabilised weighted sums' share, AttnLRP's softmax rule), in float32 and float64,
for several models and positions; the z-rule's stabiliser bounds the relevance through a
LayerNorm whose output is almost all bias; the softmax rule is the one stated; one head
carrying all the signal gets all the relevance; closed heads get none; two runs agree bit for
bit."""
import torch
import pytest

from conftest import SOURCES, random_model, small_config
from headwise_trainer.analysis import forward, lrp, rules, stabiliser
from headwise_trainer.model.gates import attach_gates, gates


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
    """Per recorded tensor: its relevance for the position-``position`` targets (sum of
    tensor * gradient, in float64) and its mass (sum of |tensor * gradient|); per layer, the
    relevance the stabilised weighted sums keep (rules.Tape) with its mass."""
    b = batch(model)
    with lrp.frozen(model), rules.taping() as tape:
        tr = forward.run(model, b.input_ids, b.attention_mask, b.decoder_input_ids,
                         b.decoder_mask, rule)
        rows = b.decoder_mask.bool()[:, position]
        top = forward.target_logits(model, tr.hidden, b.targets, rule)[rows, position].sum()
        groups = {"enc": tr.encoder_states, "dec": tr.decoder_states, "mem": tr.memories,
                  "probs": [x.probs for x in tr.blocks], "scores": [x.scores for x in tr.blocks]}
        flat = [t for ts in groups.values() for t in ts] + [out for _, out, _ in tape.entries]
        grads = iter(torch.autograd.grad(top, flat, allow_unused=True))
    r, mass = {}, {}
    for key, ts in groups.items():
        r[key], mass[key] = [], []
        for t in ts:
            g = next(grads)
            # masked scores are float32 min with gradient exactly 0: relevance 0
            rel = torch.zeros(1) if g is None else torch.where(g == 0, g, t * g).double()
            r[key].append(float(rel.sum()))
            mass[key].append(float(rel.abs().sum()))
    kept, kept_mass = {}, {}
    for (label, out, share), g in zip(tape.entries, grads):
        if g is None:  # z-rule: the queries and keys get no relevance
            continue
        rel = (out * g * share).double()
        kept[label] = kept.get(label, 0.0) + float(rel.sum())
        kept_mass[label] = kept_mass.get(label, 0.0) + float(rel.abs().sum())
    softmax = {(x.kind, x.layer): (p - s, pm + sm) for x, p, s, pm, sm in
               zip(tr.blocks, r["probs"], r["scores"], mass["probs"], mass["scores"])}
    return float(top), r, mass, kept, kept_mass, softmax


def rounding_bound(model, dtype):
    """What float rounding may add to a relevance balance, per unit of the mass of its terms:
    gamma_n = n u for a dot product of length n (Higham, Accuracy and Stability of Numerical
    Algorithms, 3.1), n the longest inner dimension of the model, added up over the layers a
    gradient passes through (encoder, decoder and the output projection)."""
    c = model.config
    n = max(c.d_model, c.encoder_ffn_dim, c.decoder_ffn_dim, max(map(len, SOURCES)),
            max(map(len, TARGETS)))
    return (c.encoder_layers + c.decoder_layers + 1) * n * torch.finfo(dtype).eps / 2


def check_conservation(model, rule, position, dtype):
    """Every layer passes on what it receives minus what it keeps: the stabilised weighted sums'
    share (rules.Tape: for the z-rule the stabiliser's e / (|zb| + e), for AttnLRP the bias and
    epsilon share (b + eps) / (z + eps)) and AttnLRP's softmax rule (relevance at the attention
    weights minus at their inputs). The balance must hold to float rounding of its terms."""
    top, r, mass, kept, kept_mass, softmax = relevances(model, rule, position)
    gamma = rounding_bound(model, dtype)

    def balance(out, out_mass, parts, what):
        value = sum(v for v, _ in parts)
        bound = gamma * (out_mass + sum(m for _, m in parts))
        assert abs(out - value) <= bound, (what, out, value, bound)

    balance(top, abs(top), [(r["dec"][-1], mass["dec"][-1]),
                            (kept[("output", None)], kept_mass[("output", None)])], "output")
    for i in range(len(r["mem"])):
        balance(r["dec"][i + 1], mass["dec"][i + 1],
                [(r["dec"][i], mass["dec"][i]), (r["mem"][i], mass["mem"][i]),
                 (kept[("decoder", i)], kept_mass[("decoder", i)]),
                 softmax[("decoder_self", i)], softmax[("decoder_cross", i)]], ("decoder", i))
    balance(r["enc"][-1], mass["enc"][-1], list(zip(r["mem"], mass["mem"])), "memories")
    for i in range(len(r["enc"]) - 1):
        balance(r["enc"][i + 1], mass["enc"][i + 1],
                [(r["enc"][i], mass["enc"][i]),
                 (kept[("encoder", i)], kept_mass[("encoder", i)]),
                 softmax[("encoder_self", i)]], ("encoder", i))
    return top, r, kept, softmax


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("seed,position", [(0, 0), (1, 1), (2, 2), (3, 4)])
@pytest.mark.parametrize("rule", ["attnlrp", "z"])
def test_relevance_is_conserved_layer_by_layer(rule, seed, position, dtype):
    model = random_model(small_config(), seed).to(dtype)
    top, r, kept, softmax = check_conservation(model, rule, position, dtype)
    if rule == "attnlrp":
        assert any(abs(v) > 1e-3 for v, _ in softmax.values())  # the Q/K path gets relevance
    else:
        # A is a constant: nothing reaches the attention weights, nothing is lost there
        assert all(v == 0.0 for v, _ in softmax.values())


@pytest.mark.parametrize("position", [0, 1])
def test_the_output_bias_keeps_relevance_under_attnlrp_and_none_under_the_z_rule(position):
    # The target logit z = zb + b (zb = h . w) is one weighted sum with one output, so the
    # z-rule's e is Z_EPSILON |zb| + EPSILON and the final states get z * zb / (zb + e sign zb),
    # about z / (1 + Z_EPSILON) whatever the bias; AttnLRP gives them zb * z / (z + eps sign z),
    # about zb: the bias keeps the rest.
    model = random_model(small_config()).double()
    b = batch(model)
    rows = b.decoder_mask.bool()[:, position]
    ref = model(b.input_ids, b.attention_mask, b.decoder_input_ids, b.decoder_mask).detach()
    z = ref.gather(2, b.targets[..., None])[rows, position, 0]
    bias = model.final_logits_bias[0][b.targets[rows, position]].detach()
    zb = z - bias
    sign = lambda t: torch.where(t >= 0, 1.0, -1.0).double()  # noqa: E731
    e = rules.Z_EPSILON * zb.abs() + rules.EPSILON
    expected = {"z": float((z * zb / (zb + e * sign(zb))).sum()),
                "attnlrp": float((zb * z / (z + rules.EPSILON * sign(z))).sum())}
    assert float(bias.abs().sum()) > 0.1 * float(z.abs().sum())  # the two rules differ
    tol = rounding_bound(model, torch.float64) * float(z.abs().sum())
    for rule in ("z", "attnlrp"):
        top, r, _, _, _, _ = relevances(model, rule, position)
        assert top == pytest.approx(float(z.sum()), abs=tol)
        assert r["dec"][-1] == pytest.approx(expected[rule], abs=tol)


@pytest.mark.parametrize("rule", ["attnlrp", "z"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_layer_norm_relevance_is_bounded_where_an_output_is_almost_all_bias(rule, dtype):
    # The z-rule's old failure: x_k equal to the mean of its row normalises to ~0, so the
    # affine output z_k = n_k gamma_k + beta_k is almost all bias, and passing all of R_z_k to
    # n_k came back through the centring as relevance ~1e5 times R_z. The backward through the
    # centring is R_x_j = x_j / std * (c_j - mean_k c_k), with c_k = gamma_k * ratio_k * c_z_k
    # the modified gradient at n_k, |ratio_k| <= |z_k| / e_k (z-rule) or <= 1 (AttnLRP); so
    # sum_j |R_x_j| <= 2 sum_j |x_j| / std * max_k |c_k|.
    g = torch.Generator().manual_seed(5)
    d = 32
    x = torch.randn(6, d, generator=g, dtype=dtype)
    x[:, 7] = (x.sum(1) - x[:, 7]) / (d - 1)  # x_7 = mean of the row: n_7 ~ 0
    ln = torch.nn.LayerNorm(d).to(dtype)
    with torch.no_grad():
        ln.weight.uniform_(0.5, 1.5, generator=g)
        ln.bias.normal_(0.0, 0.5, generator=g)
        ln.bias[7] = 1.0
    x.requires_grad_()
    with lrp.frozen(ln):
        z = rules.layer_norm(x, ln, rule)
        (grad,) = torch.autograd.grad(z.sum(), [x])  # c_z = 1: R_z = z
    centred = x.detach() - x.detach().mean(-1, keepdim=True)
    std = torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + ln.eps)
    n = centred / std
    if rule == "z":
        ratio = z.detach().abs() / rules.z_epsilon(n * ln.weight.detach())
    else:
        ratio = torch.ones_like(n)
    c = (ln.weight.detach() * ratio).amax(-1)
    bound = 2 * (x.detach().abs() / std).sum(-1) * c
    mass = (x.detach() * grad).abs().sum(-1)
    assert torch.all(mass <= bound * (1 + 1e-6)), (mass, bound)
    assert torch.all(mass <= 2 * z.detach().abs().sum(-1) / rules.Z_EPSILON)


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


def test_stabiliser_sweep_balances_and_restores_the_epsilon():
    # The README's stabiliser table: under the z-rule what the stabilised sums keep and what
    # reaches the embeddings add up to the target logits (nothing is lost anywhere else).
    model = random_model(small_config())
    before = rules.Z_EPSILON
    rows = stabiliser.sweep(model, SOURCES, [0.01, 0.1])
    assert rules.Z_EPSILON == before
    assert [(r["rule"], r["epsilon"]) for r in rows] == [("attnlrp", None), ("z", 0.01),
                                                          ("z", 0.1)]
    for r in rows[1:]:
        assert r["kept"] + r["embeddings"] == pytest.approx(1.0, abs=1e-4)
        assert set(r["vs_attnlrp"]) == {"encoder_self", "decoder_self", "decoder_cross"}
    assert rows[1]["vs_previous"] is None and rows[2]["vs_previous"] is not None
