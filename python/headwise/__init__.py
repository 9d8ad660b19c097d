"""headwise: Python API of the headwise translation runtime (libheadwise, through its C API).

    import headwise
    model = headwise.Model("models/en-de/model.hwm")
    translator = headwise.Translator(model, threads=1)
    for result in translator.translate(["Open the file.", "Close the window."], beam_size=4):
        print(result.text, result.score)

:class:`Model` loads and verifies a .hwm file and describes it (``model.info``: config, heads
kept per block, weight format, per-head analysis). :class:`Translator` translates lines of text
(:meth:`Translator.translate`) or token ids (:meth:`Translator.translate_ids`); the GIL is
released while it runs. Failures are :class:`Error` subclasses carrying the C API's status
(:class:`Status`) and message; a line that fails in a batch is reported in its own
:class:`TranslationResult` (``result.error``) instead of failing the call.
:func:`split_sentences` shows where ``translate(..., split_sentences=True)`` cuts a paragraph.
"""
from ._errors import (BackendError, BatchTooLargeError, ChecksumMismatchError, Error,
                      InputTooLongError, InternalError, InvalidArgumentError,
                      InvalidCheckpointError, InvalidModelError, InvalidUtf8Error, IoError,
                      LimitExceededError, OutOfMemoryError, Status, TokenizerError,
                      UnsupportedVersionError)
from ._lib import ffi as _ffi
from ._lib import lib as _lib
from ._lib import library_path
from ._model import (AnalysisSource, AttentionBlock, HeadAnalysis, Model, ModelConfig,
                     ModelInfo, Provenance, ShortlistInfo)
from ._sentences import split_sentences
from ._translator import BEAM_STOPS, Hypothesis, TranslationResult, Translator, TranslatorLimits

__version__: str = _ffi.string(_lib.hw_version()).decode()


def version() -> str:
    """Version of the loaded libheadwise (``hw_version()``)."""
    return __version__


__all__ = [
    "BEAM_STOPS", "AnalysisSource", "AttentionBlock", "BackendError", "BatchTooLargeError",
    "ChecksumMismatchError", "Error", "HeadAnalysis", "Hypothesis", "InputTooLongError",
    "InternalError", "InvalidArgumentError", "InvalidCheckpointError", "InvalidModelError",
    "InvalidUtf8Error", "IoError", "LimitExceededError", "Model", "ModelConfig", "ModelInfo",
    "OutOfMemoryError", "Provenance", "ShortlistInfo", "Status", "TokenizerError",
    "TranslationResult",
    "Translator", "TranslatorLimits", "UnsupportedVersionError", "library_path",
    "split_sentences", "version",
]
