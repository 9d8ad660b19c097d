"""Base training: label-smoothed cross-entropy, Adam with a warm-up learning-rate schedule
(lr_schedule.py), token-based batches with optional gradient accumulation (--update-freq),
bf16 autocast (fp32 master weights and optimiser), periodic dev loss/BLEU with early stopping
(dev_eval.py), keep-last-N plus best checkpoints, exact resume, optional DDP (--nproc or
torchrun; gloo on the CPU, NCCL on GPUs), CPU or CUDA (--device). This module prepares a run
(arguments, model, data, optimiser, resume) and runs loop.TrainingLoop, the training loop that
pruning extends.

--head-layout SPEC (model/keep_heads.py syntax, the converter's --keep-heads) trains a fixed
head layout from scratch, the control of Voita et al.: every block gets a frozen 0/1 gate
(gates.fixed_gates), so the removed heads are off from step 0; initialisation, data order and
schedule are those of the same run without the option.

Exactness: the data order is a function of (seed, epoch) (data/batching.py), the learning rate
a function of the step, and every checkpoint stores model, optimiser, data position and RNG
states, so N steps + resume + M steps gives the same parameters as N+M steps in one go (on the
same device with the same --threads; CUDA kernels may add their own nondeterminism).

The <pad> embedding row is zero at initialisation and gets no gradient (MarianMTModel.
freeze_pad_rows), so it stays exactly zero, as in OPUS-MT checkpoints.

--init-from START is a warm start: a new run (step 0, new Adam moments, its own schedule and
data order) whose weights are START's instead of a random initialisation. It is how a run
continues on a machine that lost the run directory: from the weights that were committed (the
shipped base), with a schedule chosen for the remaining budget. The architecture is START's
(the architecture options must agree with it), the dropout options are this run's; run.json
and every checkpoint record START and the sha256 of its weights; with --eval-every the history
begins with START's own dev record at step 0. A warm start is not a resume: nothing of START's
optimiser state or data position is used.
"""
from __future__ import annotations

import datetime
import gc
import glob
import json
import os
from typing import Optional

import torch

from ..threads import set_threads
from ..data.batching import TokenBatcher, encode_split
from ..data.spm_vocab import Vocab
from ..model import run_state
from ..model.config import MarianConfig
from ..model.gates import fixed_gates, layout_summary
from ..model.import_model import load_start_model
from ..model.keep_heads import apply_spec, parse_spec, spec_text
from ..model.marian import MarianMTModel
from . import dev_eval
from .launch import mark_done
from .loop import TrainingLoop, args_dict, param_checksum
from .lr_schedule import learning_rate
from .train_log import RunLog, bleu_summary, hms

# Training arguments a resumed run takes from its checkpoint (they define the run); the rest
# (steps, device, threads, eval/checkpoint/log intervals, patience) may change between
# invocations. OLD_DEFAULTS: the value a checkpoint written before the argument existed ran with.
FIXED_ARGS = ("data", "vocab", "seed", "max_tokens", "max_len", "lr", "warmup",
              "label_smoothing", "clip_norm", "lr_schedule", "min_lr", "decay_steps",
              "update_freq", "precision", "init_from", "init_sha256")
OLD_DEFAULTS = {"lr_schedule": "inverse-sqrt", "min_lr": 0.0, "decay_steps": 0,
                "update_freq": 1, "precision": "fp32", "init_from": None, "init_sha256": None}
# The options that define the architecture, as (argument, MarianConfig field); with --init-from
# they must agree with the start point's config.
ARCH_ARGS = (("d_model", "d_model"), ("encoder_layers", "encoder_layers"),
             ("decoder_layers", "decoder_layers"), ("heads", "encoder_attention_heads"),
             ("ffn", "encoder_ffn_dim"), ("activation", "activation_function"),
             ("max_positions", "max_position_embeddings"))
PRECISIONS = ("bf16", "fp32")


class TrainError(ValueError):
    pass


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
        normalize_before=False, dropout=args.dropout,
        attention_dropout=getattr(args, "attention_dropout", 0.0),
        activation_dropout=getattr(args, "activation_dropout", 0.0))


