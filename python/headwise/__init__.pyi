# Type stubs of the headwise module (python/headwise/__init__.py and its _*.py files).
import enum
import os
from typing import (Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple,
                    Type, Union, overload)

__version__: str
library_path: str
# beam_stop names (Translator.translate) and their hw_beam_stop values.
BEAM_STOPS: Dict[str, int]

def version() -> str: ...
def split_sentences(text: Union[str, bytes]) -> List[str]: ...

class Status(enum.IntEnum):
    OK: int
    INVALID_ARGUMENT: int
    INPUT_TOO_LONG: int
    BATCH_TOO_LARGE: int
    INVALID_UTF8: int
    IO_ERROR: int
    INVALID_MODEL: int
    UNSUPPORTED_VERSION: int
    CHECKSUM_MISMATCH: int
    INVALID_CHECKPOINT: int
    OUT_OF_MEMORY: int
    LIMIT_EXCEEDED: int
    BACKEND: int
    TOKENIZER: int
    INTERNAL: int

class Error(Exception):
    status: Optional[Status]
    code: Union[Status, int, None]
    message: str
    def __init__(self, message: str, code: Optional[int] = ...) -> None: ...
    @property
    def code_name(self) -> str: ...

class InvalidArgumentError(Error, ValueError): ...
class InputTooLongError(InvalidArgumentError): ...
class BatchTooLargeError(InvalidArgumentError): ...
class InvalidUtf8Error(InvalidArgumentError): ...
class IoError(Error, OSError): ...
class InvalidModelError(Error): ...
class UnsupportedVersionError(InvalidModelError): ...
class ChecksumMismatchError(InvalidModelError): ...
class InvalidCheckpointError(Error): ...
class OutOfMemoryError(Error, MemoryError): ...
class LimitExceededError(Error): ...
class BackendError(Error, RuntimeError): ...
class TokenizerError(Error): ...
class InternalError(Error, RuntimeError): ...

class ModelConfig:
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
    activation: str

class HeadAnalysis:
    source_head: int
    kept: bool
    relevance: Optional[float]
    confidence: Optional[float]
    michel: Optional[float]
    roles: Tuple[str, ...]

class AttentionBlock:
    name: str
    kind: str
    layer: int
    num_heads: int
    original_num_heads: int
    head_dim: int
    kept_heads: Tuple[int, ...]
    gate_log_alpha: Optional[Tuple[float, ...]]
    analysis: Optional[Tuple[HeadAnalysis, ...]]

class AnalysisSource:
    relevance_rule: str
    data: str
    sha256: str
    def __init__(self, relevance_rule: str, data: str, sha256: str) -> None: ...

class Provenance:
    source_checkpoint_sha256: str
    source_checkpoint_name: str
    converter_version: str
    keep_heads_spec: str
    source_dtype: str

class ShortlistInfo:
    frequent: int
    sources: int
    longest: int
    entries: int
    description: str

class ModelInfo:
    config: ModelConfig
    weight_format: str
    attention: Tuple[AttentionBlock, ...]
    analysis: Optional[AnalysisSource]
    provenance: Provenance
    has_tokenizer: bool
    format_version: int
    file_bytes: int
    weight_bytes: int
    shortlist: Optional[ShortlistInfo]
    @property
    def heads_kept(self) -> Dict[str, Tuple[int, ...]]: ...
    @property
    def num_heads_kept(self) -> Tuple[int, int]: ...
    def as_dict(self) -> Dict[str, Any]: ...

class Model:
    path: str
    info: ModelInfo
    def __init__(self, path: Union[str, os.PathLike[str]], verify: bool = ...) -> None: ...
    @property
    def config(self) -> ModelConfig: ...
    @property
    def attention(self) -> Tuple[AttentionBlock, ...]: ...
    @property
    def weight_format(self) -> str: ...
    @property
    def has_tokenizer(self) -> bool: ...
    def encode(self, text: Union[str, bytes]) -> List[int]: ...
    def encode_target(self, text: Union[str, bytes]) -> List[int]: ...
    def decode(self, ids: Sequence[int]) -> str: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> Model: ...
    def __exit__(self, *exc: Any) -> None: ...

class Hypothesis(NamedTuple):
    text: Optional[str]
    score: float
    ids: List[int]
    finished: bool

class TranslationResult(Sequence[Hypothesis]):
    hypotheses: List[Hypothesis]
    error: Optional[Error]
    def __init__(self, hypotheses: List[Hypothesis], error: Optional[Error] = ...) -> None: ...
    @property
    def ok(self) -> bool: ...
    def raise_for_error(self) -> TranslationResult: ...
    @property
    def text(self) -> Optional[str]: ...
    @property
    def score(self) -> float: ...
    @property
    def ids(self) -> List[int]: ...
    @overload
    def __getitem__(self, k: int) -> Hypothesis: ...
    @overload
    def __getitem__(self, k: slice) -> List[Hypothesis]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Hypothesis]: ...

class TranslatorLimits:
    max_batch: int
    max_source_tokens: int
    max_target_tokens: int
    max_beam: int
    threads: int
    max_memory_bytes: int
    fp16_compute: str
    sort_window: int
    shortlist: bool
    spin_workers: bool
    batch_lanes: int
    def __init__(self, max_batch: int, max_source_tokens: int, max_target_tokens: int,
                 max_beam: int, threads: int, max_memory_bytes: int, fp16_compute: str,
                 sort_window: int, shortlist: bool = ..., spin_workers: bool = ...,
                 batch_lanes: int = ...) -> None: ...

class Translator:
    model: Model
    limits: TranslatorLimits
    def __init__(self, model: Model, threads: int = ..., *, max_batch: int = ...,
                 max_source_tokens: Optional[int] = ..., max_target_tokens: Optional[int] = ...,
                 max_beam: int = ..., max_memory_bytes: int = ...,
                 fp16_compute: str = ..., sort_window: Optional[int] = ...,
                 shortlist: bool = ..., spin_workers: bool = ..., batch_lanes: int = ...) -> None: ...
    @property
    def precision(self) -> str: ...
    @property
    def precision_note(self) -> str: ...
    @property
    def kernel_paths(self) -> str: ...
    @property
    def uses_shortlist(self) -> bool: ...
    def translate(self, texts: Iterable[Union[str, bytes]], beam_size: int = ...,
                  num_hypotheses: int = ..., max_length: Optional[int] = ...,
                  length_penalty: float = ..., *, beam_stop: Optional[str] = ...,
                  batch_lines: Optional[int] = ..., batch_tokens: Optional[int] = ...,
                  sort_by_length: bool = ...,
                  split_sentences: bool = ...,
                  target_prefix: Optional[Sequence[Union[str, bytes, None]]] = ...,
                  min_length: int = ..., sample: bool = ..., top_k: int = ...,
                  top_p: float = ..., temperature: float = ..., seed: int = ...,
                  ) -> List[TranslationResult]: ...
    def translate_ids(self, sources: Iterable[Sequence[int]], beam_size: int = ...,
                      num_hypotheses: int = ..., max_length: Optional[int] = ...,
                      length_penalty: float = ..., *, beam_stop: Optional[str] = ...,
                      batch_lines: Optional[int] = ..., batch_tokens: Optional[int] = ...,
                      sort_by_length: bool = ...,
                      target_prefix: Optional[Sequence[Optional[Sequence[int]]]] = ...,
                      min_length: int = ..., sample: bool = ..., top_k: int = ...,
                      top_p: float = ..., temperature: float = ..., seed: int = ...,
                      ) -> List[TranslationResult]: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> Translator: ...
    def __exit__(self, *exc: Any) -> None: ...
