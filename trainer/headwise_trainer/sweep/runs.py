"""`headwise-train sweep runs|rank`: the points of the pruning curves, each in its own directory
under ROOT, each skipped when its result exists, so a rerun continues an interrupted sweep.

  ROOT/<setting>-<lambda>[-<suffix>][-seed<N>]/{run,export,log,eval.json}   L0 pruning (prune)
      from one start point; setting enc = --encoder-only, all = enc,dec,cross gated; seed N
      (--seeds; seed 1 has no -seed part). Done when export/ exists.
  ROOT/<name>/{run,log,eval.json}                      --scratch NAME=SPEC: train SPEC's head
      layout from scratch with the base run's settings (train --head-layout). Done at --steps.
  ROOT/<name>/eval.json                                --reference NAME=MODEL: scored as it is.
  ROOT/rank/<score>-<setting>-<K>.json                 rank pruning without fine-tuning: keep
      the K heads of the setting's types with the highest analysis.json score, globally;
      scores relevance (AttnLRP |share|), relevance_signed, michel, confidence, and random<N>
      (the heads in the order of a random permutation, seed N = 1..--random-orders).
Every point is scored with each of --searches (greedy, beam4); --device cuda trains on a GPU.

Several sweep processes may share one ROOT (two cores, two streams): each takes a point's
ROOT/.locks/<name>.lock (an exclusive flock, released when the process ends, however it ends)
while it trains or scores it, and a point another process holds is skipped with status "busy",
so two processes never write the same run directory.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import subprocess
import sys
from typing import Dict, List, Optional, Sequence, Tuple

import torch

from ..model import run_state
from ..paths import ENTRY
from .point_eval import evaluate_point, parse_searches, run_facts

SETTINGS = {"enc": ["--encoder-only"], "all": ["--types", "enc,dec,cross"]}
SETTING_KINDS = {"enc": ("encoder_self",),
                 "all": ("encoder_self", "decoder_self", "decoder_cross")}
# Train arguments a --scratch run copies from the base run (run.json train_args).
BASE_TRAIN_KEYS = ("d_model", "encoder_layers", "decoder_layers", "heads", "decoder_heads", "ffn",
                   "activation", "dropout", "attention_dropout", "activation_dropout",
                   "max_positions", "max_tokens", "max_len", "lr", "lr_schedule", "min_lr",
                   "decay_steps", "update_freq", "precision",
                   "warmup", "label_smoothing", "clip_norm", "seed", "eval_every",
                   "dev_bleu_sentences", "checkpoint_every", "log_every")


# analysis.json head fields a rank-pruning point can rank by.
ANALYSIS_SCORES = ("relevance", "relevance_signed", "michel", "confidence")


class SweepError(ValueError):
    pass


def point_name(setting: str, lam: float, suffix: str = "", seed: int = 1) -> str:
    return f"{setting}-{lam:g}" + (f"-{suffix}" if suffix else "") + \
        (f"-seed{seed}" if seed != 1 else "")


def plan(settings: List[str], lambdas: List[float], suffix: str = "",
         seeds: Sequence[int] = (1,)) -> List[Tuple[str, str, float, int]]:
    """[(name, setting, lambda, seed)] in the order they run: by seed, then lambda 0 first,
    then by lambda."""
    for s in settings:
        if s not in SETTINGS:
            raise SweepError(f"--settings: unknown setting {s!r}; expected enc or all")
    return [(point_name(s, lam, suffix, seed), s, lam, seed) for seed in seeds
            for lam in sorted(lambdas) for s in settings]


def lock_path(root: str, name: str) -> str:
    return os.path.join(root, ".locks", name + ".lock")


@contextlib.contextmanager
def point_lock(root: str, name: str):
    """Yields True with ROOT/.locks/<name>.lock held exclusively by this process, False when
    another process holds it."""
    os.makedirs(os.path.join(root, ".locks"), exist_ok=True)
    f = open(lock_path(root, name), "a", encoding="utf-8")
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        f.close()  # releases the lock


def _run(cmd: List[str], log_path: str, log) -> None:
    log(f"sweep: {' '.join(shlex.quote(c) for c in cmd)} >> {log_path}")
    with open(log_path, "a", encoding="utf-8") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
    if rc != 0:
        raise SweepError(f"exit status {rc}: {' '.join(cmd[:4])} ...; see {log_path}")


def prune_point(args, name: str, setting: str, lam: float, seed: int, log) -> bool:
    """Trains (or resumes) one L0 point unless it is done; True when export/ or a result
    exists."""
    d = os.path.join(args.root, name)
    export = os.path.join(d, "export")
    if os.path.isdir(export) or os.path.isfile(os.path.join(d, "eval.json")):
        return True  # trained, or scored from elsewhere (a --reference checkpoint)
    if args.no_train:
        return False
    os.makedirs(d, exist_ok=True)
    run = os.path.join(d, "run")
    common = ["--data", args.data, "--out", run, "--export", export, "--threads",
              str(args.threads)] + (["--vocab", args.vocab] if args.vocab else [])
    common += shlex.split(args.prune_args) + (["--steps", str(args.steps)] if args.steps else [])
    common += settle_argv(args) + precision_argv(args)
    common += ["--device", getattr(args, "device", "cpu")]
    if run_state.list_checkpoints(run):
        cmd = ["prune", "--resume"] + common
    else:
        cmd = ["prune", "--from", args.start, "--lambda", f"{lam:g}", "--seed", str(seed)] + \
            SETTINGS[setting] + common
    _run([sys.executable, ENTRY] + cmd, os.path.join(d, "log"), log)
    return os.path.isdir(export)


def precision_argv(args) -> List[str]:
    """--precision for prune and the from-scratch control's train when the sweep pins one
    (later on a command line than what it overrides: argparse keeps the last)."""
    p = getattr(args, "precision", None)
    return ["--precision", p] if p else []


def settle_argv(args) -> List[str]:
    """prune's settle options from the sweep's (none when --settle-steps is 0)."""
    steps = getattr(args, "settle_steps", 0) or 0
    if steps <= 0:
        return []
    push = getattr(args, "settle_push", None)
    return ["--settle-steps", str(steps)] + ([] if push is None else ["--settle-push", f"{push:g}"])


def scratch_argv(base_args: dict, data: str, vocab: str, out: str, spec: str, steps: int,
                 threads: int, device: str = "cpu") -> List[str]:
    """The from-scratch control's `train` command: the base run's recorded training options
    (BASE_TRAIN_KEYS) on this sweep's corpus and vocabulary."""
    argv = ["train", "--data", data, "--vocab", vocab, "--out", out,
            "--steps", str(steps), "--threads", str(threads), "--keep", "3", "--head-layout", spec,
            "--device", device]
    for k in BASE_TRAIN_KEYS:
        if k in base_args:
            argv += [f"--{k.replace('_', '-')}", str(base_args[k])]
    return argv


