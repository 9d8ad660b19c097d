import math

import numpy as np
import pytest
import torch

from conftest import SOURCES, random_model, small_config
from headwise_trainer import MarianMTModel, attach_gates
from headwise_trainer.model.decode import pad_batch
from headwise_trainer.model.marian import activation, sinusoidal_positions


def layer_keys(prefix, blocks):
    keys = []
    for block in blocks:
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            keys += [f"{prefix}.{block}.{proj}.weight", f"{prefix}.{block}.{proj}.bias"]
    norms = [b + "_layer_norm" for b in blocks] + ["final_layer_norm", "fc1", "fc2"]
    for n in norms:
        keys += [f"{prefix}.{n}.weight", f"{prefix}.{n}.bias"]
    return keys


def expected_keys(config):
    keys = ["final_logits_bias"]
    if config.share_encoder_decoder_embeddings:
        keys.append("model.shared.weight")
    else:
        keys += ["model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight"]
    if not config.tie_word_embeddings:
        keys.append("lm_head.weight")
    for i in range(config.encoder_layers):
        keys += layer_keys(f"model.encoder.layers.{i}", ["self_attn"])
    for i in range(config.decoder_layers):
        keys += layer_keys(f"model.decoder.layers.{i}", ["self_attn", "encoder_attn"])
    return sorted(keys)


@pytest.mark.parametrize("shared, tied", [(True, True), (False, False), (True, False), (False, True)])
def test_state_dict_names_are_hugging_face_names(shared, tied):
    config = small_config(share_encoder_decoder_embeddings=shared, tie_word_embeddings=tied)
    model = MarianMTModel(config)
    assert sorted(model.state_dict()) == expected_keys(config)
    sd = model.state_dict()
    assert tuple(sd["final_logits_bias"].shape) == (1, 60)
    assert tuple(sd["model.decoder.layers.1.encoder_attn.q_proj.weight"].shape) == (32, 32)
    assert tuple(sd["model.encoder.layers.0.fc1.weight"].shape) == (48, 32)


def test_gate_names():
    model = MarianMTModel(small_config())
    attach_gates(model)
    gate_keys = sorted(k for k in model.state_dict() if "head_gate" in k)
    assert gate_keys == sorted(
        [f"model.encoder.layers.{i}.self_attn.head_gate.log_alpha" for i in range(2)]
        + [f"model.decoder.layers.{i}.{b}.head_gate.log_alpha"
           for i in range(2) for b in ("self_attn", "encoder_attn")])


