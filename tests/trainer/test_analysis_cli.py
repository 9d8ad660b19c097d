"""`headwise-train analyze` end to end on a tiny gated checkpoint: the analysis.json contract
(names, block order, one entry per source head, relevance shares, closed heads), the PNGs,
refusing to overwrite, determinism, and an ungated checkpoint with CoNLL-U parses."""
import argparse
import json
import os

import pytest
import torch

from headwise_trainer.analysis import cli as analysis_cli
from headwise_trainer import cli
from headwise_trainer.model import run_state
from headwise_trainer.model.checkpoint import export_checkpoint, read_vocab
from headwise_trainer.model.config import MarianConfig
from headwise_trainer.data.corpus import sha256_file
from headwise_trainer.model.gates import attach_gates, gates
from headwise_trainer.model.marian import MarianMTModel
from headwise_trainer.data.spm_vocab import Vocab

from conftest import THREADS
from test_analysis_stats import SAMPLE
from word_corpus import build_word_corpus


EN = ["the", "old", "user", "opens", "a", "long", "file", "quickly", "window", "closes"]
DE = ["der", "alte", "Benutzer", "öffnet", "eine", "lange", "Datei", "schnell", "Fenster",
      "schließt"]
# encoder layer 0 wholly closed (its relevance is 0 everywhere), others partly; one cross head
# stays open, else nothing of the encoder reaches the output
CLOSED = {"model.encoder.layers.0.self_attn": [0, 1, 2, 3],
          "model.encoder.layers.1.self_attn": [1, 3], "model.decoder.layers.0.encoder_attn": [0]}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    d = tmp_path_factory.mktemp("analyze")
    build_word_corpus(d, EN, DE, pairs=200, words=(2, 6))
    vocab = Vocab.load(str(d / "vocab"))
    config = MarianConfig(d_model=16, encoder_layers=2, decoder_layers=1,
                          encoder_attention_heads=4, decoder_attention_heads=2,
                          encoder_ffn_dim=24, decoder_ffn_dim=24, activation_function="swish",
                          vocab_size=len(vocab), max_position_embeddings=64,
                          pad_token_id=vocab.pad_id, eos_token_id=vocab.eos_id,
                          decoder_start_token_id=vocab.pad_id, scale_embedding=True, dropout=0.0)
    torch.manual_seed(0)
    model = MarianMTModel(config)
    model.init_weights(std=0.3)
    files = dict(source_spm=d / "vocab" / "source.spm", target_spm=d / "vocab" / "target.spm",
                 vocab=read_vocab(d / "vocab"))
    export_checkpoint(model, d / "ungated", **files)
    attach_gates(model)
    with torch.no_grad():
        for name, heads in CLOSED.items():
            gates(model)[name].log_alpha[heads] = -2.0
    export_checkpoint(model, d / "gated", **files)
    os.makedirs(d / "run")
    run_state.save_checkpoint(str(d / "run"), {
        "step": 5, "epoch": 0, "batch_idx": 0, "model": model.state_dict(), "optimizer": {},
        "rng": run_state.rng_state(), "config": config.to_dict(),
        "train_args": {"vocab": str(d / "vocab")}})
    return d


def analyze(*argv):
    parser = argparse.ArgumentParser()
    analysis_cli.add_analyze(parser.add_subparsers())
    args = parser.parse_args(["analyze", "--threads", str(THREADS), *map(str, argv)])
    return args.func(args, log=lambda *_: None)