def scratch_point(args, name: str, spec: str, log) -> bool:
    """Trains (or resumes) the from-scratch control; True when it reached --scratch-steps (or
    stopped early on dev BLEU)."""
    run = os.path.join(args.root, name, "run")
    steps = scratch_steps(args)
    done = scratch_done(run, steps)
    if done or args.no_train:
        return bool(done)
    with open(os.path.join(args.base_run, "run.json"), encoding="utf-8") as f:
        base_args = json.load(f)["train_args"]
    # The sweep's corpus and vocabulary, as its L0 points get them: the paths the base run
    # recorded are its machine's (its vocabulary directory need not exist here; the same pieces
    # ship with the start checkpoint).
    argv = scratch_argv(base_args, args.data, args.vocab or base_args["vocab"], run, spec, steps,
                        args.threads, getattr(args, "device", "cpu")) + precision_argv(args)
    if run_state.list_checkpoints(run):
        argv.append("--resume")
    os.makedirs(run, exist_ok=True)
    _run([sys.executable, ENTRY] + argv, os.path.join(args.root, name, "log"), log)
    return scratch_done(run, steps)


def scratch_done(run: str, steps: int) -> bool:
    ckpts = run_state.list_checkpoints(run)
    if not ckpts:
        return False
    if dict(ckpts).get(steps):
        return True
    path = os.path.join(run, "history.json")  # train's early stopping ends a run before --steps
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return bool(json.load(f).get("stopped_early"))
    return False


