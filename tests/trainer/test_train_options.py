"""The options of `headwise-train train`: learning-rate schedules, gradient accumulation, bf16
autocast, dropout settings, early stopping with best.pt, sharded checkpoints, the run log, and
exact resume with all of them on; `--device cuda` without a GPU is a clear error."""
import json
import os

import pytest
import torch

from headwise_trainer.training import dev_eval
from headwise_trainer.model import run_state
from headwise_trainer.training.lr_schedule import learning_rate
from headwise_trainer.training.train import (TrainError, cpu_has_bf16, resolve_precision,
                                             run_training)
from test_train import ckpt_state, corpus, train_args  # noqa: F401  (corpus is a fixture)


def quiet(msg):
    pass


def test_schedules():
    lr = lambda s, kind: learning_rate(s, kind, 1.0, 10, 110, 0.1)  # noqa: E731
    for kind in ("inverse-sqrt", "constant", "cosine", "linear"):
        assert lr(1, kind) == pytest.approx(0.1) and lr(10, kind) == pytest.approx(1.0)
    assert lr(40, "inverse-sqrt") == pytest.approx(0.5)
    assert lr(500, "constant") == 1.0
    assert lr(60, "cosine") == pytest.approx(0.55) and lr(60, "linear") == pytest.approx(0.55)
    assert lr(35, "cosine") > lr(35, "linear")  # the cosine stays high longer
    assert lr(110, "cosine") == pytest.approx(0.1) and lr(999, "linear") == pytest.approx(0.1)
    with pytest.raises(ValueError, match="decay ends at step 5"):
        learning_rate(20, "cosine", 1.0, 10, 5)


def test_should_stop():
    h = lambda *b: [{"step": i, "dev_bleu": x} for i, x in enumerate(b)]  # noqa: E731
    assert not dev_eval.should_stop(h(1, 2, 3), 0, 0.2)           # patience 0: never
    assert not dev_eval.should_stop(h(5, 5), 2, 0.2)               # too short a history
    assert dev_eval.should_stop(h(5, 5.1, 5.19), 2, 0.2)           # up by less than 0.2
    assert not dev_eval.should_stop(h(5, 5.1, 5.2), 2, 0.2)        # up by 0.2
    assert not dev_eval.should_stop(h(5, 5.1, 5.2, 5.3, 5.4), 3, 0.2)  # a slow steady rise
    assert dev_eval.should_stop(h(5, 7, 6, 6.5), 2, 0.2)           # fell after the best
    assert dev_eval.best_record(h(5, 7, 7, 6))["step"] == 1        # first of equals
    assert dev_eval.spread(10, 3) == [0, 3, 6] and dev_eval.spread(3, 5) == [0, 1, 2]


def test_bad_options_are_clear_errors(corpus, tmp_path):  # noqa: F811
    with pytest.raises(TrainError, match="--update-freq 0: expected at least 1"):
        run_training(train_args(corpus, tmp_path / "a", "--steps", "2", "--update-freq", "0"),
                     log=quiet)
    with pytest.raises(ValueError, match="decay ends at step 5"):
        run_training(train_args(corpus, tmp_path / "b", "--steps", "5", "--lr-schedule",
                                "cosine", "--warmup", "10"), log=quiet)
    # Without --decay-steps the decay ends at the first invocation's --steps, recorded.
    run_training(train_args(corpus, tmp_path / "d", "--steps", "12", "--lr-schedule", "linear",
                            "--eval-every", "0"), log=quiet)
    assert ckpt_state(tmp_path / "d")["train_args"]["decay_steps"] == 12
    if not torch.cuda.is_available():
        with pytest.raises(TrainError, match="--device cuda: expected a CUDA GPU, found none"):
            run_training(train_args(corpus, tmp_path / "c", "--steps", "2", "--device", "cuda"),
                         log=quiet)
    assert resolve_precision("auto", torch.device("cpu")) == ("bf16" if cpu_has_bf16() else "fp32")


