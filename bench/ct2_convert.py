#!/usr/bin/python3
"""Converts a Hugging Face MarianMT checkpoint directory to a CTranslate2 model directory
without `transformers` (numpy + ctranslate2.specs only), for bench/throughput.py --ct2. Runs in
CTranslate2's Python; never imported by headwise's build or tests.

    bench/ct2_convert.py CKPT_DIR OUT_DIR [--quantization int8|float32|...] [--force]

CKPT_DIR holds config.json, model.safetensors (F16/F32/BF16), vocab.json, source.spm,
target.spm. Mirrors ctranslate2/converters/transformers.py (BartLoader + MarianMTLoader,
CTranslate2 4.8.1):
  * TransformerSpec.from_config((enc, dec), heads, pre_norm=normalize_before,
    activation=config.activation_function, layernorm_embedding=False)
  * q/k/v fused for self-attention, k/v fused for cross-attention
  * embeddings: model.shared.weight (or embed_tokens), lm_head tied unless lm_head.weight
    exists, final_logits_bias as projection bias when non-zero
  * sinusoidal positions of MarianSinusoidalPositionalEmbedding (sin | cos halves), unless
    embed_positions.weight is stored
  * scale_embeddings = sqrt(d_model) if scale_embedding
  * decoder.start_from_zero_embedding = True, decoder_start_token = eos; <pad> is dropped
    from the vocabulary and weights when it is the last token (as MarianMTLoader does)
Extra for headwise:
  * the <pad> row (pad_token_id) of the embedding matrices is zeroed
  * head_gate.log_alpha (pruned checkpoints): heads with log_alpha <= 0 get their q/k/v rows
    (weights + biases) and out_proj columns zeroed; CTranslate2 still computes them.
source.spm / target.spm are copied into OUT_DIR.
"""
import argparse
import json
import math
import os
import shutil
import struct
import sys

import numpy as np

from ctranslate2.specs import common_spec, transformer_spec

_ACTIVATIONS = {
    "gelu": common_spec.Activation.GELU,
    "gelu_fast": common_spec.Activation.GELUTanh,
    "gelu_new": common_spec.Activation.GELUTanh,
    "gelu_python": common_spec.Activation.GELU,
    "gelu_pytorch_tanh": common_spec.Activation.GELUTanh,
    "quick_gelu": common_spec.Activation.GELUSigmoid,
    "relu": common_spec.Activation.RELU,
    "silu": common_spec.Activation.SWISH,
    "swish": common_spec.Activation.SWISH,
}


