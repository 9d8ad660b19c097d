"""Start points for pruning and evaluation: any model the trainer can read, gates included.

``load_start_model(path)`` accepts
  * a Hugging Face / OPUS-MT checkpoint directory: config.json plus model.safetensors (F32, F16
    or BF16) or, failing that, pytorch_model.bin (read with torch.load(weights_only=True));
    source.spm, target.spm and vocab.json beside them make it its own vocabulary directory;
  * a training or pruning run directory (its newest ckpt-*.pt) or one ckpt-*.pt file.
Saved gates (``<block>.head_gate.log_alpha``) come back as HeadGates in both cases. The model is
returned in float32 and eval mode. A config that disagrees with the tensors is a CheckpointError
or ResumeError naming the tensor, the expected and the found shape.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Optional, Tuple

import torch

from . import run_state, safetensors_io
from .checkpoint import (CONFIG_FILE, GATE_SUFFIX, SOURCE_SPM, TARGET_SPM, VOCAB_FILE,
                         WEIGHTS_FILE, CheckpointError, load_checkpoint)
from .config import MarianConfig
from .gates import HeadGate
from .marian import MarianMTModel
from ..data.spm_vocab import Vocab

TORCH_WEIGHTS_FILE = "pytorch_model.bin"


@dataclass
class StartModel:
    model: MarianMTModel
    vocab_dir: Optional[str]   # where source.spm/target.spm/vocab.json are, if known
    description: str           # for logs: "checkpoint DIR" or "CKPT (step N)"
    state: Optional[dict]      # the training checkpoint's dict (run dirs / ckpt files only)


def is_checkpoint_dir(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, CONFIG_FILE))


def has_vocab_files(directory: str) -> bool:
    return all(os.path.isfile(os.path.join(directory, n))
               for n in (SOURCE_SPM, TARGET_SPM, VOCAB_FILE))


def _load_torch_bin(directory: str) -> MarianMTModel:
    """pytorch_model.bin -> the same checks as model.safetensors (via a temporary copy)."""
    path = os.path.join(directory, TORCH_WEIGHTS_FILE)
    try:
        tensors = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises RuntimeError, UnpicklingError, EOFError, ...
        raise CheckpointError(f"{path}: cannot read the PyTorch weights ({type(e).__name__}: "
                              f"{str(e).splitlines()[0] if str(e) else ''})") from e
    if not isinstance(tensors, dict) or not all(isinstance(t, torch.Tensor)
                                                for t in tensors.values()):
        raise CheckpointError(f"{path}: expected a state_dict (name -> tensor), found "
                              f"{type(tensors).__name__}")
    tensors = {k: (t if t.dtype in safetensors_io.NAMES else t.float()).contiguous()
               for k, t in tensors.items()}
    tmp = tempfile.mkdtemp(prefix="headwise-import-")
    try:
        shutil.copyfile(os.path.join(directory, CONFIG_FILE), os.path.join(tmp, CONFIG_FILE))
        safetensors_io.write_file(os.path.join(tmp, WEIGHTS_FILE), tensors, {"format": "pt"})
        try:
            return load_checkpoint(tmp)
        except CheckpointError as e:
            raise CheckpointError(str(e).replace(os.path.join(tmp, WEIGHTS_FILE), path)
                                  .replace(tmp, directory)) from e
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load_checkpoint_dir(directory: str) -> MarianMTModel:
    if os.path.isfile(os.path.join(directory, WEIGHTS_FILE)):
        return load_checkpoint(directory)
    if os.path.isfile(os.path.join(directory, TORCH_WEIGHTS_FILE)):
        return _load_torch_bin(directory)
    raise CheckpointError(f"{directory}: expected {WEIGHTS_FILE} (or {TORCH_WEIGHTS_FILE}) "
                          f"beside {CONFIG_FILE}, found neither")


def model_from_state(state: dict, path: str) -> MarianMTModel:
    """The model of a training/pruning checkpoint dict, with a HeadGate on every block whose
    log_alpha it holds."""
    try:
        config = MarianConfig.from_dict(state["config"])
    except (TypeError, ValueError) as e:
        raise run_state.ResumeError(f"{path}: bad saved config: {e}") from e
    model = MarianMTModel(config)
    blocks = {name: attn for name, _, _, attn in model.attention_blocks()}
    for key in state["model"]:
        if key.endswith(GATE_SUFFIX):
            block = key[:-len(GATE_SUFFIX)]
            if block not in blocks:
                raise run_state.ResumeError(f"{path}: {key}: no attention block {block!r} in "
                                            f"the saved config")
            blocks[block].head_gate = HeadGate(blocks[block].num_heads, rule=config.gate_rule)
    run_state.load_model_state(model, state, path)
    return model.eval()


def load_start_model(path: str) -> StartModel:
    if is_checkpoint_dir(path):
        model = load_checkpoint_dir(path)
        return StartModel(model, path if has_vocab_files(path) else None,
                          f"checkpoint {path}", None)
    ckpt = path
    if os.path.isdir(path) and not run_state.is_shard_dir(path):
        ckpts = run_state.list_checkpoints(path)
        if not ckpts:
            raise CheckpointError(f"{path}: expected a checkpoint directory ({CONFIG_FILE} + "
                                  f"{WEIGHTS_FILE}) or a run directory with ckpt-*.pt; found "
                                  f"neither")
        ckpt = ckpts[-1][1]
    elif not os.path.exists(path):
        raise CheckpointError(f"{path}: not found; expected a checkpoint directory, a run "
                              f"directory or a ckpt-*.pt file")
    state = run_state.load_checkpoint_file(ckpt)
    model = model_from_state(state, ckpt)
    vocab = (state.get("train_args") or {}).get("vocab")
    return StartModel(model, vocab, f"{ckpt} (step {state['step']})", state)


def load_start_vocab(start: StartModel, vocab_dir: Optional[str],
                     what: str) -> Tuple[Vocab, str]:
    """The vocabulary for `start`: `vocab_dir` (a --vocab argument) if given, else the one its
    run recorded or that lies beside the checkpoint; its size must be the model's. Returns the
    vocabulary and its directory. `what` (the model argument) names the model in errors."""
    vocab_dir = vocab_dir or start.vocab_dir
    if not vocab_dir:
        raise CheckpointError(f"{what}: no vocabulary recorded or beside the checkpoint; pass "
                              f"--vocab DIR")
    vocab = Vocab.load(vocab_dir)
    check_vocab_size(start.model, len(vocab), vocab_dir)
    return vocab, vocab_dir


def check_vocab_size(model: MarianMTModel, vocab_len: int, vocab_dir: str) -> None:
    if vocab_len != model.config.vocab_size:
        raise CheckpointError(f"vocabulary {vocab_dir} has {vocab_len} ids, the model expects "
                              f"vocab_size {model.config.vocab_size}")
