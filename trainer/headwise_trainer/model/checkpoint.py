"""Checkpoint directories as OPUS-MT / Hugging Face ship them, plus gate parameters.

A checkpoint directory holds:
  config.json        Hugging Face MarianConfig (config.py)
  model.safetensors  the state_dict under Hugging Face names; gated blocks add
                     <block>.head_gate.log_alpha [num_heads] (always F32, so the sign that decides
                     the kept heads survives any weight dtype)
  source.spm, target.spm   SentencePiece models (optional)
  vocab.json         piece -> id, as OPUS-MT (optional; ids 0..vocab_size-1, "</s>" is
                     eos_token_id, "<pad>" is pad_token_id, "<unk>" present)

export_checkpoint writes a complete directory under a temporary name beside the target and
renames it into place, so readers never see a partial checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Dict, Mapping, Optional, Sequence, Union

import torch

from . import safetensors_io
from .config import MarianConfig
from .gates import HeadGate
from .marian import MarianMTModel, sinusoidal_positions

GATE_SUFFIX = ".head_gate.log_alpha"
CONFIG_FILE, WEIGHTS_FILE, VOCAB_FILE = "config.json", "model.safetensors", "vocab.json"
SOURCE_SPM, TARGET_SPM = "source.spm", "target.spm"

BytesOrPath = Union[bytes, str, "os.PathLike[str]"]


class CheckpointError(ValueError):
    pass


def _shape(t) -> str:
    return "[" + ", ".join(str(d) for d in t.shape) + "]"


def _spm_bytes(value: BytesOrPath) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return Path(value).read_bytes()


def validate_vocab(vocab: Union[Mapping[str, int], Sequence[str]], config: MarianConfig) -> Dict[str, int]:
    """piece -> id after checking it against the config."""
    if not isinstance(vocab, Mapping):
        vocab = {piece: i for i, piece in enumerate(vocab)}
    ids = sorted(vocab.values())
    if ids != list(range(config.vocab_size)):
        raise CheckpointError(f"vocab: expected the ids 0..{config.vocab_size - 1} once each "
                              f"(vocab_size {config.vocab_size}), found {len(vocab)} pieces with "
                              f"ids {ids[:3]}..{ids[-3:]}")
    by_id = {i: p for p, i in vocab.items()}
    for piece, key in (("</s>", "eos_token_id"), ("<pad>", "pad_token_id")):
        if by_id[getattr(config, key)] != piece:
            raise CheckpointError(f"vocab: {key} {getattr(config, key)} must be {piece!r}, found "
                                  f"{by_id[getattr(config, key)]!r}")
    if "<unk>" not in vocab:
        raise CheckpointError("vocab: expected an \"<unk>\" piece, found none")
    return dict(vocab)


def _check_unstripped(model: MarianMTModel) -> None:
    cfg = model.config
    for name, kind, _, attn in model.attention_blocks():
        heads = cfg.encoder_attention_heads if kind == "encoder_self" else cfg.decoder_attention_heads
        if attn.num_heads != heads:
            raise CheckpointError(f"{name}: has {attn.num_heads} heads, the config says {heads}; "
                                  f"a stripped model cannot be saved as a checkpoint (gate it "
                                  f"instead)")


def export_checkpoint(model: MarianMTModel, directory: "os.PathLike[str] | str",
                      source_spm: Optional[BytesOrPath] = None,
                      target_spm: Optional[BytesOrPath] = None,
                      vocab: Optional[Union[Mapping[str, int], Sequence[str]]] = None,
                      dtype: str = "F32", overwrite: bool = False) -> Path:
    """Writes ``directory`` (see the module doc); returns its path. Weights are stored as
    ``dtype`` (F32, F16 or BF16); gate log_alpha always as F32."""
    if dtype not in safetensors_io.DTYPES:
        raise CheckpointError(f"dtype: expected F32, F16 or BF16, found {dtype!r}")
    directory = Path(directory)
    if directory.exists() and not overwrite:
        raise FileExistsError(f"{directory} exists; pass overwrite=True to replace it")
    _check_unstripped(model)
    config = model.config
    config.validate()
    vocab_map = validate_vocab(vocab, config) if vocab is not None else None
    torch_dtype = safetensors_io.DTYPES[dtype]
    tensors = {}
    for name, t in model.state_dict().items():
        t = t.detach().to(torch.float32)
        tensors[name] = t if name.endswith(GATE_SUFFIX) else t.to(torch_dtype)
    image = safetensors_io.serialize(tensors, {"format": "pt"})

    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.tmp-", dir=directory.parent))
    try:
        config.to_json(tmp / CONFIG_FILE)
        (tmp / WEIGHTS_FILE).write_bytes(image)
        if source_spm is not None:
            (tmp / SOURCE_SPM).write_bytes(_spm_bytes(source_spm))
        if target_spm is not None:
            (tmp / TARGET_SPM).write_bytes(_spm_bytes(target_spm))
        if vocab_map is not None:
            with open(tmp / VOCAB_FILE, "w", encoding="utf-8") as f:
                json.dump(vocab_map, f, ensure_ascii=False, indent=2)
                f.write("\n")
        for p in tmp.iterdir():
            with open(p, "rb") as f:
                os.fsync(f.fileno())
        os.chmod(tmp, 0o755)
        if directory.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.old-", dir=directory.parent))
            os.rename(directory, old / "ckpt")
            os.rename(tmp, directory)
            shutil.rmtree(old)
        else:
            os.rename(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


POSITION_TABLES = ("model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight")


def _alias_of(name: str, config: MarianConfig) -> Optional[str]:
    """The canonical tensor that a duplicate saved by Hugging Face (shared or tied embeddings)
    must equal, or None when ``name`` is no such duplicate."""
    if name in ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight") \
            and config.share_encoder_decoder_embeddings:
        return "model.shared.weight"
    if name == "lm_head.weight" and config.tie_word_embeddings:
        return ("model.shared.weight" if config.share_encoder_decoder_embeddings
                else "model.decoder.embed_tokens.weight")
    return None


def _check_positions(name: str, t: torch.Tensor, config: MarianConfig, where: str) -> None:
    expected = sinusoidal_positions(config.max_position_embeddings, config.d_model)
    if tuple(t.shape) != tuple(expected.shape) or not torch.allclose(t.float(), expected, atol=1e-3):
        raise CheckpointError(f"{where}: {name} {_shape(t)} is not the sinusoidal table "
                              f"[{config.max_position_embeddings}, {config.d_model}] this model "
                              f"computes")


def load_checkpoint(directory: "os.PathLike[str] | str") -> MarianMTModel:
    """The model of ``directory`` in float32 and eval mode, with a HeadGate on every block that
    has a saved log_alpha. Errors (CheckpointError) name the tensor and the mismatch. Duplicates
    Hugging Face may save (embed_tokens of shared embeddings, a tied lm_head, the positions
    table) are accepted when they equal what they duplicate."""
    directory = Path(directory)
    for f in (CONFIG_FILE, WEIGHTS_FILE):
        if not (directory / f).is_file():
            raise CheckpointError(f"{directory}: missing {f}")
    try:
        config = MarianConfig.from_json(directory / CONFIG_FILE)
    except ValueError as e:
        raise CheckpointError(str(e)) from e
    where = str(directory / WEIGHTS_FILE)
    tensors, _ = safetensors_io.read_file(directory / WEIGHTS_FILE)
    model = MarianMTModel(config)

    blocks = {name: attn for name, _, _, attn in model.attention_blocks()}
    for name in [n for n in tensors if n.endswith(GATE_SUFFIX)]:
        block = name[:-len(GATE_SUFFIX)]
        if block not in blocks:
            raise CheckpointError(f"{where}: {name}: no attention block {block!r} in this config")
        blocks[block].head_gate = HeadGate(blocks[block].num_heads, rule=config.gate_rule)

    expected = model.state_dict()
    for name in sorted(set(tensors) - set(expected)):
        t = tensors.pop(name)
        if name in POSITION_TABLES:
            _check_positions(name, t, config, where)
            continue
        canonical = _alias_of(name, config)
        if canonical is None:
            raise CheckpointError(f"{where}: unexpected tensor {name} {_shape(t)} (not part of "
                                  f"this config)")
        if canonical in tensors and not torch.equal(t.float(), tensors[canonical].float()):
            raise CheckpointError(f"{where}: {name} differs from {canonical}, but the config "
                                  f"ties/shares them")
    if "final_logits_bias" not in tensors:  # Hugging Face also loads zeros when it is absent
        tensors["final_logits_bias"] = expected["final_logits_bias"]
    missing = sorted(set(expected) - set(tensors))
    if missing:
        raise CheckpointError(f"{where}: missing {len(missing)} tensor(s): "
                              f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")
    state = {}
    for name, target in expected.items():
        t = tensors[name]
        if tuple(t.shape) != tuple(target.shape):
            raise CheckpointError(f"{where}: {name}: expected {_shape(target)}, found {_shape(t)}")
        state[name] = t.to(torch.float32)
    model.load_state_dict(state, strict=True)
    return model.eval()


def read_vocab(directory: "os.PathLike[str] | str") -> Dict[str, int]:
    with open(Path(directory) / VOCAB_FILE, "r", encoding="utf-8") as f:
        return json.load(f)
