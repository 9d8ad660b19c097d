"""L0 head pruning: fine-tune a trained model with Hard Concrete head gates and a penalty on the
expected number of open heads (Voita et al. 2019; gates.py has the gate math).

    loss = label-smoothed CE (mean per target token) + lambda * P
    P    = sum over every gated head of P(g != 0)            (--penalty sum, the default), or
           that sum divided by the number of gated blocks    (--penalty layer-mean, the
                                                              reference code's normalisation)

Start points (import_model.py): a training/pruning run, a ckpt-*.pt file, or a Hugging Face /
OPUS-MT checkpoint directory. Blocks of the chosen kinds get a gate with log_alpha =
--init-log-alpha (gates open); gates already in the start point are kept. --encoder-only trains
only the encoder's own parameters and the gates (shared embeddings and the decoder stay fixed).

Gate settings are experiment parameters, recorded in run.json, the log's start record and every
checkpoint: --init-log-alpha, --gate-lr and --gate-lr-schedule (training/lr_schedule.py's
schedules over --steps with the same warm-up), --penalty, and --gate-rule, the test-time rule
(hard: log_alpha > 0; continuous: the reference code's clamp(sigmoid(log_alpha) * 1.2 - 0.1,
0, 1), folded into the out_proj columns by the converter), which the exported config.json
carries. The log's step, dev and end records count the heads whose gates have not settled
(|log_alpha| < --settle-margin).

Settling (--settle-steps N, --settle-push MU): in the last N of --steps the loss adds
    MU * sum over every gated head of max(0, margin - |log_alpha|)
which moves each gate still within the settle margin of 0 away from it, on the side it is on,
and nothing once it is out. A gate the CE and the penalty hold near 0 (a head that costs about
what it gives) then ends on one side instead of flipping with the last few batches
(`headwise-train sweep gates` sorts a run's unsettled gates by how they last moved). Not fixed
by the checkpoint: a finished run resumed with --steps S + N --settle-steps N continues its own
path and settles in the N new steps; the step records say when the push is on.

Optimiser: Adam (0.9, 0.98, 1e-9) with two parameter groups: the model's weights at
--lr with the inverse-square-root schedule, the gates' log_alpha at --gate-lr with
--gate-lr-schedule (default constant after the warm-up).
Gradient clipping (--clip-norm) applies to the model's weights only. --device cuda runs on a GPU.

The steps are training's loop (training/loop.py) with PruningLoop's extension points: two
learning rates, the loss CE + lambda * penalty on one batch per step (the forward pass under
bf16 autocast with --precision bf16, as training's; the penalty and the gates in fp32), clipping of the
weights only, the log's step and dev records, and checkpoints that also hold the pruning
arguments, the gated blocks and the start point (no checkpoint per evaluation, no early
stopping, no best.pt). Single process. Checkpoints: model/run_state.py (atomic, keep-last-N,
exact resume); a resumed run continues bit-identically. The JSON-lines log is prune_log.py's.
"""
from __future__ import annotations

import json
import os

import torch

from ..threads import set_threads
from ..data.batching import TokenBatcher, encode_split
from ..data.spm_vocab import Vocab
from ..model import run_state
from ..model.checkpoint import SOURCE_SPM, TARGET_SPM, VOCAB_FILE, export_checkpoint
from ..model.gates import DEFAULT_SETTLE_MARGIN, HeadGate, expected_l0, gates, set_rule, unsettled
from ..model.import_model import load_start_model, load_start_vocab, model_from_state
from ..training.loop import TrainingLoop, args_dict, autocast
from ..training.losses import smoothed_loss
from ..training.lr_schedule import SCHEDULES, inverse_sqrt_lr, learning_rate
from ..training.train_log import RunLog
from . import prune_log

# Arguments that define a pruning run; a resumed run takes them from its checkpoint.
FIXED_ARGS = ("start", "data", "vocab", "lam", "penalty", "types", "encoder_only", "seed",
              "max_tokens", "max_len", "lr", "gate_lr", "warmup", "label_smoothing",
              "clip_norm", "init_log_alpha", "gate_rule", "gate_lr_schedule", "precision")
# The value a checkpoint written before the argument existed ran with.
OLD_DEFAULTS = {"gate_rule": "hard", "gate_lr_schedule": "constant", "precision": "fp32"}
TYPE_KINDS = {"enc": "encoder_self", "dec": "decoder_self", "cross": "decoder_cross"}
PENALTY_DOC = {"sum": "lambda multiplies the SUM of P(gate open) over all gated heads",
               "layer-mean": "lambda multiplies the per-block sums of P(gate open) AVERAGED over "
                             "the gated blocks (the reference code's normalisation)"}


class PruneError(ValueError):
    pass


