"""Base training: label-smoothed cross-entropy, Adam with inverse-square-root warm-up,
token-based batches, periodic dev loss/BLEU, exact resume, optional DDP (torchrun, gloo).

--head-layout SPEC (keep_heads.py syntax, the converter's --keep-heads) trains a fixed head layout
from scratch, the control of Voita et al.: every block gets a frozen 0/1 gate (gates.fixed_gates),
so the removed heads are off from step 0; initialisation, data order and schedule are those of
the same run without the option.

Exactness: the data order is a function of (seed, epoch) (batching.py), the learning rate a
function of the step, and every checkpoint stores model, optimiser, data position and RNG
states, so N steps + resume + M steps gives the same parameters as N+M steps in one go.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import Optional

import torch
import torch.nn.functional as F

from . import run_state
from .batching import TokenBatcher, collate, encode_split
from .config import MarianConfig
from .gates import fixed_gates, layout_summary
from .keep_heads import apply_spec, parse_spec, spec_text
from .model import MarianMTModel
from .spm_vocab import Vocab

# Training arguments a resumed run takes from its checkpoint (they define the run); the rest
# (steps, eval/checkpoint/log intervals) may change between invocations.
FIXED_ARGS = ("data", "vocab", "seed", "max_tokens", "max_len", "lr", "warmup",
              "label_smoothing", "clip_norm")


class TrainError(ValueError):
    pass


def inverse_sqrt_lr(step: int, peak: float, warmup: int) -> float:
    """Linear warm-up to `peak` over `warmup` steps, then peak * sqrt(warmup / step)."""
    step = max(step, 1)
    return peak * min(step / warmup, math.sqrt(warmup / step))


def smoothed_loss(logits: torch.Tensor, labels: torch.Tensor, pad_id: int, eps: float):
    """Sum of label-smoothed cross-entropy over non-pad labels, and that token count."""
    ntok = int((labels != pad_id).sum())
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                           ignore_index=pad_id, label_smoothing=eps, reduction="sum")
    return loss, ntok


def build_config(args, vocab: Vocab) -> MarianConfig:
    return MarianConfig(
        d_model=args.d_model, encoder_layers=args.encoder_layers,
        decoder_layers=args.decoder_layers, encoder_attention_heads=args.heads,
        decoder_attention_heads=args.decoder_heads or args.heads,
        encoder_ffn_dim=args.ffn, decoder_ffn_dim=args.ffn,
        activation_function=args.activation, vocab_size=len(vocab),
        max_position_embeddings=args.max_positions, pad_token_id=vocab.pad_id,
        eos_token_id=vocab.eos_id, decoder_start_token_id=vocab.pad_id, scale_embedding=True,
        share_encoder_decoder_embeddings=True, tie_word_embeddings=True,
        normalize_before=False, dropout=args.dropout)


class Progress:
    """tqdm bar on a terminal, plain log lines otherwise; both show tokens/s and ETA."""

    def __init__(self, start_step: int, total: int, log_every: int, enabled: bool):
        self.total, self.log_every, self.enabled = total, log_every, enabled
        self.t0, self.s0, self.tokens = time.time(), start_step, 0
        self.bar = None
        if enabled and sys.stderr.isatty():
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, initial=start_step, unit="step", dynamic_ncols=True)
            except ImportError:
                pass

    def update(self, step: int, tokens: int, loss: float, lr: float, epoch: int) -> None:
        if not self.enabled:
            return
        self.tokens += tokens
        dt = max(time.time() - self.t0, 1e-9)
        tps = self.tokens / dt
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(loss=f"{loss:.3f}", lr=f"{lr:.2e}", tok_s=f"{tps:.0f}")
        elif step % self.log_every == 0 or step == self.total:
            eta = (self.total - step) * dt / max(step - self.s0, 1)
            print(f"step {step}/{self.total} | epoch {epoch} | loss {loss:.4f} | lr {lr:.3e} | "
                  f"{tps:.0f} tok/s | elapsed {_hms(dt)} | ETA {_hms(eta)}", flush=True)

    def write(self, msg: str) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.write(msg)
        else:
            print(msg, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _hms(sec: float) -> str:
    sec = int(sec)
    return f"{sec // 3600}:{sec % 3600 // 60:02d}:{sec % 60:02d}"


@torch.no_grad()
def dev_loss(model, dev, pad_id: int, start_id: int, max_tokens: int) -> float:
    """Mean per-token NLL (no smoothing) of the dev split."""
    model.eval()
    batches = TokenBatcher(dev.src, dev.tgt, max_tokens, seed=0).epoch_batches(0)
    total, ntok = 0.0, 0
    for idx in batches:
        x, m, d, y = collate(dev.src, dev.tgt, idx, pad_id, start_id)
        loss, n = smoothed_loss(model(x, m, d), y, pad_id, 0.0)
        total, ntok = total + float(loss), ntok + n
    model.train()
    return total / max(ntok, 1)


def _dist_info():
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1 and not torch.distributed.is_initialized():
        torch.distributed.init_process_group("gloo")
    return rank, world


def run_training(args, log=print) -> dict:
    """Trains (or resumes) into args.out. Returns a summary dict (final step, last dev)."""
    torch.set_num_threads(args.threads)
    rank, world = _dist_info()
    is_main = rank == 0
    os.makedirs(args.out, exist_ok=True)
    resume_path = run_state.resolve_resume(args.out, args.resume)
    if resume_path is None and run_state.list_checkpoints(args.out):
        raise TrainError(f"{args.out} already holds checkpoints; pass --resume (continue the "
                         "run) or choose another --out")
    state = run_state.load_checkpoint_file(resume_path) if resume_path else None
    if state is not None:
        for k in FIXED_ARGS:  # the run's defining arguments come from the checkpoint
            setattr(args, k, state["train_args"][k])
        saved_layout = state["train_args"].get("head_layout")
        if getattr(args, "head_layout", None) and \
                spec_text(args.head_layout) != (saved_layout or ""):
            raise TrainError(f"--head-layout {args.head_layout!r}: {resume_path} was trained "
                             f"with {saved_layout!r}; a resumed run keeps its head layout")
        args.head_layout = saved_layout
        if state.get("world_size", 1) != world:
            raise TrainError(f"{resume_path}: written by {state.get('world_size', 1)} processes, "
                             f"resumed with {world}; expected the same number")
    elif getattr(args, "head_layout", None):
        args.head_layout = spec_text(args.head_layout)  # run.json records the spec itself

    vocab = Vocab.load(args.vocab)
    config = MarianConfig.from_dict(state["config"]) if state else build_config(args, vocab)
    if config.vocab_size != len(vocab):
        raise TrainError(f"vocabulary {args.vocab} has {len(vocab)} ids, the run's model "
                         f"expects {config.vocab_size}")
    train = encode_split(vocab, args.data, "train", args.max_len)
    dev = encode_split(vocab, args.data, "dev", args.max_len)
    batcher = TokenBatcher(train.src, train.tgt, args.max_tokens, args.seed, rank, world)
    pad, start = config.pad_token_id, config.decoder_start_token_id

    run_state.seed_all(args.seed + rank)
    model = MarianMTModel(config)
    if getattr(args, "head_layout", None):
        layout = apply_spec(parse_spec(args.head_layout), model)
        fixed_gates(model, layout)
        if is_main:
            log("train: fixed head layout (removed heads masked from step 0):\n"
                + layout_summary(model))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
    step, epoch, batch_idx, history, seconds_before = 0, 0, 0, [], 0.0
    if state is not None:
        run_state.load_model_state(model, state, resume_path)
        opt.load_state_dict(state["optimizer"])
        step, epoch, batch_idx = state["step"], state["epoch"], state["batch_idx"]
        history = state.get("history", [])
        seconds_before = float(state.get("train_seconds", 0.0))
        run_state.set_rng_state(state["rng"][rank])
        if is_main:
            log(f"train: resumed {resume_path} at step {step} (epoch {epoch}, batch {batch_idx})")
    elif is_main:
        with open(os.path.join(args.out, "run.json"), "w", encoding="utf-8") as f:
            json.dump({"config": config.to_dict(), "train_args": _args_dict(args),
                       "world_size": world}, f, indent=2, sort_keys=True)
        n_par = sum(p.numel() for p in model.parameters())
        log(f"train: {n_par / 1e6:.2f}M parameters; {len(train.src)} train pairs "
            f"({train.dropped_too_long} longer than {args.max_len} ids dropped), "
            f"{len(dev.src)} dev pairs; {len(batcher.epoch_batches(0))} batches/epoch/rank")
    net = torch.nn.parallel.DistributedDataParallel(model) if world > 1 else model
    model.train()

    def save():
        rngs = [run_state.rng_state()]
        if world > 1:
            rngs = [None] * world
            torch.distributed.all_gather_object(rngs, run_state.rng_state())
            sums = [None] * world  # replicas must agree before rank 0 writes for all of them
            torch.distributed.all_gather_object(sums, _param_checksum(model))
            if len(set(sums)) != 1:
                raise TrainError(f"step {step}: DDP replicas diverged (parameter checksums "
                                 f"{sums}); expected identical parameters on every rank")
        if is_main:
            run_state.save_checkpoint(args.out, {
                "step": step, "epoch": epoch, "batch_idx": batch_idx,
                "model": model.state_dict(), "optimizer": opt.state_dict(), "rng": rngs,
                "config": config.to_dict(), "train_args": _args_dict(args),
                "history": history, "world_size": world,
                "train_seconds": seconds_before + time.time() - t_start}, keep=args.keep)

    progress = Progress(step, args.steps, args.log_every, is_main)
    t_start = time.time()
    batches = batcher.epoch_batches(epoch)
    while step < args.steps:
        if batch_idx >= len(batches):
            epoch, batch_idx = epoch + 1, 0
            batches = batcher.epoch_batches(epoch)
        x, m, d, y = collate(train.src, train.tgt, batches[batch_idx], pad, start)
        lr = inverse_sqrt_lr(step + 1, args.lr, args.warmup)
        for g in opt.param_groups:
            g["lr"] = lr
        loss, ntok = smoothed_loss(net(x, m, d), y, pad, args.label_smoothing)
        opt.zero_grad(set_to_none=True)
        (loss / max(ntok, 1)).backward()
        if args.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_norm)
        opt.step()
        step, batch_idx = step + 1, batch_idx + 1
        progress.update(step, int(m.sum()) + ntok, float(loss) / max(ntok, 1), lr, epoch)
        if args.eval_every and step % args.eval_every == 0 and is_main:
            history.append(evaluate_dev(model, dev, vocab, args, step, epoch, progress))
        if step % args.checkpoint_every == 0 or step == args.steps:
            if batch_idx >= len(batches):
                epoch, batch_idx = epoch + 1, 0
                batches = batcher.epoch_batches(epoch)
            save()
    progress.close()
    if world > 1:
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    return {"step": step, "epoch": epoch, "history": history}


def _param_checksum(model) -> str:
    import hashlib
    h = hashlib.sha256()
    for t in model.state_dict().values():
        h.update(t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def evaluate_dev(model, dev, vocab, args, step, epoch, progress) -> dict:
    from .evaluate import translate_ids
    from .metrics import corpus_bleu, corpus_chrf
    t0 = time.time()
    nll = dev_loss(model, dev, vocab.pad_id, model.config.decoder_start_token_id, args.max_tokens)
    n = min(args.dev_bleu_sentences, len(dev.src)) if args.dev_bleu_sentences else len(dev.src)
    hyps = [vocab.decode_target(ids) for ids in translate_ids(model, dev.src[:n], beam=1)]
    bleu = corpus_bleu(hyps, dev.tgt_text[:n])
    chrf = corpus_chrf(hyps, dev.tgt_text[:n])
    rec = {"step": step, "epoch": epoch, "dev_nll": round(nll, 4), "dev_ppl": round(math.exp(nll), 3),
           "dev_bleu": round(bleu.score, 2), "dev_chrf": round(chrf, 2), "dev_sentences": n,
           "eval_seconds": round(time.time() - t0, 1)}
    progress.write("dev: " + json.dumps(rec))
    return rec


def _args_dict(args) -> dict:
    return {k: v for k, v in vars(args).items() if k != "func"}
