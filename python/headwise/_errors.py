"""Status codes and the exception classes they map to.

Every ``hw_status`` of the C API (include/headwise/headwise.h) has a member of :class:`Status`
with the same value and an :class:`Error` subclass; the classes also derive from the built-in
exception a Python user would catch for that kind of failure (``ValueError`` for bad
arguments and input, ``OSError`` for files, ``MemoryError``, ``RuntimeError`` for backend and
internal failures).
"""
from __future__ import annotations

import enum
from typing import Dict, Optional, Type


class Status(enum.IntEnum):
    """The C API's ``hw_status`` codes (same values as ``headwise::ErrorCode``)."""

    OK = 0
    INVALID_ARGUMENT = 10
    INPUT_TOO_LONG = 11
    BATCH_TOO_LARGE = 12
    INVALID_UTF8 = 13
    IO_ERROR = 20
    INVALID_MODEL = 21
    UNSUPPORTED_VERSION = 22
    CHECKSUM_MISMATCH = 23
    INVALID_CHECKPOINT = 24
    OUT_OF_MEMORY = 30
    LIMIT_EXCEEDED = 31
    BACKEND = 40
    TOKENIZER = 41
    INTERNAL = 50


class Error(Exception):
    """A failure reported by libheadwise.

    Attributes:
        code: the :class:`Status` (an ``int`` for a code this module does not know).
        message: the library's message: what was expected, what was found and where.

    ``str(error)`` is ``"CODE_NAME: message"``, as the command-line tools print it.
    """

    status: Optional[Status] = None  # the code of each subclass

    def __init__(self, message: str, code: Optional[int] = None):
        super().__init__(message)
        self.message = message
        if code is None:
            code = self.status
        try:
            self.code = Status(code) if code is not None else None
        except ValueError:
            self.code = code

    @property
    def code_name(self) -> str:
        """Stable name of the code, e.g. ``"INVALID_MODEL"``."""
        return self.code.name if isinstance(self.code, Status) else f"UNKNOWN({self.code})"

    def __str__(self) -> str:
        return f"{self.code_name}: {self.message}"

    def __reduce__(self):
        return (type(self), (self.message, int(self.code) if self.code is not None else None))


class InvalidArgumentError(Error, ValueError):
    """An argument outside what the model or the translator's limits allow."""
    status = Status.INVALID_ARGUMENT


class InputTooLongError(InvalidArgumentError):
    """A line with more source tokens than ``max_source_tokens`` (never truncated)."""
    status = Status.INPUT_TOO_LONG


class BatchTooLargeError(InvalidArgumentError):
    """More sentences in one call than ``max_batch`` (the token-id path)."""
    status = Status.BATCH_TOO_LARGE


class InvalidUtf8Error(InvalidArgumentError):
    """A line that is not valid UTF-8; the message names the byte offset."""
    status = Status.INVALID_UTF8


class IoError(Error, OSError):
    """A model file that cannot be opened or read."""
    status = Status.IO_ERROR


class InvalidModelError(Error):
    """A model file that failed verification; the message names the part that is wrong."""
    status = Status.INVALID_MODEL


class UnsupportedVersionError(InvalidModelError):
    """A model file of a format version this library does not read."""
    status = Status.UNSUPPORTED_VERSION


class ChecksumMismatchError(InvalidModelError):
    """Model weights that do not match the file's checksum (damaged or altered)."""
    status = Status.CHECKSUM_MISMATCH


class InvalidCheckpointError(Error):
    """A training checkpoint the converter cannot read."""
    status = Status.INVALID_CHECKPOINT


class OutOfMemoryError(Error, MemoryError):
    """Memory ran out."""
    status = Status.OUT_OF_MEMORY


class LimitExceededError(Error):
    """A translator whose planned memory exceeds ``max_memory_bytes``."""
    status = Status.LIMIT_EXCEEDED


class BackendError(Error, RuntimeError):
    """XNNPACK or pthreadpool failed (or fp16 arithmetic was required and is missing)."""
    status = Status.BACKEND


class TokenizerError(Error):
    """SentencePiece failed, or the model carries no tokenizer (text path unavailable)."""
    status = Status.TOKENIZER


class InternalError(Error, RuntimeError):
    """A bug in headwise: please report it with the message."""
    status = Status.INTERNAL


ERROR_CLASSES: Dict[Status, Type[Error]] = {
    cls.status: cls
    for cls in (InvalidArgumentError, InputTooLongError, BatchTooLargeError, InvalidUtf8Error,
                IoError, InvalidModelError, UnsupportedVersionError, ChecksumMismatchError,
                InvalidCheckpointError, OutOfMemoryError, LimitExceededError, BackendError,
                TokenizerError, InternalError)
}


def error_for(code: int, message: str) -> Error:
    """The exception object for a non-OK status (not raised)."""
    try:
        cls = ERROR_CLASSES.get(Status(code), Error)
    except ValueError:
        cls = Error
    return cls(message, code)
