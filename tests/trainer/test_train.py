"""Training loop: a tiny run lowers the dev loss, resume is bit-identical, a corrupt checkpoint
gives a clear error, batching is deterministic, export -> load -> evaluate works end to end."""
import json
import os
import sys

import numpy as np
import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "trainer"))

from headwise_trainer import cli  # noqa: E402
from headwise_trainer.model import run_state  # noqa: E402
from headwise_trainer.data.batching import TokenBatcher  # noqa: E402
from headwise_trainer.training.train import TrainError, run_training  # noqa: E402
from headwise_trainer.training.lr_schedule import inverse_sqrt_lr  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from conftest import THREADS  # noqa: E402
from word_corpus import build_word_corpus  # noqa: E402


EN = ["file", "open", "close", "save", "print", "error", "user", "group", "name", "size",
      "new", "old"]
DE = ["Datei", "öffnen", "schließen", "speichern", "drucken", "Fehler", "Benutzer", "Gruppe",
      "Name", "Größe", "neu", "alt"]

TINY_MODEL = ["--d-model", "32", "--encoder-layers", "2", "--decoder-layers", "1", "--heads",
              "4", "--ffn", "64", "--max-positions", "64", "--threads", str(THREADS)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A small deterministic word-for-word 'translation' corpus and its vocabulary."""
    d = tmp_path_factory.mktemp("corpus")
    build_word_corpus(d, EN, DE, pairs=400, words=(1, 6))
    return d


def train_args(corpus, out, *extra):
    argv = ["train", "--data", str(corpus / "data"), "--vocab", str(corpus / "vocab"),
            "--out", str(out), *TINY_MODEL, "--max-tokens", "120", "--lr", "3e-3",
            "--warmup", "10", "--eval-every", "0", "--log-every", "1000", *extra]
    return cli.build_parser().parse_args(argv)


def ckpt_state(run_dir):
    return run_state.load_checkpoint_file(run_state.list_checkpoints(run_dir)[-1][1])


def test_inverse_sqrt_schedule():
    assert inverse_sqrt_lr(1, 1.0, 4) == 0.25
    assert inverse_sqrt_lr(4, 1.0, 4) == 1.0
    assert inverse_sqrt_lr(16, 1.0, 4) == 0.5


def test_batches_deterministic_and_within_budget():
    lens = np.random.default_rng(1).integers(1, 30, size=500)
    src = [np.zeros(int(n), dtype=np.int64) for n in lens]
    tgt = [np.zeros(int(n) + 1, dtype=np.int64) for n in lens]
    b = TokenBatcher(src, tgt, max_tokens=100, seed=3)
    e0, e0b, e1 = b.epoch_batches(0), b.epoch_batches(0), b.epoch_batches(1)
    assert all(np.array_equal(x, y) for x, y in zip(e0, e0b))
    assert any(not np.array_equal(x, y) for x, y in zip(e0, e1))
    assert sorted(np.concatenate(e0).tolist()) == list(range(500))  # every pair once
    for batch in e0:
        assert len(batch) * max(max(len(src[i]), len(tgt[i])) for i in batch) <= 100
    # Two ranks split the batches between them, no overlap, same count each.
    r0 = TokenBatcher(src, tgt, 100, 3, rank=0, world_size=2).epoch_batches(0)
    r1 = TokenBatcher(src, tgt, 100, 3, rank=1, world_size=2).epoch_batches(0)
    assert len(r0) == len(r1) and not set(np.concatenate(r0)) & set(np.concatenate(r1))


def test_tiny_training_lowers_dev_loss(corpus, tmp_path):
    args = train_args(corpus, tmp_path / "run", "--steps", "80", "--eval-every", "10",
                      "--dev-bleu-sentences", "4", "--checkpoint-every", "80")
    hist = run_training(args, log=lambda m: None)["history"]
    assert len(hist) == 8
    assert hist[-1]["dev_nll"] < hist[0]["dev_nll"] - 0.5, hist
    # Every evaluation writes a checkpoint; the newest two are kept, and best.pt.
    assert set(os.listdir(tmp_path / "run")) == {"run.json", "ckpt-70.pt", "ckpt-80.pt",
                                                 "best.pt", "history.json", "train.log"}


def test_resume_is_bit_identical(corpus, tmp_path):
    # One run of 2N steps vs N steps + resume for N more; N is mid-epoch and 2N crosses an
    # epoch boundary, with dropout on, so data position and RNG states all matter.
    more = ("--max-tokens", "400", "--precision", "fp32")  # 22 batches per epoch
    run_training(train_args(corpus, tmp_path / "a", "--steps", "30", "--checkpoint-every", "15",
                            *more),
                 log=lambda m: None)
    run_training(train_args(corpus, tmp_path / "b", "--steps", "15", "--checkpoint-every", "15",
                            *more),
                 log=lambda m: None)
    run_training(train_args(corpus, tmp_path / "b", "--steps", "30", "--checkpoint-every", "15",
                            "--resume"), log=lambda m: None)
    a, b = ckpt_state(tmp_path / "a"), ckpt_state(tmp_path / "b")
    assert a["step"] == b["step"] == 30 and a["epoch"] >= 1
    assert (a["epoch"], a["batch_idx"]) == (b["epoch"], b["batch_idx"])
    for name, t in a["model"].items():
        assert torch.equal(t, b["model"][name]), name
    for k, st in a["optimizer"]["state"].items():
        for key in ("exp_avg", "exp_avg_sq"):
            assert torch.equal(st[key], b["optimizer"]["state"][k][key])
    assert torch.equal(a["rng"][0]["torch"], b["rng"][0]["torch"])
    # Only the newest two checkpoints are kept.
    assert [s for s, _ in run_state.list_checkpoints(tmp_path / "a")] == [15, 30]


def test_checkpoints_load_where_torch_load_defaults_to_weights_only(corpus, tmp_path,
                                                                    monkeypatch):
    """torch >= 2.6 (the GPU machines' torch) loads with weights_only=True unless told otherwise,
    which refuses a checkpoint's RNG states and argument dicts: our loaders say False. Checked
    here by making 1.13's torch.load default to True, as 2.6 does."""
    run_training(train_args(corpus, tmp_path / "run", "--steps", "2", "--checkpoint-every", "2",
                            "--threads", str(THREADS)), log=lambda *_: None)
    ckpt = run_state.list_checkpoints(tmp_path / "run")[-1][1]
    real_load = torch.load

    def load_like_2_6(*a, **kw):
        kw.setdefault("weights_only", True)
        return real_load(*a, **kw)

    monkeypatch.setattr(torch, "load", load_like_2_6)
    with pytest.raises(Exception):
        torch.load(ckpt, map_location="cpu")  # what a bare call would now do
    assert run_state.load_checkpoint_file(ckpt)["step"] == 2
    from headwise_trainer.sweep.point_eval import run_facts
    assert run_facts(str(tmp_path / "run"))["steps"] == 2
    run_training(train_args(corpus, tmp_path / "run", "--steps", "3", "--resume", "--threads",
                            str(THREADS)), log=lambda *_: None)
    assert run_state.load_checkpoint_file(run_state.list_checkpoints(tmp_path / "run")[-1][1])[
        "step"] == 3
    # Checkpoints written in shards (a directory per checkpoint) read the same way.
    run_training(train_args(corpus, tmp_path / "run", "--steps", "4", "--resume", "--threads",
                            str(THREADS), "--shard-mib", "1"), log=lambda *_: None)
    sharded = run_state.list_checkpoints(tmp_path / "run")[-1][1]
    assert run_state.is_shard_dir(sharded)
    assert run_facts(str(tmp_path / "run"))["steps"] == 4
    assert run_facts(sharded)["steps"] == 4


def test_resume_on_another_device_says_so(corpus, tmp_path):
    # --device is not fixed by the checkpoint (a GPU run can go on on the CPU); the log says
    # that the continued path is not bit for bit the one the first device would take.
    out = tmp_path / "run"
    run_training(train_args(corpus, out, "--steps", "1", "--threads", str(THREADS)),
                 log=lambda *_: None)
    lines = []
    run_training(train_args(corpus, out, "--steps", "2", "--resume", "--threads",
                            str(THREADS)), log=lines.append)
    assert not [m for m in lines if "was trained on" in m]  # same device: no note
    path = run_state.list_checkpoints(out)[-1][1]
    st = run_state.load_checkpoint_file(path)
    st["train_args"]["device"] = "cuda"
    run_state.save_checkpoint(str(out), st)
    run_training(train_args(corpus, out, "--steps", "3", "--resume", "--threads",
                            str(THREADS)), log=lines.append)
    assert [m for m in lines if "was trained on cuda, resumed on cpu" in m]
    assert ckpt_state(out)["step"] == 3


def test_bf16_on_a_cpu_without_native_bf16_is_noted(monkeypatch):
    from headwise_trainer.training import train as tr
    cpu = torch.device("cpu")
    monkeypatch.setattr(tr, "cpu_has_bf16", lambda: False)
    assert "26x" in tr.slow_precision_note("bf16", cpu)
    assert tr.slow_precision_note("fp32", cpu) is None
    assert tr.resolve_precision("auto", cpu) == "fp32"
    monkeypatch.setattr(tr, "cpu_has_bf16", lambda: True)
    assert tr.slow_precision_note("bf16", cpu) is None
    assert tr.resolve_precision("auto", cpu) == "bf16"
    assert tr.slow_precision_note("bf16", torch.device("cuda", 0)) is None


def test_corrupt_resume_file_is_a_clear_error(corpus, tmp_path):
    run_training(train_args(corpus, tmp_path / "c", "--steps", "10", "--checkpoint-every", "5"),
                 log=lambda m: None)
    newest = tmp_path / "c" / "ckpt-10.pt"
    blob = newest.read_bytes()
    newest.write_bytes(blob[:len(blob) // 2])
    with pytest.raises(run_state.ResumeError, match=r"ckpt-10\.pt: cannot read the training "
                                                     r"checkpoint.*ckpt-5\.pt may be intact"):
        run_training(train_args(corpus, tmp_path / "c", "--steps", "20", "--resume"),
                     log=lambda m: None)
    assert (tmp_path / "c" / "ckpt-5.pt").exists() and newest.exists()  # nothing removed
    # Not a checkpoint at all.
    torch.save({"hello": 1}, tmp_path / "other.pt")
    with pytest.raises(run_state.ResumeError, match="expected a headwise-train checkpoint"):
        run_state.load_checkpoint_file(str(tmp_path / "other.pt"))
    # A checkpoint whose config disagrees with its tensors.
    st = run_state.load_checkpoint_file(str(tmp_path / "c" / "ckpt-5.pt"))
    st["config"]["d_model"] = 64
    torch.save(st, tmp_path / "mismatch.pt")
    with pytest.raises(run_state.ResumeError, match="saved tensors disagree with the saved config"):
        from headwise_trainer.evaluation.evaluate import load_model
        load_model(str(tmp_path / "mismatch.pt"))
    # Checkpoints present but no --resume: refuse rather than overwrite.
    with pytest.raises(TrainError, match="already holds checkpoints"):
        run_training(train_args(corpus, tmp_path / "c", "--steps", "20"), log=lambda m: None)


def test_export_then_evaluate(corpus, tmp_path, capsys):
    run_training(train_args(corpus, tmp_path / "r", "--steps", "20", "--checkpoint-every", "20"),
                 log=lambda m: None)
    assert cli.main(["export", "--run", str(tmp_path / "r"), "--out",
                     str(tmp_path / "ckpt")]) == 0
    assert sorted(os.listdir(tmp_path / "ckpt")) == ["config.json", "model.safetensors",
                                                     "source.spm", "target.spm", "vocab.json"]
    from headwise_trainer.model.checkpoint import load_checkpoint
    loaded = load_checkpoint(tmp_path / "ckpt").state_dict()
    trained = ckpt_state(tmp_path / "r")["model"]
    for name, t in loaded.items():
        assert torch.equal(t, trained[name]), name  # F32 export is exact
    for model_path in (tmp_path / "r", tmp_path / "ckpt"):
        out = tmp_path / f"scores-{model_path.name}.json"
        assert cli.main(["evaluate", "--model", str(model_path), "--data",
                         str(corpus / "data"), "--vocab", str(corpus / "vocab"), "--json",
                         str(out), "--threads", str(THREADS)]) == 0
        res = json.loads(out.read_text())
        assert res["sentences"] > 0 and 0.0 <= res["bleu"] <= 100.0
        buckets = res["by_source_length"]  # every sentence in exactly one bucket
        assert buckets and sum(b["sentences"] for b in buckets.values()) == res["sentences"]
    r1 = json.loads((tmp_path / "scores-r.json").read_text())
    r2 = json.loads((tmp_path / "scores-ckpt.json").read_text())
    assert (r1["bleu"], r1["chrf"]) == (r2["bleu"], r2["chrf"])
    # Masking heads changes the model; a bad mask spec is a clear error.
    assert cli.main(["evaluate", "--model", str(tmp_path / "ckpt"), "--data",
                     str(corpus / "data"), "--mask-heads", "model.encoder.layers.0.self_attn=9",
                     "--threads", str(THREADS)]) == 1
    assert "head '9' is not an index in [0, 4)" in capsys.readouterr().err


def test_ddp_two_processes_smoke(corpus, tmp_path):
    # 2 local processes on gloo (the built-in --nproc launcher sets the torchrun environment).
    # Rank 0 writes the checkpoints after checking that both replicas hold the same parameters.
    import subprocess
    entry = os.path.join(os.path.dirname(__file__), "..", "..", "trainer", "headwise-train")
    base = [sys.executable, entry, "train", "--nproc", "2", "--data", str(corpus / "data"),
            "--vocab", str(corpus / "vocab"), "--out", str(tmp_path / "ddp"), *TINY_MODEL,
            "--max-tokens", "400", "--eval-every", "0", "--checkpoint-every", "4"]
    env = dict(os.environ, PYTHONPATH="")
    r = subprocess.run(base + ["--steps", "4"], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(base + ["--steps", "8", "--resume"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "resumed" in r.stdout
    st = ckpt_state(tmp_path / "ddp")
    assert st["step"] == 8 and st["world_size"] == 2 and len(st["rng"]) == 2
    # The two ranks drew different dropout masks (seeded seed + rank).
    assert not torch.equal(st["rng"][0]["torch"], st["rng"][1]["torch"])
    # Resuming with another process count would change the data split: refused.
    r = subprocess.run([sys.executable, entry, "train", "--data", str(corpus / "data"),
                        "--vocab", str(corpus / "vocab"), "--out", str(tmp_path / "ddp"),
                        *TINY_MODEL, "--steps", "12", "--resume"], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 1 and "written by 2 processes, resumed with 1" in r.stderr


def test_gpu_choices_checked_without_a_gpu(monkeypatch):
    """What --device cuda decides, with torch.cuda's answers stubbed: a process needs a GPU of
    its own, auto precision is bf16 from compute capability 8 on (torch 2.x's
    is_bf16_supported() also says yes where bf16 is only emulated), and a checkpoint holds and
    restores the training GPU's random state only (an older checkpoint's list of every GPU's
    state gives that GPU's entry), and a GPU run asks for deterministic kernels."""
    from headwise_trainer.training import train as tr
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setenv("LOCAL_RANK", "1")
    with pytest.raises(tr.TrainError, match="found 1 GPU"):
        tr.resolve_device("cuda")
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    was = torch.are_deterministic_algorithms_enabled()
    try:
        dev = tr.resolve_device("cuda")
        # an exact resume on a GPU: deterministic cuBLAS workspace and kernels
        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
        assert torch.are_deterministic_algorithms_enabled()
        assert not torch.backends.cudnn.benchmark
    finally:
        torch.use_deterministic_algorithms(was)
    assert dev == torch.device("cuda", 0)
    for cap, want in (((7, 0), "fp32"), ((7, 5), "fp32"), ((8, 0), "bf16"), ((9, 0), "bf16")):
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda d=None, c=cap: c)
        assert tr.resolve_precision("auto", dev) == want
    assert tr.resolve_precision("fp32", dev) == "fp32"
    calls = []
    monkeypatch.setattr(torch.cuda, "get_rng_state", lambda d: torch.tensor([d.index]))
    monkeypatch.setattr(torch.cuda, "set_rng_state",
                        lambda t, d: calls.append((t.tolist(), d.index)))
    gpu1 = torch.device("cuda", 1)
    st = run_state.rng_state(gpu1)
    assert st["cuda"].tolist() == [1]
    assert "cuda" not in run_state.rng_state(torch.device("cpu"))
    run_state.set_rng_state(st, gpu1)
    old = dict(st, cuda=[torch.tensor([10]), torch.tensor([11])])
    run_state.set_rng_state(old, gpu1)
    run_state.set_rng_state(old, torch.device("cuda", 5))  # no entry for it: stays as seeded
    run_state.set_rng_state(st, torch.device("cpu"))       # a GPU run resumed on the CPU
    assert calls == [([1], 1), ([11], 1)]


def test_launcher_stops_workers_that_hang_after_finishing(capfd):
    """A worker that marked itself done but never exits (torch's gloo teardown can deadlock) is
    stopped GRACE seconds later and is not a failure; a worker's failure is the exit code."""
    import time
    from headwise_trainer.training import launch as ddp_launch
    worker = ("import os, sys, time\n"
              "sys.path.insert(0, sys.argv[1])\n"
              "from headwise_trainer.training.launch import mark_done\n"
              "rank = int(os.environ['RANK'])\n"
              "if sys.argv[2] != 'fail':\n"
              "    mark_done(rank)\n"
              "if rank == 1 and sys.argv[2] == 'hang':\n"
              "    time.sleep(120)\n"
              "sys.exit(3 if rank == 1 and sys.argv[2] in ('fail', 'crash') else 0)\n")
    trainer = os.path.join(os.path.dirname(__file__), "..", "..", "trainer")
    cmd = [sys.executable, "-c", worker, trainer]
    t0 = time.monotonic()
    assert ddp_launch.launch(2, ["hang"], command=cmd, grace=1.0) == 0
    assert time.monotonic() - t0 < 60
    assert "worker(s) 1 finished but did not exit 1 s later" in capfd.readouterr().err
    assert ddp_launch.launch(2, ["fail"], command=cmd, grace=1.0) == 3
    capfd.readouterr()
    # Code 3 after mark_done (a crash in the teardown): reported, the work is complete.
    assert ddp_launch.launch(2, ["crash"], command=cmd, grace=1.0) == 0
    assert "worker 1 exited with code 3 after it had finished" in capfd.readouterr().err
    assert ddp_launch.launch(2, ["ok"], command=cmd, grace=1.0) == 0


def test_launcher_killed_from_outside_takes_its_workers_with_it(tmp_path):
    """A launcher killed with SIGKILL (a test's timeout) leaves no worker behind (Linux)."""
    import signal
    import subprocess
    import time
    trainer = os.path.join(os.path.dirname(__file__), "..", "..", "trainer")
    worker = ("import os, sys, time\n"
              "open(os.path.join(sys.argv[1], 'pid-' + os.environ['RANK']), 'w')"
              ".write(str(os.getpid()))\n"
              "time.sleep(120)\n")
    launcher = ("import sys\n"
                "sys.path.insert(0, sys.argv[1])\n"
                "from headwise_trainer.training.launch import launch\n"
                "launch(2, [sys.argv[2]], command=[sys.executable, '-c', sys.argv[3]])\n")
    p = subprocess.Popen([sys.executable, "-c", launcher, trainer, str(tmp_path), worker])
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("pid-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    pids = [int(f.read_text()) for f in sorted(tmp_path.glob("pid-*"))]
    assert len(pids) == 2
    os.kill(p.pid, signal.SIGKILL)
    p.wait()

    def alive(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        # A zombie (killed, not yet reaped by init) is gone too.
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    deadline = time.monotonic() + 30
    while any(alive(q) for q in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(q) for q in pids)
