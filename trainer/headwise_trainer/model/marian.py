"""MarianMTModel: the PyTorch reference of the headwise runtime's math.

The computation is Hugging Face ``transformers`` MarianMTModel (the model OPUS-MT checkpoints were
trained as): post-LayerNorm layers (LayerNorm eps 1e-5), q scaled by head_dim**-0.5, sinusoidal
positions (sin half then cos half, from position 0, computed in float64 numpy then cast to
float32), token embeddings times sqrt(d_model) when ``scale_embedding``, logits =
hidden @ E^T + final_logits_bias with E the decoder embedding (tied) or ``lm_head.weight``.

``state_dict()`` keys are exactly the Hugging Face names (``model.shared.weight`` or
``model.{encoder,decoder}.embed_tokens.weight``, ``model.encoder.layers.N.self_attn.q_proj.weight``,
..., ``lm_head.weight`` only when untied, ``final_logits_bias``); positions are not saved, as in
Hugging Face. An attention block may carry a Hard Concrete gate (``<block>.head_gate.log_alpha``,
see gates.py) that scales each head's output before ``out_proj``.

Masks: ``attention_mask`` is [batch, src_len] with 1 (or True) for real tokens and 0 for padding.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .config import ACTIVATIONS, MarianConfig

LAYER_NORM_EPS = 1e-5


def sinusoidal_positions(num_positions: int, dim: int) -> torch.Tensor:
    """[num_positions, dim] float32, bit-identical to MarianSinusoidalPositionalEmbedding."""
    pos = np.arange(num_positions, dtype=np.float64)[:, None]
    j = np.arange(dim)
    # Same float64 operations as Hugging Face: pos / 10000 ** (2 * (j // 2) / dim).
    position_enc = pos / np.power(10000, 2 * (j // 2) / dim)
    out = torch.empty(num_positions, dim, dtype=torch.float32)
    half = dim // 2
    out[:, :half] = torch.from_numpy(np.sin(position_enc[:, 0::2])).float()
    out[:, half:] = torch.from_numpy(np.cos(position_enc[:, 1::2])).float()
    return out


def activation(name: str):
    """The function of a config.json activation name (config.ACTIVATIONS)."""
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; expected one of "
                         f"{', '.join(ACTIVATIONS)}")
    return getattr(F, ACTIVATIONS[name])


def additive_key_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """[B, S] 1/0 mask -> [B, 1, 1, S] additive float mask (0 or float32 min, as HF)."""
    keep = attention_mask.to(torch.bool)[:, None, None, :]
    return torch.zeros(keep.shape, dtype=torch.float32, device=keep.device).masked_fill(
        ~keep, torch.finfo(torch.float32).min)


def causal_mask(length: int, device: Optional[torch.device] = None) -> torch.Tensor:
    """[1, 1, T, T] additive mask: position t attends to positions <= t."""
    m = torch.full((length, length), torch.finfo(torch.float32).min, device=device)
    return torch.triu(m, diagonal=1)[None, None]


class MarianAttention(nn.Module):
    """Multi-head attention with ``num_heads`` heads of ``head_dim`` (num_heads may be 0 in a
    stripped model: the output is then ``out_proj.bias``)."""

    def __init__(self, embed_dim: int, num_heads: int, head_dim: int, dropout: float = 0.0):
        super().__init__()
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, head_dim
        self.scaling = head_dim ** -0.5
        self.dropout = dropout
        inner = num_heads * head_dim
        with warnings.catch_warnings():  # a block with 0 heads has zero-element weights
            warnings.filterwarnings("ignore", message="Initializing zero-element tensors")
            self.q_proj = nn.Linear(embed_dim, inner)
            self.k_proj = nn.Linear(embed_dim, inner)
            self.v_proj = nn.Linear(embed_dim, inner)
            self.out_proj = nn.Linear(inner, embed_dim)
        self.register_module("head_gate", None)  # gates.HeadGate or None
        # Optional fixed per-head multipliers (evaluation of masked heads); not saved.
        self.head_mask: Optional[torch.Tensor] = None

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)

    def project_kv(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """Keys and values [B, H, S, head_dim] of ``x`` [B, S, d]."""
        return self._split(self.k_proj(x)), self._split(self.v_proj(x))

    def head_multipliers(self) -> Optional[torch.Tensor]:
        """Gate (sampled in training, 0/1 in eval) times head mask, [H], or None."""
        g = self.head_gate() if self.head_gate is not None else None
        if self.head_mask is not None:
            g = self.head_mask if g is None else g * self.head_mask
        return g

    def attend(self, x: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               mask: Optional[torch.Tensor]) -> torch.Tensor:
        """Queries from ``x`` [B, T, d] over ``k``/``v`` [B, H, S, hd]; ``mask`` additive."""
        b, t, _ = x.shape
        if self.num_heads == 0:
            return self.out_proj.bias.expand(b, t, self.embed_dim)
        q = self._split(self.q_proj(x) * self.scaling)
        scores = torch.matmul(q, k.transpose(2, 3))
        if mask is not None:
            scores = scores + mask
        probs = torch.softmax(scores, dim=-1)
        probs = F.dropout(probs, p=self.dropout, training=self.training)
        heads = torch.matmul(probs, v)  # [B, H, T, hd]
        g = self.head_multipliers()
        if g is not None:
            heads = heads * g.view(1, -1, 1, 1)
        merged = heads.transpose(1, 2).reshape(b, t, self.num_heads * self.head_dim)
        return self.out_proj(merged)

    def forward(self, x: torch.Tensor, kv_input: Optional[torch.Tensor] = None,
                mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        if self.num_heads == 0:
            return self.attend(x, x, x, None)
        k, v = self.project_kv(x if kv_input is None else kv_input)
        return self.attend(x, k, v, mask)


class MarianEncoderLayer(nn.Module):
    def __init__(self, config: MarianConfig):
        super().__init__()
        d = config.d_model
        self.self_attn = MarianAttention(d, config.encoder_attention_heads,
                                         config.encoder_head_dim, config.attention_dropout)
        self.self_attn_layer_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPS)
        self.fc1 = nn.Linear(d, config.encoder_ffn_dim)
        self.fc2 = nn.Linear(config.encoder_ffn_dim, d)
        self.final_layer_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPS)
        self.act = activation(config.activation_function)
        self.dropout, self.activation_dropout = config.dropout, config.activation_dropout

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = F.dropout(self.self_attn(x, mask=mask), p=self.dropout, training=self.training)
        x = self.self_attn_layer_norm(x + h)
        h = F.dropout(self.act(self.fc1(x)), p=self.activation_dropout, training=self.training)
        h = F.dropout(self.fc2(h), p=self.dropout, training=self.training)
        return self.final_layer_norm(x + h)


class MarianDecoderLayer(nn.Module):
    def __init__(self, config: MarianConfig):
        super().__init__()
        d, heads, hd = config.d_model, config.decoder_attention_heads, config.decoder_head_dim
        self.self_attn = MarianAttention(d, heads, hd, config.attention_dropout)
        self.self_attn_layer_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPS)
        self.encoder_attn = MarianAttention(d, heads, hd, config.attention_dropout)
        self.encoder_attn_layer_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPS)
        self.fc1 = nn.Linear(d, config.decoder_ffn_dim)
        self.fc2 = nn.Linear(config.decoder_ffn_dim, d)
        self.final_layer_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPS)
        self.act = activation(config.activation_function)
        self.dropout, self.activation_dropout = config.dropout, config.activation_dropout

    def _drop(self, x: torch.Tensor) -> torch.Tensor:
        return F.dropout(x, p=self.dropout, training=self.training)

    def _after_self(self, x, h, cross_k, cross_v, enc_mask):
        x = self.self_attn_layer_norm(x + self._drop(h))
        h = self.encoder_attn.attend(x, cross_k, cross_v, enc_mask)
        x = self.encoder_attn_layer_norm(x + self._drop(h))
        h = F.dropout(self.act(self.fc1(x)), p=self.activation_dropout, training=self.training)
        return self.final_layer_norm(x + self._drop(self.fc2(h)))

    def forward(self, x, self_mask, cross_k, cross_v, enc_mask):
        """Full sequence ``x`` [B, T, d] with an additive causal (+padding) ``self_mask``."""
        return self._after_self(x, self.self_attn(x, mask=self_mask), cross_k, cross_v, enc_mask)

    def step(self, x, past_k, past_v, cross_k, cross_v, enc_mask):
        """One position ``x`` [R, 1, d]; returns (output, keys, values) with the new position
        appended to ``past_k``/``past_v`` [R, H, t, hd]."""
        attn = self.self_attn
        if attn.num_heads == 0:
            h, k, v = attn.attend(x, past_k, past_v, None), past_k, past_v
        else:
            k_new, v_new = attn.project_kv(x)
            k, v = torch.cat([past_k, k_new], dim=2), torch.cat([past_v, v_new], dim=2)
            h = attn.attend(x, k, v, None)
        return self._after_self(x, h, cross_k, cross_v, enc_mask), k, v


class MarianEncoder(nn.Module):
    def __init__(self, config: MarianConfig, embed_tokens: Optional[nn.Embedding]):
        super().__init__()
        if embed_tokens is not None:
            self.embed_tokens = embed_tokens
        self.layers = nn.ModuleList(MarianEncoderLayer(config) for _ in range(config.encoder_layers))


class MarianDecoder(nn.Module):
    def __init__(self, config: MarianConfig, embed_tokens: Optional[nn.Embedding]):
        super().__init__()
        if embed_tokens is not None:
            self.embed_tokens = embed_tokens
        self.layers = nn.ModuleList(MarianDecoderLayer(config) for _ in range(config.decoder_layers))


class MarianModel(nn.Module):
    def __init__(self, config: MarianConfig):
        super().__init__()
        v, d, pad = config.vocab_size, config.d_model, config.pad_token_id
        if config.share_encoder_decoder_embeddings:
            self.shared = nn.Embedding(v, d, padding_idx=pad)
            self.encoder = MarianEncoder(config, None)
            self.decoder = MarianDecoder(config, None)
        else:
            self.encoder = MarianEncoder(config, nn.Embedding(v, d, padding_idx=pad))
            self.decoder = MarianDecoder(config, nn.Embedding(v, d, padding_idx=pad))

    @property
    def encoder_embeddings(self) -> nn.Embedding:
        return self.shared if hasattr(self, "shared") else self.encoder.embed_tokens

    @property
    def decoder_embeddings(self) -> nn.Embedding:
        return self.shared if hasattr(self, "shared") else self.decoder.embed_tokens


@dataclass
class DecoderState:
    """Incremental decoding state for R rows (hypotheses). Tensors per decoder layer:
    self-attention keys/values [R, H, t, hd] of the t positions decoded so far, and the
    precomputed cross-attention keys/values [R, H, S, hd] of the encoder output."""
    self_k: List[torch.Tensor]
    self_v: List[torch.Tensor]
    cross_k: List[torch.Tensor]
    cross_v: List[torch.Tensor]
    enc_mask: torch.Tensor  # [R, 1, 1, S] additive
    length: int = 0          # positions decoded so far (the next position's index)

    def select(self, rows: torch.Tensor) -> "DecoderState":
        """State of the rows ``rows`` (LongTensor, repeats allowed), e.g. beam parents."""
        pick = lambda ts: [t.index_select(0, rows) for t in ts]  # noqa: E731
        return DecoderState(pick(self.self_k), pick(self.self_v), pick(self.cross_k),
                            pick(self.cross_v), self.enc_mask.index_select(0, rows), self.length)


class MarianMTModel(nn.Module):
    def __init__(self, config: MarianConfig):
        super().__init__()
        config.validate()
        self.config = config
        self.model = MarianModel(config)
        if not config.tie_word_embeddings:
            self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.register_buffer("final_logits_bias", torch.zeros(1, config.vocab_size))
        self.register_buffer("positions", sinusoidal_positions(
            config.max_position_embeddings, config.d_model), persistent=False)
        self.embed_scale = math.sqrt(config.d_model) if config.scale_embedding else 1.0
        self.init_weights()

    # ---- parameters --------------------------------------------------------------------
    def init_weights(self, std: Optional[float] = None, generator: Optional[torch.Generator] = None):
        """Hugging Face initialisation: Linear/Embedding ~ N(0, init_std), biases 0, PAD row 0,
        LayerNorm 1/0, final_logits_bias 0."""
        std = self.config.init_std if std is None else std
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    m.weight.normal_(0.0, std, generator=generator)
                    if isinstance(m, nn.Embedding) and m.padding_idx is not None:
                        m.weight[m.padding_idx].zero_()
                    if getattr(m, "bias", None) is not None:
                        m.bias.zero_()
                elif isinstance(m, nn.LayerNorm):
                    m.weight.fill_(1.0)
                    m.bias.zero_()
            self.final_logits_bias.zero_()

    def embeddings(self) -> List[nn.Embedding]:
        """The token embedding module(s): one when shared, else encoder and decoder."""
        enc, dec = self.model.encoder_embeddings, self.model.decoder_embeddings
        return [enc] if enc is dec else [enc, dec]

    def freeze_pad_rows(self) -> None:
        """Keeps every embedding's ``padding_idx`` row at its current value during training,
        as nn.Embedding's padding_idx convention (which OPUS-MT checkpoints follow) intends: a
        hook zeroes that row of the weight's gradient, including the part a tied output
        projection contributes (the lookup alone already gives none). With a zero gradient Adam
        leaves the row unchanged, so a zero row (our initialisation) stays exactly zero and an
        imported row stays as imported. Call once per model instance; hooks are not saved."""
        for emb in self.embeddings():
            pad = emb.padding_idx
            if pad is None or not emb.weight.requires_grad or \
                    getattr(emb.weight, "_headwise_pad_hook", False):
                continue  # a frozen embedding gets no gradient at all

            def zero_pad_grad(grad: torch.Tensor, pad: int = pad) -> torch.Tensor:
                grad = grad.clone()
                grad[pad] = 0
                return grad

            emb.weight.register_hook(zero_pad_grad)
            emb.weight._headwise_pad_hook = True

    def output_weight(self) -> torch.Tensor:
        """[V, d] output projection: lm_head.weight, or the decoder embedding when tied."""
        if self.config.tie_word_embeddings:
            return self.model.decoder_embeddings.weight
        return self.lm_head.weight

    def attention_blocks(self) -> Iterator[Tuple[str, str, int, MarianAttention]]:
        """(name, kind, layer, module) for every attention block in canonical order: encoder
        self (layers 0..), decoder self, decoder cross. kind: encoder_self | decoder_self |
        decoder_cross; name: the state_dict prefix, e.g. model.encoder.layers.3.self_attn."""
        for i, layer in enumerate(self.model.encoder.layers):
            yield f"model.encoder.layers.{i}.self_attn", "encoder_self", i, layer.self_attn
        for i, layer in enumerate(self.model.decoder.layers):
            yield f"model.decoder.layers.{i}.self_attn", "decoder_self", i, layer.self_attn
        for i, layer in enumerate(self.model.decoder.layers):
            yield f"model.decoder.layers.{i}.encoder_attn", "decoder_cross", i, layer.encoder_attn

    # ---- computation -------------------------------------------------------------------
    def _embed(self, embedding: nn.Embedding, ids: torch.Tensor, start: int) -> torch.Tensor:
        end = start + ids.shape[1]
        if end > self.config.max_position_embeddings:
            raise ValueError(f"sequence needs positions up to {end - 1}, but "
                             f"max_position_embeddings is {self.config.max_position_embeddings}")
        x = embedding(ids) * self.embed_scale + self.positions[start:end]
        return F.dropout(x, p=self.config.dropout, training=self.training)

    def encode(self, input_ids: torch.Tensor, attention_mask: Optional[torch.Tensor] = None):
        """Encoder output [B, S, d] of ``input_ids`` [B, S]."""
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        mask = additive_key_mask(attention_mask)
        x = self._embed(self.model.encoder_embeddings, input_ids, 0)
        for layer in self.model.encoder.layers:
            x = layer(x, mask)
        return x

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return F.linear(hidden, self.output_weight()) + self.final_logits_bias

    def decode(self, decoder_input_ids: torch.Tensor, encoder_out: torch.Tensor,
               attention_mask: Optional[torch.Tensor] = None,
               decoder_attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Full (teacher-forced) decoder pass; logits [B, T, V]."""
        if attention_mask is None:
            attention_mask = torch.ones(encoder_out.shape[:2], dtype=torch.long,
                                        device=encoder_out.device)
        enc_mask = additive_key_mask(attention_mask)
        t = decoder_input_ids.shape[1]
        self_mask = causal_mask(t, decoder_input_ids.device)
        if decoder_attention_mask is not None:
            self_mask = self_mask + additive_key_mask(decoder_attention_mask)
            self_mask = self_mask.clamp(min=torch.finfo(torch.float32).min)
        x = self._embed(self.model.decoder_embeddings, decoder_input_ids, 0)
        for layer in self.model.decoder.layers:
            k, v = layer.encoder_attn.project_kv(encoder_out)
            x = layer(x, self_mask, k, v, enc_mask)
        return self.logits(x)

    def forward(self, input_ids: torch.Tensor, attention_mask: Optional[torch.Tensor],
                decoder_input_ids: torch.Tensor,
                decoder_attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Logits [B, T, V] for ``decoder_input_ids`` [B, T] (starting with
        decoder_start_token_id) given ``input_ids`` [B, S]."""
        enc = self.encode(input_ids, attention_mask)
        return self.decode(decoder_input_ids, enc, attention_mask, decoder_attention_mask)

    def init_decoder_state(self, encoder_out: torch.Tensor,
                           attention_mask: Optional[torch.Tensor] = None) -> DecoderState:
        """Precomputes cross-attention keys/values; one row per encoder output row."""
        b = encoder_out.shape[0]
        if attention_mask is None:
            attention_mask = torch.ones(encoder_out.shape[:2], dtype=torch.long,
                                        device=encoder_out.device)
        self_k, self_v, cross_k, cross_v = [], [], [], []
        for layer in self.model.decoder.layers:
            sa = layer.self_attn
            empty = encoder_out.new_zeros(b, sa.num_heads, 0, sa.head_dim)
            self_k.append(empty)
            self_v.append(empty)
            if layer.encoder_attn.num_heads == 0:
                ca = layer.encoder_attn
                k = v = encoder_out.new_zeros(b, 0, encoder_out.shape[1], ca.head_dim)
            else:
                k, v = layer.encoder_attn.project_kv(encoder_out)
            cross_k.append(k)
            cross_v.append(v)
        return DecoderState(self_k, self_v, cross_k, cross_v, additive_key_mask(attention_mask))

    def decode_step(self, token_ids: torch.Tensor,
                    state: DecoderState) -> Tuple[torch.Tensor, DecoderState]:
        """Feeds ``token_ids`` [R] at position ``state.length``; returns logits [R, V] and the
        state with that position appended."""
        x = self._embed(self.model.decoder_embeddings, token_ids.view(-1, 1), state.length)
        self_k, self_v = [], []
        for i, layer in enumerate(self.model.decoder.layers):
            x, k, v = layer.step(x, state.self_k[i], state.self_v[i], state.cross_k[i],
                                 state.cross_v[i], state.enc_mask)
            self_k.append(k)
            self_v.append(v)
        new_state = DecoderState(self_k, self_v, state.cross_k, state.cross_v, state.enc_mask,
                                 state.length + 1)
        return self.logits(x[:, 0]), new_state