def parse_types(text: str) -> list:
    kinds = []
    for t in (x.strip() for x in text.split(",")):
        if t not in TYPE_KINDS:
            raise PruneError(f"--types {text!r}: unknown attention type {t!r}; expected a "
                             f"comma-separated subset of enc, dec, cross")
        if TYPE_KINDS[t] not in kinds:
            kinds.append(TYPE_KINDS[t])
    return kinds


def trainable_names(model, encoder_only: bool) -> list:
    """Parameter names the optimiser updates (gates included)."""
    names = []
    for name, _ in model.named_parameters():
        if not encoder_only or name.startswith("model.encoder.") or ".head_gate." in name:
            names.append(name)
    return names


def settle_push(model, margin: float) -> torch.Tensor:
    """sum over every gated head of max(0, margin - |log_alpha|) (the settle term)."""
    return sum(torch.relu(margin - g.log_alpha.abs()).sum() for g in gates(model).values())


def penalty(model, mode: str) -> torch.Tensor:
    p = expected_l0(model)
    return p / max(len(gates(model)), 1) if mode == "layer-mean" else p


def build_optimizer(model, encoder_only: bool, lr: float, gate_lr: float):
    train_names = set(trainable_names(model, encoder_only))
    weights, gate_params = [], []
    for name, p in model.named_parameters():
        if name not in train_names:
            p.requires_grad_(False)
        elif ".head_gate." in name:
            gate_params.append(p)
        else:
            weights.append(p)
    opt = torch.optim.Adam([{"params": weights, "lr": lr}, {"params": gate_params, "lr": gate_lr}],
                           betas=(0.9, 0.98), eps=1e-9)
    return opt, weights


def _prepare(args, log):
    """(model, vocab, state or None, resume path or None, description of the start)."""
    os.makedirs(args.out, exist_ok=True)
    resume_path = run_state.resolve_resume(args.out, args.resume)
    if resume_path is None and run_state.list_checkpoints(args.out):
        raise PruneError(f"{args.out} already holds checkpoints; pass --resume (continue the "
                         "run) or choose another --out")
    if resume_path is not None:
        state = run_state.load_checkpoint_file(resume_path)
        if "prune_args" not in state or "gated_blocks" not in state:
            raise PruneError(f"{resume_path}: expected a pruning checkpoint (written by "
                             f"'headwise-train prune'), found a training checkpoint")
        for k in FIXED_ARGS:
            setattr(args, k, state["prune_args"].get(k, OLD_DEFAULTS.get(k)))
        model = model_from_state(state, resume_path)
        set_rule(model, args.gate_rule)
        if sorted(gates(model)) != sorted(state["gated_blocks"]):
            raise PruneError(f"{resume_path}: gated blocks {sorted(gates(model))} differ from "
                             f"the recorded {sorted(state['gated_blocks'])}")
        return model, Vocab.load(args.vocab), state, resume_path, state["start"]
    if args.start is None:
        raise PruneError("--from is required for a new pruning run (a run directory, ckpt-*.pt "
                         "or Hugging Face checkpoint directory)")
    if args.warmup < 1:
        raise PruneError(f"--warmup {args.warmup}: expected at least 1 step")
    if args.gate_lr_schedule not in SCHEDULES:
        raise PruneError(f"--gate-lr-schedule {args.gate_lr_schedule!r}: expected one of "
                         f"{', '.join(SCHEDULES)}")
    if args.gate_lr_schedule in ("cosine", "linear") and args.steps <= args.warmup:
        raise PruneError(f"--gate-lr-schedule {args.gate_lr_schedule}: decays over --steps "
                         f"{args.steps}, expected more steps than --warmup {args.warmup}")
    start = load_start_model(args.start)
    vocab, args.vocab = load_start_vocab(start, args.vocab, args.start)
    kinds = parse_types(args.types)
    already = set(gates(start.model))
    for name, kind, _, attn in start.model.attention_blocks():
        if kind in kinds and name not in already:
            attn.head_gate = HeadGate(attn.num_heads, args.init_log_alpha)
    set_rule(start.model, args.gate_rule)
    if already:
        log(f"prune: keeping the {len(already)} gates of the start point")
    if not gates(start.model):
        raise PruneError("no attention block is gated; expected --types with at least one of "
                         "enc, dec, cross")
    return start.model, vocab, None, None, start.description


