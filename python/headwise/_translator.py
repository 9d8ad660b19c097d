"""headwise.Translator: text or token ids in, n-best hypotheses out."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Iterable, Iterator, List, NamedTuple, Optional, Sequence, Union

from ._errors import Error, InvalidArgumentError, Status, error_for
from ._lib import check, ffi, last_error, lib, to_str
from ._model import Model, encode_text, int32_array

DEFAULT_TOKENS = 256  # headwise-translate's default for both token limits
FP16_COMPUTE = {"auto": lib.HW_FP16_AUTO, "off": lib.HW_FP16_OFF, "require": lib.HW_FP16_REQUIRE}
C_INT_MAX = 2 ** 31 - 1


class Hypothesis(NamedTuple):
    """One translation of a line, best first within its result."""
    text: Optional[str]  # None from translate_ids on a model without tokenizer
    score: float         # sum of log-probabilities / length ** length_penalty
    ids: List[int]       # generated target ids, decoder start and final EOS excluded
    finished: bool       # True: ended with EOS; False: cut at the maximum length


class TranslationResult(Sequence[Hypothesis]):
    """The hypotheses of one input line, or why that line failed.

    A line that cannot be translated does not make translate() raise: its result has
    ``error`` set to the :class:`headwise.Error` instance (not raised) and no hypotheses, and
    reading ``text``, ``score``, ``ids`` or ``result[k]`` raises that error. ``len(result)``
    is the number of hypotheses (0 for a failed line); iterating yields them.
    """

    __slots__ = ("hypotheses", "error")

    def __init__(self, hypotheses: List[Hypothesis], error: Optional[Error] = None):
        self.hypotheses = hypotheses
        self.error = error

    @property
    def ok(self) -> bool:
        return self.error is None

    def raise_for_error(self) -> "TranslationResult":
        """Raises the line's error, if any; returns self."""
        if self.error is not None:
            raise self.error
        return self

    def _best(self) -> Hypothesis:
        self.raise_for_error()
        return self.hypotheses[0]

    @property
    def text(self) -> Optional[str]:
        """The best hypothesis' text."""
        return self._best().text

    @property
    def score(self) -> float:
        return self._best().score

    @property
    def ids(self) -> List[int]:
        return self._best().ids

    def __getitem__(self, k):  # type: ignore[override]
        self.raise_for_error()
        return self.hypotheses[k]

    def __len__(self) -> int:
        return len(self.hypotheses)

    def __iter__(self) -> Iterator[Hypothesis]:
        return iter(self.hypotheses)

    def __repr__(self) -> str:
        if self.error is not None:
            return f"TranslationResult(error={self.error!s})"
        return f"TranslationResult({self.hypotheses!r})"


@dataclass(frozen=True)
class TranslatorLimits:
    """The limits a Translator planned its memory for."""
    max_batch: int
    max_source_tokens: int
    max_target_tokens: int
    max_beam: int
    threads: int
    max_memory_bytes: int
    fp16_compute: str
    sort_window: int  # lines sorted by length and batched together (the value in use)
    shortlist: bool = True
    spin_workers: bool = False
    batch_lanes: int = 1  # sub-batches run whole on the pool's threads (the value in use)


def _c_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, found {type(value).__name__}")
    if not -C_INT_MAX - 1 <= value <= C_INT_MAX:
        raise InvalidArgumentError(f"{name} {value} does not fit in a C int")
    return value


