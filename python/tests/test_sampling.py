"""Sampling and the minimum length through the Python module (Translator.translate /
translate_ids ``sample``, ``top_k``, ``top_p``, ``temperature``, ``seed``, ``min_length``) on
the shipped model: a seed fixes a line's translation whatever the batch, seeds vary it, top_k 1
is greedy, text and ids agree, min_length holds EOS back, and bad settings are refused."""
import pytest

import headwise
from conftest import SHIPPED

LINES = ["Open the file.", "The file could not be found.", "Do you want to save the changes?",
         "Save"]


@pytest.fixture(scope="module")
def shipped():
    model = headwise.Model(SHIPPED)
    return model, headwise.Translator(model, max_beam=4, threads=2)


def texts(results):
    assert all(r.ok for r in results), [r.error for r in results]
    return [r.hypotheses[0].text for r in results]


def test_a_seed_fixes_each_lines_translation(shipped):
    _, t = shipped
    together = t.translate(LINES, sample=True, seed=42, temperature=1.2)
    alone = [t.translate([line], sample=True, seed=42, temperature=1.2)[0] for line in LINES]
    reversed_ = t.translate(LINES[::-1], sample=True, seed=42, temperature=1.2, batch_lines=1)
    assert [r.hypotheses for r in together] == [r.hypotheses for r in alone]
    assert [r.hypotheses for r in together] == [r.hypotheses for r in reversed_[::-1]]


def test_seeds_vary_the_translation_and_top_k_one_is_greedy(shipped):
    _, t = shipped
    seen = {tuple(texts(t.translate(LINES[1:3], sample=True, seed=s, temperature=1.5)))
            for s in range(8)}
    assert len(seen) >= 3
    greedy = t.translate(LINES)
    top1 = t.translate(LINES, sample=True, top_k=1, seed=2 ** 64 - 1, temperature=0.5)
    assert [r.hypotheses for r in top1] == [r.hypotheses for r in greedy]
    # A low temperature with the nucleus is greedy in practice on a confident model.
    cold = t.translate(LINES, sample=True, top_p=0.5, temperature=0.05, seed=7)
    assert texts(cold) == texts(greedy)


def test_text_and_ids_agree(shipped):
    model, t = shipped
    options = dict(sample=True, top_k=20, top_p=0.9, temperature=0.9, seed=5, min_length=3)
    text = t.translate(LINES, **options)
    ids = t.translate_ids([model.encode(l) for l in LINES], **options)
    assert [r.hypotheses for r in text] == [r.hypotheses for r in ids]


def test_min_length_holds_eos_back(shipped):
    _, t = shipped
    plain = t.translate(["Save"])[0].hypotheses[0]
    longer = t.translate(["Save"], min_length=len(plain.ids) + 3)[0].hypotheses[0]
    assert len(longer.ids) >= len(plain.ids) + 3
    assert longer.score < plain.score  # the model preferred to stop
    beam = t.translate(["Save"], beam_size=4, min_length=5)[0].hypotheses[0]
    assert len(beam.ids) >= 5


def test_bad_settings_are_refused(shipped):
    _, t = shipped
    with pytest.raises(headwise.InvalidArgumentError, match="temperature applies only to sampling"):
        t.translate(LINES, temperature=0.5)
    with pytest.raises(headwise.InvalidArgumentError, match="seed applies only to sampling"):
        t.translate(LINES, seed=3)
    with pytest.raises(headwise.InvalidArgumentError, match="sample needs beam_size 1"):
        t.translate(LINES, sample=True, beam_size=2)
    with pytest.raises(headwise.InvalidArgumentError, match="top_p"):
        t.translate(LINES, sample=True, top_p=0.0)
    with pytest.raises(headwise.InvalidArgumentError, match="min_length"):
        t.translate(LINES, min_length=1000)
    with pytest.raises(headwise.InvalidArgumentError, match=r"seed -1 must be in \[0, 2\*\*64\)"):
        t.translate(LINES, sample=True, seed=-1)
    with pytest.raises(headwise.InvalidArgumentError, match="seed"):
        t.translate_ids([[1, 0]], sample=True, seed=2 ** 64)
    with pytest.raises(TypeError, match="sample must be a bool"):
        t.translate(LINES, sample=1)
    with pytest.raises(TypeError, match="temperature must be a number"):
        t.translate(LINES, sample=True, temperature="hot")