def read_safetensors(path):
    """{name: float32 ndarray} (8-byte LE header length, JSON header, raw little-endian data)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        raw = data[base + a:base + b]
        dt = t["dtype"]
        if dt == "F32":
            arr = np.frombuffer(raw, dtype="<f4")
        elif dt == "F16":
            arr = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif dt == "BF16":
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{name}: unsupported dtype {dt}")
        out[name] = np.array(arr, dtype=np.float32).reshape(t["shape"])
    return out


def sinusoidal_positions(n_pos, dim):
    """MarianSinusoidalPositionalEmbedding._init_weight: [sin | cos] halves."""
    pos = np.arange(n_pos, dtype=np.float64)[:, None]
    j = np.arange(dim, dtype=np.float64)[None, :]
    enc = pos / np.power(10000, 2 * (j // 2) / dim)
    out = np.zeros((n_pos, dim), dtype=np.float64)
    sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, :sentinel] = np.sin(enc[:, 0::2])
    out[:, sentinel:] = np.cos(enc[:, 1::2])
    return out.astype(np.float32)


class _Marian:
    def __init__(self, ckpt_dir):
        with open(os.path.join(ckpt_dir, "config.json"), encoding="utf-8") as f:
            self.cfg = json.load(f)
        self.w = read_safetensors(os.path.join(ckpt_dir, "model.safetensors"))
        self.masked = {}

    def t(self, name):
        return self.w[name].copy()

    def linear(self, spec, prefix):
        spec.weight = self.t(prefix + ".weight")
        if prefix + ".bias" in self.w:
            spec.bias = self.t(prefix + ".bias")

    def layer_norm(self, spec, prefix):
        spec.gamma = self.t(prefix + ".weight")
        spec.beta = self.t(prefix + ".bias")

    def attention(self, spec, prefix, num_heads, self_attention):
        q, k, v, o = (common_spec.LinearSpec() for _ in range(4))
        self.linear(q, prefix + ".q_proj")
        self.linear(k, prefix + ".k_proj")
        self.linear(v, prefix + ".v_proj")
        self.linear(o, prefix + ".out_proj")
        gate = self.w.get(prefix + ".head_gate.log_alpha")
        if gate is not None:
            gate = gate.reshape(-1)
            assert gate.shape[0] == num_heads, (prefix, gate.shape)
            dh = q.weight.shape[0] // num_heads
            off = [h for h in range(num_heads) if gate[h] <= 0]
            for h in off:
                s = slice(h * dh, (h + 1) * dh)
                for lin in (q, k, v):
                    lin.weight[s, :] = 0
                    if lin.has_bias():
                        lin.bias[s] = 0
                o.weight[:, s] = 0
            self.masked[prefix] = off
        fuse = lambda dst, layers: _fuse(dst, layers)
        if self_attention:
            fuse(spec.linear[0], [q, k, v])
        else:
            fuse(spec.linear[0], [q])
            fuse(spec.linear[1], [k, v])
        spec.linear[-1].weight = o.weight
        if o.has_bias():
            spec.linear[-1].bias = o.bias


def _fuse(spec, layers):
    spec.weight = np.concatenate([l.weight for l in layers])
    if any(l.has_bias() for l in layers):
        spec.bias = np.concatenate([
            l.bias if l.has_bias() else np.zeros(l.weight.shape[0], np.float32) for l in layers])


def build_spec(ckpt_dir):
    m = _Marian(ckpt_dir)
    cfg, w = m.cfg, m.w
    if cfg.get("model_type") not in (None, "marian"):
        raise ValueError(f"not a Marian checkpoint: model_type={cfg.get('model_type')}")
    heads = cfg["encoder_attention_heads"]
    if cfg.get("decoder_attention_heads", heads) != heads:
        raise ValueError("TransformerSpec needs equal encoder/decoder head counts")
    d_model = cfg["d_model"]
    pad = cfg["pad_token_id"]
    spec = transformer_spec.TransformerSpec.from_config(
        (cfg["encoder_layers"], cfg["decoder_layers"]),
        heads,
        pre_norm=bool(cfg.get("normalize_before", False)),  # MarianMTLoader forces False
        activation=_ACTIVATIONS[cfg.get("activation_function", "swish")],
        layernorm_embedding=False,
    )
    scale = math.sqrt(d_model) if cfg.get("scale_embedding", False) else 1.0

    def emb(side):
        name = f"model.{side}.embed_tokens.weight"
        e = w[name].copy() if name in w else w["model.shared.weight"].copy()
        e[pad] = 0  # headwise: zero the <pad> row
        return e

    def positions(side):
        name = f"model.{side}.embed_positions.weight"
        if name in w:
            return w[name].copy()
        return sinusoidal_positions(cfg.get("max_position_embeddings", 512), d_model)

    enc, dec = spec.encoder, spec.decoder
    for side, s in (("encoder", enc), ("decoder", dec)):
        s.scale_embeddings = scale
        s.position_encodings.encodings = positions(side)
    enc.embeddings[0].weight = emb("encoder")
    dec.embeddings.weight = emb("decoder")
    dec.start_from_zero_embedding = True

    for i, ls in enumerate(enc.layer):
        p = f"model.encoder.layers.{i}"
        m.attention(ls.self_attention, p + ".self_attn", heads, True)
        m.layer_norm(ls.self_attention.layer_norm, p + ".self_attn_layer_norm")
        m.linear(ls.ffn.linear_0, p + ".fc1")
        m.linear(ls.ffn.linear_1, p + ".fc2")
        m.layer_norm(ls.ffn.layer_norm, p + ".final_layer_norm")
    for i, ls in enumerate(dec.layer):
        p = f"model.decoder.layers.{i}"
        m.attention(ls.self_attention, p + ".self_attn", heads, True)
        m.layer_norm(ls.self_attention.layer_norm, p + ".self_attn_layer_norm")
        m.attention(ls.attention, p + ".encoder_attn", heads, False)
        m.layer_norm(ls.attention.layer_norm, p + ".encoder_attn_layer_norm")
        m.linear(ls.ffn.linear_0, p + ".fc1")
        m.linear(ls.ffn.linear_1, p + ".fc2")
        m.layer_norm(ls.ffn.layer_norm, p + ".final_layer_norm")

    if "lm_head.weight" in w:
        dec.projection.weight = w["lm_head.weight"].copy()
        if cfg.get("tie_word_embeddings", True):
            dec.projection.weight[pad] = 0  # tied: the same <pad> row as the embeddings
    else:
        dec.projection.weight = dec.embeddings.weight  # tied (same array, saved once)
    flb = w.get("final_logits_bias")
    if flb is not None and np.count_nonzero(flb):
        dec.projection.bias = flb.reshape(-1).copy()

    # Vocabulary (vocab.json, by id; truncated to vocab_size as BartLoader does).
    with open(os.path.join(ckpt_dir, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    tokens = tokens[: cfg["vocab_size"]]
    id2tok = dict(enumerate(tokens))
    eos, unk = id2tok[cfg["eos_token_id"]], "<unk>"
    if tokens[-1] == "<pad>" and pad == len(tokens) - 1:  # MarianMTLoader._remove_pad_weights
        tokens.pop()
        n = len(tokens)
        for s in (enc.embeddings[0], dec.embeddings, dec.projection):
            if s.weight.shape[0] == n + 1:
                s.weight = s.weight[:-1]
            if isinstance(s, common_spec.LinearSpec) and s.has_bias() and s.bias.shape[0] == n + 1:
                s.bias = s.bias[:-1]
        if dec.projection.weight is not dec.embeddings.weight and \
                np.array_equal(dec.projection.weight, dec.embeddings.weight):
            dec.projection.weight = dec.embeddings.weight
    spec.register_source_vocabulary(tokens)
    spec.register_target_vocabulary(tokens)
    spec.config.eos_token = eos
    spec.config.unk_token = unk
    spec.config.decoder_start_token = eos  # any token: the decoder starts from a zero embedding
    for name in ("source.spm", "target.spm"):
        path = os.path.join(ckpt_dir, name)
        if os.path.isfile(path):
            spec.register_file(path)
    return spec, m.masked


def convert(ckpt_dir, out_dir, quantization=None, force=False, verbose=True):
    if os.path.exists(out_dir) and not force:
        raise RuntimeError(f"{out_dir} exists (use --force)")
    spec, masked = build_spec(ckpt_dir)
    spec.validate()
    spec.optimize(quantization=quantization)
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    spec.save(out_dir)
    if verbose:
        n = sum(len(v) for v in masked.values())
        print(f"{ckpt_dir} -> {out_dir} (quantization={quantization}); "
              f"heads zeroed: {n} in {len(masked)} gated blocks", file=sys.stderr)
        for k, v in masked.items():
            if v:
                print(f"  {k}: {v}", file=sys.stderr)
    return out_dir


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint")
    p.add_argument("output")
    p.add_argument("--quantization", default=None,
                   help="int8, int8_float32, int16, float16, bfloat16, float32 (default: keep fp32)")
    p.add_argument("--force", action="store_true")
    a = p.parse_args(argv)
    convert(a.checkpoint, a.output, a.quantization, a.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
