import json

import pytest
import torch

from conftest import SOURCES, random_model, small_config
from headwise_trainer import (CheckpointError, attach_gates, export_checkpoint, greedy,
                              head_layout, load_checkpoint, strip_heads)
from headwise_trainer.model import safetensors_io as st
from headwise_trainer.model.gates import gates

VOCAB = ["</s>", "<unk>"] + [f"p{i}" for i in range(57)] + ["<pad>"]


def gated(config=None, seed=0):
    model = random_model(config or small_config(), seed)
    attach_gates(model, decoder_cross=False)
    with torch.no_grad():
        for i, gate in enumerate(gates(model).values()):
            gate.log_alpha.copy_(torch.randn(gate.log_alpha.shape))
            gate.log_alpha[0] = 1e-9 if i % 2 else -1e-9  # F16 would round these to 0
    return model


@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16"])
@pytest.mark.parametrize("shared, tied", [(True, True), (False, False), (True, False), (False, True)])
def test_round_trip(tmp_path, dtype, shared, tied):
    model = gated(small_config(share_encoder_decoder_embeddings=shared, tie_word_embeddings=tied))
    out = export_checkpoint(model, tmp_path / "ckpt", b"SRC", b"TGT", VOCAB, dtype=dtype)
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors",
                                                     "source.spm", "target.spm", "vocab.json"]
    assert (out / "source.spm").read_bytes() == b"SRC"
    vocab = json.loads((out / "vocab.json").read_text())
    assert vocab["<pad>"] == 59 and vocab["</s>"] == 0 and len(vocab) == 60
    raw, meta = st.read_file(out / "model.safetensors")
    torch_dtype = st.DTYPES[dtype]
    assert meta == {"format": "pt"}
    loaded = load_checkpoint(out)
    assert loaded.config == model.config
    assert head_layout(loaded) == head_layout(model)
    want, got = model.state_dict(), loaded.state_dict()
    assert set(want) == set(got)
    for name in want:
        if name.endswith("head_gate.log_alpha"):
            assert raw[name].dtype == torch.float32
            assert torch.equal(got[name], want[name]), name
        else:
            assert raw[name].dtype == torch_dtype, name
            assert torch.equal(got[name], want[name].to(torch_dtype).float()), name
    if dtype == "F32":
        assert [h.ids for h in greedy(loaded, SOURCES, 8)] == [h.ids for h in greedy(model, SOURCES, 8)]


def test_refuses_to_overwrite_and_replaces_atomically(tmp_path):
    model = gated()
    export_checkpoint(model, tmp_path / "c")
    with pytest.raises(FileExistsError, match="pass overwrite=True"):
        export_checkpoint(model, tmp_path / "c")
    other = gated(seed=1)
    export_checkpoint(other, tmp_path / "c", overwrite=True)
    assert torch.equal(load_checkpoint(tmp_path / "c").state_dict()["model.shared.weight"],
                       other.state_dict()["model.shared.weight"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]  # no temporary leftovers


def test_failed_export_leaves_nothing(tmp_path):
    with pytest.raises(CheckpointError, match="vocab: expected the ids 0..59"):
        export_checkpoint(gated(), tmp_path / "c", vocab=VOCAB[:-1])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("vocab, message", [
    (["<pad>"] + VOCAB[1:-1] + ["</s>"], "eos_token_id 0 must be '</s>', found '<pad>'"),
    (VOCAB[:1] + ["x"] + VOCAB[2:], "expected an \"<unk>\" piece"),
])
def test_vocab_checks(tmp_path, vocab, message):
    with pytest.raises(CheckpointError) as e:
        export_checkpoint(gated(), tmp_path / "c", vocab=vocab)
    assert message in str(e.value)


def test_stripped_model_cannot_be_exported(tmp_path):
    with pytest.raises(CheckpointError, match="a stripped model cannot be saved"):
        export_checkpoint(strip_heads(gated()), tmp_path / "c")


def rewrite(path, edit):
    tensors, meta = st.read_file(path / "model.safetensors")
    edit(tensors)
    st.write_file(path / "model.safetensors", tensors, meta)


def test_mismatches_are_clear_errors(tmp_path):
    export_checkpoint(gated(), tmp_path / "c")
    c = tmp_path / "c"
    rewrite(c, lambda t: t.update({"model.encoder.layers.0.self_attn.q_proj.weight": torch.zeros(16, 32)}))
    with pytest.raises(CheckpointError, match=r"q_proj.weight: expected \[32, 32\], found \[16, 32\]"):
        load_checkpoint(c)
    rewrite(c, lambda t: t.pop("model.encoder.layers.0.self_attn.q_proj.weight"))
    with pytest.raises(CheckpointError, match="missing 1 tensor\\(s\\): model.encoder.layers.0.self_attn.q_proj.weight"):
        load_checkpoint(c)
    export_checkpoint(gated(), c, overwrite=True)
    rewrite(c, lambda t: t.update({"model.encoder.layers.7.fc1.weight": torch.zeros(2)}))
    with pytest.raises(CheckpointError, match="unexpected tensor model.encoder.layers.7.fc1.weight"):
        load_checkpoint(c)
    export_checkpoint(gated(), c, overwrite=True)
    rewrite(c, lambda t: t.update({"model.decoder.layers.5.self_attn.head_gate.log_alpha": torch.zeros(2)}))
    with pytest.raises(CheckpointError, match="no attention block 'model.decoder.layers.5.self_attn'"):
        load_checkpoint(c)
    export_checkpoint(gated(), c, overwrite=True)
    rewrite(c, lambda t: t.update({"lm_head.weight": torch.zeros(60, 32)}))
    with pytest.raises(CheckpointError, match="lm_head.weight differs from model.shared.weight"):
        load_checkpoint(c)
    (c / "config.json").write_text(json.dumps({"d_model": 30, "encoder_attention_heads": 4}))
    with pytest.raises(CheckpointError, match="d_model 30 is not divisible by encoder_attention_heads 4"):
        load_checkpoint(c)


def test_accepts_hugging_face_duplicates(tmp_path):
    model = gated()
    export_checkpoint(model, tmp_path / "c")
    shared = model.state_dict()["model.shared.weight"]
    from headwise_trainer.model.marian import sinusoidal_positions
    rewrite(tmp_path / "c", lambda t: t.update({
        "model.encoder.embed_tokens.weight": shared.clone(), "lm_head.weight": shared.clone(),
        "model.decoder.embed_positions.weight": sinusoidal_positions(64, 32)}))
    loaded = load_checkpoint(tmp_path / "c")
    assert torch.equal(loaded.state_dict()["model.shared.weight"], shared)
