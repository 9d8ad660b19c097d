"""The trainer and the benchmarks on the module: `headwise-train evaluate --hwm` (alone, and
with --model for the runtime-vs-PyTorch difference), the trainer importing and failing
clearly without the module, bench/bleu.py and bench/compare_pytorch.py giving what the CLI
gave."""
import json
import os
import subprocess
import sys

import pytest

from conftest import CONVERT, PYTHON, SHIPPED, SOURCE, TRANSLATE

TRAINER = os.path.join(SOURCE, "trainer")
CHECKPOINT = os.path.join(SOURCE, "models", "en-de", "checkpoint")
sys.path.insert(0, TRAINER)
from headwise_trainer.evaluation.metrics import corpus_bleu  # noqa: E402

# Runs headwise-train with `import headwise` made impossible (as if the module was never built).
WITHOUT_MODULE = """
import sys
sys.modules["headwise"] = None
sys.path.insert(0, sys.argv[1])
sys.argv = ["headwise-train"] + sys.argv[2:]
from headwise_trainer.cli import main
sys.exit(main())
"""


def train(*args, without_module=False, check=True):
    if without_module:
        cmd = [PYTHON, "-c", WITHOUT_MODULE, TRAINER, *args]
    else:
        cmd = [PYTHON, os.path.join(TRAINER, "headwise-train"), *args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check:
        assert r.returncode == 0, f"{' '.join(args)}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


def test_the_trainer_works_without_the_module(corpus, tmp_path):
    r = train("evaluate", "--help", without_module=True)
    assert "--hwm" in r.stdout
    r = train("evaluate", "--hwm", SHIPPED, "--data", str(corpus), "--limit", "3",
              without_module=True, check=False)
    assert r.returncode == 1
    assert "headwise Python module" in r.stderr and "cmake --build --preset default" in r.stderr
    r = train("evaluate", "--data", str(corpus), check=False)
    assert r.returncode == 1 and "found neither" in r.stderr


def test_evaluate_hwm(corpus, tmp_path):
    hyps = tmp_path / "hyps.txt"
    out = tmp_path / "hwm.json"
    train("evaluate", "--hwm", SHIPPED, "--data", str(corpus), "--split", "test", "--limit", "40",
          "--threads", "1", "--hyps", str(hyps), "--json", str(out), "--vocab", CHECKPOINT)
    result = json.loads(out.read_text())
    assert result["sentences"] == 40 and result["failed_lines"] == 0
    assert result["model"].startswith(SHIPPED) and "int8" in result["model"]
    assert result["source_ids_as_trainer"].endswith("/40")
    lines = hyps.read_text(encoding="utf-8").split("\n")[:-1]
    with open(corpus / "test.de", encoding="utf-8") as f:
        refs = f.read().split("\n")[:40]
    assert len(lines) == 40 and sum(bool(l) for l in lines) > 30
    assert result["bleu"] == round(corpus_bleu(lines, refs).score, 2)  # the trainer's BLEU code
    buckets = result["by_source_length"]  # as the PyTorch evaluation: each sentence in one bucket
    assert buckets and sum(b["sentences"] for b in buckets.values()) == 40
    # The trainer's source ids instead of the runtime's tokenizer: the same sentences.
    ids = json.loads(train("evaluate", "--hwm", SHIPPED, "--data", str(corpus), "--limit", "40",
                           "--threads", "1", "--vocab", CHECKPOINT, "--hwm-input", "ids")
                     .stdout)
    assert ids["input"] == "ids" and ids["sentences"] == 40


def test_evaluate_runtime_against_pytorch_is_one_command(corpus, tmp_path):
    both = tmp_path / "both.json"
    train("evaluate", "--model", CHECKPOINT, "--hwm", SHIPPED, "--data", str(corpus),
          "--limit", "30", "--threads", "1", "--json", str(both))
    r = json.loads(both.read_text())
    pt, hw, diff = r["pytorch"], r["headwise"], r["difference"]
    assert diff["bleu"] == round(hw["bleu"] - pt["bleu"], 2)
    assert diff["chrf"] == round(hw["chrf"] - pt["chrf"], 2)
    assert diff["identical_lines"].endswith("/30")
    alone = json.loads(train("evaluate", "--model", CHECKPOINT, "--data", str(corpus),
                             "--limit", "30", "--threads", "1").stdout)
    assert set(hw["by_source_length"]) == set(pt["by_source_length"])
    for key in ("bleu", "chrf", "sentences", "search", "gates", "heads_kept", "by_source_length"):
        assert pt[key] == alone[key], key  # --hwm leaves the PyTorch evaluation as it was


def cli_lines(model, lines, *args):
    r = subprocess.run([TRANSLATE, "-m", model, *args], input="\n".join(lines) + "\n",
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.split("\n")[:len(lines)]


def test_bench_bleu_gives_the_clis_translations(corpus, tmp_path):
    out = tmp_path / "bleu"
    r = subprocess.run([PYTHON, os.path.join(SOURCE, "bench", "bleu.py"), CHECKPOINT,
                        "--convert", CONVERT, "--translate", TRANSLATE, "--src",
                        str(corpus / "test.en"), "--ref", str(corpus / "test.de"),
                        "--formats", "fp32,int8", "--limit", "40", "--out", str(out),
                        "--json", str(tmp_path / "bleu.json")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "| fp32 |" in r.stdout and "| int8 |" in r.stdout and "int8 within 0.3" in r.stdout
    with open(corpus / "test.en", encoding="utf-8") as f:
        src = f.read().split("\n")[:40]
    for fmt in ("fp32", "int8"):
        hyps = (out / f"hyp.{fmt}.txt").read_text(encoding="utf-8").split("\n")[:40]
        assert hyps == cli_lines(str(out / f"model.{fmt}.hwm"), src, "--batch", "16")


def test_compare_pytorch_runs_headwise_through_the_module(corpus, tmp_path):
    model = tmp_path / "fp32.hwm"
    subprocess.run([CONVERT, CHECKPOINT, "-o", str(model)], check=True, capture_output=True)
    out = tmp_path / "compare.json"
    r = subprocess.run([PYTHON, os.path.join(SOURCE, "bench", "compare_pytorch.py"), CHECKPOINT,
                        "--translate", TRANSLATE, "--model", f"fp32={model}", "--model",
                        f"int8={SHIPPED}", "--src", str(corpus / "test.en"), "--limit", "4",
                        "--json", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "| headwise fp32 |" in r.stdout and "| pytorch fp32 |" in r.stdout
    results = {x["engine"]: x for x in json.loads(out.read_text())["results"]}
    with open(corpus / "test.en", encoding="utf-8") as f:
        src = [l for l in f.read().split("\n") if l.strip()][:4]
    for label, path in (("fp32", str(model)), ("int8", SHIPPED)):
        hw = results[f"headwise {label}"]
        assert hw["texts"] == cli_lines(path, src, "--batch", "1", "--max-len", "128")
        assert hw["cpu_ms"] > 0 and hw["rss"] > 0
