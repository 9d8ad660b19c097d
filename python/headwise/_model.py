"""headwise.Model: a verified, memory-mapped .hwm file and what it says about itself."""
from __future__ import annotations

import math
import operator
import os
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._errors import InvalidArgumentError
from ._lib import check, ffi, lib, to_str

ATTENTION_KINDS = {lib.HW_ATTENTION_ENCODER_SELF: "encoder_self",
                   lib.HW_ATTENTION_DECODER_SELF: "decoder_self",
                   lib.HW_ATTENTION_DECODER_CROSS: "decoder_cross"}

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class ModelConfig:
    """The MarianMT configuration values the runtime uses."""
    d_model: int
    encoder_layers: int
    decoder_layers: int
    encoder_ffn_dim: int
    decoder_ffn_dim: int
    vocab_size: int
    max_position_embeddings: int
    pad_token_id: int
    eos_token_id: int
    unk_token_id: int
    decoder_start_token_id: int
    activation: str  # "relu", "swish" or "gelu"


@dataclass(frozen=True)
class HeadAnalysis:
    """What ``headwise-train analyze`` found about one source head (None = not computed)."""
    source_head: int
    kept: bool
    relevance: Optional[float]   # LRP share of the block's relevance
    confidence: Optional[float]  # mean maximum attention weight, EOS excluded
    michel: Optional[float]      # Michel et al. importance, l2-normalised per block
    roles: Tuple[str, ...]       # "positional", "rare-word", "syntactic:<relation>", ...


@dataclass(frozen=True)
class AttentionBlock:
    """One attention block and the heads it kept."""
    name: str                 # "model.encoder.layers.3.self_attn", ...
    kind: str                 # "encoder_self", "decoder_self" or "decoder_cross"
    layer: int
    num_heads: int            # heads kept in the file (0 allowed)
    original_num_heads: int   # heads of the source checkpoint
    head_dim: int
    kept_heads: Tuple[int, ...]                    # source-head indices, ascending
    gate_log_alpha: Optional[Tuple[float, ...]]    # per source head; None without gates
    analysis: Optional[Tuple[HeadAnalysis, ...]]   # per source head; None without analysis


@dataclass(frozen=True)
class AnalysisSource:
    """Where a model's per-head analysis came from."""
    relevance_rule: str  # "attnlrp" or "z"
    data: str            # e.g. "dev, 500 sentences"
    sha256: str          # of the analysis.json the converter read


@dataclass(frozen=True)
class Provenance:
    """What the converter recorded about the source checkpoint ("" = not recorded)."""
    source_checkpoint_sha256: str
    source_checkpoint_name: str
    converter_version: str
    keep_heads_spec: str
    source_dtype: str


@dataclass(frozen=True)
class ShortlistInfo:
    """The model's vocabulary shortlist (``headwise-convert --shortlist``)."""
    frequent: int      # pieces every batch may produce
    sources: int       # source pieces with a list of target pieces
    longest: int       # entries of the longest list
    entries: int       # list entries in all
    description: str   # how it was made


@dataclass(frozen=True)
class ModelInfo:
    """Everything a .hwm file says about itself (``headwise-convert inspect`` shows the same)."""
    config: ModelConfig
    weight_format: str        # "fp32", "fp16", "int8" or "mixed"
    attention: Tuple[AttentionBlock, ...]
    analysis: Optional[AnalysisSource]
    provenance: Provenance
    has_tokenizer: bool
    format_version: int
    file_bytes: int
    weight_bytes: int
    shortlist: Optional[ShortlistInfo] = None  # None: the file has no vocabulary shortlist

    @property
    def heads_kept(self) -> Dict[str, Tuple[int, ...]]:
        """Kept source-head indices per block name."""
        return {b.name: b.kept_heads for b in self.attention}

    @property
    def num_heads_kept(self) -> Tuple[int, int]:
        """(heads kept, heads of the source checkpoint) over all blocks."""
        return (sum(b.num_heads for b in self.attention),
                sum(b.original_num_heads for b in self.attention))

    def as_dict(self) -> Dict[str, Any]:
        """A JSON-ready dict (nested dataclasses as dicts, tuples as lists)."""
        return asdict(self)


