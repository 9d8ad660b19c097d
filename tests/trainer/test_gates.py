import math

import pytest
import torch

from conftest import SOURCES, random_model, small_config
from headwise_trainer import (attach_gates, expected_l0, gate_values, greedy, head_layout,
                              head_masks, mask_from_layout, set_head_masks, strip_heads)
from headwise_trainer.model.decode import pad_batch
from headwise_trainer.model.gates import HeadGate, gates, layout_summary

# Kept heads per block: encoder 4 heads, decoder 2 heads; zero-head blocks included.
LAYOUT_SIGNS = {
    "model.encoder.layers.0.self_attn": [1, -1, 1, -1],
    "model.encoder.layers.1.self_attn": [-1, -1, -1, -1],
    "model.decoder.layers.0.self_attn": [1, 1],
    "model.decoder.layers.1.self_attn": [-1, 1],
    "model.decoder.layers.0.encoder_attn": [-1, -1],
    "model.decoder.layers.1.encoder_attn": [1, -1],
}


def gated_model(seed=0):
    model = random_model(small_config(), seed)
    attach_gates(model)
    g = torch.Generator().manual_seed(seed + 100)
    with torch.no_grad():
        for name, gate in gates(model).items():
            magnitude = torch.rand(gate.log_alpha.shape, generator=g) * 3 + 0.01
            gate.log_alpha.copy_(magnitude * torch.tensor(LAYOUT_SIGNS[name], dtype=torch.float32))
    return model.eval()


def test_sample_range_and_exact_zeros_and_ones():
    gate = HeadGate(2000, init_log_alpha=0.0)
    g = gate.sample()
    assert g.shape == (2000,)
    assert float(g.min()) == 0.0 and float(g.max()) == 1.0
    assert ((g >= 0) & (g <= 1)).all()
    inside = ((g > 0) & (g < 1)).float().mean()
    assert 0.1 < inside < 0.9


def test_test_time_rule():
    gate = HeadGate(5)
    with torch.no_grad():
        gate.log_alpha.copy_(torch.tensor([-2.0, -1e-6, 0.0, 1e-6, 3.0]))
    gate.eval()
    assert gate().tolist() == [0.0, 0.0, 0.0, 1.0, 1.0]
    # Same as the deterministic gate clamp(sigmoid(la) * (r - l) + l, 0, 1) > 0.5.
    det = torch.clamp(torch.sigmoid(gate.log_alpha) * 1.2 - 0.1, 0, 1) > 0.5
    assert det.tolist() == [False, False, False, True, True]


def test_expected_l0_matches_monte_carlo():
    la = torch.tensor([-3.0, -1.0, 0.0, 0.7, 2.5])
    draws = 20000
    gate = HeadGate(5 * draws)  # independent noise per head: one call gives every draw
    with torch.no_grad():
        gate.log_alpha.copy_(la.repeat(draws))
    torch.manual_seed(0)
    monte_carlo = (gate.sample().view(draws, 5) > 0).float().mean(0)
    closed = gate.expected_l0().detach()[:5]
    assert torch.allclose(closed, torch.sigmoid(la - 0.33 * math.log(0.1 / 1.1)))
    assert torch.allclose(monte_carlo, closed, atol=0.015), (monte_carlo, closed)


def test_training_samples_fresh_gates_each_forward_shared_by_batch():
    model = random_model(small_config(), 0)
    attach_gates(model, init_log_alpha=0.0)
    model.train()
    src = torch.tensor([[5, 6, 0], [5, 6, 0]])
    dec = torch.tensor([[59, 3], [59, 3]])
    torch.manual_seed(1)
    a = model(src, None, dec)
    b = model(src, None, dec)
    assert not torch.allclose(a, b)  # resampled
    assert torch.allclose(a[0], a[1], atol=1e-6)  # one sample for the whole batch


def test_gradients_reach_log_alpha():
    model = random_model(small_config(), 0)
    attach_gates(model, init_log_alpha=0.5)
    model.train()
    torch.manual_seed(2)
    logits = model(torch.tensor([[5, 6, 7, 0]]), None, torch.tensor([[59, 3, 4]]))
    loss = torch.nn.functional.cross_entropy(logits[0], torch.tensor([3, 4, 0]))
    (loss + 0.1 * expected_l0(model)).backward()
    for name, gate in gates(model).items():
        assert gate.log_alpha.grad is not None and gate.log_alpha.grad.abs().sum() > 0, name


