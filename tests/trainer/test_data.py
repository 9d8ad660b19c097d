"""Corpus and vocabulary: the .mo reader on catalogs written here, cleaning rules, deterministic
splits and outputs, clear errors for bad parallel text, deterministic SentencePiece files."""
import hashlib
import json
import os
import sys

import pytest

TRAINER = os.path.join(os.path.dirname(__file__), "..", "..", "trainer")
sys.path.insert(0, TRAINER)

from deb_fixtures import HEADER, make_mo  # noqa: E402
from headwise_trainer import cli  # noqa: E402
from headwise_trainer.data import corpus as data  # noqa: E402
from headwise_trainer.data.mo_reader import MoFormatError, parse_mo  # noqa: E402


ENTRIES = [
    ("", HEADER),
    ("Open file", "Datei öffnen"),
    ("%d file\0%d files", "%d Datei\0%d Dateien"),
    ("menu\x04Quit", "Beenden"),
]


@pytest.mark.parametrize("big_endian", [False, True])
def test_mo_reader_entries(big_endian):
    cat = parse_mo(make_mo(ENTRIES, big_endian), "t.mo")
    got = {(x.msgid, x.msgstr, x.context, x.plural) for x in cat.entries}
    assert got == {("Open file", "Datei öffnen", None, False),
                   ("%d file", "%d Datei", None, True),
                   ("Quit", "Beenden", "menu", False)}  # header entry skipped
    assert cat.charset == "UTF-8"


def test_mo_reader_latin1_charset():
    blob = make_mo([("", "Content-Type: text/plain; charset=ISO-8859-1\n"),
                    ("size", "Größe".encode("latin-1"))])
    cat = parse_mo(blob, "l.mo")
    assert cat.charset == "ISO-8859-1"
    assert cat.entries[0].msgstr == "Größe"


def test_mo_reader_errors():
    with pytest.raises(MoFormatError, match="expected .mo magic 0x950412de, found 0x"):
        parse_mo(b"\x00" * 28, "bad.mo")
    good = make_mo(ENTRIES)
    with pytest.raises(MoFormatError, match="runs past the end"):
        parse_mo(good[:60], "cut.mo")
    with pytest.raises(MoFormatError, match="at least 20 bytes"):
        parse_mo(good[:10], "tiny.mo")
    with pytest.raises(MoFormatError, match="major revision"):
        parse_mo(make_mo(ENTRIES, revision=5 << 16), "rev.mo")


def test_clean_pairs_rules():
    stats = data.CorpusStats()
    out = data.clean_pairs([
        ("  Open\n\tfile  ", "Datei   öffnen"),   # whitespace normalised
        ("Open file", "Öffne Datei"),            # duplicate source: the first one wins
        ("OK", "OK"),                           # identical
        ("%s: %s", "%s: %s."),                  # format only
        ("", "leer"),                           # empty
        ("Quit", "Beenden"),
    ], max_chars=0, stats=stats)
    assert out == [("Open file", "Datei öffnen"), ("Quit", "Beenden")]
    assert (stats.dropped_duplicate_source, stats.dropped_identical, stats.dropped_format_only,
            stats.dropped_empty, stats.kept) == (1, 1, 1, 1, 2)


def test_format_only_detection():
    assert data.is_format_only("%s: %s")
    assert data.is_format_only("%1$s (%2$lu)")
    assert data.is_format_only("{0} - {name}")
    assert not data.is_format_only("%s: file not found")


def test_split_is_deterministic_and_proportional():
    keys = [f"sentence {i}" for i in range(20000)]
    splits = [data.split_of(k, 2, 2) for k in keys]
    assert splits == [data.split_of(k, 2, 2) for k in keys]
    frac = {s: splits.count(s) / len(keys) for s in ("train", "dev", "test")}
    assert 0.015 < frac["dev"] < 0.025 and 0.015 < frac["test"] < 0.025


def _write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _run_cli(argv):
    return cli.main(argv)


def _sha_dir(d):
    return {n: hashlib.sha256(open(os.path.join(d, n), "rb").read()).hexdigest()
            for n in sorted(os.listdir(d))}


def test_user_corpus_reproducible(tmp_path):
    src = "\n".join(f"source sentence number {i}" for i in range(300)) + "\n"
    tgt = "\n".join(f"Quellsatz Nummer {i}" for i in range(300)) + "\n"
    _write(tmp_path / "a.en", src)
    _write(tmp_path / "a.de", tgt)
    for out in ("c1", "c2"):
        assert _run_cli(["data", "--src-file", str(tmp_path / "a.en"), "--tgt-file",
                         str(tmp_path / "a.de"), "--out", str(tmp_path / out)]) == 0
    assert _sha_dir(tmp_path / "c1") == _sha_dir(tmp_path / "c2")
    man = json.load(open(tmp_path / "c1" / "manifest.json"))
    assert sum(man["counts"]["split_counts"].values()) == 300
    for name, sha in man["files"].items():
        assert hashlib.sha256(open(tmp_path / "c1" / name, "rb").read()).hexdigest() == sha
    lines = open(tmp_path / "c1" / "train.en", encoding="utf-8").read().split("\n")[:-1]
    assert len(lines) == man["counts"]["split_counts"]["train"]


