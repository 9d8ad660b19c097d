"""Every hw_status is a headwise.Error subclass with its code and message; bad input fails
only its own line, as headwise-translate does; nothing crashes the interpreter."""
import json
import os
import pickle
import shutil
import subprocess

import pytest

import headwise
from headwise import Status
from headwise._ffi import ffi
from headwise._lib import lib
from conftest import TRANSLATE


def test_status_is_the_headers_enum():
    header = {name: value for value, name in ffi.typeof("hw_status").elements.items()}
    mine = {("HW_OK" if s is Status.OK else "HW_ERR_" + s.name.replace("IO_ERROR", "IO")): int(s)
            for s in Status}
    assert mine == header
    for s in Status:
        assert ffi.string(lib.hw_status_name(int(s))).decode() == s.name


def test_every_status_has_its_error_class():
    classes = set()
    for s in Status:
        if s is Status.OK:
            continue
        e = headwise._errors.error_for(int(s), "a message")
        assert isinstance(e, headwise.Error) and type(e) is not headwise.Error
        assert e.code is s and e.message == "a message" and str(e) == f"{s.name}: a message"
        assert type(e).status is s
        classes.add(type(e))
        assert pickle.loads(pickle.dumps(e)).code is s
    assert len(classes) == len(Status) - 1
    unknown = headwise._errors.error_for(99, "m")
    assert type(unknown) is headwise.Error and unknown.code == 99 and "UNKNOWN(99)" in str(unknown)
    assert issubclass(headwise.InvalidUtf8Error, ValueError)
    assert issubclass(headwise.IoError, OSError)
    assert issubclass(headwise.ChecksumMismatchError, headwise.InvalidModelError)


def test_missing_file(tmp_path):
    path = tmp_path / "missing.hwm"
    with pytest.raises(headwise.IoError) as e:
        headwise.Model(path)
    assert e.value.code is Status.IO_ERROR and str(path) in e.value.message
    with pytest.raises(headwise.IoError):
        headwise.Model(tmp_path)  # a directory


def test_corrupt_and_truncated_models(tiny, tmp_path):
    junk = tmp_path / "junk.hwm"
    junk.write_bytes(b"this is not a model file at all" * 10)
    with pytest.raises(headwise.InvalidModelError) as e:
        headwise.Model(junk)
    assert e.value.code is Status.INVALID_MODEL and str(junk) in e.value.message
    data = open(tiny, "rb").read()
    cut = tmp_path / "cut.hwm"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(headwise.InvalidModelError, match="truncated"):
        headwise.Model(cut)
    flipped = tmp_path / "flipped.hwm"
    flipped.write_bytes(data[:-1] + bytes([data[-1] ^ 0x55]))  # a weight byte
    with pytest.raises(headwise.ChecksumMismatchError) as e:
        headwise.Model(flipped)
    assert e.value.code is Status.CHECKSUM_MISMATCH
    headwise.Model(flipped, verify=False)  # the checksum is all that is wrong


def test_bad_lines_fail_alone(tiny):
    t = headwise.Translator(headwise.Model(tiny), max_source_tokens=12)
    lines = ["Open the file.", b"caf\xc3 broken", "Close the window.", "bad \udcff surrogate",
             "open the file " * 20, "", "Close the window."]
    out = t.translate(lines)
    assert [r.ok for r in out] == [True, False, True, False, False, True, True]
    utf8 = out[1].error
    assert isinstance(utf8, headwise.InvalidUtf8Error) and utf8.code is Status.INVALID_UTF8
    assert "texts[1]" in utf8.message and "byte" in utf8.message
    assert isinstance(out[3].error, headwise.InvalidUtf8Error) and "texts[3]" in out[3].error.message
    long = out[4].error
    assert isinstance(long, headwise.InputTooLongError) and "max_source_tokens 12" in long.message
    assert out[2].text == out[6].text == t.translate(["Close the window."])[0].text
    assert len(out[1]) == 0 and out[1].hypotheses == []
    for k in (1, 3, 4):
        with pytest.raises(headwise.Error) as e:
            out[k].text
        assert e.value is out[k].error
        with pytest.raises(type(out[k].error)):
            out[k][0]
    assert "INVALID_UTF8" in repr(out[1])