def run_prune(args, log=print) -> dict:
    """Fine-tunes with gates into args.out; returns {"step", "layout", "history"}."""
    set_threads(args.threads)
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise PruneError("prune runs in one process; expected WORLD_SIZE 1")
    if args.types is None:
        args.types = "enc" if args.encoder_only else "enc,dec,cross"
    from ..training.train import resolve_device
    device = resolve_device(getattr(args, "device", "cpu"))
    margin = getattr(args, "settle_margin", DEFAULT_SETTLE_MARGIN)
    settle_steps = getattr(args, "settle_steps", 0)
    if not 0 <= settle_steps <= args.steps:
        raise PruneError(f"--settle-steps {settle_steps}: expected 0 to --steps {args.steps}")
    if getattr(args, "settle_push", 0.0) < 0:
        raise PruneError(f"--settle-push {args.settle_push}: expected a weight >= 0")
    model, vocab, state, resume_path, start_what = _prepare(args, log)
    if state is None:  # a new run records the precision it resolves to; a resumed one keeps its
        from ..training.train import resolve_precision
        args.precision = resolve_precision(getattr(args, "precision", "fp32"), device)
    model.to(device)
    config = model.config
    train = encode_split(vocab, args.data, "train", args.max_len)
    dev = encode_split(vocab, args.data, "dev", args.max_len)
    batcher = TokenBatcher(train.src, train.tgt, args.max_tokens, args.seed)

    run_state.seed_all(args.seed)
    opt, weights = build_optimizer(model, args.encoder_only, args.lr, args.gate_lr)
    gated = list(gates(model))
    step, epoch, batch_idx, history, seconds_before = 0, 0, 0, [], 0.0
    if state is not None:
        opt.load_state_dict(state["optimizer"])  # moves the moments to the parameters' device
        step, epoch, batch_idx = state["step"], state["epoch"], state["batch_idx"]
        history, seconds_before = state.get("history", []), float(state.get("train_seconds", 0))
        run_state.set_rng_state(state["rng"][0], device)
        log(f"prune: resumed {resume_path} at step {step} (epoch {epoch}, batch {batch_idx})")
    plog = prune_log.PruneLog(args.out, step if state is not None else -1)
    if state is None:
        n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
        rec = {"event": "start", "step": 0, "from": start_what, "gated_blocks": gated,
               "gated_heads": sum(g.log_alpha.numel() for g in gates(model).values()),
               "lambda": args.lam, "penalty": args.penalty,
               "penalty_meaning": PENALTY_DOC[args.penalty], "encoder_only": args.encoder_only,
               "trainable_parameters": n_train, "gate_settings": gate_settings(args)}
        plog.write(rec)
        with open(os.path.join(args.out, "run.json"), "w", encoding="utf-8") as f:
            json.dump({"config": config.to_dict(), "prune_args": args_dict(args),
                       "start": start_what}, f, indent=2, sort_keys=True)
        log(f"prune: gate settings {json.dumps(gate_settings(args), sort_keys=True)}")
        log(f"prune: from {start_what}; {len(gated)} gated blocks "
            f"({rec['gated_heads']} heads); loss = CE + {args.lam} * penalty, "
            f"{PENALTY_DOC[args.penalty]}; {n_train / 1e6:.2f}M trainable parameters"
            f"{' (encoder + gates only)' if args.encoder_only else ''}; {len(train.src)} train "
            f"pairs, {len(batcher.epoch_batches(0))} batches/epoch; precision {args.precision}")
    from ..training.train import slow_precision_note
    note = slow_precision_note(args.precision, device)
    if note:
        log(f"prune: {note}")
    model.freeze_pad_rows()  # the <pad> row keeps its value (zero in our and OPUS-MT models)
    model.train()
    start_step = step
    loop = PruningLoop(args, model, opt, batcher, train, dev, vocab, device, RunLog(None, log),
                       step=step, epoch=epoch, batch_idx=batch_idx, history=history,
                       seconds_before=seconds_before, weights=weights, gated=gated,
                       start=start_what, plog=plog, margin=margin)
    loop.run()
    step, history = loop.step, loop.history
    model.eval()
    model.to("cpu")
    layout = prune_log.layout_record(model)
    loose = unsettled(model, margin)
    if step > start_step:  # this invocation trained: record where it ended
        plog.write({"event": "end", "step": step, "layout": layout,
                    "kept": prune_log.kept_per_kind(model), "settle_margin": margin,
                    "settle": {"steps": getattr(args, "settle_steps", 0),
                               "push": getattr(args, "settle_push", 0.0)},
                    "unsettled": _count(loose), "unsettled_heads": loose,
                    "log_alpha": prune_log.log_alphas(model)})
    log(f"prune: step {step}: {prune_log.summary_line(model)}; "
        f"{_count(loose)} gate(s) not settled (|log_alpha| < {margin:g})")
    if args.export:
        export_gated(model, args.export, args.vocab, args.export_dtype, args.overwrite, log)
    return {"step": step, "layout": layout, "history": history, "unsettled": loose}