def _stat(v: float) -> Optional[float]:
    return None if math.isnan(v) else float(v)


def _read_info(handle) -> ModelInfo:
    c = ffi.new("hw_model_info*")
    check(lib.hw_model_get_info(handle, c))
    blocks: List[AttentionBlock] = []
    b = ffi.new("hw_attention_block*")
    for i in range(c.num_attention_blocks):
        check(lib.hw_model_get_attention_block(handle, i, b))
        kept = tuple(ffi.unpack(b.kept_heads, b.num_heads)) if b.num_heads else ()
        gates = (tuple(ffi.unpack(b.gate_log_alpha, b.original_num_heads))
                 if b.gate_log_alpha != ffi.NULL else None)
        analysis = None
        if b.analysis != ffi.NULL:
            heads = []
            for h in range(b.original_num_heads):
                a = b.analysis[h]
                roles = tuple(to_str(a.roles[r]) for r in range(a.num_roles))
                heads.append(HeadAnalysis(a.source_head, a.source_head in kept,
                                          _stat(a.relevance), _stat(a.confidence),
                                          _stat(a.michel), roles))
            analysis = tuple(heads)
        blocks.append(AttentionBlock(to_str(b.name), ATTENTION_KINDS.get(b.kind, "unknown"),
                                     b.layer, b.num_heads, b.original_num_heads, b.head_dim,
                                     kept, gates, analysis))
    config = ModelConfig(c.d_model, c.encoder_layers, c.decoder_layers, c.encoder_ffn_dim,
                         c.decoder_ffn_dim, c.vocab_size, c.max_position_embeddings,
                         c.pad_token_id, c.eos_token_id, c.unk_token_id,
                         c.decoder_start_token_id, to_str(c.activation))
    rule, sha = to_str(c.analysis_rule), to_str(c.analysis_sha256)
    source = AnalysisSource(rule, to_str(c.analysis_data), sha) if rule or sha else None
    provenance = Provenance(to_str(c.source_checkpoint_sha256), to_str(c.source_checkpoint_name),
                            to_str(c.converter_version), to_str(c.keep_heads_spec),
                            to_str(c.source_dtype))
    shortlist = (ShortlistInfo(c.shortlist_frequent, c.shortlist_sources, c.shortlist_longest,
                               c.shortlist_entries, to_str(c.shortlist_description))
                 if c.has_shortlist else None)
    return ModelInfo(config, to_str(c.weight_format), tuple(blocks), source, provenance,
                     bool(c.has_tokenizer), c.format_version, c.file_bytes, c.weight_bytes,
                     shortlist)