def test_per_line_errors_match_the_cli(tiny, tmp_path):
    lines = [b"Open the file.", b"caf\xc3 broken", b"open the file " * 20, b"Close the window."]
    r = subprocess.run([TRANSLATE, "-m", tiny, "--json", "--max-input-len", "12"],
                       input=b"\n".join(lines) + b"\n", capture_output=True)
    assert r.returncode == 1, r.stderr  # some line failed
    cli = [json.loads(l) for l in r.stdout.decode().splitlines()]
    out = headwise.Translator(headwise.Model(tiny), max_source_tokens=12).translate(lines)
    for c, m in zip(cli, out):
        if "error" in c:
            assert m.error is not None and m.error.code_name == c["error"]["code"]
        else:
            assert m.ok and m.text == c["translations"][0]["text"]
            assert m.score == c["translations"][0]["score"]


def test_options_outside_the_limits_raise(tiny):
    t = headwise.Translator(headwise.Model(tiny), max_beam=2, max_target_tokens=20)
    cases = [dict(beam_size=3), dict(beam_size=0), dict(beam_size=2, num_hypotheses=3),
             dict(max_length=21), dict(max_length=-1), dict(length_penalty=float("nan")),
             dict(beam_size=2 ** 40)]
    for options in cases:
        for call in (lambda: t.translate(["Open the file."], **options),
                     lambda: t.translate([], **options),  # checked even without lines
                     lambda: t.translate_ids([[5, 0]], **options)):
            with pytest.raises(headwise.InvalidArgumentError) as e:
                call()
            assert e.value.code is Status.INVALID_ARGUMENT, options
    with pytest.raises(headwise.InvalidArgumentError, match="beam_size 3"):
        t.translate(["x"], beam_size=3)


def test_translator_creation_errors(tiny):
    m = headwise.Model(tiny)
    positions = m.config.max_position_embeddings
    for limits, cls in [(dict(max_batch=0), headwise.InvalidArgumentError),
                        (dict(threads=0), headwise.InvalidArgumentError),
                        (dict(max_source_tokens=positions + 1), headwise.InvalidArgumentError),
                        (dict(max_memory_bytes=1), headwise.LimitExceededError),
                        (dict(fp16_compute="require"), headwise.InvalidArgumentError),
                        (dict(fp16_compute="sometimes"), headwise.InvalidArgumentError),
                        (dict(max_memory_bytes=-1), headwise.InvalidArgumentError),
                        (dict(spin_workers=1), TypeError),
                        (dict(batch_lanes=-1), headwise.InvalidArgumentError),
                        (dict(threads=2, batch_lanes=3), headwise.InvalidArgumentError),
                        (dict(batch_lanes=1.0), TypeError)]:
        with pytest.raises(cls):
            headwise.Translator(m, **limits)
    with pytest.raises(headwise.LimitExceededError, match="bytes"):
        headwise.Translator(m, max_memory_bytes=1)


def test_model_without_tokenizer(no_tokenizer):
    m = headwise.Model(no_tokenizer)
    assert not m.has_tokenizer
    t = headwise.Translator(m)
    with pytest.raises(headwise.TokenizerError) as e:
        t.translate(["Open the file."])
    assert e.value.code is Status.TOKENIZER
    with pytest.raises(headwise.TokenizerError):
        m.encode("x")
    with pytest.raises(headwise.TokenizerError):
        m.decode([3])
    r = t.translate_ids([[3, 4, m.config.eos_token_id]], beam_size=2, num_hypotheses=2)[0]
    assert r.ok and len(r) == 2 and r.text is None and all(h.text is None for h in r)


def test_bad_sources_fail_alone(tiny):
    m = headwise.Model(tiny)
    eos, vocab = m.config.eos_token_id, m.config.vocab_size
    t = headwise.Translator(m, max_batch=2, max_source_tokens=16)
    good = m.encode("Open the file.")
    sources = [good, [], [vocab, eos], list(range(2, 22)) + [eos], [2 ** 40, eos], good]
    out = t.translate_ids(sources)
    assert [r.ok for r in out] == [True, False, False, False, False, True]
    assert isinstance(out[1].error, headwise.InvalidArgumentError) and "empty" in out[1].error.message
    assert "sources[2]" in out[2].error.message and "vocabulary" in out[2].error.message
    assert isinstance(out[3].error, headwise.InputTooLongError)
    assert type(out[4].error) is headwise.InvalidArgumentError and "int32" in out[4].error.message
    assert out[0].ids == out[5].ids == t.translate(["Open the file."])[0].ids


def test_decode_outside_the_vocabulary(tiny):
    m = headwise.Model(tiny)
    with pytest.raises(headwise.InvalidArgumentError, match="outside the vocabulary"):
        m.decode([m.config.vocab_size])
    with pytest.raises(headwise.InvalidArgumentError, match="int32"):
        m.decode([2 ** 33])
