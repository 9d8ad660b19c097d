"""Nothing lost when training is killed: a `headwise-train train` process killed with SIGKILL in
the middle of a run leaves only complete checkpoints (each written to a temporary name and
renamed), `--resume` continues from the newest of them, and the resumed run ends bit-identical
to a run that was never interrupted."""
import os
import signal
import subprocess
import sys
import time

import torch

from headwise_trainer.model import run_state
from headwise_trainer.training.train import run_training
from test_train import TINY_MODEL, corpus, train_args  # noqa: F401  (corpus is a fixture)

ENTRY = os.path.join(os.path.dirname(__file__), "..", "..", "trainer", "headwise-train")


def test_killed_run_resumes_from_its_last_complete_checkpoint(corpus, tmp_path):  # noqa: F811
    run = tmp_path / "killed"
    argv = [sys.executable, ENTRY, "train", "--data", str(corpus / "data"), "--vocab",
            str(corpus / "vocab"), "--out", str(run), *TINY_MODEL, "--max-tokens", "120",
            "--lr", "3e-3", "--warmup", "10", "--eval-every", "0", "--log-every", "1000",
            "--steps", "100000", "--checkpoint-every", "3"]
    log = tmp_path / "train.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                env=dict(os.environ, PYTHONPATH=""))
    try:
        deadline = time.monotonic() + 240
        while not any(step >= 9 for step, _ in run_state.list_checkpoints(str(run))):
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "no checkpoint written in time"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL

    # Every checkpoint on disk is complete; a temporary being written at the kill is ignored.
    saved = run_state.list_checkpoints(str(run))
    assert saved, os.listdir(run)
    for step, path in saved:
        assert run_state.load_checkpoint_file(path)["step"] == step
    last = saved[-1][0]
    target = last + 6

    run_training(train_args(corpus, run, "--steps", str(target), "--checkpoint-every", "3",
                            "--resume"), log=lambda m: None)
    whole = tmp_path / "whole"
    run_training(train_args(corpus, whole, "--steps", str(target), "--checkpoint-every", "3"),
                 log=lambda m: None)
    a = run_state.load_checkpoint_file(run_state.list_checkpoints(str(run))[-1][1])
    b = run_state.load_checkpoint_file(run_state.list_checkpoints(str(whole))[-1][1])
    assert a["step"] == b["step"] == target
    assert (a["epoch"], a["batch_idx"]) == (b["epoch"], b["batch_idx"])
    for name, t in b["model"].items():
        assert torch.equal(a["model"][name], t), name
