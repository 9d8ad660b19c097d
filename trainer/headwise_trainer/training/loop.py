"""The training loop: base training's (train.py) and, through its extension points, pruning's
(pruning/prune.py).

One optimiser step:
  1. take `update_freq` batches at the data position (epoch, batch index); an epoch that runs
     out moves the position to the next epoch's first batch (batching.TokenBatcher: the batches
     are a function of (seed, epoch), so the position is all a checkpoint needs to record)
  2. learning_rates(step)      set the optimiser's rates for this (1-based) step
  3. zero the gradients; backward(batches): forward and backward pass
  4. clip(); Adam step; the step count and the position advance (a finished epoch moves the
     position on at once, so a checkpoint always records a normalised one)
  5. progress line (train_log.Progress); after_step()
  6. every --eval-every steps: dev loss/BLEU (dev_eval.evaluate_dev) on the main process,
     logged, after_dev(record), appended to the history; stop_early() decides early stopping
  7. a checkpoint every --checkpoint-every steps, at the last step, when stopping early, and
     (checkpoint_on_eval) after every evaluation: checkpoint_state() is what it holds
     (run_state.save_checkpoint: atomic, keep-last-N); after_save(path, record)

TrainingLoop is base training's behaviour; a subclass overrides the extension points
(learning_rates, backward, clip, after_step, reported_epoch, after_dev, stop_early,
checkpoint_state, after_save) and the class attributes. The loop itself decides nothing about
the arithmetic: a subclass that keeps the base's extension points computes what train.py
computed before the loop had its own module, and a resumed run (the state a checkpoint holds)
continues bit-identically.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import time
from typing import List, Optional, Sequence, Tuple

import torch

from ..data.batching import EncodedSplit, TokenBatcher, collate
from ..model import run_state
from . import dev_eval
from .losses import smoothed_loss
from .lr_schedule import learning_rate
from .train_log import Progress, RunLog


class LoopError(ValueError):
    pass


def args_dict(args) -> dict:
    """The parsed arguments as run.json and the checkpoints record them (without func)."""
    return {k: v for k, v in vars(args).items() if k != "func"}


def autocast(device: torch.device, precision: str):
    """bf16 autocast of the forward pass (matrix products in bf16, weights, optimiser and the
    loss in fp32), or nothing for fp32."""
    if precision != "bf16":
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


def accumulate_gradients(net, micro, pad: int, smoothing: float, device: torch.device,
                         precision: str, ddp: bool = False):
    """Adds to .grad the gradient of sum(loss over the batches `micro`) / (their non-pad
    target tokens), i.e. of the per-token mean over all of them, as one batch holding their
    sentences would give. Under DDP only the last backward all-reduces. Returns (summed
    loss, target tokens, source tokens)."""
    ntok = sum(int((y != pad).sum()) for _, _, _, y in micro)
    loss_sum, n_src = 0.0, 0
    for j, (x, m, d, y) in enumerate(micro):
        last = j == len(micro) - 1
        with (net.no_sync() if ddp and not last else contextlib.nullcontext()):
            x, m, d, y = x.to(device), m.to(device), d.to(device), y.to(device)
            with autocast(device, precision):
                logits = net(x, m, d)
            loss, _ = smoothed_loss(logits, y, pad, smoothing)
            (loss / max(ntok, 1)).backward()
        loss_sum += float(loss)
        n_src += int(m.sum())
    return loss_sum, ntok, n_src


def param_checksum(model) -> str:
    h = hashlib.sha256()
    for t in model.state_dict().values():
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


class TrainingLoop:
    """Runs optimiser steps from a position up to args.steps (or an early stop). Reads from
    args: steps, label_smoothing, clip_norm, eval_every, checkpoint_every, log_every, keep, out,
    and what learning_rates, backward, stop_early and dev_eval.evaluate_dev read."""

    checkpoint_on_eval = True   # every evaluation also writes a checkpoint

    def __init__(self, args, model, opt, batcher: TokenBatcher, train: EncodedSplit,
                 dev: EncodedSplit, vocab, device: torch.device, log: RunLog, *,
                 net=None, config=None, step: int = 0, epoch: int = 0, batch_idx: int = 0,
                 history: Optional[List[dict]] = None, seconds_before: float = 0.0,
                 rank: int = 0, world: int = 1):
        self.args, self.model, self.opt, self.batcher = args, model, opt, batcher
        self.net = net if net is not None else model
        self.config = config if config is not None else model.config
        self.train, self.dev, self.vocab, self.device, self.log = train, dev, vocab, device, log
        self.step, self.epoch, self.batch_idx = step, epoch, batch_idx
        self.batch_epoch = epoch  # the epoch of the last batch a step took
        self.history = history if history is not None else []
        self.seconds_before, self.rank, self.world = seconds_before, rank, world
        self.is_main = rank == 0
        self.pad = self.config.pad_token_id
        self.start_id = self.config.decoder_start_token_id
        self.update_freq = getattr(args, "update_freq", 1)  # batches per optimiser step
        self.t_start = time.time()
        self.stopped = False  # set by run(): an early stop

    # ---- extension points ---------------------------------------------------------------

    def learning_rates(self, step: int) -> float:
        """Sets the rates of optimiser step `step` (1-based); returns the one the log shows."""
        a = self.args
        lr = learning_rate(step, a.lr_schedule, a.lr, a.warmup, a.decay_steps, a.min_lr)
        for g in self.opt.param_groups:
            g["lr"] = lr
        return lr

    def backward(self, micro: Sequence[Tuple[torch.Tensor, ...]]) -> Tuple[float, int]:
        """Forward and backward over the step's batches (x, mask, decoder input, labels), on
        gradients set to None; returns (the loss the progress line shows, tokens processed)."""
        loss_sum, ntok, n_src = accumulate_gradients(
            self.net, micro, self.pad, self.args.label_smoothing, self.device,
            self.args.precision, self.world > 1)
        return loss_sum / max(ntok, 1), n_src + ntok

    def clip(self) -> None:
        if self.args.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip_norm)

    def reported_epoch(self) -> int:
        """The epoch the progress line and the dev record show: the position's."""
        return self.epoch

    def after_step(self) -> None:
        pass

    def after_dev(self, record: dict) -> None:
        """Called with a dev record after it is logged, before it joins the history."""

    def stop_early(self) -> bool:
        return dev_eval.should_stop(self.history, self.args.patience, self.args.min_delta)

    def checkpoint_state(self, rngs: list) -> dict:
        """What a checkpoint holds (run_state.load_checkpoint_file reads it back)."""
        return {"step": self.step, "epoch": self.epoch, "batch_idx": self.batch_idx,
                "model": self.model.state_dict(), "optimizer": self.opt.state_dict(),
                "rng": rngs, "config": self.config.to_dict(),
                "train_args": args_dict(self.args), "history": self.history,
                "best": dev_eval.best_record(self.history), "world_size": self.world,
                "train_seconds": self.train_seconds()}

    def after_save(self, path: str, record: Optional[dict]) -> None:
        """After a checkpoint; `record` is this step's dev record, if it evaluated."""
        if self.is_main and record is not None:
            best = dev_eval.best_record(self.history)
            if best is record:
                run_state.link_best(self.args.out, path)
            dev_eval.write_history(self.args.out, self.history,
                                   {"best": best, "stopped_early": self.stopped})

    # ---- the loop -----------------------------------------------------------------------

    def train_seconds(self) -> float:
        return self.seconds_before + time.time() - self.t_start

    def save(self) -> str:
        """Writes a checkpoint (rank 0; under DDP after checking that the replicas agree);
        returns its path ("" on the other ranks)."""
        rngs = [run_state.rng_state(self.device)]
        if self.world > 1:
            rngs = [None] * self.world
            torch.distributed.all_gather_object(rngs, run_state.rng_state(self.device))
            sums = [None] * self.world  # replicas must agree before rank 0 writes for all
            torch.distributed.all_gather_object(sums, param_checksum(self.model))
            if len(set(sums)) != 1:
                raise LoopError(f"step {self.step}: DDP replicas diverged (parameter "
                                f"checksums {sums}); expected identical parameters on every "
                                f"rank")
        if not self.is_main:
            return ""
        return run_state.save_checkpoint(self.args.out, self.checkpoint_state(rngs),
                                         keep=self.args.keep,
                                         shard_mib=getattr(self.args, "shard_mib", 0))

    def _next_batches(self, batches):
        if self.batch_idx >= len(batches):
            self.epoch, self.batch_idx = self.epoch + 1, 0
            batches = self.batcher.epoch_batches(self.epoch)
        return batches

    def run(self) -> bool:
        """Steps until args.steps or an early stop; returns True when it stopped early."""
        a = self.args
        progress = Progress(self.log, self.step, a.steps, a.log_every, self.history)
        self.t_start = time.time()
        batches = self.batcher.epoch_batches(self.epoch)
        self.stopped = False
        while self.step < a.steps and not self.stopped:
            micro = []
            for _ in range(self.update_freq):
                batches = self._next_batches(batches)
                micro.append(collate(self.train.src, self.train.tgt, batches[self.batch_idx],
                                     self.pad, self.start_id))
                self.batch_epoch = self.epoch
                self.batch_idx += 1
            lr = self.learning_rates(self.step + 1)
            self.opt.zero_grad(set_to_none=True)
            loss, tokens = self.backward(micro)
            self.clip()
            self.opt.step()
            self.step += 1
            batches = self._next_batches(batches)
            progress.update(self.step, tokens, loss, lr, self.reported_epoch())
            self.after_step()
            evaluated = bool(a.eval_every) and self.step % a.eval_every == 0
            record = None
            if evaluated and self.is_main:
                record = dev_eval.evaluate_dev(self.model, self.dev, self.vocab, a, self.step,
                                               self.reported_epoch(), self.device)
                self.log("dev: " + json.dumps(record))
                self.after_dev(record)
                self.history.append(record)
                self.stopped = self.stop_early()
            if evaluated and self.world > 1:
                flag = [self.stopped]
                torch.distributed.broadcast_object_list(flag, src=0)
                self.stopped = flag[0]
            if ((evaluated and self.checkpoint_on_eval) or self.stopped
                    or self.step % a.checkpoint_every == 0 or self.step == a.steps):
                self.after_save(self.save(), record)
        progress.close()
        return self.stopped