class Translator:
    """Translates with one model; owns its planned memory, operators and thread pool.

    ``threads``: threads of the translator's pool (1 = the calling thread only).
    Limits (keyword-only; all memory is planned from them once, here):
    ``max_batch`` (sentences per internal batch, default 8), ``max_source_tokens`` and
    ``max_target_tokens`` (EOS included; default min(256, the model's positions), as
    headwise-translate), ``max_beam`` (largest ``beam_size``, default 4),
    ``max_memory_bytes`` (0 = no cap; over the cap raises LimitExceededError),
    ``fp16_compute`` ("auto", "off" or "require": fp16 arithmetic for fp16 models on ARMv8.2
    CPUs), ``sort_window`` (lines sorted by source length and batched together; None =
    16 x ``max_batch``; its results are part of the planned memory) and ``shortlist`` (default True: when the model carries a vocabulary shortlist, each
    batch's output layer covers only the pieces it allows for the batch's lines; False: the
    whole vocabulary, as headwise-translate --no-shortlist) and ``spin_workers`` (default
    False: the pool's workers spin at most 200 us between the parallel loops of a
    translation, then sleep; True: they spin until it ends, for cores the process has to
    itself, as headwise-translate --spin-workers) and ``batch_lanes`` (default 0: ``threads`` where the weights are read in
    place, int8 and fp32 on x86 with AVX2, else 1; a batch of several lines is dealt out to
    that many sub-batches, each translated whole on one thread; 1 = off; the translations are
    the same either way; ``limits.batch_lanes`` reports the value in use).

    Threads: the GIL is released while translating, so several Python threads, each with its
    own Translator over one shared Model, translate in parallel. Calls on one Translator from
    several threads are serialised (one at a time), never interleaved.

    Raises InvalidArgumentError (a limit < 1, or token limits over the model's positions),
    LimitExceededError, OutOfMemoryError, BackendError.

    Example::

        translator = headwise.Translator(model, threads=1, max_beam=4)
        [r.text for r in translator.translate(["Open the file."], beam_size=4)]
    """

    def __init__(self, model: Model, threads: int = 1, *, max_batch: int = 8,
                 max_source_tokens: Optional[int] = None, max_target_tokens: Optional[int] = None,
                 max_beam: int = 4, max_memory_bytes: int = 0, fp16_compute: str = "auto",
                 sort_window: Optional[int] = None,
                 shortlist: bool = True, spin_workers: bool = False, batch_lanes: int = 0):
        if not isinstance(model, Model):
            raise TypeError(f"model must be a headwise.Model, found {type(model).__name__}")
        positions = model.config.max_position_embeddings
        default_tokens = min(DEFAULT_TOKENS, positions)
        if fp16_compute not in FP16_COMPUTE:
            raise InvalidArgumentError(f"fp16_compute {fp16_compute!r}: expected one of "
                                       f"{', '.join(FP16_COMPUTE)}")
        if not isinstance(shortlist, bool):
            raise TypeError(f"shortlist must be a bool, found {type(shortlist).__name__}")
        if not isinstance(spin_workers, bool):
            raise TypeError(f"spin_workers must be a bool, found {type(spin_workers).__name__}")
        if isinstance(max_memory_bytes, bool) or not isinstance(max_memory_bytes, int):
            raise TypeError("max_memory_bytes must be an int")
        if not 0 <= max_memory_bytes < 2 ** (8 * ffi.sizeof("size_t")):
            raise InvalidArgumentError(f"max_memory_bytes {max_memory_bytes} outside [0, SIZE_MAX]")
        p = ffi.new("hw_translator_params*", lib.hw_translator_default_params())
        p.num_threads = _c_int("threads", threads)
        p.max_batch = _c_int("max_batch", max_batch)
        p.max_source_tokens = _c_int("max_source_tokens", default_tokens if max_source_tokens is None
                                     else max_source_tokens)
        p.max_target_tokens = _c_int("max_target_tokens", default_tokens if max_target_tokens is None
                                     else max_target_tokens)
        p.max_beam = _c_int("max_beam", max_beam)
        p.max_memory_bytes = max_memory_bytes
        p.fp16_compute = FP16_COMPUTE[fp16_compute]
        p.sort_window = 0 if sort_window is None else _c_int("sort_window", sort_window)
        p.use_shortlist = 1 if shortlist else 0
        p.worker_wait = lib.HW_WORKERS_SPIN if spin_workers else lib.HW_WORKERS_YIELD
        p.batch_lanes = _c_int("batch_lanes", batch_lanes)
        # The C translator holds its own reference on the model; this handle keeps the C
        # hw_model (used for decoding in translate_ids) alive as long as the translator.
        self._model_handle = model._live()
        out = ffi.new("hw_translator**")
        check(lib.hw_translator_create(self._model_handle, p, out))
        self._handle = ffi.gc(out[0], lib.hw_translator_free)
        self._lock = threading.Lock()
        self.model = model
        self.limits = TranslatorLimits(p.max_batch, p.max_source_tokens, p.max_target_tokens,
                                       p.max_beam, p.num_threads, max_memory_bytes, fp16_compute,
                                       lib.hw_translator_sort_window(self._handle),
                                       shortlist, spin_workers,
                                       lib.hw_translator_batch_lanes(self._handle))

    @property
    def precision(self) -> str:
        """What the matrix products compute in: "f32", "f16" or "int8"."""
        return to_str(lib.hw_precision_name(lib.hw_translator_precision(self._live())))

    @property
    def precision_note(self) -> str:
        """One line on why, e.g. "f32: the CPU has no fp16 arithmetic ..."."""
        return to_str(lib.hw_translator_precision_note(self._live()))

    @property
    def kernel_paths(self) -> str:
        """The kernels the matrix products run on this CPU, e.g. "int8: avx2"."""
        return to_str(lib.hw_translator_kernel_paths(self._live()))

    @property
    def uses_shortlist(self) -> bool:
        """Whether the output layer runs over the model's vocabulary shortlist (the model has
        one and ``shortlist`` was True)."""
        return bool(lib.hw_translator_uses_shortlist(self._live()))

    # -- translation --------------------------------------------------------------------
    def translate(self, texts: Iterable[Union[str, bytes]], beam_size: int = 1,
                  num_hypotheses: int = 1, max_length: Optional[int] = None,
                  length_penalty: float = 1.0, *, beam_stop: Optional[str] = None,
                  batch_lines: Optional[int] = None, batch_tokens: Optional[int] = None,
                  sort_by_length: bool = True,
                  split_sentences: bool = False,
                  target_prefix: Optional[Sequence[Union[str, bytes, None]]] = None,
                  min_length: int = 0, sample: bool = False, top_k: int = 0,
                  top_p: float = 1.0, temperature: float = 1.0, seed: int = 0,
                  ) -> List[TranslationResult]:
        """Translates lines of text; returns one :class:`TranslationResult` per line, in order.

        Args:
            texts: the lines (str, or bytes of UTF-8). A single str is refused (TypeError): wrap
                it in a list.
            beam_size: 1 = greedy; at most the translator's ``max_beam``.
            num_hypotheses: n-best size, at most ``beam_size``.
            max_length: generated tokens including EOS; None = ``max_target_tokens``.
            length_penalty: score = sum of log-probabilities / length ** length_penalty.
            beam_stop: when a beam search ends, one of BEAM_STOPS: "exhaustive" (once
                beam_size hypotheses have finished), "top-eos" (also once num_hypotheses have
                finished and a step's best candidate is EOS) or "outscored" (also once the
                num_hypotheses-th best finished score is at least the best live beam's at its
                current length); None = the library's default (hw_search_params, now
                "exhaustive"). headwise.hpp states the rules exactly.
            batch_lines: most lines per batch; None = ``max_batch`` (also the upper bound).
            batch_tokens: most tokens per batch, counted as lines x the longest source (EOS
                included); None = no budget. A longer line forms a batch of its own.
            sort_by_length: within each window of ``sort_window`` lines, batch lines of similar
                length together (results still come back in input order); False = batches
                follow input order.
            split_sentences: cut each line into sentences (:func:`headwise.split_sentences`,
                the rule that cut the training text), translate each on its own and join their
                translations with the whitespace between them, so that a paragraph translates as
                the model was trained (headwise-translate --split-sentences; headwise.hpp,
                BatchOptions::split_sentences, states the score and ids). ``max_source_tokens``
                then limits each sentence; needs ``num_hypotheses`` 1 (InvalidArgumentError).
            target_prefix: one text per line (None or blank: no prefix for that line), the
                start its translation must have (CTranslate2's target_prefix): the search is
                forced through its pieces (:meth:`Model.encode_target`) and continues from
                there, and every hypothesis begins with it; the prefix's log-probabilities count
                in the score (headwise.hpp, "Target prefix"). A line's prefix errors are its own
                (InvalidUtf8Error or TokenizerError naming ``target_prefixes[i]``,
                InputTooLongError beyond the maximum length, InvalidArgumentError for a blank
                line with a prefix). Not with ``split_sentences``; as many entries as lines
                (InvalidArgumentError for the call otherwise).
            min_length: EOS is not chosen before this many generated tokens (CTranslate2's
                min_decoding_length); scores stay the model's log-probabilities (headwise.hpp,
                "Minimum length"). Below the maximum length.
            sample: draw each token at random instead of taking the best (``beam_size`` 1),
                shaped by ``top_k`` (the k most likely ids only; 0 = all), ``top_p`` (the
                nucleus, in (0, 1]; 1 = off) and ``temperature`` (> 0); ``seed`` (0 .. 2**64-1)
                and a line's source ids fix its draws, whatever the batch or the threads: the
                same seed gives the same translation (headwise.hpp, "Sampling"). The four are
                refused without ``sample`` (InvalidArgumentError) rather than ignored.

        Per line, as headwise-translate: an empty or blank line gives one empty hypothesis
        (score 0) without running the model; control characters count as spaces; a line that is
        invalid UTF-8 (InvalidUtf8Error, naming the byte offset), longer than
        ``max_source_tokens`` (InputTooLongError; never truncated) or in a batch the runtime
        failed to translate gets that error in its result and the other lines are translated.

        Raises (for the whole call): InvalidArgumentError for options outside the limits,
        TokenizerError for a model without tokenizer, TypeError for a non-text line.
        """
        if isinstance(texts, (str, bytes)):
            raise TypeError("translate() takes a list of lines; wrap a single line in a list")
        lines = [encode_text(t) for t in texts]
        params = _search_params(beam_size, num_hypotheses, max_length, length_penalty,
                                beam_stop, min_length, sample, top_k, top_p, temperature, seed)
        batch = _batch_params(batch_lines, batch_tokens, sort_by_length, split_sentences)
        n = len(lines)
        buffers = [ffi.from_buffer(b) for b in lines]  # no copies; alive until the call returns
        pointers = ffi.new("const char*[]", buffers) if n else ffi.NULL
        lengths = ffi.new("size_t[]", [len(b) for b in lines]) if n else ffi.NULL
        prefix_pointers = prefix_lengths = ffi.NULL
        if target_prefix is not None:
            if isinstance(target_prefix, (str, bytes)):
                raise TypeError("target_prefix takes one entry per line; wrap it in a list")
            prefixes = [b"" if p is None else encode_text(p) for p in target_prefix]
            if len(prefixes) != n:
                raise InvalidArgumentError(
                    f"target_prefix has {len(prefixes)} entries for {n} lines (one per line)")
            prefix_buffers = [ffi.from_buffer(b) for b in prefixes]
            prefix_pointers = ffi.new("const char*[]", prefix_buffers) if n else ffi.NULL
            prefix_lengths = ffi.new("size_t[]", [len(b) for b in prefixes]) if n else ffi.NULL
        out = ffi.new("hw_result**")
        with self._lock:
            check(lib.hw_translate_each_prefixed(self._live(), pointers, lengths, n,
                                                 prefix_pointers, prefix_lengths, params, batch,
                                                 out))
        return _read_result(out[0], n)

    def translate_ids(self, sources: Iterable[Sequence[int]], beam_size: int = 1,
                      num_hypotheses: int = 1, max_length: Optional[int] = None,
                      length_penalty: float = 1.0, *, beam_stop: Optional[str] = None,
                      batch_lines: Optional[int] = None, batch_tokens: Optional[int] = None,
                      sort_by_length: bool = True,
                      target_prefix: Optional[Sequence[Optional[Sequence[int]]]] = None,
                      min_length: int = 0, sample: bool = False, top_k: int = 0,
                      top_p: float = 1.0, temperature: float = 1.0, seed: int = 0,
                      ) -> List[TranslationResult]:
        """Translates pre-tokenised input: each source is the encoder input ids, EOS included
        (what :meth:`Model.encode` returns). Options as in :meth:`translate`; hypotheses carry
        the decoded text when the model has a tokenizer (else text is None). ``target_prefix``:
        one list of target ids per source (None or empty: none; :meth:`Model.encode_target`), a
        source whose prefix holds an id outside the vocabulary, PAD or EOS
        (InvalidArgumentError) or more ids than the maximum length (InputTooLongError) gets
        that error in its result.

        Per source: an empty source, an id outside the vocabulary or over 32 bits
        (InvalidArgumentError) or more than ``max_source_tokens`` ids (InputTooLongError) gets
        that error in its result; the other sources are translated. Sources are batched as
        translate() batches lines (hw_translate_ids_each on each window of ``sort_window``
        sources: sorted by length, cut by ``batch_lines`` and ``batch_tokens``), so
        ``translate_ids([model.encode(l) for l in lines])`` gives what ``translate(lines)``
        gives for lines that are not blank (translate answers those without the model; here
        their [EOS] source is translated and shares a batch with other short sources).

        Raises (for the whole call): InvalidArgumentError for options outside the limits,
        TypeError for an id that is not an integer.
        """
        params = _search_params(beam_size, num_hypotheses, max_length, length_penalty,
                                beam_stop, min_length, sample, top_k, top_p, temperature, seed)
        batch = _batch_params(batch_lines, batch_tokens, sort_by_length)
        arrays, results = [], []
        for i, src in enumerate(sources):
            try:
                arrays.append(int32_array(src, f"sources[{i}]"))
                results.append(None)
            except InvalidArgumentError as e:
                arrays.append(None)
                results.append(TranslationResult([], e))
        prefixes = None
        if target_prefix is not None:
            prefixes = list(target_prefix)
            if len(prefixes) != len(arrays):
                raise InvalidArgumentError(f"target_prefix has {len(prefixes)} entries for "
                                           f"{len(arrays)} sources (one per source)")
            for i, p in enumerate(prefixes):
                try:
                    prefixes[i] = int32_array([] if p is None else p, f"target_prefix[{i}]")
                except InvalidArgumentError as e:
                    if results[i] is None:
                        arrays[i] = None
                        results[i] = TranslationResult([], e)
        handle = self._live()
        decode = _Decoder(self._model_handle) if self.model.has_tokenizer else None
        window = self.limits.sort_window
        with self._lock:
            # Options are checked once for the call, even when every source is rejected.
            check(lib.hw_translate_ids_each(handle, ffi.NULL, ffi.NULL, 0, params, batch))
            # Windows of input positions, as translate() forms them from its lines.
            for first in range(0, len(arrays), window):
                chunk = [i for i in range(first, min(first + window, len(arrays)))
                         if arrays[i] is not None]
                if not chunk:
                    continue
                ptrs = ffi.new("const int32_t*[]", [arrays[i] for i in chunk])
                lens = ffi.new("size_t[]", [len(arrays[i]) for i in chunk])
                prefix_ptrs = prefix_lens = ffi.NULL
                if prefixes is not None:
                    prefix_ptrs = ffi.new("const int32_t*[]", [prefixes[i] for i in chunk])
                    prefix_lens = ffi.new("size_t[]", [len(prefixes[i]) for i in chunk])
                check(lib.hw_translate_ids_each_prefixed(handle, ptrs, lens, len(chunk),
                                                         prefix_ptrs, prefix_lens, params,
                                                         batch))
                for j, i in enumerate(chunk):
                    status = lib.hw_translator_line_status(handle, j)
                    results[i] = (self._collect(handle, j, decode) if status == Status.OK else
                                  TranslationResult([], error_for(status, f"sources[{i}]: " + to_str(
                                      lib.hw_translator_line_error_message(handle, j)))))
        return results

    @staticmethod
    def _collect(handle, sentence: int, decode) -> TranslationResult:
        h = ffi.new("hw_hypothesis*")
        hyps = []
        for k in range(lib.hw_translator_num_hypotheses(handle, sentence)):
            check(lib.hw_translator_get_hypothesis(handle, sentence, k, h))
            hyps.append(Hypothesis(decode(h.ids, h.length) if decode else None, h.score,
                                   ffi.unpack(h.ids, h.length) if h.length else [],
                                   bool(h.finished)))
        return TranslationResult(hyps)

    # -- lifetime -----------------------------------------------------------------------
    def close(self) -> None:
        """Frees the translator's memory and thread pool now (waits for a running call)."""
        with self._lock:
            if self._handle is not None:
                ffi.release(self._handle)
                self._handle = None

    @property
    def closed(self) -> bool:
        return self._handle is None

    def __enter__(self) -> "Translator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _live(self):
        h = self._handle
        if h is None:
            raise ValueError("headwise.Translator is closed")
        return h

    def __repr__(self) -> str:
        l = self.limits
        return (f"headwise.Translator({self.model.path!r}, threads={l.threads}, "
                f"max_batch={l.max_batch}, max_beam={l.max_beam}, sort_window={l.sort_window}, "
                f"max_source_tokens={l.max_source_tokens}, "
                f"max_target_tokens={l.max_target_tokens}{', closed' if self.closed else ''})")


