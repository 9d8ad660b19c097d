"""headwise.split_sentences (the runtime's rule, runtime/src/sentences.cc) against the rule that
cut the training text (trainer/headwise_trainer/data/ui_text.py, split_sentences): the same
sentences for every character the rule's tables decide and for the whole English side of the
training split, and translate(split_sentences=True) joining the sentences' translations."""
import lzma
import os
import sys
import unicodedata

import pytest

import headwise
from conftest import SOURCE

sys.path.insert(0, os.path.join(SOURCE, "trainer"))
from headwise_trainer.data import ui_text  # noqa: E402

TRAIN_EN = os.path.join(SOURCE, "models", "en-de", "data", "train.en.xz")


def both(text):
    return headwise.split_sentences(text), ui_text.split_sentences(text)


CASES = [
    "", "   ", "Open the file.", "Use e.g. this. Then z. B. that. Version 2. Done.",
    'He said "Stop." Then he left.', "Really?! Yes.", "Wait\u2026 Now.", "See (Fig. 3). Next.",
    "It costs 3.5 Euro. Next.", "lower. case", "End.\u00a0Next", "End.  \u201eQuoted\u201c next.",
    "Mr. Smith. \u00dcber alles.", "\u00c7a va. \u00c9lan.", "\u0130. Next", "IN\u212aL. Next",
    "5. Next", "x\u00b2. Next", "A. B. Second sentence here. Third one.", "One.Two. Three",
    "End.) (Next", "Done.\t\n Next one", "Etc. Next", "U.\u00c4. Next", "He left.\u3000Next",
    "(\u201eAbs. 2\u201c). Dann", "Usage: foo [OPTION]... FILE... Mandatory arguments.",
    "Version 1.2.3. New features.", "\u00abQuoi?\u00bb Oui.", "Hi!!! \u2026 OK? (Yes.) [No.] Then",
]


@pytest.mark.parametrize("text", CASES)
def test_the_runtime_splits_as_the_trainer(text):
    runtime, trainer = both(text)
    assert runtime == trainer


def characters():
    """Every character the rule's tables decide (spaces, digits, capitals, case, quotes,
    terminators), its neighbours, and all of Latin, Greek, Cyrillic and the punctuation blocks."""
    chosen = set(range(0x3100))
    for c in range(0x110000):
        ch = chr(c)
        if ch.isspace() or ch.isdigit() or ch.lower() != ch or ch.upper() != ch:
            chosen.update((c - 1, c, c + 1))
    return sorted(c for c in chosen if 0 <= c < 0x110000 and not 0xD800 <= c <= 0xDFFF)


def test_every_character_the_tables_decide():
    if unicodedata.unidata_version != "14.0.0":
        pytest.skip(f"the runtime's digit table is Unicode 14.0's; this Python has "
                    f"{unicodedata.unidata_version}")
    templates = ["One.{}Two", "Ab{}. Next", "End. {}ext", "End.{} Next", "End. {}Next",
                 "IN{}L. Next", "{}. Next", "Wait{} Now", "Fine {}{}. Next"]
    differ = []
    for c in characters():
        ch = chr(c)
        for t in templates:
            text = t.format(ch, ch)
            runtime, trainer = both(text)
            if runtime != trainer:
                differ.append((hex(c), text, runtime, trainer))
    assert not differ, f"{len(differ)} differences, e.g. {differ[:5]}"


def test_the_training_text_and_paragraphs_of_it():
    """Every line of the training split, and paragraphs of three consecutive lines."""
    with lzma.open(TRAIN_EN, "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")[:-1]
    assert len(lines) > 500_000
    paragraphs = [" ".join(lines[i:i + 3]) for i in range(0, len(lines) - 2, 3)]
    differ, boundaries = [], 0
    for text in lines + paragraphs:
        runtime, trainer = both(text)
        boundaries += len(trainer) - 1
        if runtime != trainer:
            differ.append((text, runtime, trainer))
    assert not differ, f"{len(differ)} differences, e.g. {differ[:3]}"
    assert boundaries > 50_000  # 97,326 on the committed train.en.xz: the check has material


def test_bad_input():
    with pytest.raises(headwise.InvalidUtf8Error, match="byte offset 9"):
        headwise.split_sentences(b"Fine. Caf\xe9 au lait.")
    with pytest.raises(TypeError):
        headwise.split_sentences(3)
    assert headwise.split_sentences(b"Open it. Then close it.") == ["Open it.", "Then close it."]


def test_translate_joins_the_sentences_translations(tiny):
    model = headwise.Model(tiny)
    translator = headwise.Translator(model, max_batch=3, max_source_tokens=48,
                                     max_target_tokens=16)
    lines = ["Open the file. The cat sat on the mat.", "Where?", "",
             "Thank you very much for your help!  It is late.\tRead."]
    got = translator.translate(lines, split_sentences=True)
    for line, result in zip(lines, got):
        assert result.ok
        parts, previous_end, text = [], 0, ""
        sentences = headwise.split_sentences(line)
        start = 0
        for s in sentences:
            begin = line.index(s, start)
            start = begin + len(s)
            alone = translator.translate([s])[0]
            if alone.text:
                if text:
                    text += line[previous_end:begin]
                text += alone.text
                previous_end = start
            parts.extend(alone.ids)
        assert result.text == text
        assert result.ids == parts
    whole = translator.translate(lines)
    assert [r.ids for r in whole] != [r.ids for r in got]
    with pytest.raises(headwise.InvalidArgumentError, match="split_sentences"):
        translator.translate(lines, beam_size=2, num_hypotheses=2, split_sentences=True)
    with pytest.raises(TypeError):
        translator.translate(lines, split_sentences=1)
