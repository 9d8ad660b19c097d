"""The <pad> embedding row (nn.Embedding padding_idx convention, as in OPUS-MT checkpoints):
zero at initialisation, exactly zero after training (bf16 and fp32), after export (F16) and
reload; a model without the freeze would move it (through the tied output projection), and an
imported checkpoint's row is kept as it is, also through fine-tuning steps."""
import pytest
import torch

from conftest import random_model, small_config
from headwise_trainer import cli
from headwise_trainer.model.checkpoint import export_checkpoint, load_checkpoint
from headwise_trainer.model.marian import MarianMTModel
from headwise_trainer.training.train import run_training
from test_train import ckpt_state, corpus, train_args  # noqa: F401  (corpus is a fixture)


PAD = 59


def steps(model, n=3):
    """n Adam steps on random data with label smoothing (the loss that reaches the pad row)."""
    from headwise_trainer.training.losses import smoothed_loss
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(0)
    model.train()
    for _ in range(n):
        x = torch.randint(0, 59, (4, 6), generator=g)
        d = torch.randint(0, 59, (4, 5), generator=g)
        y = torch.randint(0, 59, (4, 5), generator=g)
        y[:, -1] = PAD  # padded labels too
        loss, n_tok = smoothed_loss(model(x, torch.ones_like(x), d), y, PAD, 0.1)
        opt.zero_grad()
        (loss / n_tok).backward()
        opt.step()
    return model


@pytest.mark.parametrize("shared", [True, False])
def test_pad_rows_stay_zero_and_would_move_without_the_freeze(shared):
    torch.manual_seed(0)
    frozen = MarianMTModel(small_config(share_encoder_decoder_embeddings=shared))
    free = MarianMTModel(small_config(share_encoder_decoder_embeddings=shared))
    free.load_state_dict(frozen.state_dict())
    for emb in frozen.embeddings():
        assert not emb.weight[PAD].any()  # zero at initialisation
    frozen.freeze_pad_rows()
    frozen.freeze_pad_rows()  # idempotent
    steps(frozen)
    steps(free)
    for emb in frozen.embeddings():
        assert not emb.weight[PAD].any()
    # Without the freeze the tied output projection gives the pad row a gradient.
    assert free.model.decoder_embeddings.weight[PAD].abs().max() > 1e-4


def test_imported_rows_are_kept():
    model = random_model(small_config())  # every row random, the pad row included
    before = model.model.shared.weight[PAD].clone()
    assert before.abs().max() > 0
    model.freeze_pad_rows()
    steps(model)
    assert torch.equal(model.model.shared.weight[PAD], before)


def test_trained_exported_reloaded_pad_row_is_zero(corpus, tmp_path):  # noqa: F811
    for precision in ("bf16", "fp32"):
        run = tmp_path / precision
        run_training(train_args(corpus, run, "--steps", "6", "--precision", precision),
                     log=lambda m: None)
        st = ckpt_state(run)
        pad = st["config"]["pad_token_id"]
        assert not st["model"]["model.shared.weight"][pad].any(), precision
        assert st["model"]["model.shared.weight"].abs().max() > 0
        out = tmp_path / f"export-{precision}"
        assert cli.main(["export", "--run", str(run), "--out", str(out), "--dtype", "f16"]) == 0
        row = load_checkpoint(out).model.shared.weight[pad]
        assert row.dtype == torch.float32 and not row.any()


def test_export_load_keeps_a_nonzero_imported_row(tmp_path):
    model = random_model(small_config())
    export_checkpoint(model, tmp_path / "opus")
    loaded = load_checkpoint(tmp_path / "opus")
    assert torch.equal(loaded.model.shared.weight[PAD], model.model.shared.weight[PAD])
