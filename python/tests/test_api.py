"""The module's API on the test models and the shipped model: Model info (against
`headwise-convert inspect --json`), tokenizers, translate / translate_ids, limits, lifetime."""
import json
import math
import os
import subprocess

import numpy as np
import pytest

import headwise
from conftest import CONVERT, SHIPPED


def f32(x):
    return float(np.float32(x))


def inspect_json(path):
    r = subprocess.run([CONVERT, "inspect", path, "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_version_and_library():
    assert headwise.version() == headwise.__version__
    assert headwise.__version__.count(".") == 2
    assert os.path.isfile(headwise.library_path), headwise.library_path


@pytest.mark.parametrize("name", ["shipped", "tiny", "no_tokenizer"])
def test_model_info_is_what_inspect_reports(name, request):
    path = request.getfixturevalue(name)
    want = inspect_json(path)
    m = headwise.Model(path)
    info = m.info
    c = want["config"]
    for key in ("d_model", "encoder_layers", "decoder_layers", "encoder_ffn_dim",
                "decoder_ffn_dim", "vocab_size", "max_position_embeddings", "pad_token_id",
                "eos_token_id", "unk_token_id", "decoder_start_token_id", "activation"):
        assert getattr(info.config, key) == c[key], key
    assert info.format_version == want["format_version"]
    assert info.file_bytes == want["file_bytes"] == os.path.getsize(path)
    assert info.weight_bytes == want["data"]["size"]
    assert info.has_tokenizer == (want["tokenizer"]["vocab_size"] > 0)
    assert info.num_heads_kept == (want["heads"]["kept"], want["heads"]["total"])
    dtypes = {k for k in want["tensors"]["dtypes"] if k != "F32"}
    assert info.weight_format == {"": "fp32", "F16": "fp16", "I8": "int8"}.get(
        "".join(sorted(dtypes)), "mixed")
    assert len(info.attention) == len(want["attention"])
    for got, exp in zip(info.attention, want["attention"]):
        assert got.name == exp["block"]
        assert got.kind == exp["kind"] and got.layer == exp["layer"]
        assert (got.num_heads, got.original_num_heads, got.head_dim) == (
            exp["num_heads"], exp["original_num_heads"], exp["head_dim"])
        assert list(got.kept_heads) == exp["kept_heads"]
        assert info.heads_kept[got.name] == got.kept_heads
        if exp["gate_log_alpha"]:
            assert list(got.gate_log_alpha) == [f32(g) for g in exp["gate_log_alpha"]]
        else:
            assert got.gate_log_alpha is None
        if exp["analysis"]:
            assert len(got.analysis) == len(exp["analysis"])
            for h, e in zip(got.analysis, exp["analysis"]):
                assert h.source_head == e["head"] and h.kept == e["kept"]
                for stat in ("relevance", "confidence", "michel"):
                    assert getattr(h, stat) == (None if e[stat] is None else f32(e[stat]))
                assert list(h.roles) == e["roles"]
        else:
            assert got.analysis is None
    if want["analysis"] is None:
        assert info.analysis is None
    else:
        assert info.analysis == headwise.AnalysisSource(
            want["analysis"]["relevance_rule"], want["analysis"]["data"],
            want["analysis"]["analysis_sha256"])
    for key, value in want["provenance"].items():
        assert getattr(info.provenance, key) == value, key
    json.dumps(info.as_dict())  # JSON-ready


def test_shipped_model_is_the_pruned_int8_one(shipped):
    m = headwise.Model(shipped)
    assert m.weight_format == "int8"
    assert m.info.analysis is not None and m.info.analysis.relevance_rule
    kept, total = m.info.num_heads_kept
    assert 0 < kept < total
    # Removed heads are described too: every block's analysis covers all its source heads.
    for b in m.attention:
        assert len(b.analysis) == b.original_num_heads
        assert [h.source_head for h in b.analysis if h.kept] == list(b.kept_heads)
    assert "int8" in repr(m) and f"{kept}/{total}" in repr(m)


def test_encode_decode(tiny):
    m = headwise.Model(tiny)
    eos = m.config.eos_token_id
    ids = m.encode("Open the file.")
    assert ids[-1] == eos and len(ids) > 1
    assert m.encode("Open the file.") == m.encode(b"Open the file.")
    assert m.encode("") == [eos] == m.encode("  \t ")
    assert all(0 <= i < m.config.vocab_size for i in ids)
    # Control characters count as spaces, NUL included (bytes with lengths reach the C API).
    assert m.encode("Open\x00the\x07file.") == m.encode("Open the file.")
    text = m.decode(ids)
    assert isinstance(text, str) and "file" in text.lower()
    assert m.decode([]) == ""
    assert m.decode([eos, m.config.pad_token_id]) == ""


def test_translate_shapes_and_order(tiny):
    m = headwise.Model(tiny)
    t = headwise.Translator(m, max_beam=4)
    lines = ["Open the file.", "", "Close the window now.", "   ", "Open the file."]
    out = t.translate(lines, beam_size=4, num_hypotheses=3)
    assert len(out) == len(lines)
    for line, r in zip(lines, out):
        assert r.ok and r.error is None
        if not line.strip():
            assert [tuple(h) for h in r] == [("", 0.0, [], True)]
            continue
        assert len(r) == 3
        scores = [h.score for h in r]
        assert scores == sorted(scores, reverse=True)
        assert all(0 <= i < m.config.vocab_size for h in r for i in h.ids)
        assert r.text == r[0].text and r.score == r[0].score and r.ids == r[0].ids
    assert [tuple(h) for h in out[0]] == [tuple(h) for h in out[4]]  # same line, same result
    assert t.translate([]) == []


def test_translate_ids_equals_translate(tiny):
    m = headwise.Model(tiny)
    t = headwise.Translator(m, max_beam=3)
    lines = ["Open the file.", "Close the window.", "Save the document before closing."]
    by_text = t.translate(lines, beam_size=3, num_hypotheses=2)
    by_ids = t.translate_ids([m.encode(l) for l in lines], beam_size=3, num_hypotheses=2)
    for a, b in zip(by_text, by_ids):
        assert [tuple(h) for h in a] == [tuple(h) for h in b]
    # Any iterable of integer sequences, numpy included.
    arrays = [np.asarray(m.encode(l), dtype=np.int64) for l in lines]
    assert [r.ids for r in t.translate_ids(arrays)] == [r.ids for r in t.translate(lines)]


def test_max_length_and_length_penalty(tiny):
    m = headwise.Model(tiny)
    t = headwise.Translator(m, max_target_tokens=16)
    r = t.translate(["Open the file and close the window."], max_length=2)[0]
    assert len(r.ids) <= 2  # EOS counts towards max_length and is not returned
    if len(r.ids) == 2:
        assert not r[0].finished
    greedy = t.translate(["Open the file."], length_penalty=0.0)[0]
    full = t.translate(["Open the file."], length_penalty=1.0)[0]
    assert greedy.ids == full.ids  # greedy's choice does not depend on the normalisation
    n = len(full.ids) + 1 if full[0].finished else len(full.ids)
    assert math.isclose(full.score * n, greedy.score, rel_tol=1e-5, abs_tol=1e-6)


def test_translator_limits_precision_and_repr(tiny, shipped):
    m = headwise.Model(tiny)
    t = headwise.Translator(m, threads=2, max_batch=3, max_beam=2)
    # Batch lanes by default where the fp32 weights are read in place (x86 with AVX2).
    lanes = 1 if "xnnpack" in t.kernel_paths else 2
    assert t.limits == headwise.TranslatorLimits(3, 256, 256, 2, 2, 0, "auto", 48,
                                                 batch_lanes=lanes)
    assert t.precision == "f32" and t.precision_note.startswith("f32")
    assert t.kernel_paths.startswith("fp32: ")
    assert "threads=2" in repr(t)
    small = headwise.Translator(headwise.Model(shipped))
    assert small.precision == "int8" and small.kernel_paths.startswith("int8: ")
    # More lines than max_batch: the runtime splits them; results keep the input order.
    lines = [f"Open the file {i}." for i in range(7)]
    assert [r.text for r in t.translate(lines)] == [t.translate([l])[0].text for l in lines]
    spinning = headwise.Translator(m, threads=2, max_batch=3, max_beam=2, spin_workers=True)
    assert spinning.limits.spin_workers and not t.limits.spin_workers
    assert [r.text for r in spinning.translate(lines)] == [r.text for r in t.translate(lines)]
    no_lanes = headwise.Translator(m, threads=2, max_batch=3, max_beam=2, batch_lanes=1)
    assert no_lanes.limits.batch_lanes == 1
    assert [r.text for r in no_lanes.translate(lines)] == [r.text for r in t.translate(lines)]


def test_length_sorted_batching_keeps_each_lines_result(tiny):
    """A shuffled mix of short and long lines (a blank and an over-long one among them) in
    sort windows smaller than the input, with line and token budgets, gives every line what a
    batch-1 translator gives it, in input order; translate_ids batches the same way."""
    import random
    m = headwise.Model(tiny)
    lines = ["Open the file.", "Where?", "The cat sat on the mat.", "Read.", "Yes",
             "Thank you very much for your help!", "Close the window now.", "Save",
             "Save the document before closing the window."]
    random.Random(3).shuffle(lines)
    lines.insert(2, "   ")
    lines.insert(5, "cat " * 40)  # over max_source_tokens
    one = headwise.Translator(m, max_batch=1, max_source_tokens=32, max_beam=3, sort_window=1)
    many = headwise.Translator(m, max_batch=3, max_source_tokens=32, max_beam=3, sort_window=4)
    assert many.limits.sort_window == 4
    for beam, nbest in [(1, 1), (3, 2)]:
        want = one.translate(lines, beam_size=beam, num_hypotheses=nbest)
        assert isinstance(want[5].error, headwise.InputTooLongError)
        for kwargs in [{}, {"batch_tokens": 20}, {"batch_lines": 2}, {"sort_by_length": False}]:
            got = many.translate(lines, beam_size=beam, num_hypotheses=nbest, **kwargs)
            assert len(got) == len(lines)
            for i, (a, b) in enumerate(zip(got, want)):
                assert a.ok == b.ok, (i, kwargs)
                if not b.ok:
                    assert type(a.error) is type(b.error) and str(a.error) == str(b.error)
                    continue
                assert [h.ids for h in a] == [h.ids for h in b], (i, kwargs)
                assert [h.text for h in a] == [h.text for h in b], (i, kwargs)
                assert all(math.isclose(x.score, y.score, rel_tol=1e-4, abs_tol=1e-4)
                           for x, y in zip(a, b))
        by_ids = many.translate_ids([m.encode(l) for l in lines], beam_size=beam,
                                    num_hypotheses=nbest, batch_tokens=20)
        for i, (a, b) in enumerate(zip(by_ids, want)):
            if not lines[i].strip():
                continue  # translate answers a blank line without the model
            assert a.ok == b.ok, i
            if a.ok:
                assert [h.ids for h in a] == [h.ids for h in b], i
    long = many.translate_ids([m.encode(lines[5]), m.encode("Read."), []])
    assert isinstance(long[0].error, headwise.InputTooLongError)
    assert long[0].error.message.startswith("sources[0]: ") and "max_source_tokens 32" in str(long[0].error)
    assert long[1].ok
    assert isinstance(long[2].error, headwise.InvalidArgumentError) and "sources[2]" in str(long[2].error)
    with pytest.raises(headwise.InvalidArgumentError, match="max_lines"):
        many.translate(["x"], batch_lines=4)  # over max_batch
    with pytest.raises(headwise.InvalidArgumentError, match="max_tokens"):
        many.translate_ids([[0]], batch_tokens=-1)
    with pytest.raises(TypeError):
        many.translate(["x"], sort_by_length=1)
    with pytest.raises(headwise.InvalidArgumentError, match="sort_window"):
        headwise.Translator(m, sort_window=-1)


def test_lifetime(tiny):
    m = headwise.Model(tiny)
    t = headwise.Translator(m)
    want = t.translate(["Open the file."])[0].text
    m.close()
    assert m.closed
    with pytest.raises(ValueError, match="closed"):
        m.encode("x")
    with pytest.raises(ValueError, match="closed"):
        headwise.Translator(m)
    # The translator keeps the model alive (and decodes with it on the token path).
    assert t.translate(["Open the file."])[0].text == want
    with headwise.Translator(headwise.Model(tiny)) as t2:
        assert t2.translate(["Open the file."])[0].text == want
    assert t2.closed
    with pytest.raises(ValueError, match="closed"):
        t2.translate(["x"])


def test_argument_types(tiny):
    t = headwise.Translator(headwise.Model(tiny))
    with pytest.raises(TypeError, match="list of lines"):
        t.translate("Open the file.")
    with pytest.raises(TypeError):
        t.translate([3])
    with pytest.raises(TypeError):
        t.translate(["x"], beam_size=1.5)
    with pytest.raises(TypeError):
        t.translate_ids([[1.5, 0]])
    with pytest.raises(TypeError):
        headwise.Translator("model.hwm")
    with pytest.raises(TypeError):
        headwise.Translator(headwise.Model(tiny), max_batch=8, unknown_limit=3)
