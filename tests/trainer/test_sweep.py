"""headwise-train sweep on a tiny model: the plan's names, top-K layouts from analysis scores,
layout specs that round-trip through keep_heads, a sweep that trains, scores and on a rerun
skips what is done, rank pruning, and the report's verdicts."""
import json
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))

from headwise_trainer import cli  # noqa: E402
from headwise_trainer.gates import head_layout  # noqa: E402
from headwise_trainer.import_model import load_start_model  # noqa: E402
from headwise_trainer.keep_heads import apply_spec, parse_spec  # noqa: E402
from headwise_trainer.sweep import SweepError, plan, read_analysis  # noqa: E402
from headwise_trainer.sweep_layout import layout_spec, top_k_layout  # noqa: E402
from headwise_trainer.sweep_goals import goals  # noqa: E402
from headwise_trainer.train import run_training  # noqa: E402
from test_train import corpus, train_args  # noqa: E402,F401

from conftest import THREADS, random_model, small_config  # noqa: E402

PRUNE_ARGS = ("--steps 3 --warmup 2 --max-tokens 120 --checkpoint-every 2 --log-every 2 "
              "--export-dtype f32 --lr 1e-3 --gate-lr 0.5")


def test_plan_names_and_order():
    assert plan(["enc", "all"], [0.04, 0, 0.015]) == [
        ("enc-0", "enc", 0), ("all-0", "all", 0), ("enc-0.015", "enc", 0.015),
        ("all-0.015", "all", 0.015), ("enc-0.04", "enc", 0.04), ("all-0.04", "all", 0.04)]
    with pytest.raises(SweepError, match="unknown setting"):
        plan(["dec"], [0.1])


def test_top_k_is_global_within_the_kinds_and_the_spec_round_trips(model):
    blocks = [(n, k) for n, k, _, _ in model.attention_blocks()]
    scores = {(n, h): (10.0 if (k == "encoder_self" and h == 2) else 0.1 * h) + (
        1.0 if n.endswith("layers.1.self_attn") and k == "encoder_self" else 0.0)
        for n, k in blocks for h in range(4 if k == "encoder_self" else 2)}
    layout = top_k_layout(model, scores, ("encoder_self",), 3)
    assert layout["model.encoder.layers.0.self_attn"] == [2]
    assert layout["model.encoder.layers.1.self_attn"] == [2, 3]
    assert layout["model.decoder.layers.0.self_attn"] == [0, 1]  # other kinds keep every head
    everything = top_k_layout(model, scores, ("encoder_self", "decoder_self", "decoder_cross"), 2)
    assert sum(len(v) for v in everything.values()) == 2
    for lay in (layout, everything):
        assert apply_spec(parse_spec(layout_spec(model, lay)), model) == lay
    with pytest.raises(ValueError, match="keep 9 heads"):
        top_k_layout(model, scores, ("encoder_self",), 9)


def analysis_for(model, score_of):
    blocks = []
    for name, kind, layer, attn in model.attention_blocks():
        heads = [{"head": h, "gate_open": True, "relevance": score_of(name, h),
                  "michel": -score_of(name, h), "confidence": 0.5, "roles": []}
                 for h in range(attn.num_heads)]
        blocks.append({"kind": kind, "layer": layer, "source_heads": attn.num_heads,
                       "heads": heads})
    return {"format": "headwise-head-analysis", "version": 1, "blocks": blocks}


def test_read_analysis_checks_the_contract(model, tmp_path):
    p = tmp_path / "a.json"
    a = analysis_for(model, lambda n, h: float(h))
    p.write_text(json.dumps(a))
    s = read_analysis(str(p), model)
    assert s["relevance"][("model.encoder.layers.1.self_attn", 3)] == 3.0
    assert s["michel"][("model.decoder.layers.0.encoder_attn", 1)] == -1.0
    a["blocks"][0]["heads"].pop()
    p.write_text(json.dumps(a))
    with pytest.raises(SweepError, match="expected 4 heads, found 3"):
        read_analysis(str(p), model)
    p.write_text(json.dumps({"format": "other", "version": 1, "blocks": []}))
    with pytest.raises(SweepError, match="headwise-head-analysis"):
        read_analysis(str(p), model)


def sweep(*argv):
    assert cli.main(["sweep", *argv]) == 0