class PruningLoop(TrainingLoop):
    """Training's loop with the pruning loss and log (see the module docstring)."""

    checkpoint_on_eval = False

    def __init__(self, *a, weights, gated, start, plog, margin, **kw):
        super().__init__(*a, **kw)
        self.weights, self.gated, self.start, self.plog = weights, gated, start, plog
        self.margin = margin
        self.settling = False  # set per step by learning_rates

    def learning_rates(self, step: int) -> float:
        self.settling = step > self.args.steps - getattr(self.args, "settle_steps", 0)
        lr = inverse_sqrt_lr(step, self.args.lr, self.args.warmup)
        self.opt.param_groups[0]["lr"], self.opt.param_groups[1]["lr"] = lr, \
            gate_lr(self.args, step)
        return lr

    def backward(self, micro):
        (batch,) = micro
        x, m, d, y = (t.to(self.device) for t in batch)
        with autocast(self.device, self.args.precision):
            logits = self.model(x, m, d)
        ce_sum, ntok = smoothed_loss(logits, y, self.pad, self.args.label_smoothing)
        self.ce = ce_sum / max(ntok, 1)
        self.pen = penalty(self.model, self.args.penalty)
        self.loss = self.ce + self.args.lam * self.pen
        if self.settling:
            push = getattr(self.args, "settle_push", 0.0)
            self.loss = self.loss + push * settle_push(self.model, self.margin)
        self.loss.backward()
        return float(self.ce), int(m.sum()) + ntok

    def clip(self) -> None:
        if self.args.clip_norm > 0 and self.weights:
            torch.nn.utils.clip_grad_norm_(self.weights, self.args.clip_norm)

    def reported_epoch(self) -> int:
        return self.batch_epoch  # the epoch of the step's batch (the log's convention)

    def after_step(self) -> None:
        step, a, model = self.step, self.args, self.model
        if step % a.log_every == 0 or step == a.steps:
            stats = prune_log.block_stats(model)
            ce, pen, loss = float(self.ce), float(self.pen), float(self.loss)
            self.plog.write({
                "event": "step", "step": step, "epoch": self.batch_epoch,
                "ce": round(ce, 4), "penalty": round(pen, 4), "loss": round(loss, 4),
                "lr": self.opt.param_groups[0]["lr"], "gate_lr": self.opt.param_groups[1]["lr"],
                "blocks": stats,
                "expected_open": round(sum(s["expected_open"] for s in stats.values()), 3),
                "kept": sum(s["kept"] for s in stats.values()),
                "unsettled": _count(unsettled(model, self.margin)),
                "settling": bool(self.settling)})
            self.log(f"prune: step {step} | ce {ce:.4f} | penalty {pen:.2f} "
                     f"| {prune_log.summary_line(model)}")

    def after_dev(self, record: dict) -> None:
        record["kept"] = prune_log.kept_per_kind(self.model)
        record["unsettled"] = _count(unsettled(self.model, self.margin))
        self.plog.write(dict(record, event="dev"))

    def stop_early(self) -> bool:
        return False

    def checkpoint_state(self, rngs: list) -> dict:
        return {"step": self.step, "epoch": self.epoch, "batch_idx": self.batch_idx,
                "model": self.model.state_dict(), "optimizer": self.opt.state_dict(),
                "rng": rngs, "config": self.config.to_dict(),
                "train_args": args_dict(self.args), "prune_args": args_dict(self.args),
                "gated_blocks": self.gated, "start": self.start, "history": self.history,
                "world_size": 1, "train_seconds": self.train_seconds()}

    def after_save(self, path: str, record) -> None:
        pass


def gate_settings(args) -> dict:
    """The gate settings of a pruning run, as its records state them."""
    return {"init_log_alpha": args.init_log_alpha, "gate_lr": args.gate_lr,
            "gate_lr_schedule": args.gate_lr_schedule, "warmup": args.warmup,
            "penalty": args.penalty, "lambda": args.lam, "gate_rule": args.gate_rule}


def gate_lr(args, step: int) -> float:
    """The gates' learning rate at optimiser step ``step`` (1-based)."""
    return learning_rate(step, args.gate_lr_schedule, args.gate_lr, args.warmup, args.steps)


def _count(per_block: dict) -> int:
    return sum(len(v) for v in per_block.values())


def export_gated(model, out: str, vocab_dir: str, dtype: str, overwrite: bool, log=print):
    files = {n: os.path.join(vocab_dir, n) for n in (SOURCE_SPM, TARGET_SPM, VOCAB_FILE)}
    for p in files.values():
        if not os.path.isfile(p):
            raise PruneError(f"{p}: not found; expected the run's vocabulary files")
    with open(files[VOCAB_FILE], encoding="utf-8") as f:
        vocab = json.load(f)
    path = export_checkpoint(model, out, source_spm=files[SOURCE_SPM],
                             target_spm=files[TARGET_SPM], vocab=vocab, dtype=dtype.upper(),
                             overwrite=overwrite)
    log(f"prune: exported the gated checkpoint -> {path} ({dtype.upper()} weights, F32 gates)")
    return path

