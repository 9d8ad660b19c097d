import json

import pytest

from conftest import small_config
from headwise_trainer import MarianConfig


def test_json_round_trip(tmp_path):
    config = small_config(activation_function="relu", share_encoder_decoder_embeddings=False,
                          tie_word_embeddings=False)
    config.to_json(tmp_path / "config.json")
    data = json.loads((tmp_path / "config.json").read_text())
    assert data["model_type"] == "marian"
    assert data["architectures"] == ["MarianMTModel"]
    assert MarianConfig.from_json(tmp_path / "config.json") == config


def test_reads_hf_config_and_ignores_extra_keys(tmp_path):
    # Keys as in Helsinki-NLP/opus-mt-en-de config.json (abridged), plus HF-only extras.
    hf = {"_name_or_path": "x", "activation_dropout": 0.0, "activation_function": "swish",
          "add_bias_logits": False, "architectures": ["MarianMTModel"], "attention_dropout": 0.0,
          "bos_token_id": 0, "classif_dropout": 0.0, "d_model": 512, "decoder_attention_heads": 8,
          "decoder_ffn_dim": 2048, "decoder_layerdrop": 0.0, "decoder_layers": 6,
          "decoder_start_token_id": 58100, "decoder_vocab_size": 58101, "dropout": 0.1,
          "encoder_attention_heads": 8, "encoder_ffn_dim": 2048, "encoder_layers": 6,
          "eos_token_id": 0, "forced_eos_token_id": 0, "init_std": 0.02, "is_encoder_decoder": True,
          "max_length": 512, "max_position_embeddings": 512, "model_type": "marian",
          "normalize_before": False, "normalize_embedding": False, "num_beams": 4,
          "num_hidden_layers": 6, "pad_token_id": 58100, "scale_embedding": True,
          "share_encoder_decoder_embeddings": True, "static_position_embeddings": True,
          "transformers_version": "4.22.0.dev0", "use_cache": True, "vocab_size": 58101}
    (tmp_path / "config.json").write_text(json.dumps(hf))
    c = MarianConfig.from_json(tmp_path / "config.json")
    assert (c.d_model, c.encoder_layers, c.decoder_attention_heads, c.vocab_size) == (512, 6, 8, 58101)
    assert c.scale_embedding and c.share_encoder_decoder_embeddings and c.tie_word_embeddings
    assert c.activation_function == "swish" and c.pad_token_id == 58100


@pytest.mark.parametrize("overrides, message", [
    (dict(normalize_before=True), "normalize_before: true (pre-LayerNorm layers) is not supported"),
    (dict(encoder_attention_heads=5), "d_model 32 is not divisible by encoder_attention_heads 5"),
    (dict(activation_function="tanh"), "expected one of swish, relu, gelu, found 'tanh'"),
    (dict(pad_token_id=60), "pad_token_id: expected an id in [0, 60), found 60"),
    (dict(decoder_layers=0), "decoder_layers: expected a positive integer, found 0"),
    (dict(pad_token_id=0), "pad_token_id and eos_token_id must differ"),
])
def test_validation_errors(overrides, message):
    with pytest.raises(ValueError) as e:
        small_config(**overrides)
    assert message in str(e.value)


def test_rejects_separate_decoder_vocab(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps({"vocab_size": 100, "decoder_vocab_size": 90,
                                                 "pad_token_id": 99, "decoder_start_token_id": 99}))
    with pytest.raises(ValueError, match="decoder_vocab_size 90 differs from vocab_size 100"):
        MarianConfig.from_json(tmp_path / "c.json")


def test_rejects_other_model_type(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps({"model_type": "bart"}))
    with pytest.raises(ValueError, match="expected model_type \"marian\", found 'bart'"):
        MarianConfig.from_json(tmp_path / "c.json")