def test_sweep_trains_scores_resumes_and_reports(corpus, tmp_path):
    base = tmp_path / "base"
    run_training(train_args(corpus, base, "--steps", "4", "--checkpoint-every", "4"),
                 log=lambda *_: None)
    root, data = tmp_path / "sweep", str(corpus / "data")
    common = ["--root", str(root), "--data", data, "--limit", "6", "--threads", str(THREADS)]
    spec = "enc.*=none; enc.1=2"
    sweep("runs", *common, "--from", str(base), "--lambdas", "0.5", "--settings", "enc",
          "--prune-args", PRUNE_ARGS, "--scratch", f"scratch={spec}", "--base-run", str(base),
          "--scratch-steps", "3", "--reference", f"base={base}")
    names = sorted(os.listdir(root))
    assert names == ["base", "enc-0.5", "scratch"]
    rec = json.loads((root / "enc-0.5" / "eval.json").read_text())
    assert rec["kind"] == "l0" and rec["lambda"] == 0.5 and rec["sentences"] == 6
    assert rec["run"]["steps"] == 3 and rec["run"]["args"]["encoder_only"] is True
    assert sum(rec["heads_kept"]["decoder_self"]) == 4  # only the encoder is gated
    scratch = json.loads((root / "scratch" / "eval.json").read_text())
    assert scratch["heads_kept"]["encoder_self"] == [0, 1]
    assert scratch["run"]["steps"] == 3 and scratch["run"]["args"]["head_layout"] == spec
    model = load_start_model(str(root / "scratch" / "run")).model
    assert apply_spec(parse_spec(spec), model) == head_layout(model)

    mtimes = {p: os.path.getmtime(p) for p in root.glob("*/eval.json")}
    sweep("runs", *common, "--from", str(base), "--lambdas", "0.5", "--settings", "enc",
          "--prune-args", PRUNE_ARGS, "--scratch", f"scratch={spec}", "--base-run", str(base),
          "--scratch-steps", "3", "--reference", f"base={base}")
    assert {p: os.path.getmtime(p) for p in root.glob("*/eval.json")} == mtimes  # all skipped
    sweep("runs", *common, "--lambdas", "0.2", "--settings", "all", "--no-train")
    assert not (root / "all-0.2").exists()

    m = load_start_model(str(base)).model
    (tmp_path / "analysis.json").write_text(json.dumps(analysis_for(m, lambda n, h: float(h))))
    sweep("rank", *common, "--analysis", str(tmp_path / "analysis.json"), "--model", str(base),
          "--scores", "relevance", "--enc-keep", "2", "--all-keep", "3")
    r = json.loads((root / "rank" / "relevance-all-3.json").read_text())
    assert r["heads_kept"]["kept"] == 3 and r["score"] == "relevance"
    assert json.loads((root / "rank" / "relevance-enc-2.json").read_text())["layout"][
        "model.encoder.layers.0.self_attn"] == [3]  # the two heads with score 3, layer 0 first

    md = tmp_path / "results.md"
    sweep("report", "--root", str(root), "--out-dir", str(tmp_path / "out"), "--md", str(md))
    text = md.read_text()
    assert "| enc-0.5 |" in text and "LRP relevance" in text and "from scratch" in text
    assert "all-0.015 (not run)" in text  # missing points are listed
    assert (tmp_path / "out" / "en-de-sweep.png").stat().st_size > 1000
    doc = json.loads((tmp_path / "out" / "en-de-sweep.json").read_text())
    assert len(doc["points"]) == 5


def point(name, setting, lam, enc, dec, cross, bleu, steps=250):
    return {"kind": "l0", "name": name, "setting": setting, "lambda": lam, "bleu": bleu,
            "run": {"steps": steps},
            "heads_kept": {"encoder_self": [enc], "decoder_self": [dec],
                           "decoder_cross": [cross]}}


def test_goal_verdicts_use_the_control_of_the_same_budget():
    pts = [point("all-0", "all", 0, 48, 24, 24, 25.0),
           point("enc-0.01", "enc", 0.01, 10, 24, 24, 24.6),
           point("all-0.04", "all", 0.04, 12, 6, 6, 23.9),
           point("all-0.02", "all", 0.02, 4, 8, 12, 24.5),
           point("all-0-s100", "all", 0, 48, 24, 24, 22.0, steps=100),
           point("all-0.02-s100", "all", 0.02, 4, 8, 12, 21.5, steps=100)]
    g = "\n".join(goals(pts))
    at250, at100 = g.split("After 100")
    assert "**met**: enc-0.01 keeps 10/48" in at250 and "-0.40" in at250
    assert "which also trains the decoder" in at250
    assert "<= 12/6/6 heads): **not met**, all-0.04" in at250
    assert "in total: **met**, all-0.02 keeps 4/8/12 at BLEU 24.5, -0.50" in at250
    assert "all-0.02-s100 keeps 4/8/12 at BLEU 21.5, -0.50 against the lambda-0 control " \
        "all-0-s100 (22.0)" in at100
    assert "1. 10 of 48 encoder heads at <= 0.5 BLEU below the full model: **open**" in at100
    pts[1]["bleu"] = 24.4
    assert "**not met**: enc-0.01" in "\n".join(goals(pts))
    pts.append(point("enc-0", "enc", 0, 48, 24, 24, 24.5))
    assert "-0.10 against the encoder-only lambda-0 control enc-0" in "\n".join(goals(pts))
