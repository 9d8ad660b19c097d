"""The module gives exactly what headwise-translate and the C API give, on the shipped model
and 200 test-split sentences: greedy and beam 4 texts and scores against the CLI's --json,
4-best scores and ids against hw_translate (hw_c_nbest, exact floats), sampling with a seed
against the CLI's --sample, and translate_ids on Model.encode's ids against translate.

Exact equality needs the same batches: headwise-translate reads windows of 16 x --batch lines
(128 with its --batch 8) and sorts each by length before cutting batches of 8; a Translator
with max_batch 8 has the same sort window (128), so translate() over all 200 lines forms the
same windows and batches; hw_c_nbest translates all lines in one call, as the module does.
Lines batched differently can differ in the last bits of a score (a one-row product runs
another kernel than a many-row one)."""
import json
import subprocess

import pytest

import headwise
from conftest import C_NBEST, TRANSLATE


def cli(model, lines, *args):
    r = subprocess.run([TRANSLATE, "-m", model, "--json", *args],
                       input="\n".join(lines) + "\n", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return [json.loads(l) for l in r.stdout.splitlines()]


@pytest.fixture(scope="module")
def translator(shipped):
    return headwise.Translator(headwise.Model(shipped), max_beam=4)


@pytest.mark.parametrize("beam,nbest", [(1, 1), (4, 4)])
def test_same_as_the_cli(translator, shipped, test_sentences, beam, nbest):
    want = cli(shipped, test_sentences, "--beam", str(beam), "--nbest", str(nbest))
    assert translator.limits.sort_window == 128  # the CLI's window with --batch 8
    got = translator.translate(test_sentences, beam_size=beam, num_hypotheses=nbest)
    assert len(got) == len(want) == 200
    differ = []
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.ok, g.error
        mine = [(h.text, h.score, h.finished) for h in g]
        theirs = [(t["text"], t["score"], t["finished"]) for t in w["translations"]]
        if mine != theirs:
            differ.append((i, test_sentences[i], mine, theirs))
    assert not differ, f"{len(differ)} of 200 lines differ, first: {differ[0]}"


def test_sampling_same_as_the_cli(translator, shipped, test_sentences):
    want = cli(shipped, test_sentences, "--sample", "--top-p", "0.9", "--temperature", "0.8",
               "--seed", "99", "--min-len", "2")
    got = translator.translate(test_sentences, sample=True, top_p=0.9, temperature=0.8, seed=99,
                               min_length=2)
    mine = [[(h.text, h.score) for h in g] for g in got]
    theirs = [[(t["text"], t["score"]) for t in w["translations"]] for w in want]
    assert mine == theirs
    greedy = translator.translate(test_sentences)
    assert sum(g[0].text != s[0][0] for g, s in zip(greedy, mine)) > 20  # it did sample


def test_nbest_scores_equal_the_c_api(translator, shipped, test_sentences):
    r = subprocess.run([C_NBEST, shipped, "4", "4"], input="\n".join(test_sentences) + "\n",
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want = {}
    for line in r.stdout.splitlines():
        i, k, score, *ids = line.split()
        want[(int(i), int(k))] = (float.fromhex(score), [int(x) for x in ids])
    got = translator.translate(test_sentences, beam_size=4, num_hypotheses=4)
    mine = {(i, k): (h.score, h.ids) for i, res in enumerate(got) for k, h in enumerate(res)}
    assert len(mine) == len(want) == 200 * 4
    assert mine == want


def test_translate_ids_on_encoded_sentences(translator, test_sentences):
    model = translator.model
    sources = [model.encode(s) for s in test_sentences[:60]]
    by_ids = translator.translate_ids(sources, beam_size=4, num_hypotheses=2)
    by_text = translator.translate(test_sentences[:60], beam_size=4, num_hypotheses=2)
    assert [[tuple(h) for h in r] for r in by_ids] == [[tuple(h) for h in r] for r in by_text]


@pytest.mark.parametrize("stop", ["exhaustive", "top-eos", "outscored"])
def test_beam_stop_same_as_the_cli(translator, shipped, test_sentences, stop):
    """Each stopping rule gives the CLI's --beam-stop results; the early rules change some
    lines against the exhaustive default (the shipped model's test sentences)."""
    lines = test_sentences[:80]
    want = cli(shipped, lines, "--beam", "4", "--beam-stop", stop)
    got = translator.translate(lines, beam_size=4, beam_stop=stop)
    assert [(r[0].text, r[0].score) for r in got] == [
        (w["translations"][0]["text"], w["translations"][0]["score"]) for w in want]
    default = translator.translate(lines, beam_size=4)
    changed = sum(a.text != b.text for a, b in zip(got, default))
    assert (changed == 0) == (stop == "exhaustive"), f"{stop}: {changed} of 80 lines changed"


def test_beam_stop_names(translator):
    assert set(headwise.BEAM_STOPS) == {"exhaustive", "top-eos", "outscored"}
    with pytest.raises(ValueError, match="beam_stop must be one of"):
        translator.translate(["Open the file."], beam_size=2, beam_stop="early")
