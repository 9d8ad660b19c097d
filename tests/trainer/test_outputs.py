"""Nothing lost in the corpus and vocabulary steps: `data` and `spm` refuse to replace existing
outputs unless --overwrite, never write over one of their inputs (even with --overwrite), and
leave what was there untouched when they refuse."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "trainer"))

from headwise_trainer import cli  # noqa: E402

EN = [f"open the file number {i}" for i in range(60)]
DE = [f"öffne die Datei Nummer {i}" for i in range(60)]


def snapshot(d):
    return {n: (d / n).read_bytes() for n in sorted(os.listdir(d))}


def test_data_and_spm_refuse_to_overwrite_unless_told(tmp_path, capsys):
    (tmp_path / "a.en").write_text("\n".join(EN) + "\n", encoding="utf-8")
    (tmp_path / "a.de").write_text("\n".join(DE) + "\n", encoding="utf-8")
    data = ["data", "--src-file", str(tmp_path / "a.en"), "--tgt-file", str(tmp_path / "a.de"),
            "--out", str(tmp_path / "c")]
    assert cli.main(data) == 0
    before = snapshot(tmp_path / "c")
    assert "manifest.json" in before
    capsys.readouterr()
    assert cli.main(data + ["--dev-percent", "10"]) == 1
    assert "exists; pass --overwrite" in capsys.readouterr().err
    assert snapshot(tmp_path / "c") == before
    assert cli.main(data + ["--dev-percent", "10", "--overwrite"]) == 0
    assert snapshot(tmp_path / "c") != before

    spm = ["spm", "--data", str(tmp_path / "c"), "--out", str(tmp_path / "v"), "--vocab-size", "34"]
    assert cli.main(spm) == 0
    vocab = snapshot(tmp_path / "v")
    capsys.readouterr()
    assert cli.main(spm[:-1] + ["36"]) == 1
    assert "source.spm exists; pass --overwrite" in capsys.readouterr().err
    assert snapshot(tmp_path / "v") == vocab
    assert cli.main(spm[:-1] + ["36", "--overwrite"]) == 0
    assert snapshot(tmp_path / "v") != vocab


def test_data_never_overwrites_its_input(tmp_path, capsys):
    out = tmp_path / "c"
    out.mkdir()
    (out / "train.en").write_text("\n".join(EN) + "\n", encoding="utf-8")
    (tmp_path / "a.de").write_text("\n".join(DE) + "\n", encoding="utf-8")
    original = (out / "train.en").read_bytes()
    for extra in ([], ["--overwrite"]):
        assert cli.main(["data", "--src-file", str(out / "train.en"), "--tgt-file",
                         str(tmp_path / "a.de"), "--out", str(out), *extra]) == 1
        assert "is an input and an output" in capsys.readouterr().err
    assert (out / "train.en").read_bytes() == original
    assert sorted(os.listdir(out)) == ["train.en"]
