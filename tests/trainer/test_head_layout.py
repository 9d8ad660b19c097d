"""train --head-layout: a fixed head layout trained from scratch (the paper's control). The
removed heads are off from step 0 (their q/k/v rows never move), nothing else about the run
changes (an all-heads layout trains the same weights as no layout), it resumes exactly, and the
checkpoint loads with the layout as its test-time gates."""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))

from headwise_trainer.model import gates, run_state  # noqa: E402
from headwise_trainer.model.config import MarianConfig  # noqa: E402
from headwise_trainer.model.import_model import load_start_model  # noqa: E402
from headwise_trainer.model.marian import MarianMTModel  # noqa: E402
from headwise_trainer.training.train import TrainError, run_training  # noqa: E402
from conftest import THREADS  # noqa: E402
from test_train import corpus, ckpt_state, train_args  # noqa: E402,F401

SPEC = "enc.0=1,3; enc.1=none; dec.0=2; cross.0=0-1,3"
STEPS = ["--steps", "6", "--checkpoint-every", "3", "--keep", "5"]


def weights(state):
    return {k: v for k, v in state["model"].items() if ".head_gate." not in k}


def head_rows(t, h, head_dim=8):
    return t[h * head_dim:(h + 1) * head_dim]


def test_removed_heads_never_train(corpus, tmp_path):
    summary = []
    run_training(train_args(corpus, tmp_path / "r", *STEPS, "--head-layout", SPEC),
                 log=summary.append)
    state = ckpt_state(tmp_path / "r")
    assert state["train_args"]["head_layout"] == SPEC
    run_state.seed_all(1)
    init = MarianMTModel(MarianConfig.from_dict(state["config"])).state_dict()
    m = state["model"]
    kept = {"model.encoder.layers.0.self_attn": [1, 3], "model.encoder.layers.1.self_attn": [],
            "model.decoder.layers.0.self_attn": [2],
            "model.decoder.layers.0.encoder_attn": [0, 1, 3]}
    for block, heads in kept.items():
        la = m[f"{block}.head_gate.log_alpha"]
        assert [h for h in range(4) if la[h] > 0] == heads
        assert la.abs().eq(gates.FIXED_LOG_ALPHA).all()  # the gates never moved
        for h in range(4):
            for proj in ("q_proj", "k_proj", "v_proj"):
                w = f"{block}.{proj}.weight"
                same = torch.equal(head_rows(m[w], h), head_rows(init[w], h))
                assert same == (h not in heads), (w, h)
    assert "encoder_self: 2/4 0/4 (2/8)" in "\n".join(summary)
    model = load_start_model(str(tmp_path / "r")).model
    assert gates.head_layout(model) == {**kept}


def test_all_heads_layout_is_the_plain_run(corpus, tmp_path):
    run_training(train_args(corpus, tmp_path / "plain", *STEPS), log=lambda *_: None)
    run_training(train_args(corpus, tmp_path / "all", *STEPS, "--head-layout", "*.*=all"),
                 log=lambda *_: None)
    a, b = weights(ckpt_state(tmp_path / "plain")), weights(ckpt_state(tmp_path / "all"))
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_resume_is_exact_and_keeps_the_layout(corpus, tmp_path):
    run_training(train_args(corpus, tmp_path / "once", *STEPS, "--head-layout", SPEC),
                 log=lambda *_: None)
    run_training(train_args(corpus, tmp_path / "twice", "--steps", "3", "--checkpoint-every",
                            "3", "--head-layout", SPEC), log=lambda *_: None)
    run_training(train_args(corpus, tmp_path / "twice", *STEPS, "--resume"), log=lambda *_: None)
    a, b = ckpt_state(tmp_path / "once")["model"], ckpt_state(tmp_path / "twice")["model"]
    for k in a:
        assert torch.equal(a[k], b[k]), k
    with pytest.raises(TrainError, match="keeps its head layout"):
        run_training(train_args(corpus, tmp_path / "twice", "--steps", "9", "--resume",
                                "--head-layout", "enc.*=none"), log=lambda *_: None)


def test_bad_layout_is_an_error(corpus, tmp_path):
    with pytest.raises(ValueError, match="out of range"):
        run_training(train_args(corpus, tmp_path / "bad", *STEPS, "--head-layout", "enc.0=7"),
                     log=lambda *_: None)


def test_evaluate_and_export_read_a_layout_run(corpus, tmp_path):
    """`evaluate` and `export` load a --head-layout run with its gates (they used to refuse the
    gate tensors), so the exported checkpoint carries the layout for the converter."""
    from headwise_trainer import cli
    from headwise_trainer.model.checkpoint import load_checkpoint
    from headwise_trainer.evaluation.evaluate import run_evaluate, run_export
    run_training(train_args(corpus, tmp_path / "r", *STEPS, "--head-layout", SPEC),
                 log=lambda *_: None)
    args = cli.build_parser().parse_args(
        ["evaluate", "--model", str(tmp_path / "r"), "--data", str(corpus / "data"),
         "--split", "dev", "--threads", str(THREADS)])
    result = run_evaluate(args, log=lambda *_: None)
    assert result["gates"] == "test-time"
    run_export(cli.build_parser().parse_args(
        ["export", "--run", str(tmp_path / "r"), "--out", str(tmp_path / "ckpt")]),
        log=lambda *_: None)
    exported = load_checkpoint(str(tmp_path / "ckpt"))
    assert gates.head_layout(exported)["model.encoder.layers.1.self_attn"] == []
    assert gates.head_layout(exported)["model.decoder.layers.0.self_attn"] == [2]
