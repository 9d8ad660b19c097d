"""Shared fixtures of the trainer tests: small random MarianMT models with non-trivial weights,
and the torch state every test starts from.

Torch threads: HEADWISE_TEST_THREADS (default 1), set here and nowhere else; the tests pass the
same count to the CLIs they run in-process (`--threads`, whose default is 2), and `torch_state`
puts it back before and after every test, so no test sees another's setting. Run the suite with
HEADWISE_TEST_THREADS=2 to check that nothing depends on the thread count.
"""

import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "trainer"))

from headwise_trainer import MarianConfig, MarianMTModel  # noqa: E402
from headwise_trainer.threads import set_threads  # noqa: E402

THREADS = int(os.environ.get("HEADWISE_TEST_THREADS", "1"))
set_threads(THREADS)
_BASELINE = dict(dtype=torch.get_default_dtype(), grad=torch.is_grad_enabled(),
                 deterministic=torch.are_deterministic_algorithms_enabled(),
                 anomaly=torch.is_anomaly_enabled(), torch_rng=torch.get_rng_state(),
                 numpy_rng=np.random.get_state(), python_rng=random.getstate())


def _reset_torch_state():
    set_threads(THREADS)
    torch.set_default_dtype(_BASELINE["dtype"])
    torch.set_grad_enabled(_BASELINE["grad"])
    torch.use_deterministic_algorithms(_BASELINE["deterministic"])
    torch.set_anomaly_enabled(_BASELINE["anomaly"])
    torch.set_rng_state(_BASELINE["torch_rng"])
    np.random.set_state(_BASELINE["numpy_rng"])
    random.setstate(_BASELINE["python_rng"])


@pytest.fixture(autouse=True)
def torch_state():
    """Every test starts from the same process-wide state, whatever ran before it (a module
    fixture or an earlier test calling a CLI that sets --threads): THREADS torch threads, the
    default dtype, grad mode, deterministic-algorithms and anomaly flags, and the global RNGs of
    torch, numpy and random as they were when this file was imported (so unseeded draws do not
    depend on the order of tests). After the test the same state is put back, and the
    environment and working directory are restored."""
    _reset_torch_state()
    env, cwd = dict(os.environ), os.getcwd()
    yield
    _reset_torch_state()
    if dict(os.environ) != env:
        os.environ.clear()
        os.environ.update(env)
    os.chdir(cwd)


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