def test_positions_match_hugging_face_formula():
    n, dim = 40, 12
    # transformers MarianSinusoidalPositionalEmbedding._init_weight, literally.
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)]
                             for pos in range(n)])
    ref = torch.empty(n, dim)
    ref[:, 0:dim // 2] = torch.FloatTensor(np.sin(position_enc[:, 0::2]))
    ref[:, dim // 2:] = torch.FloatTensor(np.cos(position_enc[:, 1::2]))
    assert torch.equal(sinusoidal_positions(n, dim), ref)
    assert "positions" not in MarianMTModel(small_config()).state_dict()


def test_activations():
    x = torch.linspace(-4, 4, 101)
    assert torch.allclose(activation("gelu")(x), 0.5 * x * (1 + torch.erf(x / math.sqrt(2))), atol=1e-6)
    assert torch.allclose(activation("swish")(x), x * torch.sigmoid(x), atol=1e-6)
    assert torch.equal(activation("relu")(x), x.clamp(min=0))


def manual_forward(model, src, tgt):
    """Independent straight-line implementation of HF Marian for one sentence pair."""
    cfg = model.config
    sd = model.state_dict()
    d = cfg.d_model
    scale = math.sqrt(d) if cfg.scale_embedding else 1.0
    pos = sinusoidal_positions(cfg.max_position_embeddings, d)
    enc_emb = sd["model.shared.weight"]
    act = activation(cfg.activation_function)

    def ln(x, p):
        return torch.nn.functional.layer_norm(x, (d,), sd[p + ".weight"], sd[p + ".bias"], 1e-5)

    def lin(x, p):
        return x @ sd[p + ".weight"].T + sd[p + ".bias"]

    def mha(x, kv, p, heads, causal):
        hd = d // heads
        q = (lin(x, p + ".q_proj") * hd ** -0.5).view(-1, heads, hd).transpose(0, 1)
        k = lin(kv, p + ".k_proj").view(-1, heads, hd).transpose(0, 1)
        v = lin(kv, p + ".v_proj").view(-1, heads, hd).transpose(0, 1)
        s = q @ k.transpose(1, 2)
        if causal:
            s = s.masked_fill(torch.triu(torch.ones(len(x), len(x), dtype=torch.bool), 1), -1e30)
        o = (s.softmax(-1) @ v).transpose(0, 1).reshape(len(x), d)
        return lin(o, p + ".out_proj")

    x = enc_emb[src] * scale + pos[:len(src)]
    for i in range(cfg.encoder_layers):
        p = f"model.encoder.layers.{i}"
        x = ln(x + mha(x, x, p + ".self_attn", cfg.encoder_attention_heads, False), p + ".self_attn_layer_norm")
        x = ln(x + lin(act(lin(x, p + ".fc1")), p + ".fc2"), p + ".final_layer_norm")
    y = enc_emb[tgt] * scale + pos[:len(tgt)]
    for i in range(cfg.decoder_layers):
        p = f"model.decoder.layers.{i}"
        h = cfg.decoder_attention_heads
        y = ln(y + mha(y, y, p + ".self_attn", h, True), p + ".self_attn_layer_norm")
        y = ln(y + mha(y, x, p + ".encoder_attn", h, False), p + ".encoder_attn_layer_norm")
        y = ln(y + lin(act(lin(y, p + ".fc1")), p + ".fc2"), p + ".final_layer_norm")
    return y @ enc_emb.T + sd["final_logits_bias"][0]


@pytest.mark.parametrize("act", ["swish", "relu", "gelu"])
def test_forward_matches_straight_line_reference(act):
    model = random_model(small_config(activation_function=act), seed=3)
    src, tgt = torch.tensor([5, 6, 7, 0]), torch.tensor([59, 8, 9, 10, 11])
    with torch.no_grad():
        got = model(src[None], None, tgt[None])[0]
        ref = manual_forward(model, src, tgt)
    assert torch.allclose(got, ref, atol=1e-4), (got - ref).abs().max()


@pytest.mark.parametrize("shared, tied", [(True, True), (False, False)])
def test_cached_decode_equals_full_forward(shared, tied):
    config = small_config(share_encoder_decoder_embeddings=shared, tie_word_embeddings=tied)
    model = random_model(config, seed=1)
    attach_gates(model)
    with torch.no_grad():
        for i, gate in enumerate(g for n, g in model.named_modules() if n.endswith("head_gate")):
            gate.log_alpha.copy_(torch.tensor([1.0, -1.0, 2.0, 3.0][:gate.log_alpha.numel()]) * (-1) ** i)
    ids, mask = pad_batch(SOURCES, config.pad_token_id)
    dec = torch.tensor([[59, 3, 4, 5, 6, 7], [59, 8, 8, 9, 1, 2], [59, 0, 59, 5, 6, 7],
                        [59, 20, 21, 22, 23, 24]])
    with torch.no_grad():
        full = model(ids, mask, dec)
        state = model.init_decoder_state(model.encode(ids, mask), mask)
        for t in range(dec.shape[1]):
            step, state = model.decode_step(dec[:, t], state)
            assert torch.allclose(step, full[:, t], atol=1e-5), (t, (step - full[:, t]).abs().max())


def test_padding_does_not_change_results(model):
    ids, mask = pad_batch(SOURCES, model.config.pad_token_id)
    dec = torch.tensor([[59, 3, 4]] * len(SOURCES))
    with torch.no_grad():
        batched = model(ids, mask, dec)
        for i, s in enumerate(SOURCES):
            single = model(torch.tensor([s]), None, dec[:1])
            assert torch.allclose(batched[i], single[0], atol=1e-5)


def test_position_limit_is_an_error(model):
    with pytest.raises(ValueError, match="max_position_embeddings is 64"):
        model.encode(torch.zeros(1, 65, dtype=torch.long))


def test_training_mode_dropout_changes_output():
    model = random_model(small_config(dropout=0.3))
    model.train()
    src = torch.tensor([[5, 6, 0]])
    a, b = model(src, None, torch.tensor([[59, 1]])), model(src, None, torch.tensor([[59, 1]]))
    assert not torch.allclose(a, b)
    model.eval()
    a, b = model(src, None, torch.tensor([[59, 1]])), model(src, None, torch.tensor([[59, 1]]))
    assert torch.equal(a, b)
