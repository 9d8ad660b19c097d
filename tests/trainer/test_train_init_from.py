"""`headwise-train train --init-from START`: a new run that starts from START's weights (a
checkpoint directory or a training checkpoint), records where it started, resumes exactly, and
refuses start points it cannot continue (another architecture, another vocabulary, gates)."""
import json

import pytest
import torch

from headwise_trainer.data.spm_vocab import Vocab
from headwise_trainer.model.checkpoint import export_checkpoint
from headwise_trainer.model.gates import HeadGate
from headwise_trainer.model.import_model import load_start_model
from headwise_trainer.training.loop import param_checksum
from headwise_trainer.training.train import TrainError, load_init, run_training
from test_train import ckpt_state, corpus, train_args  # noqa: F401  (corpus is a fixture)

FP32 = ("--precision", "fp32", "--max-tokens", "400")


def quiet(msg):
    pass


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):  # noqa: F811
    """A tiny run of 40 steps and its export as a checkpoint directory (F32)."""
    d = tmp_path_factory.mktemp("start")
    run_training(train_args(corpus, d / "run", "--steps", "40", *FP32), log=quiet)
    start = load_start_model(str(d / "run"))
    vocab = Vocab.load(str(corpus / "vocab"))
    export_checkpoint(start.model, d / "ckpt", vocab=vocab.id_to_piece,
                      source_spm=str(corpus / "vocab" / "source.spm"),
                      target_spm=str(corpus / "vocab" / "target.spm"))
    return d


def test_start_weights_are_loaded_and_recorded(corpus, trained, tmp_path):  # noqa: F811
    args = train_args(corpus, tmp_path / "w", "--init-from", str(trained / "ckpt"),
                      "--dropout", "0.3", "--steps", "2", *FP32)
    model, config = load_init(args, Vocab.load(str(corpus / "vocab")))
    start = load_start_model(str(trained / "ckpt")).model
    assert all(torch.equal(t, start.state_dict()[k]) for k, t in model.state_dict().items())
    assert config.dropout == 0.3 and start.config.dropout != 0.3  # this run's dropout
    assert config.d_model == start.config.d_model

    run_training(args, log=quiet)
    run = json.loads((tmp_path / "w" / "run.json").read_text())
    assert run["train_args"]["init_from"] == str(trained / "ckpt")
    assert run["train_args"]["init_sha256"] == param_checksum(start)
    assert run["config"]["dropout"] == 0.3
    state = ckpt_state(tmp_path / "w")
    assert state["train_args"]["init_sha256"] == param_checksum(start)


def test_warm_start_begins_where_the_start_point_is(corpus, trained, tmp_path):  # noqa: F811
    # The first step's loss of a warm start is the trained model's, well below a fresh run's.
    lines = {}
    for name, extra in (("fresh", ()), ("warm", ("--init-from", str(trained / "ckpt")))):
        log = []
        run_training(train_args(corpus, tmp_path / name, "--steps", "1", "--log-every", "1",
                                *FP32, *extra), log=log.append)
        lines[name] = [m for m in log if "loss" in m]
    loss = {k: float(v[0].split("loss")[1].split()[0].strip(":= ,")) for k, v in lines.items()}
    assert loss["warm"] < loss["fresh"] - 0.3, loss  # 3.50 against 4.18 when written


def test_history_begins_with_the_start_points_dev_record(corpus, trained, tmp_path):  # noqa: F811
    from headwise_trainer.training import dev_eval
    args = train_args(corpus, tmp_path / "e", "--init-from", str(trained / "ckpt"), "--steps",
                      "4", "--eval-every", "2", "--dev-bleu-sentences", "20", *FP32)
    run_training(args, log=quiet)
    history = json.loads((tmp_path / "e" / "history.json").read_text())["history"]
    assert [r["step"] for r in history] == [0, 2, 4]
    # Step 0 is START itself, scored as every evaluation is.
    from headwise_trainer.data.batching import encode_split
    vocab = Vocab.load(str(corpus / "vocab"))
    dev = encode_split(vocab, args.data, "dev", args.max_len)
    start = load_start_model(str(trained / "ckpt")).model
    again = dev_eval.evaluate_dev(start, dev, vocab, args, 0, 0)
    assert (again["dev_nll"], again["dev_bleu"]) == (history[0]["dev_nll"], history[0]["dev_bleu"])


def test_warm_started_run_resumes_exactly(corpus, trained, tmp_path):  # noqa: F811
    start = ("--init-from", str(trained / "run"), *FP32)  # a run directory as START
    run_training(train_args(corpus, tmp_path / "a", "--steps", "16", "--checkpoint-every", "8",
                            *start), log=quiet)
    run_training(train_args(corpus, tmp_path / "b", "--steps", "8", "--checkpoint-every", "8",
                            *start), log=quiet)
    # The resumed invocation names no --init-from: the run's start comes from its checkpoint.
    run_training(train_args(corpus, tmp_path / "b", "--steps", "16", "--checkpoint-every", "8",
                            "--resume"), log=quiet)
    a, b = ckpt_state(tmp_path / "a"), ckpt_state(tmp_path / "b")
    assert a["step"] == b["step"] == 16
    assert b["train_args"]["init_from"] == str(trained / "run")
    for name, t in a["model"].items():
        assert torch.equal(t, b["model"][name]), name


def test_start_points_that_cannot_continue_are_clear_errors(corpus, trained, tmp_path):  # noqa: F811
    with pytest.raises(TrainError, match=r"architecture options disagree.*--d-model 48 "
                                         r"\(START: 32\)"):
        run_training(train_args(corpus, tmp_path / "a", "--init-from", str(trained / "ckpt"),
                                "--d-model", "48"), log=quiet)
    gated = load_start_model(str(trained / "ckpt")).model
    _, _, _, block = next(iter(gated.attention_blocks()))
    block.head_gate = HeadGate(block.num_heads)
    vocab = Vocab.load(str(corpus / "vocab"))
    export_checkpoint(gated, tmp_path / "gated", vocab=vocab.id_to_piece,
                      source_spm=str(corpus / "vocab" / "source.spm"),
                      target_spm=str(corpus / "vocab" / "target.spm"))
    with pytest.raises(TrainError, match="the start point has head gates"):
        run_training(train_args(corpus, tmp_path / "b", "--init-from", str(tmp_path / "gated")),
                     log=quiet)
    with pytest.raises(Exception, match="not found"):
        run_training(train_args(corpus, tmp_path / "c", "--init-from", str(tmp_path / "none")),
                     log=quiet)
