"""MarianConfig: the Hugging Face MarianMT hyper-parameters the headwise reference model uses.

Reads and writes Hugging Face ``config.json`` files. Keys this model does not use are ignored on
read; a missing key takes the Hugging Face ``MarianConfig`` default, so a real OPUS-MT
``config.json`` (which lists every key) reads back exactly.

One key is headwise's own: ``headwise_gate_rule`` ("hard" or "continuous", gates.py), the
test-time rule of the checkpoint's head gates, which the converter applies. It is written only
when it is not "hard", so configs of hard-gated and ungated models are Hugging Face's alone.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from typing import Any, Dict

# The feed-forward activations: config.json's name -> the torch.nn.functional function that
# computes it (gelu is the exact erf GELU, as transformers' "gelu"). The runtime's names are
# format/src/model_types.cc's; docs/ARCHITECTURE.md says what else a new one touches.
ACTIVATIONS = {"swish": "silu", "relu": "relu", "gelu": "gelu"}
GATE_RULES = ("hard", "continuous")
GATE_RULE_KEY = "headwise_gate_rule"


@dataclass
class MarianConfig:
    # Defaults are those of transformers.MarianConfig.
    d_model: int = 1024
    encoder_layers: int = 12
    decoder_layers: int = 12
    encoder_attention_heads: int = 16
    decoder_attention_heads: int = 16
    encoder_ffn_dim: int = 4096
    decoder_ffn_dim: int = 4096
    activation_function: str = "gelu"
    vocab_size: int = 58101
    max_position_embeddings: int = 1024
    pad_token_id: int = 58100
    eos_token_id: int = 0
    decoder_start_token_id: int = 58100
    scale_embedding: bool = False
    share_encoder_decoder_embeddings: bool = True
    tie_word_embeddings: bool = True
    normalize_before: bool = False
    # Training only.
    dropout: float = 0.1
    attention_dropout: float = 0.0
    activation_dropout: float = 0.0
    init_std: float = 0.02
    # headwise: the test-time rule of the head gates (config.json "headwise_gate_rule").
    gate_rule: str = "hard"

    def __post_init__(self) -> None:
        self.validate()

    @property
    def encoder_head_dim(self) -> int:
        return self.d_model // self.encoder_attention_heads

    @property
    def decoder_head_dim(self) -> int:
        return self.d_model // self.decoder_attention_heads

    def validate(self) -> None:
        """Raises ValueError naming the first key that is out of range."""
        positive = ("d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads",
                    "decoder_attention_heads", "encoder_ffn_dim", "decoder_ffn_dim",
                    "vocab_size", "max_position_embeddings")
        for key in positive:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"MarianConfig.{key}: expected a positive integer, found {value!r}")
        for key in ("encoder_attention_heads", "decoder_attention_heads"):
            heads = getattr(self, key)
            if self.d_model % heads != 0:
                raise ValueError(f"MarianConfig: d_model {self.d_model} is not divisible by "
                                 f"{key} {heads}")
        if self.d_model % 2 != 0:
            raise ValueError(f"MarianConfig.d_model: expected an even value (sinusoidal "
                             f"positions use sin/cos halves), found {self.d_model}")
        if self.activation_function not in ACTIVATIONS:
            raise ValueError(f"MarianConfig.activation_function: expected one of "
                             f"{', '.join(ACTIVATIONS)}, found {self.activation_function!r}")
        for key in ("pad_token_id", "eos_token_id", "decoder_start_token_id"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < self.vocab_size:
                raise ValueError(f"MarianConfig.{key}: expected an id in [0, {self.vocab_size}), "
                                 f"found {value!r}")
        if self.pad_token_id == self.eos_token_id:
            raise ValueError(f"MarianConfig: pad_token_id and eos_token_id must differ, both are "
                             f"{self.pad_token_id}")
        for key in ("scale_embedding", "share_encoder_decoder_embeddings", "tie_word_embeddings",
                    "normalize_before"):
            if not isinstance(getattr(self, key), bool):
                raise ValueError(f"MarianConfig.{key}: expected true or false, found "
                                 f"{getattr(self, key)!r}")
        if self.gate_rule not in GATE_RULES:
            raise ValueError(f"MarianConfig.gate_rule ({GATE_RULE_KEY}): expected one of "
                             f"{', '.join(GATE_RULES)}, found {self.gate_rule!r}")
        if self.normalize_before:
            raise ValueError("MarianConfig.normalize_before: true (pre-LayerNorm layers) is not "
                             "supported; MarianMT / OPUS-MT layers are post-LayerNorm (false)")
        for key in ("dropout", "attention_dropout", "activation_dropout"):
            value = getattr(self, key)
            if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise ValueError(f"MarianConfig.{key}: expected a probability in [0, 1), "
                                 f"found {value!r}")

    # ---- Hugging Face config.json ---------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "MarianConfig":
        if not isinstance(data, dict):
            raise ValueError(f"config: expected a JSON object, found {type(data).__name__}")
        model_type = data.get("model_type", "marian")
        if model_type != "marian":
            raise ValueError(f"config: expected model_type \"marian\", found {model_type!r}")
        decoder_vocab = data.get("decoder_vocab_size")
        if decoder_vocab is not None and decoder_vocab != data.get("vocab_size", cls.vocab_size):
            raise ValueError(f"config: decoder_vocab_size {decoder_vocab} differs from vocab_size "
                             f"{data.get('vocab_size')}; separate target vocabularies are not "
                             f"supported")
        names = {f.name for f in dataclasses.fields(cls)} - {"gate_rule"}
        values = {k: v for k, v in data.items() if k in names}
        if data.get(GATE_RULE_KEY, data.get("gate_rule")) is not None:
            values["gate_rule"] = data.get(GATE_RULE_KEY, data.get("gate_rule"))
        return cls(**values)

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"model_type": "marian", "architectures": ["MarianMTModel"]}
        out.update(dataclasses.asdict(self))
        rule = out.pop("gate_rule")
        if rule != "hard":
            out[GATE_RULE_KEY] = rule
        out["decoder_vocab_size"] = self.vocab_size
        out["forced_eos_token_id"] = self.eos_token_id
        out["is_encoder_decoder"] = True
        return out

    @classmethod
    def from_json(cls, path: "os.PathLike[str] | str") -> "MarianConfig":
        try:
            with open(path, "r", encoding="utf-8") as f:
                data = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not valid JSON ({e})") from e
        try:
            return cls.from_dict(data)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{path}: {e}") from e

    def to_json(self, path: "os.PathLike[str] | str") -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=2, sort_keys=True)
            f.write("\n")
