"""Import of start points for pruning: Hugging Face-layout checkpoint directories (safetensors
F32/F16, pytorch_model.bin), training run directories; bad ones give clear errors."""
import json
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "trainer"))

from conftest import random_model, small_config  # noqa: E402
from headwise_trainer.model import run_state, safetensors_io  # noqa: E402
from headwise_trainer.model.checkpoint import CheckpointError, export_checkpoint  # noqa: E402
from headwise_trainer.model.gates import attach_gates, gates, head_layout  # noqa: E402
from headwise_trainer.model.import_model import load_start_model  # noqa: E402


IDS = torch.tensor([[5, 6, 7, 8, 0], [9, 10, 0, 59, 59]])
MASK = (IDS != 59).long()
DEC = torch.tensor([[59, 11, 12, 13], [59, 14, 15, 16]])


def logits(model):
    with torch.no_grad():
        return model.eval()(IDS, MASK, DEC)


def f16_rounded(model):
    rounded = random_model(model.config)
    rounded.load_state_dict({k: v.half().float() for k, v in model.state_dict().items()})
    return rounded


@pytest.mark.parametrize("dtype", ["F32", "F16"])
def test_hf_directory_gives_identical_logits(tmp_path, dtype):
    model = random_model(small_config())
    export_checkpoint(model, tmp_path / "ckpt", dtype=dtype)
    start = load_start_model(str(tmp_path / "ckpt"))
    expected = logits(model if dtype == "F32" else f16_rounded(model))
    assert torch.equal(logits(start.model), expected)
    assert start.vocab_dir is None and start.state is None  # no spm files beside it
    assert not gates(start.model)


def test_pytorch_model_bin_gives_identical_logits(tmp_path):
    model = random_model(small_config(tie_word_embeddings=False))
    d = tmp_path / "opus"
    d.mkdir()
    model.config.to_json(d / "config.json")
    state = dict(model.state_dict())
    state["model.encoder.embed_tokens.weight"] = state["model.shared.weight"]  # HF duplicates
    torch.save(state, d / "pytorch_model.bin")
    assert torch.equal(logits(load_start_model(str(d)).model), logits(model))
    state["model.encoder.layers.0.fc1.weight"] = torch.zeros(3, 3)
    torch.save(state, d / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match=r"pytorch_model.bin: model.encoder.layers.0.fc1."
                                              r"weight: expected \[48, 32\], found \[3, 3\]"):
        load_start_model(str(d))


def test_gated_hf_directory_keeps_its_gates(tmp_path):
    model = random_model(small_config())
    attach_gates(model, decoder_self=False)
    with torch.no_grad():
        for g in gates(model).values():
            g.log_alpha.copy_(torch.linspace(-1, 1, g.log_alpha.numel()))
    export_checkpoint(model, tmp_path / "ckpt", dtype="F16")
    loaded = load_start_model(str(tmp_path / "ckpt")).model
    assert sorted(gates(loaded)) == sorted(gates(model))
    assert head_layout(loaded) == head_layout(model)
    assert torch.equal(logits(loaded), logits(f16_rounded_gated(model)))


def f16_rounded_gated(model):
    out = random_model(model.config)
    attach_gates(out, decoder_self=False)
    out.load_state_dict({k: (v if k.endswith("log_alpha") else v.half().float())
                         for k, v in model.state_dict().items()})
    return out


def test_training_run_directory(tmp_path):
    model = random_model(small_config())
    os.makedirs(tmp_path / "run")
    run_state.save_checkpoint(str(tmp_path / "run"), {
        "step": 7, "epoch": 0, "batch_idx": 7, "model": model.state_dict(), "optimizer": {},
        "rng": [], "config": model.config.to_dict(), "train_args": {"vocab": "v"}})
    start = load_start_model(str(tmp_path / "run"))
    assert torch.equal(logits(start.model), logits(model))
    assert start.vocab_dir == "v" and "(step 7)" in start.description


def test_config_disagreeing_with_tensors_is_a_clear_error(tmp_path):
    model = random_model(small_config())
    export_checkpoint(model, tmp_path / "ckpt")
    cfg = json.loads((tmp_path / "ckpt" / "config.json").read_text())
    cfg["decoder_ffn_dim"] = 64
    (tmp_path / "ckpt" / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match=r"model.decoder.layers.0.fc1.(weight|bias): "
                                              r"expected \[64(, 32)?\], found \[40"):
        load_start_model(str(tmp_path / "ckpt"))
    os.makedirs(tmp_path / "run")
    run_state.save_checkpoint(str(tmp_path / "run"), {
        "step": 1, "epoch": 0, "batch_idx": 1, "model": model.state_dict(), "optimizer": {},
        "rng": [], "config": dict(model.config.to_dict(), encoder_layers=3)})
    with pytest.raises(run_state.ResumeError, match="disagree with the saved config"):
        load_start_model(str(tmp_path / "run"))


def test_missing_or_unknown_start_points(tmp_path):
    with pytest.raises(CheckpointError, match="not found"):
        load_start_model(str(tmp_path / "nothing"))
    os.makedirs(tmp_path / "empty")
    with pytest.raises(CheckpointError, match="found neither"):
        load_start_model(str(tmp_path / "empty"))
    os.makedirs(tmp_path / "cfg-only")
    small_config().to_json(tmp_path / "cfg-only" / "config.json")
    with pytest.raises(CheckpointError, match="expected model.safetensors"):
        load_start_model(str(tmp_path / "cfg-only"))
    safetensors_io.write_file(tmp_path / "cfg-only" / "model.safetensors",
                              {"junk": torch.zeros(2)})
    with pytest.raises(CheckpointError, match="unexpected tensor junk"):
        load_start_model(str(tmp_path / "cfg-only"))
