"""The hostile-model corpus through the module: the fuzz seeds and regressions
(fuzz/corpus, fuzz/regressions) and the damage tests/hostile applies (every truncation of the
metadata and a sample across the data, every metadata byte flipped), loaded from files.
Each must be a clean headwise.Error or a model that then survives being used (fuzz/
model_exercise.h: greedy and beam-2 searches, text when it has a tokenizer, every produced id
inside the vocabulary); the text-input seeds go through translate line by line. A crash of the
runtime would take this pytest process down, so it fails the test."""
import glob
import os
import struct

import pytest

import headwise
from conftest import SOURCE

FUZZ = os.path.join(SOURCE, "fuzz")
LOAD_ERRORS = (headwise.InvalidModelError, headwise.TokenizerError)  # Unsupported/Checksum derive
USE_ERRORS = (headwise.InvalidArgumentError, headwise.LimitExceededError,
              headwise.OutOfMemoryError, headwise.BackendError, headwise.TokenizerError)


def exercise(model: headwise.Model) -> None:
    info = model.info
    assert len(info.attention) == info.config.encoder_layers + 2 * info.config.decoder_layers
    vocab, eos = info.config.vocab_size, info.config.eos_token_id
    tokens = min(8, info.config.max_position_embeddings)
    try:
        t = headwise.Translator(model, max_batch=2, max_source_tokens=tokens,
                                max_target_tokens=tokens, max_beam=2)
    except USE_ERRORS:
        return
    source = [i % vocab for i in range(1, tokens)] + [eos]
    for beam in (1, 2):
        for r in t.translate_ids([source[-3:], source], beam_size=beam, num_hypotheses=beam):
            if r.ok:
                assert 1 <= len(r) <= beam
                assert all(0 <= i < vocab for h in r for i in h.ids), r
                assert all(h.text is None or isinstance(h.text, str) for h in r)
            else:
                assert isinstance(r.error, USE_ERRORS), r.error
    if info.has_tokenizer:
        try:
            out = t.translate(["Open the file.", "x"], beam_size=2, num_hypotheses=2)
        except USE_ERRORS:
            return
        for r in out:
            if r.ok:
                assert all(0 <= i < vocab for h in r for i in h.ids)
                r.text.encode("utf-8")  # valid text
            else:
                assert isinstance(r.error, USE_ERRORS), r.error


def load_or_error(path: str):
    try:
        return headwise.Model(path, verify=False)  # as the fuzzer: mutations reach the checks
    except LOAD_ERRORS as e:
        assert e.message, "an error without a message"
        return None


def check_file(path: str) -> bool:
    model = load_or_error(path)
    if model is not None:
        exercise(model)
    return model is not None


def seeds():
    return sorted(glob.glob(os.path.join(FUZZ, "corpus", "model_loader", "*")) +
                  glob.glob(os.path.join(FUZZ, "regressions", "model_loader", "*")))


def test_corpus_has_seeds_and_regressions():
    names = [os.path.basename(p) for p in seeds()]
    assert "small.hwm" in names and any(n.startswith("crash-") for n in names), names


@pytest.mark.parametrize("path", seeds(), ids=os.path.basename)
def test_seed_or_regression(path):
    loaded = check_file(path)
    if path.endswith(".hwm"):
        assert loaded, f"{path}: the seed models are valid"


def metadata_end(data: bytes) -> int:
    """End of the size-prefixed flatbuffer (the data segment follows)."""
    return min(len(data), 4 + struct.unpack_from("<I", data, 0)[0])


@pytest.mark.parametrize("seed", ["small.hwm", "tokenizer.hwm"])
def test_truncations(seed, tmp_path):
    data = open(os.path.join(FUZZ, "corpus", "model_loader", seed), "rb").read()
    end = metadata_end(data)
    cuts = list(range(0, end + 1)) + list(range(end + 1, len(data), 61)) + [len(data) - 1]
    path = str(tmp_path / "cut.hwm")
    for cut in cuts:
        with open(path, "wb") as f:
            f.write(data[:cut])
        with pytest.raises(headwise.InvalidModelError):
            headwise.Model(path, verify=False)


@pytest.mark.parametrize("seed", ["small.hwm", "tokenizer.hwm", "separate_embeddings.hwm"])
def test_every_metadata_byte_flipped(seed, tmp_path):
    data = bytearray(open(os.path.join(FUZZ, "corpus", "model_loader", seed), "rb").read())
    end = metadata_end(bytes(data))
    path = str(tmp_path / "flipped.hwm")
    loaded = rejected = 0
    # The tokenizer protos are most of tokenizer.hwm's metadata: every byte of the others, a
    # sample inside (as tests/hostile does).
    stride = 1 if seed != "tokenizer.hwm" else 3
    for i in range(0, end, stride):
        for mask in (0x01, 0xFF):
            damaged = bytearray(data)
            damaged[i] ^= mask
            with open(path, "wb") as f:
                f.write(damaged)
            if check_file(path):
                loaded += 1
            else:
                rejected += 1
    # Both outcomes occur: the checks catch most flips, some land where nothing checks them.
    assert rejected > 0 and loaded > 0, (loaded, rejected)


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(FUZZ, "corpus", "text_input", "*"))),
                         ids=os.path.basename)
def test_text_input_seed(path, tiny):
    data = open(path, "rb").read()
    model = headwise.Model(tiny)
    t = headwise.Translator(model, max_batch=3, max_source_tokens=24, max_target_tokens=8,
                            max_beam=2)
    try:
        ids = model.encode(data)
        assert ids[-1] == model.config.eos_token_id
    except headwise.InvalidUtf8Error as e:
        assert "byte" in e.message
    lines = data.split(b"\n")[:6]
    for beam in (1, 2):
        out = t.translate(lines, beam_size=beam, num_hypotheses=beam)
        assert len(out) == len(lines)
        for i, r in enumerate(out):
            if r.ok:
                assert 1 <= len(r) <= beam
                assert all(0 <= x < model.config.vocab_size for h in r for x in h.ids)
            else:
                assert isinstance(r.error, (headwise.InvalidUtf8Error, headwise.InputTooLongError))
                assert f"texts[{i}]" in r.error.message