# The beam_stop names and their hw_beam_stop values.
BEAM_STOPS = {"exhaustive": lib.HW_BEAM_STOP_EXHAUSTIVE, "top-eos": lib.HW_BEAM_STOP_TOP_EOS,
              "outscored": lib.HW_BEAM_STOP_OUTSCORED}


def _c_float(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, found {type(value).__name__}")
    return float(value)


def _search_params(beam_size, num_hypotheses, max_length, length_penalty, beam_stop=None,
                   min_length=0, sample=False, top_k=0, top_p=1.0, temperature=1.0, seed=0):
    p = ffi.new("hw_search_params*", lib.hw_search_default_params())
    if not isinstance(sample, bool):
        raise TypeError(f"sample must be a bool, found {type(sample).__name__}")
    p.sample = 1 if sample else 0
    p.min_length = _c_int("min_length", min_length)
    p.top_k = _c_int("top_k", top_k)
    p.top_p = _c_float("top_p", top_p)
    p.temperature = _c_float("temperature", temperature)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, found {type(seed).__name__}")
    if not 0 <= seed < 2 ** 64:
        raise InvalidArgumentError(f"seed {seed} must be in [0, 2**64)")
    p.seed = seed
    if beam_stop is not None:
        if beam_stop not in BEAM_STOPS:
            raise ValueError(f"beam_stop must be one of {', '.join(BEAM_STOPS)} or None, "
                             f"found {beam_stop!r}")
        p.beam_stop = BEAM_STOPS[beam_stop]
    p.beam_size = _c_int("beam_size", beam_size)
    p.num_hypotheses = _c_int("num_hypotheses", num_hypotheses)
    p.max_length = 0 if max_length is None else _c_int("max_length", max_length)
    p.length_penalty = _c_float("length_penalty", length_penalty)
    return p


def _batch_params(batch_lines, batch_tokens, sort_by_length, split_sentences=False):
    p = ffi.new("hw_batch_params*", lib.hw_batch_default_params())
    p.max_lines = 0 if batch_lines is None else _c_int("batch_lines", batch_lines)
    p.max_tokens = 0 if batch_tokens is None else _c_int("batch_tokens", batch_tokens)
    for name, value in (("sort_by_length", sort_by_length), ("split_sentences", split_sentences)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, found {type(value).__name__}")
    p.sort_by_length = 1 if sort_by_length else 0
    p.split_sentences = 1 if split_sentences else 0
    return p


def _read_result(res, n: int) -> List[TranslationResult]:
    """Copies an hw_result into Python objects and frees it."""
    try:
        out = []
        h = ffi.new("hw_hypothesis*")
        for i in range(n):
            status = lib.hw_result_status(res, i)
            if status != Status.OK:
                out.append(TranslationResult([], error_for(
                    status, to_str(lib.hw_result_error_message(res, i)))))
                continue
            hyps = []
            for k in range(lib.hw_result_num_hypotheses(res, i)):
                check(lib.hw_result_get_hypothesis(res, i, k, h))
                hyps.append(Hypothesis(ffi.string(h.text).decode("utf-8", "replace"), h.score,
                                       ffi.unpack(h.ids, h.length) if h.length else [],
                                       bool(h.finished)))
            out.append(TranslationResult(hyps))
        return out
    finally:
        lib.hw_result_free(res)


class _Decoder:
    """ids -> text through hw_model_decode with a reused buffer."""

    def __init__(self, model_handle):
        self.model = model_handle
        self.buf = ffi.new("char[]", 1024)
        self.n = ffi.new("size_t*")

    def __call__(self, ids, length: int) -> str:
        check(lib.hw_model_decode(self.model, ids, length, self.buf, len(self.buf), self.n))
        if self.n[0] >= len(self.buf):
            self.buf = ffi.new("char[]", self.n[0] + 1)
            check(lib.hw_model_decode(self.model, ids, length, self.buf, len(self.buf), self.n))
        return ffi.unpack(self.buf, self.n[0]).decode("utf-8", "replace")
