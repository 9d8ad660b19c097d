"""Training-run checkpoints: atomic writes, keep-last-N, exact resume, clear errors.

A run directory holds run.json (model config + training arguments, written once) and
ckpt-STEP.pt files. Each ckpt holds everything a bit-identical continuation needs: model and
optimiser state, step, data position (epoch, batch index), and the RNG states of Python,
NumPy and torch (one set per rank under DDP). A file is written to a temporary name, fsynced
and renamed, so a crash leaves either the old or the new file, never half of one.
"""
from __future__ import annotations

import glob
import os
import random
import re
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch

FORMAT = "headwise-train-state/1"
_CKPT_RE = re.compile(r"ckpt-(\d+)\.pt$")


class ResumeError(ValueError):
    pass


def rng_state() -> Dict[str, Any]:
    return {"python": random.getstate(), "numpy": np.random.get_state(),
            "torch": torch.get_rng_state()}


def set_rng_state(state: Dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def seed_all(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2 ** 32))
    torch.manual_seed(seed)


def list_checkpoints(run_dir: str) -> List[Tuple[int, str]]:
    out = []
    for p in glob.glob(os.path.join(run_dir, "ckpt-*.pt")):
        m = _CKPT_RE.search(os.path.basename(p))
        if m:
            out.append((int(m.group(1)), p))
    return sorted(out)


def save_checkpoint(run_dir: str, state: Dict[str, Any], keep: int = 2) -> str:
    """Writes ckpt-STEP.pt atomically, then deletes all but the newest `keep` checkpoints."""
    path = os.path.join(run_dir, f"ckpt-{state['step']}.pt")
    tmp = f"{path}.{os.getpid()}.tmp"
    state = dict(state, format=FORMAT)
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    for _, old in list_checkpoints(run_dir)[:-keep] if keep > 0 else []:
        os.remove(old)
    return path


def load_checkpoint_file(path: str) -> Dict[str, Any]:
    """Loads one training checkpoint or raises ResumeError saying what is wrong with it."""
    if not os.path.isfile(path):
        raise ResumeError(f"{path}: resume checkpoint not found")
    try:
        state = torch.load(path, map_location="cpu")
    except Exception as e:  # torch raises RuntimeError, EOFError, UnpicklingError, ...
        older = [p for _, p in list_checkpoints(os.path.dirname(path) or ".") if p != path]
        hint = f"; the older checkpoint {older[-1]} may be intact (--resume {older[-1]})" \
            if older else ""
        raise ResumeError(f"{path}: cannot read the training checkpoint, it is truncated or "
                          f"corrupt ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
                          f"{hint}") from e
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        found = state.get("format") if isinstance(state, dict) else type(state).__name__
        raise ResumeError(f"{path}: expected a headwise-train checkpoint ({FORMAT}), "
                          f"found {found!r}")
    for key in ("step", "epoch", "batch_idx", "model", "optimizer", "rng", "config"):
        if key not in state:
            raise ResumeError(f"{path}: training checkpoint lacks the '{key}' entry")
    return state


def resolve_resume(run_dir: str, resume: Optional[str]) -> Optional[str]:
    """--resume auto -> newest ckpt in run_dir (None if none); --resume PATH -> PATH."""
    if resume is None:
        return None
    if resume != "auto":
        return resume
    ckpts = list_checkpoints(run_dir)
    return ckpts[-1][1] if ckpts else None


def load_model_state(model, state: Dict[str, Any], path: str) -> None:
    """model.load_state_dict with torch's shape/key errors turned into a ResumeError."""
    try:
        model.load_state_dict(state["model"])
    except RuntimeError as e:
        raise ResumeError(f"{path}: the saved tensors disagree with the saved config: "
                          f"{' '.join(str(e).split())[:600]}") from e
