"""`headwise-train model-card`: the card's tables come from the records and nothing else; the
hand-written text around the markers survives; missing markers and broken records are errors."""
import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "trainer"))

from headwise_trainer.evaluation import model_card  # noqa: E402

TRAIN = os.path.join(os.path.dirname(__file__), "..", "..", "trainer", "headwise-train")


def _eval(bleu, chrf, buckets, model):
    return {"model": model, "split": "test", "sentences": sum(n for n, _ in buckets.values()),
            "search": "greedy", "bleu": bleu, "chrf": chrf,
            "bleu_detail": f"BLEU = {bleu:.2f} 1/2/3/4 (BP = 1.000)",
            "by_source_length": {k: {"sentences": n, "bleu": b, "chrf": 0.0}
                                 for k, (n, b) in buckets.items()}}


def _write(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f)


@pytest.fixture
def models(tmp_path):
    d = tmp_path / "models"
    _write(str(d / "eval" / "old-base-new-test-greedy.json"),
           _eval(15.01, 27.9, {"1-5": (3, 23.79), "6-15": (2, 14.26), "16-40": (1, 1.99)}, "old"))
    _write(str(d / "eval" / "new-base-test-greedy.json"),
           _eval(31.5, 55.2, {"1-5": (3, 40.0), "6-15": (2, 29.5), "16-40": (1, 17.25)}, "new"))
    _write(str(d / "eval" / "new-base-test-beam4.json"),
           _eval(32.25, 56.0, {"1-5": (3, 41.0), "6-15": (2, 30.0), "16-40": (1, 18.0)}, "new"))
    variant = {"variant": "gated", "bleu": 30.75, "chrf": 54.0,
               "by_source_length": {"1-5": {"sentences": 3, "bleu": 39.5}},
               "heads_kept": {"encoder_self": [1, 0, 2], "decoder_self": [3, 4],
                              "decoder_cross": [5, 6], "kept": 21, "total": 56}}
    _write(str(d / "pruning-eval.json"),
           {"sentences": 6, "variants": [variant],
            "pruning_run": {"from": "base-checkpoint", "lambda": 0.015, "steps": 800}})
    _write(str(d / "training" / "history.json"),
           {"history": [{"step": 1000, "epoch": 0, "dev_nll": 4.07, "dev_bleu": 6.67,
                         "dev_chrf": 24.9, "dev_sentences": 800, "dev_loss_sentences": 2000},
                        {"step": 2000, "epoch": 1, "dev_nll": 2.52, "dev_bleu": 17.15,
                         "dev_chrf": 46.4, "dev_sentences": 800, "dev_loss_sentences": 2000}],
            "best": {"step": 2000, "dev_bleu": 17.15}, "stopped_early": False})
    _write(str(d / "training" / "run.json"), {"train_args": {"lr": 0.001, "nproc": 2}})
    _write(str(d / "training" / "export.json"),
           {"exported": "RUN: mean of steps 1500, 1750, 2000", "dtype": "F16"})
    _write(str(d / "demo.json"),
           {"sources": ["Open the file."], "models": ["model.hwm"], "search": "greedy",
            "translations": {"model.hwm": ["Öffnen Sie die Datei."]}})
    sl_run = {"format": "int8", "beam": 4, "bleu_on": 41.8, "bleu_off": 41.93, "identical": 5,
              "union_mean_line": 1100.7, "union_mean_batch": 3462.3, "vocab_size": 8000}
    _write(str(d / "eval" / "shortlist-base.hwm.json"),
           {"split": "test", "lines": 6, "batch": 16, "runs": [sl_run],
            "shortlist_header": {"description": "top 100 per source piece by dice"}})
    _write(str(d / "eval" / "shortlist-build.json"),
           {"coverage": {"dev": {"lines": 2560, "tokens_inside": 0.98048, "lines_inside": 0.8012}}})
    (d / "README.md").write_text("# Card\n\nWritten by hand.\n\n" + model_card.BEGIN + "\nold\n"
                                 + model_card.END + "\n\n## Limitations\nby hand too\n",
                                 encoding="utf-8")
    return d