def test_expected_l0_sum():
    model = random_model(small_config(), 0)
    assert float(expected_l0(model)) == 0.0
    attach_gates(model, encoder_self=True, decoder_self=False, decoder_cross=False,
                 init_log_alpha=1.0)
    expected = 8 * torch.sigmoid(torch.tensor(1.0 - 0.33 * math.log(0.1 / 1.1)))
    assert torch.allclose(expected_l0(model), expected)


def test_attach_twice_is_an_error():
    model = random_model(small_config(), 0)
    attach_gates(model)
    with pytest.raises(ValueError, match="already has a head gate"):
        attach_gates(model)


def test_layout_and_values():
    model = gated_model()
    layout = head_layout(model)
    assert layout["model.encoder.layers.0.self_attn"] == [0, 2]
    assert layout["model.encoder.layers.1.self_attn"] == []
    assert layout["model.decoder.layers.1.encoder_attn"] == [0]
    assert gate_values(model)["model.decoder.layers.1.self_attn"].tolist() == [0.0, 1.0]
    assert "encoder_self: 2/4 0/4 (2/8)" in layout_summary(model)


def test_gated_model_equals_stripped_model():
    model = gated_model(seed=4)
    stripped = strip_heads(model)
    heads = {n: a.num_heads for n, _, _, a in stripped.attention_blocks()}
    assert heads["model.encoder.layers.1.self_attn"] == 0
    assert heads["model.encoder.layers.0.self_attn"] == 2
    assert tuple(stripped.state_dict()["model.encoder.layers.0.self_attn.q_proj.weight"].shape) == (16, 32)
    assert tuple(stripped.state_dict()["model.encoder.layers.0.self_attn.out_proj.weight"].shape) == (32, 16)
    ids, mask = pad_batch(SOURCES, 59)
    dec = torch.tensor([[59, 3, 4, 5, 6]] * len(SOURCES))
    with torch.no_grad():
        a, b = model(ids, mask, dec), stripped(ids, mask, dec)
    assert torch.allclose(a, b, atol=1e-5), (a - b).abs().max()
    assert [h.ids for h in greedy(model, SOURCES, 12)] == [h.ids for h in greedy(stripped, SOURCES, 12)]
    # And the gates do matter: the ungated model computes something else.
    for gate in gates(model).values():
        gate.log_alpha.data.fill_(1.0)
    with torch.no_grad():
        assert not torch.allclose(model(ids, mask, dec), b, atol=1e-3)


def test_head_masks_equal_gates():
    gated = gated_model(seed=5)
    plain = random_model(small_config(), 5)
    ids, mask = pad_batch(SOURCES, 59)
    dec = torch.tensor([[59, 3, 4]] * len(SOURCES))
    with torch.no_grad():
        ref = gated(ids, mask, dec)
        with head_masks(plain, mask_from_layout(plain, head_layout(gated))):
            masked = plain(ids, mask, dec)
        unmasked = plain(ids, mask, dec)
    assert torch.allclose(ref, masked, atol=1e-6)
    assert not torch.allclose(unmasked, masked, atol=1e-3)  # restored after the with block


def test_set_head_masks_errors():
    model = random_model(small_config(), 0)
    with pytest.raises(ValueError, match="unknown attention block 'model.encoder.layers.9.self_attn'"):
        set_head_masks(model, {"model.encoder.layers.9.self_attn": [1, 1, 1, 1]})
    with pytest.raises(ValueError, match="has 4 heads, mask has 3 values"):
        set_head_masks(model, {"model.encoder.layers.0.self_attn": [1, 1, 1]})