def test_update_freq_gradient_is_that_of_one_merged_batch():
    # Two batches accumulated (--update-freq 2) give the gradient of one batch holding their
    # sentences: the per-token mean over both, not the mean of two per-batch means.
    from conftest import small_config
    from headwise_trainer.data.batching import collate
    from headwise_trainer.model.marian import MarianMTModel
    from headwise_trainer.training.loop import accumulate_gradients
    torch.manual_seed(0)
    model = MarianMTModel(small_config())
    model.train()
    g = torch.Generator().manual_seed(1)
    sent = lambda n: torch.cat([torch.randint(1, 59, (n - 1,), generator=g),  # noqa: E731
                                torch.tensor([0])]).numpy()
    src = [sent(n) for n in (3, 5, 9, 2, 7)]
    tgt = [sent(n) for n in (2, 8, 3, 6, 4)]
    cpu = torch.device("cpu")

    def grads(batches):
        model.zero_grad(set_to_none=True)
        out = accumulate_gradients(model, [collate(src, tgt, b, 59, 59) for b in batches], 59,
                                   0.1, cpu, "fp32")
        return out, {n: p.grad.clone() for n, p in model.named_parameters()}

    (loss_a, ntok_a, _), ga = grads([[0, 1], [2, 3, 4]])
    (loss_b, ntok_b, _), gb = grads([[0, 1, 2, 3, 4]])
    assert ntok_a == ntok_b == 23 and loss_a == pytest.approx(loss_b, rel=1e-5)
    for n in ga:
        assert torch.allclose(ga[n], gb[n], rtol=1e-4, atol=1e-7), n
    # Normalising each batch by its own tokens would differ.
    (_, _, _), g0 = grads([[0, 1]])
    assert not torch.allclose(ga["model.shared.weight"], g0["model.shared.weight"] * 0.5)


def test_update_freq_reads_twice_the_batches(corpus, tmp_path):  # noqa: F811
    common = ("--precision", "fp32", "--steps", "3", "--checkpoint-every", "3")
    run_training(train_args(corpus, tmp_path / "acc", "--update-freq", "2", *common), log=quiet)
    assert ckpt_state(tmp_path / "acc")["batch_idx"] == 6


def test_bf16_tracks_fp32(corpus, tmp_path):  # noqa: F811
    hist = {}
    for p in ("fp32", "bf16"):
        r = run_training(train_args(corpus, tmp_path / p, "--precision", p, "--steps", "80",
                                    "--eval-every", "20", "--dev-bleu-sentences", "4",
                                    "--dropout", "0"), log=quiet)
        hist[p] = [h["dev_nll"] for h in r["history"]]
        assert json.load(open(tmp_path / p / "run.json"))["train_args"]["precision"] == p
    assert hist["fp32"][-1] < hist["fp32"][0] - 0.3
    for x, y in zip(hist["fp32"], hist["bf16"]):
        assert abs(x - y) < 0.05 * x, hist  # same curve; bf16 rounding only


def _resume_pair(corpus, tmp_path, extra, n, total):  # noqa: F811
    run_training(train_args(corpus, tmp_path / "a", "--steps", str(total), *extra), log=quiet)
    run_training(train_args(corpus, tmp_path / "b", "--steps", str(n), *extra), log=quiet)
    run_training(train_args(corpus, tmp_path / "b", "--steps", str(total), *extra, "--resume"),
                 log=quiet)
    return ckpt_state(tmp_path / "a"), ckpt_state(tmp_path / "b")


def test_resume_is_exact_with_every_option(corpus, tmp_path):  # noqa: F811
    extra = ("--max-tokens", "400", "--update-freq", "2", "--precision", "bf16",
             "--lr-schedule", "cosine", "--decay-steps", "20", "--warmup", "3", "--min-lr",
             "1e-4", "--attention-dropout", "0.1",
             "--activation-dropout", "0.1", "--eval-every", "4", "--dev-bleu-sentences", "5",
             "--dev-loss-sentences", "10", "--checkpoint-every", "6", "--keep", "3",
             "--shard-mib", "1")
    a, b = _resume_pair(corpus, tmp_path, extra, 6, 14)  # 11 steps an epoch: crosses one
    assert a["step"] == b["step"] == 14 and a["epoch"] == 1
    assert (a["epoch"], a["batch_idx"]) == (b["epoch"], b["batch_idx"])
    for name, t in a["model"].items():
        assert torch.equal(t, b["model"][name]), name
    for k, st in a["optimizer"]["state"].items():
        assert torch.equal(st["exp_avg_sq"], b["optimizer"]["state"][k]["exp_avg_sq"])
    strip = lambda h: [{k: v for k, v in r.items() if k != "eval_seconds"} for r in h]  # noqa
    assert strip(a["history"]) == strip(b["history"]) and len(a["history"]) == 3
    # Shards: every checkpoint (and best.pt) is a directory of parts + index.json.
    run = tmp_path / "b"
    ckpts = run_state.list_checkpoints(run)
    assert [s for s, _ in ckpts] == [8, 12, 14]  # eval steps 4, 8, 12, checkpoint 6, last 14
    assert all(os.path.isfile(os.path.join(p, "index.json")) for _, p in ckpts)
    assert os.path.isdir(run / "best.pt")
    # A sharded checkpoint is evaluated, exported and imported like a file.
    from headwise_trainer.evaluation.evaluate import load_model
    from headwise_trainer.model.import_model import load_start_model
    for p in (str(run / "best.pt"), ckpts[-1][1]):
        assert load_model(p)[2].startswith(p)
        assert load_start_model(p).state["step"] == run_state.load_checkpoint_file(p)["step"]
    # The log continues: both invocations in one train.log, with the progress fields.
    text = (run / "train.log").read_text()
    assert "resumed" in text and text.count("train: device cpu, precision bf16") == 2
    hist = json.loads((run / "history.json").read_text())
    assert [r["step"] for r in hist["history"]] == [4, 8, 12]
    assert hist["best"] == max(hist["history"], key=lambda r: r["dev_bleu"]) or \
        hist["best"]["dev_bleu"] == max(r["dev_bleu"] for r in hist["history"])


