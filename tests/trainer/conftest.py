"""Shared fixtures of the trainer tests: small random MarianMT models with non-trivial weights."""

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "trainer"))

from headwise_trainer import MarianConfig, MarianMTModel  # noqa: E402

torch.set_num_threads(1)


def small_config(**overrides) -> MarianConfig:
    values = dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                  decoder_attention_heads=2, encoder_ffn_dim=48, decoder_ffn_dim=40,
                  activation_function="swish", vocab_size=60, max_position_embeddings=64,
                  pad_token_id=59, eos_token_id=0, decoder_start_token_id=59,
                  scale_embedding=True, dropout=0.0)
    values.update(overrides)
    return MarianConfig(**values)


def random_model(config: MarianConfig, seed: int = 0) -> MarianMTModel:
    """Every parameter random (biases, LayerNorms and final_logits_bias included), peaked logits."""
    model = MarianMTModel(config)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "layer_norm.weight" in name:
                p.uniform_(0.5, 1.5, generator=g)
            elif p.dim() == 2:
                p.normal_(0.0, 1.5 / p.shape[1] ** 0.5, generator=g)
            else:
                p.normal_(0.0, 0.2, generator=g)
        model.final_logits_bias.normal_(0.0, 0.5, generator=g)
    return model.eval()


@pytest.fixture
def model():
    return random_model(small_config())


SOURCES = [[5, 6, 7, 8, 9, 0], [10, 11, 0], [0], [12, 13, 14, 15, 16, 17, 18, 19, 20, 0]]