def test_gated_checkpoint_contract(setup, tmp_path):
    out = tmp_path / "out"
    doc = analyze("--model", setup / "gated", "--data", setup / "data", "--out", out,
                  "--sentences", 4, "--both-rules", "--rare-min-rank", 0)
    on_disk = json.loads((out / "analysis.json").read_text(encoding="utf-8"))
    assert on_disk == json.loads(json.dumps(doc))
    assert on_disk["format"] == "headwise-head-analysis" and on_disk["version"] == 1
    assert on_disk["checkpoint"]["model_safetensors_sha256"] == \
        sha256_file(setup / "gated" / "model.safetensors")
    data = on_disk["data"]
    assert (data["split"], data["sentences"], data["generation"], data["max_len"]) == \
        ("dev", 4, "greedy", 128)
    assert on_disk["methods"]["relevance"] == "attnlrp"
    assert on_disk["methods"]["michel"] == "abs mask gradient, block l2-normalised"
    assert on_disk["thresholds"]["positional"] == 0.9
    assert [(b["kind"], b["layer"], b["source_heads"]) for b in on_disk["blocks"]] == [
        ("encoder_self", 0, 4), ("encoder_self", 1, 4), ("decoder_self", 0, 2),
        ("decoder_cross", 0, 2)]
    for b in on_disk["blocks"]:
        closed = CLOSED.get(b["name"], [])
        assert [h["head"] for h in b["heads"]] == list(range(b["source_heads"]))
        for h in b["heads"]:
            assert h["gate_open"] == (h["head"] not in closed)
            assert h["confidence"] is not None and 0 < h["confidence"] <= 1
            assert isinstance(h["roles"], list)
            if not h["gate_open"]:
                assert h["relevance"] == 0 and h["relevance_z"] == 0 and h["michel"] == 0
            assert (h["positional"] is None) == (b["kind"] == "decoder_cross")
            assert (h["rare_word"] is None) == (b["kind"] != "encoder_self")
            assert h["syntactic"] is None                     # no --conllu
        total = sum(h["relevance"] for h in b["heads"])
        assert total == pytest.approx(0.0 if len(closed) == b["source_heads"] else 1.0,
                                      abs=1e-5)
    for png in ("relevance", "relevance_z", "confidence", "michel", "positional", "rare_word"):
        assert (out / f"{png}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (out / "syntactic.png").exists()
    # an existing output is kept unless --overwrite; a rerun gives the same numbers
    with pytest.raises(cli.CliError, match="--overwrite"):
        analyze("--model", setup / "gated", "--data", setup / "data", "--out", out)
    again = analyze("--model", setup / "gated", "--data", setup / "data", "--out", out,
                    "--sentences", 4, "--both-rules", "--rare-min-rank", 0, "--overwrite",
                    "--no-plots")
    again["data"].pop("seconds"), doc["data"].pop("seconds")
    assert again == doc


def test_ungated_checkpoint_with_conllu(setup, tmp_path):
    out = tmp_path / "out"
    doc = analyze("--model", setup / "ungated", "--data", setup / "data", "--out", out,
                  "--sentences", 0, "--rule", "z", "--conllu", SAMPLE,
                  "--syntactic-min-instances", 1)
    assert doc["checkpoint"]["model_safetensors_sha256"] == \
        sha256_file(setup / "ungated" / "model.safetensors")
    assert doc["methods"]["relevance"] == "z" and doc["data"]["conllu_sentences"] == 6
    assert doc["data"]["sentences"] == len((setup / "data" / "dev.en").read_text().splitlines())
    for b in doc["blocks"]:
        assert all(h["gate_open"] for h in b["heads"])
        assert sum(h["relevance"] for h in b["heads"]) == pytest.approx(1.0, abs=1e-5)
        for h in b["heads"]:
            if b["kind"] == "encoder_self":
                assert set(h["syntactic"]) == {f"{r}:{d}" for r in conllu_relations()
                                               for d in ("dep->head", "head->dep")}
                for key, v in h["syntactic"].items():
                    assert 0 <= v["accuracy"] <= 1 and v["count"] > 0
                    if v["accuracy"] >= v["baseline"] + 0.1:
                        assert f"syntactic:{key.split(':')[0]}" in h["roles"]
            else:
                assert h["syntactic"] is None
    assert (out / "syntactic.png").is_file()


def conllu_relations():
    return ("nsubj", "obj", "amod", "advmod")


def test_training_run_directory(setup, tmp_path):
    doc = analyze("--model", setup / "run", "--data", setup / "data", "--out", tmp_path / "o",
                  "--sentences", 2, "--no-plots")
    assert doc["checkpoint"]["model_safetensors_sha256"] is None
    assert "step 5" in doc["checkpoint"]["description"]
    closed = [(b["name"], h["head"]) for b in doc["blocks"] for h in b["heads"]
              if not h["gate_open"]]
    assert closed == [(name, h) for name, heads in CLOSED.items() for h in heads]
    assert not (tmp_path / "o" / "relevance.png").exists()


def test_plots_redraw_from_json(setup, tmp_path):
    from headwise_trainer.analysis import plots
    doc = analyze("--model", setup / "gated", "--data", setup / "data", "--out", tmp_path / "o",
                  "--sentences", 1, "--no-plots")
    assert plots.main([str(tmp_path / "o" / "analysis.json"), str(tmp_path / "png")]) == 0
    # rare_word is null (vocabulary of 64 < --rare-min-rank 500), so it has no figure
    assert sorted(os.listdir(tmp_path / "png")) == sorted(
        f"{s}.png" for s in ("relevance", "confidence", "michel", "positional"))
    assert doc["data"]["sentences"] == 1


def test_opus_mt_layout_with_pytorch_weights(setup, tmp_path):
    # config.json + pytorch_model.bin + the SentencePiece files, as OPUS-MT ships on the Hub
    d = tmp_path / "opus"
    d.mkdir()
    for name in ("config.json", "source.spm", "target.spm", "vocab.json"):
        (d / name).write_bytes((setup / "ungated" / name).read_bytes())
    from headwise_trainer.model.checkpoint import load_checkpoint
    torch.save(load_checkpoint(setup / "ungated").state_dict(), d / "pytorch_model.bin")
    doc = analyze("--model", d, "--data", setup / "data", "--out", tmp_path / "o",
                  "--sentences", 2, "--no-plots")
    ref = analyze("--model", setup / "ungated", "--data", setup / "data", "--out",
                  tmp_path / "r", "--sentences", 2, "--no-plots")
    assert doc["checkpoint"]["model_safetensors_sha256"] is None
    assert doc["blocks"] == ref["blocks"]
