"""The vocabulary shortlist end to end on the shipped checkpoint: `headwise-train shortlist`
(on the 200 committed test pairs) -> `headwise-convert --shortlist` -> the module and the CLI.
Outputs stay inside the pieces the file allows for their own line (computed here from the file,
as format/shortlist.h defines it), and a line translated in a batch of 16 on two threads is
the line translated alone, bit for bit; a shortlist allowing every piece gives the full vocabulary's
translations bit for bit (int8: exact per output channel); shortlist=False / --no-shortlist is
the full vocabulary; Model.info.shortlist is what inspect --json reports."""
import json
import os
import subprocess

import pytest

import headwise
from conftest import CONVERT, SOURCE, TRANSLATE
from headwise_trainer import cli as trainer_cli
from headwise_trainer.data import shortlist as sl_file

CHECKPOINT = os.path.join(SOURCE, "models", "en-de", "checkpoint")


def convert(out, shortlist=None, weights="int8"):
    cmd = [CONVERT, CHECKPOINT, "-o", str(out), "--weights", weights]
    if shortlist:
        cmd += ["--shortlist", str(shortlist)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return str(out)


@pytest.fixture(scope="module")
def files(tmp_path_factory, corpus):
    d = tmp_path_factory.mktemp("shortlist")
    sl = d / "test.tsv"
    assert trainer_cli.main(["shortlist", "--data", str(corpus), "--vocab", CHECKPOINT,
                             "--out", str(sl), "--split", "test", "--top-k", "20",
                             "--frequent", "100", "--report-split", "test",
                             "--json", str(d / "report.json")]) == 0
    # A shortlist allowing every piece (all frequent, no lists).
    small = sl_file.read(str(sl))
    every = sl_file.Shortlist(small.vocab_size, small.vocab_sha256,
                              list(range(small.vocab_size)), {}, {"description": "every piece"})
    sl_file.write(str(d / "every.tsv"), every)
    return {"shortlist": sl, "report": d / "report.json",
            "with": convert(d / "with.hwm", sl), "every": convert(d / "every.hwm", d / "every.tsv"),
            "plain": convert(d / "plain.hwm")}


def test_the_trainer_writes_a_deterministic_documented_file(files, corpus, tmp_path):
    again = tmp_path / "again.tsv"
    assert trainer_cli.main(["shortlist", "--data", str(corpus), "--vocab", CHECKPOINT,
                             "--out", str(again), "--split", "test", "--top-k", "20",
                             "--frequent", "100", "--report-split", "none"]) == 0
    assert again.read_bytes() == files["shortlist"].read_bytes()
    sl = sl_file.read(str(again))
    vocab = headwise.Model(files["plain"]).info.config.vocab_size
    assert sl.vocab_size == vocab and len(sl.frequent) == 100
    assert sl.frequent == sorted(sl.frequent)
    assert all(0 < len(v) <= 21 for v in sl.lists.values())  # top 20 + the piece itself
    # Counted on these very pairs, the union of each source line covers its reference.
    report = json.loads(files["report"].read_text())["coverage"]["test"]
    assert report["lines"] == 200 and report["tokens_inside"] > 0.99


def test_info_is_what_inspect_reports(files):
    r = subprocess.run([CONVERT, "inspect", files["with"], "--json"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    want = json.loads(r.stdout)["shortlist"]
    got = headwise.Model(files["with"]).info.shortlist
    assert got == headwise.ShortlistInfo(want["frequent"], want["sources"], want["longest"],
                                         want["entries"], want["description"])
    assert got.frequent == 100 and "top 20" in got.description
    assert headwise.Model(files["plain"]).info.shortlist is None


@pytest.mark.parametrize("beam,lines", [(1, 100), (4, 50)])
def test_outputs_stay_in_their_own_lines_list_in_any_batch(files, test_sentences, beam, lines):
    test_sentences = test_sentences[:lines]  # the first N of the 200: minutes on a loaded machine
    model = headwise.Model(files["with"])
    alone = headwise.Translator(model, max_batch=1, max_beam=4)  # a batch = one line
    batched = headwise.Translator(model, max_batch=16, max_beam=4, threads=2)
    assert alone.uses_shortlist and batched.uses_shortlist
    sl = sl_file.read(str(files["shortlist"]))
    always = [model.config.eos_token_id, model.config.unk_token_id]
    outside = 0
    one = alone.translate(test_sentences, beam_size=beam, num_hypotheses=beam)
    many = batched.translate(test_sentences, beam_size=beam, num_hypotheses=beam)
    for line, result in zip(test_sentences, many):
        allowed = set(sl.union([model.encode(line)], always).tolist())
        for h in result:
            outside += sum(i not in allowed for i in h.ids)
    assert outside == 0
    # The other lines of a batch change nothing (int8: exact per output channel).
    assert [list(r) for r in many] == [list(r) for r in one]  # texts, scores, ids, flags


@pytest.mark.parametrize("beam,nbest,lines", [(1, 1, 100), (4, 4, 40)])
def test_every_piece_allowed_is_the_full_vocabulary(files, test_sentences, beam, nbest, lines):
    test_sentences = test_sentences[:lines]
    every = headwise.Translator(headwise.Model(files["every"]), max_beam=4)
    plain = headwise.Translator(headwise.Model(files["plain"]), max_beam=4)
    assert every.uses_shortlist and not plain.uses_shortlist
    a = every.translate(test_sentences, beam_size=beam, num_hypotheses=nbest)
    b = plain.translate(test_sentences, beam_size=beam, num_hypotheses=nbest)
    assert [list(r) for r in a] == [list(r) for r in b]  # texts, scores, ids, flags


def test_off_is_the_full_vocabulary(files, test_sentences):
    test_sentences = test_sentences[:100]
    model = headwise.Model(files["with"])
    off = headwise.Translator(model, shortlist=False)
    plain = headwise.Translator(headwise.Model(files["plain"]))
    assert not off.uses_shortlist
    assert [list(r) for r in off.translate(test_sentences)] == \
        [list(r) for r in plain.translate(test_sentences)]
    with pytest.raises(TypeError):
        headwise.Translator(model, shortlist=1)


def test_cli_verbose_and_no_shortlist(files, test_sentences):
    lines = "\n".join(test_sentences[:20]) + "\n"

    def run(*args):
        r = subprocess.run([TRANSLATE, "-m", files["with"], "--verbose", *args], input=lines,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r

    on, off = run(), run("--no-shortlist")
    assert "headwise-translate: shortlist on (100 frequent pieces" in on.stderr, on.stderr
    assert "headwise-translate: shortlist off (--no-shortlist" in off.stderr, off.stderr
    plain = subprocess.run([TRANSLATE, "-m", files["plain"], "--verbose"], input=lines,
                           capture_output=True, text=True)
    assert "headwise-translate: shortlist none in the model" in plain.stderr
    assert off.stdout == plain.stdout


def test_pytorch_decodes_under_the_same_shortlist(files, corpus, tmp_path, capsys):
    # `headwise-train evaluate --shortlist`: PyTorch restricted to each sentence's own list, the
    # runtime (fp32, the same shortlist in the file) in batches of 16: the same translations,
    # greedy and beam 4. A tight shortlist (20 frequent pieces, 2 per source piece), so that it
    # changes translations: PyTorch without it differs from the runtime.
    small = sl_file.read(str(files["shortlist"]))
    small.frequent = small.frequent[:20]
    small.lists = {s: lst[:2] for s, lst in small.lists.items()}
    sl_path = tmp_path / "tight.tsv"
    sl_file.write(str(sl_path), small)
    model = convert(tmp_path / "tight.fp32.hwm", sl_path, "fp32")
    out = tmp_path / "both.json"

    def evaluate(beam, *extra):
        assert trainer_cli.main(["evaluate", "--model", CHECKPOINT, "--hwm", model,
                                 "--data", str(corpus), "--split", "test", "--limit", "24",
                                 "--batch-size", "16", "--beam", beam, "--threads", "1",
                                 "--json", str(out), *extra]) == 0
        return json.loads(out.read_text())

    for beam in ("1", "4"):
        r = evaluate(beam, "--shortlist", str(sl_path))
        assert r["difference"]["identical_lines"] == "24/24", (beam, r["difference"])
        assert r["pytorch"]["shortlist"]["file"] == str(sl_path)
        unrestricted = evaluate(beam)
        assert unrestricted["pytorch"]["shortlist"] is None
        same = int(unrestricted["difference"]["identical_lines"].split("/")[0])
        assert same < 24, "the tight shortlist changes no translation: the check proves little"
    # A shortlist made for another vocabulary is refused, naming the file.
    small.vocab_sha256 = "0" * 64
    sl_file.write(str(tmp_path / "other.tsv"), small)
    assert trainer_cli.main(["evaluate", "--model", CHECKPOINT, "--shortlist",
                             str(tmp_path / "other.tsv"), "--data", str(corpus),
                             "--limit", "2"]) == 1
    assert "other.tsv: made for another vocabulary" in capsys.readouterr().err