def test_early_stopping_keeps_the_best(corpus, tmp_path, capsys):  # noqa: F811
    # lr 0: the model never changes, so dev BLEU stays flat and patience 2 stops at the 3rd
    # evaluation; best.pt is the checkpoint of the first (the earliest of equals).
    run = tmp_path / "es"
    args = ("--lr", "0", "--eval-every", "3", "--dev-bleu-sentences", "4", "--patience", "2",
            "--checkpoint-every", "100", "--log-every", "1")
    r = run_training(train_args(corpus, run, "--steps", "50", *args), log=print)
    assert r["stopped_early"] and r["step"] == 9 and r["best"]["step"] == 3
    best = run_state.load_checkpoint_file(str(run / "best.pt"))
    assert best["step"] == 3 and not run_state.list_checkpoints(run)[0][0] == 3  # kept apart
    out = capsys.readouterr().out
    assert "stopped early" in out and "tok/s" in out and "ETA" in out and "dev BLEU" in out
    r2 = run_training(train_args(corpus, run, "--steps", "50", *args, "--resume"), log=print)
    assert r2["stopped_early"] and r2["step"] == 9
    assert "nothing to do" in capsys.readouterr().out
    # A longer patience lets the stopped run go on.
    r3 = run_training(train_args(corpus, run, "--steps", "12", *args[:-4], "--patience", "5",
                                 "--resume"), log=quiet)
    assert r3["step"] == 12 and not r3["stopped_early"]


def test_shards_round_trip_and_corruption(tmp_path):
    blob = os.urandom((5 << 20) // 2)  # 2.5 MiB -> parts of 1, 1 and 0.5 MiB
    run_state.write_shards(str(tmp_path / "s"), blob, 1)
    parts = sorted(p.name for p in (tmp_path / "s").iterdir())
    assert parts == ["index.json", "part-00000.bin", "part-00001.bin", "part-00002.bin"]
    assert max((tmp_path / "s" / p).stat().st_size for p in parts) == 1 << 20
    assert run_state.read_shards(str(tmp_path / "s")) == blob
    part = tmp_path / "s" / "part-00001.bin"
    part.write_bytes(part.read_bytes()[:-1])
    with pytest.raises(run_state.ResumeError, match="part-00001.bin: expected 1048576 bytes"):
        run_state.read_shards(str(tmp_path / "s"))
    part.unlink()
    with pytest.raises(run_state.ResumeError, match="part-00001.bin: shard missing"):
        run_state.read_shards(str(tmp_path / "s"))


def test_checkpoints_are_saved_on_the_cpu(corpus, tmp_path):  # noqa: F811
    run_training(train_args(corpus, tmp_path / "r", "--steps", "2"), log=quiet)
    st = ckpt_state(tmp_path / "r")
    tensors = list(st["model"].values()) + [t for s in st["optimizer"]["state"].values()
                                            for t in s.values() if torch.is_tensor(t)]
    assert tensors and all(t.device.type == "cpu" for t in tensors)
    moved = run_state.to_cpu({"a": [torch.ones(2)], "b": (torch.zeros(1), 3)})
    assert moved["b"][1] == 3 and moved["a"][0].device.type == "cpu"


def test_cpu_copy_decodes_like_the_training_model():
    # What dev evaluation decodes with when the model trains on a GPU (here from a CPU model).
    from conftest import SOURCES, random_model, small_config
    from headwise_trainer.model.decode import greedy
    model = random_model(small_config())
    copy = dev_eval.cpu_copy(model)
    assert copy is not model and not copy.training
    assert [h.ids for h in greedy(copy, SOURCES, 8)] == [h.ids for h in greedy(model, SOURCES, 8)]