def scratch_steps(args) -> int:
    """--scratch-steps N, or 'auto': the start point's training steps plus the L0 points'
    fine-tuning steps (the same total number of updates as base + pruning)."""
    if str(args.scratch_steps) != "auto":
        return int(args.scratch_steps)
    argv = shlex.split(args.prune_args)
    steps = args.steps or (int(argv[argv.index("--steps") + 1]) if "--steps" in argv[:-1]
                           else None)
    if not args.start or not steps:
        raise SweepError("--scratch-steps auto: expected --from (a training run or ckpt-*.pt) "
                         "and the fine-tuning steps (--steps or --prune-args --steps)")
    facts = run_facts(args.start)
    if not facts:
        raise SweepError(f"--scratch-steps auto: {args.start} is not a training run or "
                         f"checkpoint with a step count")
    return int(facts["steps"]) + int(steps)


def spec_of_layout(layout: Dict[str, Sequence[int]]) -> str:
    """A keep-heads spec naming every block of a record's layout ("model.encoder.layers.3.
    self_attn" -> enc.3, "...decoder.layers.1.self_attn" -> dec.1, "...encoder_attn" ->
    cross.1)."""
    parts = []
    for block, heads in layout.items():
        _, stack, _, layer, attn = block.split(".")
        kind = "cross" if attn == "encoder_attn" else ("enc" if stack == "encoder" else "dec")
        parts.append(f"{kind}.{layer}=" + (",".join(str(h) for h in sorted(heads)) or "none"))
    return "; ".join(parts)


def point_layout_spec(root: str, point: str) -> Optional[str]:
    """The keep-heads spec of ROOT/POINT's result, or None while it has none."""
    path = os.path.join(root, point, "eval.json")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return spec_of_layout(json.load(f)["layout"])


def _pairs(items: Optional[List[str]], what: str) -> List[Tuple[str, str]]:
    out = []
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name or "/" in name:
            raise SweepError(f"{what} {item!r}: expected NAME=VALUE")
        out.append((name, value))
    return out


def run_runs(args, log=print) -> dict:
    """Trains what is missing (unless --no-train) and scores every finished point."""
    status: Dict[str, str] = {}
    for name, target in _pairs(args.adopt, "--adopt"):  # e.g. all-0.015=RUN:EXPORT
        d = os.path.join(args.root, name)
        if not os.path.exists(d):
            run, _, export = target.partition(":")
            os.makedirs(d)
            os.symlink(os.path.abspath(run), os.path.join(d, "run"))
            if export:
                os.symlink(os.path.abspath(export), os.path.join(d, "export"))
    lambdas = [float(x) for x in args.lambdas.split(",") if x.strip()]
    settings = [s.strip() for s in args.settings.split(",") if s.strip()]
    seeds = [int(x) for x in str(getattr(args, "seeds", "1")).split(",") if x.strip()]
    searches = parse_searches(getattr(args, "searches", "greedy"))
    todo = [(n, "l0", (s, lam, seed))
            for n, s, lam, seed in plan(settings, lambdas, args.suffix, seeds)]
    for n, spec in _pairs(args.scratch, "--scratch"):
        if spec.startswith("@"):  # the layout of another point's result
            resolved = point_layout_spec(args.root, spec[1:])
            if resolved is None:
                status[n] = f"waiting for the result of {spec[1:]}"
                continue
            spec = resolved
        todo.append((n, "scratch", spec))
    todo += [(n, "reference", path) for n, path in _pairs(args.reference, "--reference")]
    for name, kind, what in todo:
        with point_lock(args.root, name) as held:
            status[name] = _train_and_score(args, name, kind, what, searches, log) if held else \
                f"busy (another process holds {lock_path(args.root, name)})"
    for name, s in status.items():
        log(f"sweep: {name}: {s}")
    return status


