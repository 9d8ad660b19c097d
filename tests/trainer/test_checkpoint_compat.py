"""Checkpoints stay readable wherever the trainer's code lives, and pruning resumes exactly on
training's loop.

A training or pruning checkpoint (model/run_state.py) is a pickled dict of lists, numbers,
strings, tensors and numpy RNG state: no trainer class or function, so moving a module (as the
move to subpackages did) cannot break loading a run that an older checkout wrote, nor resuming
it. Pruning runs on training's loop (training/loop.py) with hooks: a pruning run resumed from a
checkpoint written at the end of an epoch goes on exactly as the uninterrupted run, and its
log keeps its convention (a step record names the epoch of the step's batch, the checkpoint the
normalised position)."""
import os
import pickletools
import sys
import zipfile

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "trainer"))

from headwise_trainer import cli  # noqa: E402
from headwise_trainer.model import run_state  # noqa: E402
from headwise_trainer.pruning.prune import run_prune  # noqa: E402
from headwise_trainer.pruning.prune_log import read_log  # noqa: E402
from headwise_trainer.training.train import run_training  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from conftest import THREADS  # noqa: E402
from word_corpus import build_word_corpus  # noqa: E402

EN = ["file", "open", "close", "save", "print", "error", "user", "group"]
DE = ["Datei", "öffnen", "schließen", "speichern", "drucken", "Fehler", "Benutzer", "Gruppe"]
# What a checkpoint's pickle may refer to: torch's tensor rebuilding, numpy's arrays (the RNG
# state), OrderedDict (state dicts) and the byte decoding of numpy's pickles.
ALLOWED = {"torch", "torch._utils", "collections", "numpy", "numpy.core.multiarray", "_codecs",
           "builtins"}


def quiet(*_):
    pass


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A tiny corpus (about 4 batches per epoch at --max-tokens 400) and a 4-step training run
    (2 batches per step) with a checkpoint every 2 steps."""
    d = tmp_path_factory.mktemp("compat")
    build_word_corpus(d, EN, DE, pairs=200, words=(1, 5))
    args = cli.build_parser().parse_args([
        "train", "--data", str(d / "data"), "--vocab", str(d / "vocab"), "--out",
        str(d / "run"), "--d-model", "16", "--encoder-layers", "1", "--decoder-layers", "1",
        "--heads", "2", "--ffn", "24", "--max-positions", "64", "--threads", str(THREADS),
        "--precision", "fp32", "--max-tokens", "400", "--update-freq", "2", "--steps", "4",
        "--checkpoint-every", "2", "--eval-every", "0", "--warmup", "2", "--lr", "3e-3"])
    run_training(args, log=quiet)
    return d


def prune_args(base, out, *extra):
    return cli.build_parser().parse_args([
        "prune", "--from", str(base / "run"), "--data", str(base / "data"), "--out", str(out),
        "--threads", str(THREADS), "--max-tokens", "800", "--warmup", "2", "--lr", "1e-3",
        "--lambda", "0.1", "--gate-lr", "0.1", "--log-every", "1", *extra])


def pickle_modules(path):
    """The modules of every global a torch.save file's pickle refers to."""
    with zipfile.ZipFile(path) as z:
        data = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    modules, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            modules.add(arg.split(" ")[0])
        elif op.name == "STACK_GLOBAL":
            modules.add(strings[-2])
        if isinstance(arg, str):
            strings.append(arg)
    return modules


def test_the_pickle_scan_sees_a_pickled_class(tmp_path):
    torch.save({"args": run_state.ResumeError("x")}, tmp_path / "x.pt")
    assert "headwise_trainer.model.run_state" in pickle_modules(tmp_path / "x.pt")


def test_checkpoints_pickle_no_trainer_code(base, tmp_path):
    run_prune(prune_args(base, tmp_path / "prune", "--steps", "2", "--checkpoint-every", "1"),
              log=quiet)
    paths = [p for run in (base / "run", tmp_path / "prune")
             for _, p in run_state.list_checkpoints(run)]
    assert len(paths) == 4
    for p in paths:
        found = pickle_modules(p)
        assert "torch._utils" in found and found <= ALLOWED, (p, found)


def batches_per_epoch(base, max_tokens):
    from headwise_trainer.data.batching import TokenBatcher, encode_split
    from headwise_trainer.data.spm_vocab import Vocab
    train = encode_split(Vocab.load(str(base / "vocab")), str(base / "data"), "train", 128)
    return len(TokenBatcher(train.src, train.tgt, max_tokens, 1).epoch_batches(0))


def test_pruning_resumes_exactly_across_an_epoch_boundary(base, tmp_path):
    # Checkpoint and split at step n, the step that takes epoch 0's last batch.
    n = batches_per_epoch(base, 800)
    assert 2 <= n <= 8
    extra = ("--checkpoint-every", str(n), "--eval-every", "2", "--dev-bleu-sentences", "2")
    total = str(n + 3)
    run_prune(prune_args(base, tmp_path / "straight", "--steps", total, *extra), log=quiet)
    run_prune(prune_args(base, tmp_path / "split", "--steps", str(n), *extra), log=quiet)
    run_prune(prune_args(base, tmp_path / "split", "--steps", total, "--resume", *extra),
              log=quiet)
    a, b = (run_state.load_checkpoint_file(run / f"ckpt-{total}.pt")
            for run in (tmp_path / "straight", tmp_path / "split"))
    assert (a["epoch"], a["batch_idx"]) == (b["epoch"], b["batch_idx"]) == (1, 3)
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k
    for sa, sb in zip(a["optimizer"]["state"].values(), b["optimizer"]["state"].values()):
        assert torch.equal(sa["exp_avg"], sb["exp_avg"])
        assert torch.equal(sa["exp_avg_sq"], sb["exp_avg_sq"])
    assert torch.equal(a["rng"][0]["torch"], b["rng"][0]["torch"])

    def records(run):  # without the timings
        return [{k: v for k, v in r.items() if k != "eval_seconds"} for r in read_log(run)
                if r["event"] in ("step", "dev")]
    assert records(tmp_path / "straight") == records(tmp_path / "split")
    # Step n is logged with the epoch of its batch (0); the checkpoint after it records the
    # normalised position, epoch 1's first batch.
    epochs = {r["step"]: r["epoch"] for r in records(tmp_path / "straight")
              if r["event"] == "step"}
    assert (epochs[n], epochs[n + 1]) == (0, 1)
    state = run_state.load_checkpoint_file(tmp_path / "straight" / f"ckpt-{n}.pt")
    assert (state["epoch"], state["batch_idx"]) == (1, 0)