def test_misaligned_files_error(tmp_path, capsys):
    _write(tmp_path / "a.en", "one\ntwo\nthree\n")
    _write(tmp_path / "a.de", "eins\nzwei\n")
    rc = _run_cli(["data", "--src-file", str(tmp_path / "a.en"), "--tgt-file",
                   str(tmp_path / "a.de"), "--out", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert rc == 1
    assert "has 3 lines" in err and "has 2" in err and "misaligned" in err
    assert not os.path.exists(tmp_path / "c")  # nothing written


def test_empty_line_and_bad_tsv_errors(tmp_path):
    _write(tmp_path / "a.en", "one\n\nthree\n")
    _write(tmp_path / "a.de", "eins\nzwei\ndrei\n")
    with pytest.raises(data.DataError, match=r"a\.en:2: expected a source sentence, found an "
                                             r"empty line"):
        data.aligned_pairs(str(tmp_path / "a.en"), str(tmp_path / "a.de"))
    _write(tmp_path / "p.tsv", "one\teins\ntwo zwei\n")
    with pytest.raises(data.DataError, match=r"p\.tsv:2: expected 2 tab-separated fields"):
        data.tsv_pairs(str(tmp_path / "p.tsv"))
    with open(tmp_path / "bad.en", "wb") as f:
        f.write(b"ok\n\xff\xfe\n")
    with pytest.raises(data.DataError, match=r"bad\.en:2: expected UTF-8"):
        data.aligned_pairs(str(tmp_path / "bad.en"), str(tmp_path / "a.de"))
    with pytest.raises(data.DataError, match="not found"):
        data.aligned_pairs(str(tmp_path / "missing.en"), str(tmp_path / "a.de"))


def test_spm_vocab_deterministic_and_opus_ids(tmp_path):
    words = ["file", "open", "close", "save", "print", "error", "user", "group", "name", "size"]
    de = ["Datei", "öffnen", "schließen", "speichern", "drucken", "Fehler", "Benutzer",
          "Gruppe", "Name", "Größe"]
    src = [f"{words[i % 10]} {words[(i * 7) % 10]} {words[(i * 3) % 10]} {i}" for i in range(400)]
    tgt = [f"{de[i % 10]} {de[(i * 7) % 10]} {de[(i * 3) % 10]} {i}" for i in range(400)]
    _write(tmp_path / "a.en", "\n".join(src) + "\n")
    _write(tmp_path / "a.de", "\n".join(tgt) + "\n")
    assert _run_cli(["data", "--src-file", str(tmp_path / "a.en"), "--tgt-file",
                     str(tmp_path / "a.de"), "--out", str(tmp_path / "c")]) == 0
    for out in ("v1", "v2"):
        assert _run_cli(["spm", "--data", str(tmp_path / "c"), "--out", str(tmp_path / out),
                         "--vocab-size", "120"]) == 0
    assert _sha_dir(tmp_path / "v1") == _sha_dir(tmp_path / "v2")
    vocab = json.load(open(tmp_path / "v1" / "vocab.json", encoding="utf-8"))
    assert vocab["</s>"] == 0 and vocab["<unk>"] == 1
    assert vocab["<pad>"] == len(vocab) - 1 == 119
    assert sorted(vocab.values()) == list(range(len(vocab)))
    from headwise_trainer.data.spm_vocab import Vocab
    v = Vocab.load(str(tmp_path / "v1"))
    ids = v.encode_source("open file 12")
    assert ids[-1] == 0 and 1 not in ids
    assert v.decode_target(v.encode_target("Datei öffnen 3")) == "Datei öffnen 3"
    # Separate vocabularies: the joint vocab.json covers both models' pieces.
    assert _run_cli(["spm", "--data", str(tmp_path / "c"), "--out", str(tmp_path / "v3"),
                     "--vocab-size", "50", "--separate"]) == 0
    v3 = Vocab.load(str(tmp_path / "v3"))
    assert v3.pad_id == len(v3) - 1 and 1 not in v3.encode_target("Datei öffnen")
    assert 1 not in v3.encode_source("open file")
    # A vocabulary the text cannot fill: SentencePiece's error, as ours, names the problem.
    from headwise_trainer.data.spm_vocab import VocabError, train_vocab
    with pytest.raises(VocabError, match="Vocabulary size too high"):
        train_vocab(str(tmp_path / "c"), str(tmp_path / "v4"), vocab_size=5000, log=lambda m: 0)
