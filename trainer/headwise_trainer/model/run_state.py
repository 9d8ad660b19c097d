"""Training-run checkpoints: atomic writes, keep-last-N plus the best, shards, exact resume.

A run directory holds run.json (model config + training arguments, written once), train.log,
history.json (the dev evaluations) and ckpt-STEP.pt checkpoints, plus best.pt (the checkpoint
with the best dev BLEU, kept however many newer ones follow). Each checkpoint holds everything
a bit-identical continuation needs: model and optimiser state, step, data position (epoch,
batch index), and the RNG states of Python, NumPy and torch (CPU, and CUDA when used; one set
per rank under DDP). All tensors are saved on the CPU, so a checkpoint does not depend on the
device it was trained on.

A checkpoint is either one file (torch.save) or, with shard_mib > 0, a directory of the same
name holding index.json and part-NNNNN.bin files of at most shard_mib MiB each whose
concatenation is that file (for transfer through channels that limit file sizes); readers
take either. Both are written under a temporary name, fsynced and renamed, so a crash leaves
either the old or the new checkpoint, never half of one.
"""
from __future__ import annotations

import glob
import hashlib
import io
import json
import os
import random
import re
import shutil
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch

FORMAT = "headwise-train-state/1"
SHARD_FORMAT = "headwise-train-shards/1"
SHARD_INDEX = "index.json"
BEST = "best.pt"
_CKPT_RE = re.compile(r"ckpt-(\d+)\.pt$")


class ResumeError(ValueError):
    pass


def rng_state(device: Optional[torch.device] = None) -> Dict[str, Any]:
    """The random states a resumed run restores: Python's, NumPy's, torch's CPU generator and,
    when training on a GPU, that GPU's generator (only the training device's: a checkpoint
    written with 8 GPUs visible resumes where 1 is)."""
    st = {"python": random.getstate(), "numpy": np.random.get_state(),
          "torch": torch.get_rng_state()}
    if device is not None and device.type == "cuda":
        st["cuda"] = torch.cuda.get_rng_state(device).cpu()
    return st


def set_rng_state(state: Dict[str, Any], device: Optional[torch.device] = None) -> None:
    """Restores rng_state's states; the GPU generator only when training on a GPU and the
    checkpoint has one (a run moved from the CPU to a GPU keeps its seeded GPU stream). An
    older checkpoint's list of every visible GPU's state gives the training device's entry."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    cuda = state.get("cuda")
    if cuda is None or device is None or device.type != "cuda":
        return
    if isinstance(cuda, (list, tuple)):
        index = device.index or 0
        if index >= len(cuda):
            return
        cuda = cuda[index]
    torch.cuda.set_rng_state(cuda, device)


def seed_all(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2 ** 32))
    torch.manual_seed(seed)  # seeds every CUDA device too


def to_cpu(obj: Any) -> Any:
    """`obj` with every tensor moved to the CPU (dicts, lists and tuples walked)."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_cpu(v) for v in obj)
    return obj


def list_checkpoints(run_dir: str) -> List[Tuple[int, str]]:
    """(step, path) of every ckpt-STEP.pt (file or shard directory), oldest first."""
    out = []
    for p in glob.glob(os.path.join(str(run_dir), "ckpt-*.pt")):
        m = _CKPT_RE.search(os.path.basename(p))
        if m:
            out.append((int(m.group(1)), p))
    return sorted(out)


