"""Target prefixes through the Python module (Translator.translate / translate_ids
``target_prefix``, Model.encode_target) on the shipped model: translations begin with the
prefix, a prefix that repeats the model's own greedy start changes nothing, the text and id
paths agree, and each line's prefix errors are its own."""
import pytest

import headwise
from conftest import SHIPPED

LINES = ["Open the file.", "The file could not be found.", "Do you want to save the changes?"]


@pytest.fixture(scope="module")
def shipped():
    model = headwise.Model(SHIPPED)
    return model, headwise.Translator(model, max_beam=4)


@pytest.mark.parametrize("beam", [1, 4])
def test_translations_begin_with_the_prefix(shipped, beam):
    model, t = shipped
    prefixes = ["Öffnen", None, "Wollen Sie"]
    got = t.translate(LINES, beam_size=beam, target_prefix=prefixes)
    plain = t.translate(LINES, beam_size=beam)
    for line, prefix, r, p in zip(LINES, prefixes, got, plain):
        assert r.ok, r.error
        text = r.hypotheses[0].text
        if prefix is None:
            assert r.hypotheses == p.hypotheses
        else:
            assert text.startswith(prefix), (line, text)
            assert r.hypotheses[0].ids[:len(model.encode_target(prefix))] == \
                model.encode_target(prefix)
            assert text != p.hypotheses[0].text  # the model's own start is another


def test_the_own_greedy_start_changes_nothing(shipped):
    model, t = shipped
    plain = t.translate(LINES)
    prefixes = [model.decode(r.hypotheses[0].ids[:2]) for r in plain]
    forced = t.translate(LINES, target_prefix=prefixes)
    for p, f, prefix in zip(plain, forced, prefixes):
        assert model.encode_target(prefix) == p.hypotheses[0].ids[:2]
        assert f.hypotheses == p.hypotheses


def test_text_and_ids_agree(shipped):
    model, t = shipped
    prefixes = ["Öffnen", "", "Wollen"]
    text = t.translate(LINES, beam_size=4, num_hypotheses=2, target_prefix=prefixes)
    ids = t.translate_ids([model.encode(l) for l in LINES], beam_size=4, num_hypotheses=2,
                          target_prefix=[model.encode_target(p) for p in prefixes])
    assert [r.hypotheses for r in text] == [r.hypotheses for r in ids]


def test_errors(shipped):
    model, t = shipped
    with pytest.raises(headwise.InvalidArgumentError, match="3 lines"):
        t.translate(LINES, target_prefix=["a"])
    with pytest.raises(TypeError):
        t.translate(LINES, target_prefix="Öffnen")
    with pytest.raises(headwise.InvalidArgumentError, match="split_sentences"):
        t.translate(LINES, split_sentences=True, target_prefix=["", "", ""])
    got = t.translate(LINES, target_prefix=[b"\xff", "x" * 2000, None])
    assert isinstance(got[0].error, headwise.InvalidUtf8Error)
    assert "target_prefixes[0]" in str(got[0].error)
    assert isinstance(got[1].error, headwise.InputTooLongError)
    assert got[2].ok
    eos = model.info.config.eos_token_id
    ids = t.translate_ids([model.encode(LINES[0])] * 2, target_prefix=[[eos], [2 ** 40]])
    assert isinstance(ids[0].error, headwise.InvalidArgumentError) and "EOS" in str(ids[0].error)
    assert isinstance(ids[1].error, headwise.InvalidArgumentError)
    with pytest.raises(headwise.InvalidUtf8Error):
        model.encode_target(b"\xff")
    assert model.encode_target("  ") == []
