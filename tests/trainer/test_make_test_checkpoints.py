import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import ROOT
from headwise_trainer import forced_logits, head_layout, load_checkpoint

SCRIPT = ROOT / "trainer" / "tools" / "make_test_checkpoints.py"


def load_tool():
    spec = importlib.util.spec_from_file_location("make_test_checkpoints", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tool():
    return load_tool()


def files(directory: Path):
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def test_deterministic(tool, tmp_path, capsys):
    args = ["--only", "gelu_shared_untied", "--num-sources", "6"]
    assert tool.main([str(tmp_path / "a")] + args) == 0
    # A second, separate process (other hash seed) must write the same bytes.
    subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "b")] + args, check=True,
                   env={**os.environ, "PYTHONHASHSEED": "12345"}, stdout=subprocess.DEVNULL)
    a, b = files(tmp_path / "a"), files(tmp_path / "b")
    assert sorted(a) == ["gelu_shared_untied/config.json", "gelu_shared_untied/model.safetensors",
                         "gelu_shared_untied/reference.json",
                         "gelu_shared_untied/shortlist.tsv", "gelu_shared_untied/source.spm",
                         "gelu_shared_untied/target.spm", "gelu_shared_untied/vocab.json",
                         "manifest.json"]
    assert a == b
    assert "gelu_shared_untied: d_model 32" in capsys.readouterr().out


def test_specs_cover_the_required_variety(tool):
    specs = tool.SPECS
    assert {s.activation for s in specs} == {"swish", "relu", "gelu"}
    assert {(s.shared, s.tied) for s in specs} == {(True, True), (False, False), (True, False),
                                                   (False, True)}
    assert any(all(h == 0 for h in heads) for s in specs for layers in s.keep.values()
               for heads in layers)
    for s in specs:
        assert 32 <= s.d_model <= 64 and s.encoder_layers <= 3 and s.decoder_layers <= 3


def test_reference_is_what_the_checkpoint_computes(tool, tmp_path):
    tool.main([str(tmp_path), "--only", "relu_unshared_untied", "--num-sources", "8"])
    directory = tmp_path / "relu_unshared_untied"
    ref = json.loads((directory / "reference.json").read_text())
    model = load_checkpoint(directory)
    assert ref["layout"] == head_layout(model)
    assert any(not kept for kept in ref["layout"].values())  # a block without heads
    sources = ref["sources"]
    assert len(sources) == 8 and all(s[-1] == ref["eos_token_id"] for s in sources)
    assert ref["limits"]["max_source_tokens"] == max(len(s) for s in sources)
    assert len(ref["prefixes"]) == len(sources)
    assert any(ref["prefixes"]) and any(not p for p in ref["prefixes"])
    assert any(s["target_prefix"] for s in ref["searches"])
    assert any(s["options"].get("sample") for s in ref["searches"])
    assert any(s["options"].get("min_length") for s in ref["searches"])
    for search in ref["searches"]:
        o = search["options"]
        prefixes = ref["prefixes"] if search["target_prefix"] else None
        got = tool.run_search(model, sources, o, prefixes)
        if o.get("min_length"):
            assert all(len(w["ids"]) >= o["min_length"] for r in search["results"] for w in r)
        for i, (hyps, want) in enumerate(zip(got, search["results"])):
            if prefixes:
                assert all(w["ids"][:len(prefixes[i])] == prefixes[i] for w in want)
            assert [h.ids for h in hyps] == [w["ids"] for w in want]
            assert [h.score for h in hyps] == pytest.approx([w["score"] for w in want], abs=1e-5)
            for w in want:
                assert ref["pad_token_id"] not in w["ids"]
    model64 = load_checkpoint(directory).double()
    for pair in ref["forced"]:
        logits = forced_logits(model, pair["source"], pair["target"])
        assert torch.allclose(logits, torch.tensor(pair["logits"]), atol=1e-5)
        # Well conditioned: float32 rounding moves logits far less than the 1e-4 the C++
        # end-to-end test allows, so that tolerance checks the runtime, not the weights.
        src = torch.tensor([pair["source"]])
        dec = torch.tensor([[model.config.decoder_start_token_id] + pair["target"]])
        with torch.no_grad():
            exact = model64(src, torch.ones_like(src), dec)[0]
        assert (logits.double() - exact).abs().max() < 2e-5
    vocab = json.loads((directory / "vocab.json").read_text())
    assert len(vocab) == ref["vocab_size"] == model.config.vocab_size
    assert vocab["<pad>"] == ref["pad_token_id"] and vocab["</s>"] == ref["eos_token_id"]
    assert ref["tokenizer"][0]["source_ids"][-1] == ref["eos_token_id"]


def test_unknown_name_is_an_error(tool, tmp_path, capsys):
    with pytest.raises(SystemExit):
        tool.main([str(tmp_path), "--only", "nope"])
    assert "unknown checkpoint 'nope'" in capsys.readouterr().err