class Model:
    """A headwise model file (.hwm), mapped read-only and verified.

    Loading checks the file's identifier, size, alignment and format version, runs the
    FlatBuffers verifier and the semantic checks (every tensor's shape against the config and
    the heads each block kept), creates the tokenizers and, with ``verify=True``, checks the
    weights' checksum (which reads every byte once; ``verify=False`` skips only that).

    A Model is immutable and may be shared by any number of :class:`Translator` objects on
    any number of threads. Its memory is the file mapping, released when the Model and every
    Translator made from it are gone (or after :meth:`close`, once its translators are gone).

    Raises:
        IoError: the file cannot be opened or read.
        InvalidModelError (ChecksumMismatchError, UnsupportedVersionError): the file is not a
            valid headwise model; the message names the part that is wrong.
        TokenizerError: the embedded SentencePiece models are unusable.

    Example::

        model = headwise.Model("models/en-de/model.hwm")
        model.info.weight_format         # "int8"
        model.info.num_heads_kept        # (24, 96)
    """

    def __init__(self, path: PathLike, verify: bool = True):
        self.path = os.fspath(path)
        params = lib.hw_load_default_params()
        params.verify_checksum = 1 if verify else 0
        out = ffi.new("hw_model**")
        check(lib.hw_model_load(os.fsencode(self.path), ffi.new("hw_load_params*", params), out))
        self._handle = ffi.gc(out[0], lib.hw_model_free)
        self.info: ModelInfo = _read_info(self._handle)

    # -- convenience views of info ------------------------------------------------------
    @property
    def config(self) -> ModelConfig:
        return self.info.config

    @property
    def attention(self) -> Tuple[AttentionBlock, ...]:
        return self.info.attention

    @property
    def weight_format(self) -> str:
        return self.info.weight_format

    @property
    def has_tokenizer(self) -> bool:
        return self.info.has_tokenizer

    # -- tokenizers ---------------------------------------------------------------------
    def encode(self, text: Union[str, bytes]) -> List[int]:
        """Source text -> encoder input ids, EOS included, exactly as :meth:`Translator.translate`
        encodes a line (what :meth:`Translator.translate_ids` takes).

        Raises InvalidUtf8Error (bytes that are not UTF-8) or TokenizerError (no tokenizer).
        """
        return self._encode(lib.hw_model_encode, text)

    def encode_target(self, text: Union[str, bytes]) -> List[int]:
        """Target text -> the ids of a target prefix (target pieces, no EOS; blank text: none),
        exactly as :meth:`Translator.translate` encodes its ``target_prefix`` entries (what
        :meth:`Translator.translate_ids` takes as ``target_prefix``).

        Raises InvalidUtf8Error, or TokenizerError (no tokenizer, or a piece the vocabulary
        lacks).
        """
        return self._encode(lib.hw_model_encode_target, text)

    def _encode(self, fn, text: Union[str, bytes]) -> List[int]:
        """hw_model_encode or hw_model_encode_target: the count, then the ids."""
        data = encode_text(text)
        handle = self._live()
        n = ffi.new("size_t*")
        check(fn(handle, data, len(data), ffi.NULL, 0, n))
        ids = ffi.new("int32_t[]", max(1, n[0]))
        check(fn(handle, data, len(data), ids, n[0], n))
        return ffi.unpack(ids, n[0])

    def decode(self, ids: Sequence[int]) -> str:
        """Target ids -> text; pad, EOS and unk are skipped.

        Raises InvalidArgumentError (an id outside the vocabulary) or TokenizerError.
        """
        handle = self._live()
        arr = int32_array(ids, "ids")
        n = ffi.new("size_t*")
        check(lib.hw_model_decode(handle, arr, len(arr), ffi.NULL, 0, n))
        buf = ffi.new("char[]", n[0] + 1)
        check(lib.hw_model_decode(handle, arr, len(arr), buf, n[0] + 1, n))
        return ffi.unpack(buf, n[0]).decode("utf-8")

    # -- lifetime -----------------------------------------------------------------------
    def close(self) -> None:
        """Drops this object's reference to the loaded model: its memory is released now
        unless a Translator made from it is still alive (which keeps working)."""
        self._handle = None

    @property
    def closed(self) -> bool:
        return self._handle is None

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _live(self):
        h = self._handle
        if h is None:
            raise ValueError(f"headwise.Model {self.path!r} is closed")
        return h

    def __repr__(self) -> str:
        kept, total = self.info.num_heads_kept
        return (f"headwise.Model({self.path!r}, {self.info.weight_format}, {kept}/{total} heads"
                f"{', closed' if self.closed else ''})")


def encode_text(text: Union[str, bytes]) -> bytes:
    """A line as UTF-8 bytes. A str with lone surrogates (e.g. read with
    errors="surrogateescape") becomes the bytes it stands for, which the runtime then rejects
    as invalid UTF-8 for that line only, as headwise-translate would."""
    if isinstance(text, bytes):
        return text
    if not isinstance(text, str):
        raise TypeError(f"expected str or bytes, found {type(text).__name__}")
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def int32_array(ids: Sequence[int], what: str):
    """ids as an int32_t[] (cffi); TypeError for a non-integer, InvalidArgumentError when a
    value does not fit in 32 bits."""
    values = [operator.index(v) for v in ids]
    for i, v in enumerate(values):
        if not INT32_MIN <= v <= INT32_MAX:
            raise InvalidArgumentError(f"{what} position {i}: id {v} does not fit in int32")
    return ffi.new("int32_t[]", values)
