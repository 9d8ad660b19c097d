"""Checkpoint averaging (`headwise-train average`, `export --average N`) and the dev-curve
plot (`headwise-train plot-run`)."""
import json
import os

import pytest
import torch

from headwise_trainer import cli
from headwise_trainer.model import run_state
from headwise_trainer.model.average import AverageError, average_states
from headwise_trainer.model.checkpoint import load_checkpoint
from headwise_trainer.training.train import TrainError, run_training
from test_train import corpus, train_args  # noqa: F401  (corpus is a fixture)


def quiet(msg):
    pass


def test_average_states():
    a = {"w": torch.tensor([1.0, 2.0, 0.1]), "i": torch.tensor([3])}
    b = {"w": torch.tensor([3.0, 5.0, 0.2]), "i": torch.tensor([3])}
    same = average_states([a, a, a], ["a", "a", "a"])
    assert torch.equal(same["w"], a["w"]) and torch.equal(same["i"], a["i"])
    mean = average_states([a, b], ["a", "b"])
    assert torch.equal(mean["w"], ((a["w"].double() + b["w"].double()) / 2).float())
    assert mean["w"].dtype == torch.float32
    with pytest.raises(AverageError, match="b: i .* differs from a"):
        average_states([a, dict(b, i=torch.tensor([4]))], ["a", "b"])
    with pytest.raises(AverageError, match="b: w has shape \\[2\\], a \\[3\\]; expected the same"):
        average_states([a, dict(b, w=torch.zeros(2))], ["a", "b"])
    with pytest.raises(AverageError, match="tensors differ from a"):
        average_states([a, {"w": b["w"]}], ["a", "b"])


@pytest.fixture(scope="module")
def run(corpus, tmp_path_factory):  # noqa: F811
    out = tmp_path_factory.mktemp("avg") / "run"
    run_training(train_args(corpus, out, "--steps", "9", "--checkpoint-every", "3", "--keep",
                            "3", "--eval-every", "3", "--dev-bleu-sentences", "4"), log=quiet)
    return out


def test_average_cli_and_export(run, tmp_path):
    ckpts = run_state.list_checkpoints(run)
    assert [s for s, _ in ckpts] == [3, 6, 9]
    states = [run_state.load_checkpoint_file(p)["model"] for _, p in ckpts]
    out = tmp_path / "avg.pt"
    assert cli.main(["average", "--run", str(run), "--last", "2", "--out", str(out)]) == 0
    avg = run_state.load_checkpoint_file(str(out))
    assert [r["step"] for r in avg["averaged_from"]] == [6, 9]
    for k, t in states[2].items():
        want = ((states[1][k].double() + states[2][k].double()) / 2).to(t.dtype)
        assert torch.equal(avg["model"][k], want), k
    assert cli.main(["average", "--ckpt", ckpts[2][1], "--ckpt", ckpts[2][1], "--out",
                     str(tmp_path / "same.pt")]) == 0
    same = run_state.load_checkpoint_file(str(tmp_path / "same.pt"))["model"]
    assert all(torch.equal(same[k], t) for k, t in states[2].items())
    # export --average 3: the mean of all three, F32 exact; the <pad> row stays zero.
    assert cli.main(["export", "--run", str(run), "--average", "3", "--out",
                     str(tmp_path / "ckpt")]) == 0
    exported = load_checkpoint(tmp_path / "ckpt").state_dict()
    for k, t in states[2].items():
        want = (sum(s[k].double() for s in states) / 3).to(t.dtype)
        assert torch.equal(exported[k], want), k
    pad = json.loads((tmp_path / "ckpt" / "config.json").read_text())["pad_token_id"]
    assert not exported["model.shared.weight"][pad].any()
    # An averaged file has no optimiser: it cannot be resumed; too few checkpoints; a
    # ckpt-STEP.pt name for the output would pass for a resumable checkpoint.
    with pytest.raises(TrainError, match="averaged checkpoint .* cannot be resumed"):
        run_training(train_args(run.parent.parent / "x", tmp_path / "r", "--resume", str(out),
                                "--steps", "12"), log=quiet)
    assert cli.main(["export", "--run", str(run), "--average", "4", "--out",
                     str(tmp_path / "c4")]) == 1
    assert cli.main(["average", "--run", str(run), "--last", "2", "--out",
                     str(tmp_path / "ckpt-5.pt")]) == 1
    assert cli.main(["average", "--run", str(run), "--last", "2", "--out", str(out)]) == 1


def test_plot_run(run, tmp_path, capsys):
    png = tmp_path / "curve.png"
    assert cli.main(["plot-run", "--run", str(run), "--out", str(png)]) == 0
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    assert "3 evaluations" in capsys.readouterr().out
    os.makedirs(tmp_path / "empty")
    assert cli.main(["plot-run", "--run", str(tmp_path / "empty"), "--out", str(png)]) == 1
    assert "no history.json and no ckpt-*.pt" in capsys.readouterr().err


def test_plot_run_after_the_run_it_continues(run, tmp_path, capsys):
    # A warm-started run drawn after its prior run (a history.json file), shifted by --offset.
    prior = tmp_path / "prior.json"
    prior.write_text(json.dumps({"history": [{"step": 100, "dev_bleu": 1.0, "dev_nll": 5.0},
                                             {"step": 200, "dev_bleu": 2.0, "dev_nll": 4.0}]}))
    png = tmp_path / "both.png"
    assert cli.main(["plot-run", "--run", str(run), "--out", str(png), "--prior", str(prior),
                     "--offset", "200"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "3 evaluations" in capsys.readouterr().out
    assert cli.main(["plot-run", "--run", str(run), "--out", str(png), "--offset", "200"]) == 1
    assert "--offset 200: expected --prior" in capsys.readouterr().err