def cpu_has_bf16() -> bool:
    """True when the CPU multiplies bf16 natively (AMX or AVX-512 BF16)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = f.read()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def slow_precision_note(precision: str, device: torch.device) -> Optional[str]:
    """A note for the log when bf16 autocast runs on a CPU that has no native bf16: torch then
    converts every operand, 26x slower than fp32 on an AVX2-only EPYC
    (bench/results/2026-12-06-train-precision-avx2.md); None otherwise."""
    if precision != "bf16" or device.type != "cpu" or cpu_has_bf16():
        return None
    return ("note: bf16 autocast on a CPU without native bf16 (no AMX or AVX-512 BF16) converts "
            "every operand and trains many times slower than fp32 (26x on an AVX2-only CPU); "
            "--precision auto picks fp32 on such a CPU")


def deterministic_cuda() -> None:
    """What an exact resume on a GPU needs: cuBLAS with a fixed workspace (the variable must be
    set before the process's first cuBLAS call) and deterministic kernels where torch has them
    (warn_only: an operation without one warns instead of failing the run; cuDNN autotuning off,
    it picks kernels by timing). The CPU computes deterministically without this."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False


def resolve_device(name: str) -> torch.device:
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda":
        if not torch.cuda.is_available():
            raise TrainError(f"--device cuda: expected a CUDA GPU, found none (torch "
                             f"{torch.__version__}, CUDA build: {torch.version.cuda or 'no'})")
        local = int(os.environ.get("LOCAL_RANK", "0"))
        if local >= torch.cuda.device_count():
            raise TrainError(f"--device cuda: process {local} of this machine needs GPU {local}, "
                             f"found {torch.cuda.device_count()} GPU(s); expected --nproc at "
                             f"most the number of GPUs")
        deterministic_cuda()
        return torch.device("cuda", local)
    raise TrainError(f"--device {name!r}: expected cpu or cuda")


def resolve_precision(name: str, device: torch.device) -> str:
    """'auto' -> bf16 where the device computes it natively, else fp32."""
    if name == "auto":
        if device.type == "cuda":  # bf16 arithmetic from compute capability 8 (Ampere) on;
            # is_bf16_supported() also says yes where torch 2.x only emulates it (V100, T4)
            return "bf16" if torch.cuda.get_device_capability(device)[0] >= 8 else "fp32"
        return "bf16" if cpu_has_bf16() else "fp32"
    if name not in PRECISIONS:
        raise TrainError(f"--precision {name!r}: expected auto, bf16 or fp32")
    return name


def _dist_info(device: torch.device):
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1 and not torch.distributed.is_initialized():
        if device.type == "cuda":
            # Each process's own GPU, before NCCL starts: its object collectives (checkpoint
            # RNG states and checksums, the early-stop flag) run on the current device.
            torch.cuda.set_device(device)
        # Rank 0 evaluates dev BLEU while the others wait in a collective: NCCL's default
        # 10-minute timeout is shorter than a long evaluation.
        torch.distributed.init_process_group("nccl" if device.type == "cuda" else "gloo",
                                             timeout=datetime.timedelta(hours=2))
    return rank, world


def _end_process_group(rank: int) -> None:
    """Every rank: a last barrier, then done for the launcher (launch.mark_done: from here on
    nothing is lost if the teardown hangs and the launcher stops the process), then the process
    group's teardown."""
    torch.distributed.barrier()
    mark_done(rank)
    torch.distributed.destroy_process_group()


def _clean_temporaries(run_dir: str) -> None:
    """Removes what a killed writer left (its temporary names end in .PID.tmp)."""
    for p in glob.glob(os.path.join(run_dir, "*.tmp")):
        run_state._remove(p)


def _fixed_from_checkpoint(args, state, resume_path, world) -> None:
    saved = state["train_args"]
    for k in FIXED_ARGS:  # the run's defining arguments come from the checkpoint
        setattr(args, k, saved.get(k, OLD_DEFAULTS.get(k)))
    saved_layout = saved.get("head_layout")
    if getattr(args, "head_layout", None) and spec_text(args.head_layout) != (saved_layout or ""):
        raise TrainError(f"--head-layout {args.head_layout!r}: {resume_path} was trained "
                         f"with {saved_layout!r}; a resumed run keeps its head layout")
    args.head_layout = saved_layout
    if state.get("world_size", 1) != world:
        raise TrainError(f"{resume_path}: written by {state.get('world_size', 1)} processes, "
                         f"resumed with {world}; expected the same number")


def load_init(args, vocab: Vocab):
    """The start point of --init-from: (its MarianMTModel in float32, the config this run
    trains: START's architecture with this run's dropout options). Raises TrainError when the
    architecture options, the vocabulary or the gates disagree."""
    start = load_start_model(args.init_from)
    cfg = start.model.config
    wrong = [f"--{a.replace('_', '-')} {getattr(args, a)} (START: {getattr(cfg, f)})"
             for a, f in ARCH_ARGS if getattr(args, a) != getattr(cfg, f)]
    dec_heads = args.decoder_heads or args.heads
    if dec_heads != cfg.decoder_attention_heads:
        wrong.append(f"decoder heads {dec_heads} (START: {cfg.decoder_attention_heads})")
    if cfg.decoder_ffn_dim != cfg.encoder_ffn_dim:
        wrong.append(f"START's decoder FFN {cfg.decoder_ffn_dim} differs from its encoder's "
                     f"{cfg.encoder_ffn_dim}, which train cannot express")
    if wrong:
        raise TrainError(f"--init-from {args.init_from}: the architecture options disagree "
                         f"with the start point: {'; '.join(wrong)}")
    if cfg.vocab_size != len(vocab):
        raise TrainError(f"--init-from {args.init_from}: the model has {cfg.vocab_size} ids, "
                         f"the vocabulary {args.vocab} has {len(vocab)}")
    if any(m.head_gate is not None for *_, m in start.model.attention_blocks()):
        raise TrainError(f"--init-from {args.init_from}: the start point has head gates; "
                         f"train starts from ungated weights (prune fine-tunes gated ones)")
    config = MarianConfig.from_dict({**cfg.to_dict(), "dropout": args.dropout,
                                     "attention_dropout": args.attention_dropout,
                                     "activation_dropout": args.activation_dropout})
    return start.model, config


def _check_new_args(args) -> None:
    if args.update_freq < 1:
        raise TrainError(f"--update-freq {args.update_freq}: expected at least 1")
    if args.warmup < 1:
        raise TrainError(f"--warmup {args.warmup}: expected at least 1 step")
    if args.lr_schedule in ("cosine", "linear"):
        args.decay_steps = args.decay_steps or args.steps
        learning_rate(args.warmup + 1, args.lr_schedule, args.lr, args.warmup,
                      args.decay_steps, args.min_lr)  # raises on a bad combination


def run_training(args, log=print) -> dict:
    """Trains (or resumes) into args.out. Returns {"step", "epoch", "history", "best",
    "stopped_early"}."""
    set_threads(args.threads)
    device = resolve_device(getattr(args, "device", "cpu"))
    rank, world = _dist_info(device)
    is_main = rank == 0
    os.makedirs(args.out, exist_ok=True)
    resume_path = run_state.resolve_resume(args.out, args.resume)
    if resume_path is None and run_state.list_checkpoints(args.out):
        raise TrainError(f"{args.out} already holds checkpoints; pass --resume (continue the "
                         "run) or choose another --out")
    if is_main:
        _clean_temporaries(args.out)
    state = run_state.load_checkpoint_file(resume_path) if resume_path else None
    if state is not None:
        if state.get("averaged_from"):
            raise TrainError(f"{resume_path}: an averaged checkpoint (no optimiser state) "
                             f"cannot be resumed; resume from a ckpt-STEP.pt of the run")
        _fixed_from_checkpoint(args, state, resume_path, world)
    else:
        args.precision = resolve_precision(args.precision, device)
        _check_new_args(args)
        args.init_sha256 = None
        if getattr(args, "head_layout", None):
            args.head_layout = spec_text(args.head_layout)  # run.json records the spec itself
    rlog = RunLog(args.out, log, is_main)
    note = slow_precision_note(args.precision, device)
    if note:
        rlog(f"train: {note}")
    trained_on = (state or {}).get("train_args", {}).get("device")
    if trained_on and trained_on != device.type:
        # --device is not fixed by the checkpoint: a GPU run can go on on the CPU and back
        rlog(f"train: note: {resume_path} was trained on {trained_on}, resumed on "
             f"{device.type}: the run continues from the same state, but not bit for bit the "
             f"path it would have taken on {trained_on}")
    try:
        return _train(args, state, resume_path, device, rank, world, rlog)
    finally:
        rlog.close()


def _train(args, state, resume_path, device, rank, world, log: RunLog) -> dict:
    is_main = rank == 0
    vocab = Vocab.load(args.vocab)
    init_model = None
    if state:
        config = MarianConfig.from_dict(state["config"])
    elif getattr(args, "init_from", None):
        init_model, config = load_init(args, vocab)
        args.init_sha256 = param_checksum(init_model)
    else:
        config = build_config(args, vocab)
    if config.vocab_size != len(vocab):
        raise TrainError(f"vocabulary {args.vocab} has {len(vocab)} ids, the run's model "
                         f"expects {config.vocab_size}")
    train = encode_split(vocab, args.data, "train", args.max_len)
    dev = encode_split(vocab, args.data, "dev", args.max_len)
    batcher = TokenBatcher(train.src, train.tgt, args.max_tokens, args.seed, rank, world)

    run_state.seed_all(args.seed + rank)
    model = MarianMTModel(config)
    if init_model is not None:
        run_state.load_model_state(model, {"model": init_model.state_dict()}, args.init_from)
        if is_main:
            log(f"train: warm start from {args.init_from} (weights sha256 "
                f"{args.init_sha256[:16]}...); new optimiser state, step 0")
    if getattr(args, "head_layout", None):
        layout = apply_spec(parse_spec(args.head_layout), model)
        fixed_gates(model, layout)
        if is_main:
            log("train: fixed head layout (removed heads masked from step 0):\n"
                + layout_summary(model))
    model.to(device)
    model.freeze_pad_rows()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
    step, epoch, batch_idx, history, seconds_before = 0, 0, 0, [], 0.0
    if state is not None:
        run_state.load_model_state(model, state, resume_path)
        opt.load_state_dict(state["optimizer"])  # moves the moments to the parameters' device
        step, epoch, batch_idx = state["step"], state["epoch"], state["batch_idx"]
        history = state.get("history", [])
        seconds_before = float(state.get("train_seconds", 0.0))
        run_state.set_rng_state(state["rng"][rank], device)
        log(f"train: resumed {resume_path} at step {step} (epoch {epoch}, batch {batch_idx}); "
            f"{bleu_summary(history)}")
        if dev_eval.should_stop(history, args.patience, args.min_delta):
            best = dev_eval.best_record(history)
            log(f"train: the run stopped early at step {step} (dev BLEU not up by "
                f"{args.min_delta} in {args.patience} evaluations; best {best['dev_bleu']} at "
                f"step {best['step']}); nothing to do")
            if world > 1:
                _end_process_group(rank)
            return {"step": step, "epoch": epoch, "history": history, "best": best,
                    "stopped_early": True}
    elif is_main:
        with open(os.path.join(args.out, "run.json"), "w", encoding="utf-8") as f:
            json.dump({"config": config.to_dict(), "train_args": args_dict(args),
                       "world_size": world}, f, indent=2, sort_keys=True)
        n_par = sum(p.numel() for p in model.parameters())
        log(f"train: {n_par / 1e6:.2f}M parameters; {len(train.src)} train pairs "
            f"({train.dropped_too_long} longer than {args.max_len} ids dropped), "
            f"{len(dev.src)} dev pairs; {len(batcher.epoch_batches(0))} batches/epoch/rank; "
            f"{args.update_freq} batch(es) per step; dropout {config.dropout}, attention "
            f"{config.attention_dropout}, activation {config.activation_dropout}")
    log(f"train: device {device}, precision {args.precision}, {torch.get_num_threads()} "
        f"thread(s), {world} process(es); log {os.path.join(args.out, 'train.log')}")
    if init_model is not None and args.eval_every and is_main:
        # The start point's own dev record (step 0): where the curve begins, and what early
        # stopping measures the warm start's progress against. Uses no random numbers.
        record = dev_eval.evaluate_dev(model, dev, vocab, args, 0, 0, device)
        log("dev: " + json.dumps(record))
        history.append(record)
    ddp_ids = [device.index] if device.type == "cuda" else None
    net = torch.nn.parallel.DistributedDataParallel(model, device_ids=ddp_ids) \
        if world > 1 else model
    model.train()
    loop = TrainingLoop(args, model, opt, batcher, train, dev, vocab, device, log, net=net,
                        config=config, step=step, epoch=epoch, batch_idx=batch_idx,
                        history=history, seconds_before=seconds_before, rank=rank, world=world)
    stopped = loop.run()
    step, epoch, history = loop.step, loop.epoch, loop.history
    best = dev_eval.best_record(history)
    if is_main:
        why = (f"stopped early: dev BLEU not up by {args.min_delta} in the last "
               f"{args.patience} evaluations" if stopped else f"reached --steps {args.steps}")
        log(f"train: step {step}, {why}; {bleu_summary(history)}; training time "
            f"{hms(loop.train_seconds())}")
    if world > 1:
        # DDP's reducer holds the process group. Freed by this frame's teardown after
        # destroy_process_group, the reducer took the group's last reference with it, and
        # ~ProcessGroupGloo, run with the GIL held, joined a gloo thread that was waiting for
        # the GIL to free a tensor: a deadlock, about 1 run in 40 under load (torch 1.13, seen
        # in gdb). So DDP goes first, while the group is alive and every rank is here; what
        # is left of the race is the launcher's to end (launch.py).
        loop.net = None
        del net
        gc.collect()
        _end_process_group(rank)
    return {"step": step, "epoch": epoch, "history": history, "best": best,
            "stopped_early": stopped}