def test_continuous_rule_values_layout_and_removal_threshold():
    gate = HeadGate(6, rule="continuous")
    la = [-3.0, -math.log(11.0) - 1e-3, -1.0, 0.0, 1.5, 4.0]
    with torch.no_grad():
        gate.log_alpha.copy_(torch.tensor(la))
    gate.eval()
    # Hand computation: clamp(sigmoid(a) * 1.2 - 0.1, 0, 1).
    want = [max(0.0, min(1.0, 1.2 / (1.0 + math.exp(-a)) - 0.1)) for a in la]
    assert gate().tolist() == pytest.approx(want, abs=1e-6)
    assert want[0] == 0.0 and want[1] == 0.0 and want[-1] == 1.0
    assert gate()[4] == pytest.approx(0.8811, abs=1e-4)  # the review's open encoder head
    gate.rule = "hard"
    assert gate().tolist() == [0.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="expected one of hard, continuous"):
        HeadGate(2, rule="soft")


def test_continuous_gated_model_equals_stripped_model_with_folded_gates():
    from headwise_trainer.model.gates import gate_masks, set_rule
    model = gated_model(seed=5)
    set_rule(model, "continuous")
    assert model.config.gate_rule == "continuous"
    masks = gate_masks(model)
    assert any(0.0 < v < 1.0 for m in masks.values() for v in m)  # some heads scaled
    layout = head_layout(model)
    assert layout["model.encoder.layers.1.self_attn"] == [h for h, v in enumerate(
        masks["model.encoder.layers.1.self_attn"]) if v > 0]
    stripped = strip_heads(model)
    assert stripped.config.gate_rule == "hard"  # the gates are folded in: nothing to apply
    ids, mask = pad_batch(SOURCES, 59)
    dec = torch.tensor([[59, 3, 4, 5, 6]] * len(SOURCES))
    with torch.no_grad():
        a, b = model(ids, mask, dec), stripped(ids, mask, dec)
    assert torch.allclose(a, b, atol=1e-5)
    # Under the hard rule the same log_alpha give a different model.
    set_rule(model, "hard")
    with torch.no_grad():
        assert not torch.allclose(model(ids, mask, dec), b, atol=1e-3)


def test_unsettled_heads_within_the_margin():
    from headwise_trainer.model.gates import fixed_gates, unsettled
    model = random_model(small_config(), 0)
    attach_gates(model, encoder_self=True, decoder_self=False, decoder_cross=False)
    with torch.no_grad():
        g = gates(model)
        g["model.encoder.layers.0.self_attn"].log_alpha.copy_(torch.tensor([2.0, 0.5, -0.99, -1.0]))
        g["model.encoder.layers.1.self_attn"].log_alpha.copy_(torch.tensor([3.0, -3.0, 1.0, -2.0]))
    assert unsettled(model, 1.0) == {"model.encoder.layers.0.self_attn": [1, 2]}
    assert unsettled(model, 2.5) == {"model.encoder.layers.0.self_attn": [0, 1, 2, 3],
                                     "model.encoder.layers.1.self_attn": [2, 3]}
    fixed = random_model(small_config(), 0)
    fixed_gates(fixed, {"model.encoder.layers.0.self_attn": [0]})
    assert unsettled(fixed, 100.0) == {}  # fixed gates are decided


def test_gate_rule_in_config_json_only_when_continuous(tmp_path):
    from headwise_trainer.model.config import MarianConfig
    hard = small_config()
    assert "headwise_gate_rule" not in hard.to_dict() and "gate_rule" not in hard.to_dict()
    cont = MarianConfig.from_dict(dict(hard.to_dict(), headwise_gate_rule="continuous"))
    assert cont.gate_rule == "continuous" and cont.to_dict()["headwise_gate_rule"] == "continuous"
    assert MarianConfig.from_dict(cont.to_dict()) == cont
    with pytest.raises(ValueError, match="headwise_gate_rule.*expected one of hard, continuous"):
        MarianConfig.from_dict(dict(hard.to_dict(), headwise_gate_rule="soft"))
    # A saved continuous checkpoint loads with the rule on its gates.
    from headwise_trainer.model.checkpoint import export_checkpoint, load_checkpoint
    from headwise_trainer.model.gates import set_rule
    model = gated_model(seed=6)
    set_rule(model, "continuous")
    export_checkpoint(model, tmp_path / "c")
    loaded = load_checkpoint(tmp_path / "c")
    assert loaded.config.gate_rule == "continuous"
    assert all(g.rule == "continuous" for g in gates(loaded).values())
    assert head_layout(loaded) == head_layout(model)