def test_card_tables_come_from_the_records(models):
    text = model_card.write_card(str(models), log=lambda *_: None)
    assert text.startswith("# Card\n\nWritten by hand.\n")
    assert text.endswith("## Limitations\nby hand too\n")
    assert "\nold\n" not in text
    gen = text.split(model_card.BEGIN)[1].split(model_card.END)[0]
    # The newest base first, the old one last, greedy before beam 4.
    new_row = gen.index("| `new-base` | greedy | 6 | 31.50 | 55.20 | 40.00 | 29.50 | 17.25 | - |")
    old_row = gen.index("| `old-base-new` | greedy | 6 | 15.01 | 27.90 | 23.79 | 14.26 | 1.99 | - |")
    beam_row = gen.index("| `new-base` | beam 4 | 6 | 32.25 | 56.00 |")
    assert new_row < old_row < beam_row
    # Differences are computed, per bucket too.
    assert "overall +16.49, 1-5 words +16.21, 6-15 words +15.24, 16-40 words +15.26" in gen
    assert "| gated | greedy | 21 / 56 | 30.75 | 54.00 | 39.50 | - | - | - |" in gen
    assert "| encoder self | 1 | 0 | 2 | 3 |" in gen
    assert "| decoder self | 3 | 4 |  | 7 |" in gen
    assert "lambda `0.015`" in gen and "steps `800`" in gen
    assert "| Open the file. | Öffnen Sie die Datei. |" in gen
    assert ("| `base.hwm` | int8 | beam 4 | 6 | 41.80 | 41.93 | -0.13 | 5 | 1101 | 3462 of 8,000 |"
            in gen)
    assert "Shortlist: top 100 per source piece by dice." in gen
    assert "allows 98.05% of the reference pieces, every piece of 80.1% of the 2,560" in gen
    assert "| 2,000 | 1 | 2.520 | 17.15 | 46.40 |" in gen
    assert "Best dev BLEU 17.15 at step 2,000; stopped early: no." in gen
    assert "mean of steps 1500, 1750, 2000" in gen
    # Regenerating from the same records gives the same card.
    assert model_card.write_card(str(models), log=lambda *_: None) == text


def test_card_without_some_records_leaves_their_sections_out(models):
    os.remove(models / "pruning-eval.json")
    os.remove(models / "demo.json")
    os.remove(models / "eval" / "shortlist-base.hwm.json")
    gen = model_card.generated_section(str(models))
    assert "pruned model" not in gen and "Demo" not in gen and "shortlist" not in gen
    assert "`new-base` | greedy" in gen


def test_card_errors(models, tmp_path):
    (models / "README.md").write_text("# no markers\n", encoding="utf-8")
    with pytest.raises(model_card.ModelCardError, match="expected the markers"):
        model_card.write_card(str(models))
    (models / "eval" / "new-base-test-greedy.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(model_card.ModelCardError, match="cannot read the record"):
        model_card.generated_section(str(models))
    with pytest.raises(model_card.ModelCardError, match="no model card"):
        model_card.write_card(str(tmp_path / "nowhere"))
    _write(str(models / "eval" / "shortlist-model.hwm.json"), {"split": "test", "runs": [{}]})
    with pytest.raises(model_card.ModelCardError, match="shortlist-model.hwm.json: not a bench"):
        model_card.shortlist_section(str(models))


def test_cli_reports_a_demo_without_sentences(models):
    r = subprocess.run([sys.executable, TRAIN, "model-card", "--models", str(models),
                        "--demo", "model.hwm"], capture_output=True, text=True)
    assert r.returncode != 0
    assert "--demo needs --sentence or --sentences-file" in r.stderr


def test_card_refuses_bases_scored_on_different_sentences(models):
    rec = _eval(31.5, 55.2, {"1-5": (2, 40.0)}, "new")
    _write(str(models / "eval" / "new-base-test-greedy.json"), rec)
    with pytest.raises(model_card.ModelCardError, match="expected the same evaluation"):
        model_card.generated_section(str(models))


def test_card_names_a_warm_start(models):
    _write(str(models / "training" / "run.json"),
           {"train_args": {"lr": 0.00044, "lr_schedule": "linear", "decay_steps": 1200,
                           "min_lr": 0.0, "init_from": "START", "init_sha256": "ab" * 32}})
    gen = model_card.generated_section(str(models))
    assert "lr_schedule `linear`" in gen and "decay_steps `1200`" in gen
    assert "Warm start (`--init-from`): the weights of `START` (sha256 `abababababababab...`)" in gen