def is_shard_dir(path: str) -> bool:
    """True when `path` is a checkpoint written in shards (a directory with index.json)."""
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, SHARD_INDEX))


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def _write_file(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_shards(directory: str, blob: bytes, shard_mib: int) -> None:
    """directory/part-NNNNN.bin (at most shard_mib MiB each) + index.json with their sizes and
    SHA-256; `directory` must not exist."""
    if shard_mib <= 0:
        raise ValueError(f"shard size: expected a positive number of MiB, found {shard_mib}")
    os.makedirs(directory)
    size = shard_mib << 20
    parts = []
    for i, off in enumerate(range(0, max(len(blob), 1), size)):
        chunk = blob[off:off + size]
        name = f"part-{i:05d}.bin"
        _write_file(os.path.join(directory, name), chunk)
        parts.append({"file": name, "bytes": len(chunk),
                      "sha256": hashlib.sha256(chunk).hexdigest()})
    index = {"format": SHARD_FORMAT, "total_bytes": len(blob), "parts": parts}
    _write_file(os.path.join(directory, SHARD_INDEX),
                (json.dumps(index, indent=1) + "\n").encode())
    _fsync_dir(directory)


def read_shards(directory: str) -> bytes:
    """The bytes that write_shards split; ResumeError when a part is missing or altered."""
    index_path = os.path.join(directory, SHARD_INDEX)
    try:
        with open(index_path, encoding="utf-8") as f:
            index = json.load(f)
    except (OSError, ValueError) as e:
        raise ResumeError(f"{index_path}: cannot read the shard index ({e})") from e
    if not isinstance(index, dict) or index.get("format") != SHARD_FORMAT:
        raise ResumeError(f"{index_path}: expected format {SHARD_FORMAT!r}, found "
                          f"{index.get('format') if isinstance(index, dict) else index!r}")
    chunks = []
    for part in index["parts"]:
        p = os.path.join(directory, part["file"])
        try:
            with open(p, "rb") as f:
                chunk = f.read()
        except OSError as e:
            raise ResumeError(f"{p}: shard missing or unreadable ({e})") from e
        if len(chunk) != part["bytes"] or hashlib.sha256(chunk).hexdigest() != part["sha256"]:
            raise ResumeError(f"{p}: expected {part['bytes']} bytes with SHA-256 "
                              f"{part['sha256'][:12]}..., found {len(chunk)} bytes that differ; "
                              f"the shard is truncated or corrupt")
        chunks.append(chunk)
    blob = b"".join(chunks)
    if len(blob) != index["total_bytes"]:
        raise ResumeError(f"{directory}: shards hold {len(blob)} bytes, the index says "
                          f"{index['total_bytes']}")
    return blob


def save_checkpoint(run_dir: str, state: Dict[str, Any], keep: int = 2,
                    shard_mib: int = 0) -> str:
    """Writes ckpt-STEP.pt atomically (one file, or shards when shard_mib > 0), then deletes
    all but the newest `keep` checkpoints (best.pt is separate and stays)."""
    path = os.path.join(str(run_dir), f"ckpt-{state['step']}.pt")
    tmp = f"{path}.{os.getpid()}.tmp"
    _remove(tmp)
    buf = io.BytesIO()
    torch.save(to_cpu(dict(state, format=FORMAT)), buf)
    if shard_mib > 0:
        write_shards(tmp, buf.getvalue(), shard_mib)
    else:
        _write_file(tmp, buf.getvalue())
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)  # a rename cannot replace a directory
    os.replace(tmp, path)
    _fsync_dir(str(run_dir))
    for _, old in list_checkpoints(run_dir)[:-keep] if keep > 0 else []:
        _remove(old)
    return path


def link_best(run_dir: str, ckpt: str) -> str:
    """Makes run_dir/best.pt the checkpoint `ckpt` (hard links, so no copy and no dependence
    on `ckpt` being kept; a copy where links are impossible), atomically."""
    dst = os.path.join(str(run_dir), BEST)
    tmp = f"{dst}.{os.getpid()}.tmp"
    _remove(tmp)

    def link(src, to):
        try:
            os.link(src, to)
        except OSError:
            shutil.copyfile(src, to)

    if os.path.isdir(ckpt):
        os.makedirs(tmp)
        for name in sorted(os.listdir(ckpt)):
            link(os.path.join(ckpt, name), os.path.join(tmp, name))
    else:
        link(ckpt, tmp)
    _remove(dst)
    os.replace(tmp, dst)
    return dst


def torch_load(source: Any) -> Any:
    """torch.load of one of our own checkpoints onto the CPU. weights_only=False is explicit:
    torch 2.6 made True the default, which refuses the Python and NumPy RNG states and the
    argument dicts a checkpoint holds, so a run written or resumed on a GPU machine's torch 2.x
    would not load (torch 1.13, the first with the argument, defaults to False)."""
    return torch.load(source, map_location="cpu", weights_only=False)


def read_checkpoint(path: str) -> Any:
    """torch_load of a checkpoint file or shard directory, without load_checkpoint_file's
    checks (for readers of a few entries: steps, arguments, history)."""
    if os.path.isdir(path):
        return torch_load(io.BytesIO(read_shards(path)))
    return torch_load(path)


def load_checkpoint_file(path: str) -> Dict[str, Any]:
    """Loads one training checkpoint (file or shard directory) onto the CPU, or raises
    ResumeError saying what is wrong with it."""
    path = str(path)
    if not os.path.exists(path):
        raise ResumeError(f"{path}: resume checkpoint not found")
    try:
        state = read_checkpoint(path)
    except ResumeError:
        raise
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