def _train_and_score(args, name: str, kind: str, what, searches, log) -> str:
    """One point of run_runs, under its lock: its status."""
    d = os.path.join(args.root, name)
    if kind == "l0":
        ready, model, extra = prune_point(args, name, *what, log), os.path.join(d, "export"), \
            {"kind": "l0", "setting": what[0], "lambda": what[1], "seed": what[2]}
    elif kind == "scratch":
        ready, model, extra = scratch_point(args, name, what, log), os.path.join(d, "run"), \
            {"kind": "scratch", "spec": what}
    else:
        ready, model, extra = True, what, {"kind": "reference", "path": what}
    if not ready:
        return "not finished"
    run_dir = os.path.join(d, "run") if kind != "reference" else \
        (what if not os.path.isfile(os.path.join(what, "config.json")) else None)
    if kind == "reference" and run_dir:  # a pruning checkpoint is a point of its curve
        a = run_facts(run_dir).get("args", {})
        if "lam" in a:
            extra = dict(extra, kind="l0", setting="enc" if a.get("encoder_only") else "all",
                         seed=a.get("seed", 1), **{"lambda": a["lam"]})
    rec = evaluate_point(model, args.data, os.path.join(d, "eval.json"), vocab=args.vocab,
                         limit=args.limit, threads=args.threads, run_dir=run_dir,
                         extra=dict(extra, name=name), searches=searches, log=log)
    return f"BLEU {rec['bleu']}"


def read_analysis(path: str, model) -> Dict[str, Dict[Tuple[str, int], float]]:
    """score name -> {(block, head): score} from a headwise-head-analysis file."""
    with open(path, encoding="utf-8") as f:
        a = json.load(f)
    if a.get("format") != "headwise-head-analysis" or a.get("version") != 1:
        raise SweepError(f"{path}: expected format headwise-head-analysis version 1, found "
                         f"{a.get('format')!r} version {a.get('version')!r}")
    names = {(kind, layer): (name, attn.num_heads)
             for name, kind, layer, attn in model.attention_blocks()}
    scores: Dict[str, Dict[Tuple[str, int], float]] = {}
    for b in a["blocks"]:
        key = (b["kind"], b["layer"])
        if key not in names:
            raise SweepError(f"{path}: block {b['kind']} layer {b['layer']} is not in the model")
        name, n = names[key]
        if b.get("source_heads", n) != n or len(b["heads"]) != n:
            raise SweepError(f"{path}: {name}: expected {n} heads, found {len(b['heads'])}")
        for h in b["heads"]:
            for score in ANALYSIS_SCORES:
                if h.get(score) is not None:
                    scores.setdefault(score, {})[(name, h["head"])] = float(h[score])
    return scores


def run_rank(args, log=print) -> dict:
    """Scores the top-K layouts of each score and setting (no fine-tuning)."""
    from ..model.import_model import load_start_model
    from .layout import top_k_layout
    model = load_start_model(args.model).model
    scores = read_analysis(args.analysis, model)
    searches = parse_searches(getattr(args, "searches", "greedy"))
    wanted = [s.strip() for s in args.scores.split(",") if s.strip()]
    ranked = []
    for score in wanted:
        if score == "random":
            for seed in range(1, int(getattr(args, "random_orders", 5)) + 1):
                ranked.append((f"random{seed}", random_scores(model, seed)))
        elif score not in scores:
            raise SweepError(f"{args.analysis}: no {score!r} scores; found {sorted(scores)}")
        else:
            ranked.append((score, scores[score]))
    results = {}
    for score, values in ranked:
        for setting, keeps in (("enc", args.enc_keep), ("all", args.all_keep)):
            for k in [int(x) for x in keeps.split(",") if x.strip()]:
                layout = top_k_layout(model, values, SETTING_KINDS[setting], k)
                name = f"{score}-{setting}-{k}"
                rec = evaluate_point(args.model, args.data,
                                     os.path.join(args.root, "rank", f"{name}.json"),
                                     vocab=args.vocab, layout=layout, limit=args.limit,
                                     threads=args.threads, log=log, searches=searches,
                                     extra={"kind": "rank", "name": name,
                                            "score": "random" if score.startswith("random")
                                            else score, "order": score,
                                            "setting": setting, "keep": k,
                                            "analysis": args.analysis})
                results[name] = rec["bleu"]
    return results


def random_scores(model, seed: int) -> Dict[Tuple[str, int], float]:
    """(block, head) -> a score whose ranking is a random permutation of every head (torch
    generator seeded with ``seed``; canonical head order permuted), the chance baseline."""
    heads = [(name, h) for name, _, _, attn in model.attention_blocks()
             for h in range(attn.num_heads)]
    perm = torch.randperm(len(heads), generator=torch.Generator().manual_seed(seed)).tolist()
    return {heads[i]: float(len(heads) - rank) for rank, i in enumerate(perm)}
