"""Checkpoint averaging: the element-wise mean of the model tensors of several training
checkpoints of one run (Vaswani et al. average the last 5 or 20; Marian and fairseq ship
the same tool). The mean is taken in float64 and rounded once to the tensors' type, so the
average of identical checkpoints is that checkpoint exactly and a zero <pad> row stays zero.

`headwise-train average` writes the result as a training-checkpoint file (format of
run_state.py, without optimiser or RNG state: it can be evaluated, exported, pruned from, but
not resumed); `headwise-train export --average N` exports the mean of a run's newest N
checkpoints directly.
"""
from __future__ import annotations

import os
from typing import Dict, List, Sequence, Tuple

import torch

from . import run_state

AVERAGED_KEY = "averaged_from"


class AverageError(ValueError):
    pass


def average_states(states: Sequence[Dict[str, torch.Tensor]],
                   names: Sequence[str]) -> Dict[str, torch.Tensor]:
    """Mean of the state_dicts `states` (`names` label them in errors): same keys and shapes
    required; floating tensors averaged in float64, others required to be equal."""
    if not states:
        raise AverageError("no checkpoints to average; expected at least one")
    first = states[0]
    out = {}
    for s, name in zip(states[1:], names[1:]):
        if set(s) != set(first):
            diff = sorted(set(s) ^ set(first))
            raise AverageError(f"{name}: tensors differ from {names[0]} ({', '.join(diff[:3])}"
                               f"{' ...' if len(diff) > 3 else ''}); expected checkpoints of "
                               f"one model")
    for key, t in first.items():
        for s, name in zip(states[1:], names[1:]):
            if s[key].shape != t.shape:
                raise AverageError(f"{name}: {key} has shape {list(s[key].shape)}, "
                                   f"{names[0]} {list(t.shape)}; expected the same")
        if t.is_floating_point():
            acc = torch.zeros(t.shape, dtype=torch.float64)
            for s in states:
                acc += s[key].detach().cpu().double()
            out[key] = (acc / len(states)).to(t.dtype)
        else:
            for s, name in zip(states[1:], names[1:]):
                if not torch.equal(s[key].cpu(), t.cpu()):
                    raise AverageError(f"{name}: {key} ({t.dtype}) differs from {names[0]}; "
                                       f"non-floating tensors must be equal to be averaged")
            out[key] = t.detach().cpu().clone()
    return out


def newest(run_dir: str, n: int) -> List[Tuple[int, str]]:
    """The newest n (step, path) checkpoints of run_dir; AverageError if it has fewer."""
    if n < 1:
        raise AverageError(f"--average/--last {n}: expected at least 1")
    ckpts = run_state.list_checkpoints(run_dir)
    if len(ckpts) < n:
        raise AverageError(f"{run_dir}: {len(ckpts)} checkpoint(s) "
                           f"({', '.join(str(s) for s, _ in ckpts) or 'none'}), expected at "
                           f"least {n} to average (train with --keep {n} or more)")
    return ckpts[-n:]


def average_files(paths: Sequence[str]) -> dict:
    """A checkpoint dict (run_state format) whose model is the mean of those of `paths`; the
    other entries (config, step, history, ...) are those of the last path."""
    states = [run_state.load_checkpoint_file(p) for p in paths]
    for st, p in zip(states[1:], paths[1:]):
        if st["config"] != states[0]["config"]:
            raise AverageError(f"{p}: its model config differs from {paths[0]}'s; expected "
                               f"checkpoints of one model")
    model = average_states([st["model"] for st in states], list(paths))
    out = dict(states[-1], model=model, optimizer={}, rng=[])
    out[AVERAGED_KEY] = [{"path": os.path.abspath(p), "step": st["step"]}
                         for p, st in zip(paths, states)]
    return out


def run_average(args, log=print) -> None:
    if bool(args.run) == bool(args.ckpt):
        raise AverageError("give either --run (with --last N) or --ckpt files, not both or "
                           "neither")
    paths = args.ckpt or [p for _, p in newest(args.run, args.last)]
    if run_state._CKPT_RE.search(os.path.basename(args.out)):
        raise AverageError(f"--out {args.out}: a ckpt-STEP.pt name would be taken for a "
                           f"resumable checkpoint of the run; choose another name (e.g. "
                           f"avg.pt)")
    if os.path.exists(args.out) and not args.overwrite:
        raise AverageError(f"{args.out} exists; pass --overwrite to replace it")
    state = average_files(paths)
    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    tmp = f"{args.out}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        torch.save(dict(state, format=run_state.FORMAT), f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, args.out)
    log(f"average: steps {', '.join(str(r['step']) for r in state[AVERAGED_KEY])} -> "
        f"{args.out}")
