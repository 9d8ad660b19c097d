"""headwise-train sweep on a tiny model: the plan's names, top-K layouts from analysis scores,
layout specs that round-trip through keep_heads, a sweep that trains, scores and on a rerun
skips what is done, rank pruning, and the report's verdicts."""
import json
import os
import shutil
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))

from headwise_trainer import cli  # noqa: E402
from headwise_trainer.model.gates import head_layout  # noqa: E402
from headwise_trainer.model.import_model import load_start_model  # noqa: E402
from headwise_trainer.model.keep_heads import apply_spec, parse_spec  # noqa: E402
from headwise_trainer.sweep.runs import (SweepError, plan, point_lock, read_analysis,  # noqa: E402
                                         spec_of_layout)
from headwise_trainer.sweep.layout import layout_spec, top_k_layout  # noqa: E402
from headwise_trainer.sweep.claims import verdict_rows  # noqa: E402
from headwise_trainer.sweep.points import Comparisons, control_of  # noqa: E402
from headwise_trainer.sweep.pick import choose  # noqa: E402
from headwise_trainer.pruning.prune_log import read_log  # noqa: E402
from headwise_trainer.training.train import run_training  # noqa: E402
from test_train import corpus, train_args  # noqa: E402,F401

from conftest import THREADS, random_model, small_config  # noqa: E402

PRUNE_ARGS = ("--steps 3 --warmup 2 --max-tokens 120 --checkpoint-every 2 --log-every 2 "
              "--export-dtype f32 --lr 1e-3 --gate-lr 0.5")


def test_plan_names_and_order():
    assert plan(["enc", "all"], [0.04, 0, 0.015]) == [
        ("enc-0", "enc", 0, 1), ("all-0", "all", 0, 1), ("enc-0.015", "enc", 0.015, 1),
        ("all-0.015", "all", 0.015, 1), ("enc-0.04", "enc", 0.04, 1),
        ("all-0.04", "all", 0.04, 1)]
    assert plan(["enc"], [0.01, 0], "s100", seeds=[1, 2]) == [
        ("enc-0-s100", "enc", 0, 1), ("enc-0.01-s100", "enc", 0.01, 1),
        ("enc-0-s100-seed2", "enc", 0, 2), ("enc-0.01-s100-seed2", "enc", 0.01, 2)]
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
        assert apply_spec(parse_spec(spec_of_layout(lay)), model) == lay  # from a record
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


def test_sweep_trains_scores_resumes_and_reports(corpus, tmp_path, capsys):
    base = tmp_path / "base"
    run_training(train_args(corpus, base, "--steps", "4", "--checkpoint-every", "4"),
                 log=lambda *_: None)
    root, data = tmp_path / "sweep", str(corpus / "data")
    common = ["--root", str(root), "--data", data, "--limit", "6", "--threads", str(THREADS)]
    spec = "enc.*=none; enc.1=2"
    sweep("runs", *common, "--from", str(base), "--lambdas", "0.5", "--settings", "enc",
          "--prune-args", PRUNE_ARGS, "--scratch", f"scratch={spec}", "--base-run", str(base),
          "--scratch-steps", "3", "--reference", f"base={base}")
    names = sorted(n for n in os.listdir(root) if not n.startswith("."))
    assert names == ["base", "enc-0.5", "scratch"]
    rec = json.loads((root / "enc-0.5" / "eval.json").read_text())
    assert rec["kind"] == "l0" and rec["lambda"] == 0.5 and rec["sentences"] == 6
    assert rec["run"]["steps"] == 3 and rec["run"]["args"]["encoder_only"] is True
    assert sum(rec["heads_kept"]["decoder_self"]) == 4  # only the encoder is gated
    g = rec["gates"]
    assert g["rule"] == "hard" and g["settle_margin"] == 1.0
    assert g["unsettled"] == sum(abs(x) < 1.0 for v in g["log_alpha"].values() for x in v)
    assert rec["heads_source"] == {"encoder_self": 8, "decoder_self": 4, "decoder_cross": 4}
    scratch = json.loads((root / "scratch" / "eval.json").read_text())
    assert scratch["heads_kept"]["encoder_self"] == [0, 1]
    assert scratch["run"]["steps"] == 3 and scratch["run"]["args"]["head_layout"] == spec
    model = load_start_model(str(root / "scratch" / "run")).model
    assert apply_spec(parse_spec(spec), model) == head_layout(model)

    # The settle stage (scripts/pruning-study.sh settle): a copy of the point's last checkpoint
    # and log in another root resumes with 2 more steps whose loss adds the settle push.
    settled = tmp_path / "settled"
    (settled / "enc-0.5" / "run").mkdir(parents=True)
    for f in ("ckpt-3.pt", "prune_log.jsonl", "run.json"):
        shutil.copy(root / "enc-0.5" / "run" / f, settled / "enc-0.5" / "run" / f)
    sweep("runs", "--root", str(settled), "--data", data, "--limit", "6", "--threads",
          str(THREADS), "--from", str(base), "--lambdas", "0.5", "--settings", "enc",
          "--prune-args", PRUNE_ARGS, "--steps", "5", "--settle-steps", "2", "--settle-push",
          "0.5")
    rec2 = json.loads((settled / "enc-0.5" / "eval.json").read_text())
    assert rec2["run"]["steps"] == 5
    assert rec2["run"]["args"]["settle_steps"] == 2 and rec2["run"]["args"]["settle_push"] == 0.5
    steps_log = [r for r in read_log(settled / "enc-0.5" / "run") if r["event"] == "step"]
    assert [(r["step"], r.get("settling", False)) for r in steps_log][-2:] == [(4, True), (5, True)]
    assert [r["step"] for r in steps_log if not r.get("settling", False)] == \
        [r["step"] for r in read_log(root / "enc-0.5" / "run") if r["event"] == "step"]

    mtimes = {p: os.path.getmtime(p) for p in root.glob("*/eval.json")}
    sweep("runs", *common, "--from", str(base), "--lambdas", "0.5", "--settings", "enc",
          "--prune-args", PRUNE_ARGS, "--scratch", f"scratch={spec}", "--base-run", str(base),
          "--scratch-steps", "3", "--reference", f"base={base}")
    assert {p: os.path.getmtime(p) for p in root.glob("*/eval.json")} == mtimes  # all skipped
    sweep("runs", *common, "--lambdas", "0.2", "--settings", "all", "--no-train")
    assert not (root / "all-0.2").exists()
    # A point another process holds is skipped: nothing of it is written, the others go on.
    with point_lock(str(root), "enc-0.3") as held:
        assert held
        with point_lock(str(root), "enc-0.3") as again:
            assert not again  # flock: a second open file of the lock conflicts, as a process would
        sweep("runs", *common, "--from", str(base), "--lambdas", "0.3,0.5", "--settings", "enc",
              "--prune-args", PRUNE_ARGS)
        assert "enc-0.3: busy" in capsys.readouterr().out
        assert not (root / "enc-0.3").exists()
    assert {p: os.path.getmtime(p) for p in root.glob("*/eval.json")} == mtimes

    m = load_start_model(str(base)).model
    (tmp_path / "analysis.json").write_text(json.dumps(analysis_for(m, lambda n, h: float(h))))
    sweep("rank", *common, "--analysis", str(tmp_path / "analysis.json"), "--model", str(base),
          "--scores", "relevance,random", "--random-orders", "2", "--enc-keep", "2",
          "--all-keep", "3", "--searches", "greedy,beam4")
    r = json.loads((root / "rank" / "relevance-all-3.json").read_text())
    assert r["heads_kept"]["kept"] == 3 and r["score"] == "relevance"
    assert set(r["searches"]) == {"greedy", "beam4"} and len(r["segment_stats"]["beam4"]) == 6
    r1 = json.loads((root / "rank" / "random1-enc-2.json").read_text())
    r2 = json.loads((root / "rank" / "random2-enc-2.json").read_text())
    assert r1["score"] == r2["score"] == "random" and r1["layout"] != r2["layout"]
    assert json.loads((root / "rank" / "relevance-enc-2.json").read_text())["layout"][
        "model.encoder.layers.0.self_attn"] == [3]  # the two heads with score 3, layer 0 first

    md = tmp_path / "results.md"
    sweep("report", "--root", str(root), "--out-dir", str(tmp_path / "out"), "--md", str(md))
    text = md.read_text()
    assert "| enc-0.5 |" in text and "| relevance |" in text and "random (2 orders)" in text
    assert "from scratch" in text and "## Verdicts" in text
    assert (tmp_path / "out" / "en-de-sweep.png").stat().st_size > 1000
    doc = json.loads((tmp_path / "out" / "en-de-sweep.json").read_text())
    assert len(doc["points"]) == 3 + 2 + 4  # base, enc-0.5, scratch; relevance x 2, random x 4
    assert all("segment_stats" not in p for p in doc["points"])


def point(name, setting, lam, enc, dec, cross, bleu, steps=250, seed=1, kind="l0", **kw):
    return {"kind": kind, "name": name, "setting": setting, "lambda": lam, "bleu": bleu,
            "chrf": 50.0, "seed": seed, "run": {"steps": steps},
            "heads_kept": {"encoder_self": [enc], "decoder_self": [dec],
                           "decoder_cross": [cross]},
            "heads_source": {"encoder_self": 48, "decoder_self": 24, "decoder_cross": 24},
            "layout": {"enc": list(range(enc)), "dec": list(range(dec)),
                       "cross": list(range(cross))}, **kw}


def test_controls_same_budget_setting_and_seed():
    pts = [point("all-0", "all", 0, 48, 24, 24, 25.0),
           point("all-0-seed2", "all", 0, 48, 24, 24, 25.2, seed=2),
           point("enc-0.01", "enc", 0.01, 10, 24, 24, 24.6),
           point("all-0.04-seed2", "all", 0.04, 12, 6, 6, 23.9, seed=2),
           point("all-0.04-seed3", "all", 0.04, 12, 6, 6, 23.9, seed=3),
           point("all-0.02-s100", "all", 0.02, 4, 8, 12, 21.5, steps=100),
           point("all-0-s100", "all", 0, 48, 24, 24, 22.0, steps=100)]
    by = {p["name"]: p for p in pts}
    assert control_of(pts, by["enc-0.01"])["name"] == "all-0"  # no encoder-only control
    assert control_of(pts, by["all-0.04-seed2"])["name"] == "all-0-seed2"
    assert control_of(pts, by["all-0.04-seed3"])["name"] == "all-0"  # seed 1's
    assert control_of(pts, by["all-0.02-s100"])["name"] == "all-0-s100"
    pts.append(point("enc-0", "enc", 0, 48, 24, 24, 24.5))
    assert control_of(pts, by["enc-0.01"])["name"] == "enc-0"


def test_verdicts_from_records_with_bootstrap_intervals():
    # Segment statistics of 4 sentences: the control perfect, the pruned point one word off
    # in one sentence, so the difference and its interval are negative.
    perfect = [[4, 4, 4, 3, 2, 1, 4, 3, 2, 1]] * 4
    worse = [[4, 4, 3, 2, 1, 0, 4, 3, 2, 1]] + perfect[1:]
    seg = lambda s: {"greedy": s}  # noqa: E731
    pts = [point("enc-0", "enc", 0, 48, 24, 24, 25.0, segment_stats=seg(perfect)),
           point("enc-0.01", "enc", 0.01, 10, 24, 24, 24.6, segment_stats=seg(worse),
                 gates={"unsettled": 2, "settle_margin": 1.0}),
           point("all-0", "all", 0, 48, 24, 24, 25.0, segment_stats=seg(perfect)),
           point("all-0.04", "all", 0.04, 12, 6, 6, 23.0, segment_stats=seg(worse)),
           point("all-0.08", "all", 0.08, 6, 4, 8, 22.0)]
    rows = {r[0].split(":")[0]: r for r in verdict_rows(pts, Comparisons(), "greedy", None)}
    enc = rows["Encoder self-attention"]
    diff = Comparisons().diff(pts[1], pts[0], "greedy")
    assert diff["delta_high"] <= 0 and diff["delta_low"] < 0
    want = "met" if diff["delta"] >= -0.5 else "not met"
    assert enc[2] == want and "enc-0.01: 10/48 encoder heads" in enc[3]
    assert "2 gate(s) not settled" in enc[3] and f"{diff['delta']:+.2f} [" in enc[3]
    quarter = rows["All three types"]
    assert quarter[2] in ("met", "not met") and "all-0.08" in quarter[3] or "all-0.04" in quarter[3]
    order = rows["Encoder self-attention heads go first, decoder-encoder heads resist most (met"]
    # all-0.04 keeps 25%/25%/25%: encoder self is not below the others' minimum? it is equal ->
    # met needs enc <= min(dec, cross) and cross >= max(enc, dec): 25% each holds.
    assert order[2] == "met" and "all-0.04 keeps 25%/25%/25%" in order[3]
    pts[-1]["heads_kept"]["encoder_self"] = [20]  # 42% encoder, 17% decoder self: not met
    rows = {r[0].split(":")[0]: r for r in verdict_rows(pts, Comparisons(), "greedy", None)}
    assert rows["Encoder self-attention heads go first, decoder-encoder heads resist most "
                "(met"][2] == "not met"
    assert rows["Pruning a trained model beats training the same layout from scratch (met"][2] \
        == "not measurable"
    assert rows["A head ranking is better than chance (met"][2] == "not measurable"
    sinks = [r for r in verdict_rows(pts, Comparisons(), "greedy", None) if "Sink" in r[0]][0]
    assert sinks[2] == "not measurable"


def test_claims_rest_on_the_mean_of_the_seeds_when_they_have_run():
    # 4 sentences; the control perfect; seed 1's point one word off in one sentence (within
    # 0.5 BLEU? no: far off on 4 sentences), seeds 2 and 3 perfect: the mean over the seeds
    # is a third of seed 1's difference, and every seed's difference is listed.
    perfect = [[4, 4, 4, 3, 2, 1, 4, 3, 2, 1]] * 4
    worse = [[4, 4, 3, 2, 1, 0, 4, 3, 2, 1]] + perfect[1:]
    seg = lambda s: {"greedy": s}  # noqa: E731
    pts = [point("enc-0", "enc", 0, 48, 24, 24, 100.0, segment_stats=seg(perfect)),
           point("enc-0.01", "enc", 0.01, 10, 24, 24, 90.0, segment_stats=seg(worse))]
    single = {r[0].split(":")[0]: r for r in verdict_rows(pts, Comparisons(), "greedy", None)}
    d1 = Comparisons().diff(pts[1], pts[0], "greedy")["delta"]
    assert "enc-0.01: 10/48 encoder heads" in single["Encoder self-attention"][3]
    for s in (2, 3):
        pts.append(point(f"enc-0-seed{s}", "enc", 0, 48, 24, 24, 100.0, seed=s,
                         segment_stats=seg(perfect)))
        pts.append(point(f"enc-0.01-seed{s}", "enc", 0.01, 9, 24, 24, 100.0, seed=s,
                         segment_stats=seg(perfect), gates={"unsettled": 1}))
    row = {r[0].split(":")[0]: r for r in verdict_rows(pts, Comparisons(), "greedy", None)}
    enc = row["Encoder self-attention"]
    assert "enc-0.01 over seeds 1, 2, 3: 10, 9, 9 of 48 encoder heads" in enc[3]
    assert f"per seed {d1:+.2f}, +0.00, +0.00" in enc[3] and "2 gate(s) not settled" in enc[3]
    mean = d1 / 3
    assert f"{mean:+.2f} [" in enc[3] and enc[2] == ("met" if mean >= -0.5 else "not met")
    # A seed whose point keeps more heads than the claim allows makes it "not met".
    pts[-1]["heads_kept"]["encoder_self"] = [11]
    enc = {r[0].split(":")[0]: r for r in
           verdict_rows(pts, Comparisons(), "greedy", None)}["Encoder self-attention"]
    assert enc[2] == "not met" and "enc-0.01-seed3 keep more heads" in enc[3]
    # A seed without a control of its own seed is left out of the mean (not compared with
    # seed 1's control).
    pts = [p for p in pts if p["name"] != "enc-0-seed3"]
    pts[-1]["heads_kept"]["encoder_self"] = [9]
    enc = {r[0].split(":")[0]: r for r in
           verdict_rows(pts, Comparisons(), "greedy", None)}["Encoder self-attention"]
    assert "over seeds 1, 2:" in enc[3]


def test_pick_rules_choose_from_the_records(tmp_path, capsys):
    pts = [point("enc-0", "enc", 0, 48, 24, 24, 25.0),
           point("enc-0.005", "enc", 0.005, 10, 24, 24, 24.7),
           point("enc-0.02", "enc", 0.02, 4, 24, 24, 24.0),
           point("enc-0.001", "enc", 0.001, 20, 24, 24, 24.9),  # > 10 heads: not 'enc'
           point("all-0", "all", 0, 48, 24, 24, 25.0),
           point("all-0.01", "all", 0.01, 10, 20, 20, 24.2),   # 50 heads, -0.8
           point("all-0.04", "all", 0.04, 5, 8, 10, 23.5),     # 23 heads, -1.5: not 'ship'
           point("all-0.02", "all", 0.02, 6, 10, 12, 24.0),    # 28 heads, -1.0: 'ship'
           point("all-0.03", "all", 0.03, 6, 10, 12, 24.1),    # 28 heads, -0.9: the tie's winner
           point("all-0.05-seed2", "all", 0.05, 2, 2, 2, 24.9, seed=2),  # seed 2: never shipped
           point("all-0-seed2", "all", 0, 48, 24, 24, 25.0, seed=2)]
    assert choose(pts, "enc", "greedy")[0]["name"] == "enc-0.005"
    assert choose(pts, "all", "greedy")[0]["name"] == "all-0.04"  # the only one <= 24 of 96
    best, control, diff = choose(pts, "ship", "greedy")
    assert best["name"] == "all-0.03" and control["name"] == "all-0"
    assert abs(diff["delta"] + 0.9) < 1e-9
    assert choose([p for p in pts if p["setting"] == "enc" and p["lambda"]], "enc", "greedy") \
        == (None, None, None)  # no control: no pick
    # The command reads eval.json records under the root; none for a rule: exit status 1.
    for r in pts:
        (tmp_path / r["name"]).mkdir()
        (tmp_path / r["name"] / "eval.json").write_text(json.dumps(r))
    assert cli.main(["sweep", "pick", "ship", "--root", str(tmp_path), "--field", "name"]) == 0
    assert capsys.readouterr().out.strip() == "all-0.03"
    assert cli.main(["sweep", "pick", "enc", "--root", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["heads_kept"] == [10, 24, 24]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["sweep", "pick", "all", "--root", str(empty)]) == 1
    assert "no point" in capsys.readouterr().err


def test_rank_against_random_and_sinks_against_closed_heads():
    def rank(name, score, k, b):
        return point(name, "enc", None, k, 24, 24, b, kind="rank", score=score, keep=k)
    pts = [point("base", "all", None, 48, 24, 24, 25.0, kind="reference"),
           rank("relevance-enc-10", "relevance", 10, 20.0),
           rank("michel-enc-10", "michel", 10, 15.0)]
    pts += [rank(f"random{i}-enc-10", "random", 10, 16.0 + i) for i in range(1, 4)]
    rows = {r[0].split(" (")[0]: r for r in verdict_rows(pts, Comparisons(), "greedy", None)}
    row = rows["A head ranking is better than chance"]
    assert row[2] == "not met"
    assert "relevance above all random orders at 1 of 1" in row[3]
    assert "michel above all random orders at 0 of 1" in row[3]
    # Above every random order, but 3 of the 5 orders the claim asks for: not measurable yet,
    # saying how many there are; with 5 (and no ranking below one): met.
    above = [p for p in pts if p["name"] != "michel-enc-10"]
    row = {r[0].split(" (")[0]: r for r in verdict_rows(above, Comparisons(), "greedy", None)}[
        "A head ranking is better than chance"]
    assert row[2] == "not measurable" and "enc-10: 3" in row[3], row
    above += [rank(f"random{i}-enc-10", "random", 10, 10.0 + i) for i in (4, 5)]
    row = {r[0].split(" (")[0]: r for r in verdict_rows(above, Comparisons(), "greedy", None)}[
        "A head ranking is better than chance"]
    assert row[2] == "met" and "relevance above all random orders at 1 of 1" in row[3], row
    # Sinks: block "enc" has 4 heads; the L0 point closed heads 2 and 3 (sink 0.8, 0.6) and kept
    # 0 and 1 (sink 0.1, 0.3).
    analysis = {"blocks": [{"name": "enc", "kind": "encoder_self", "heads": [
        {"head": h, "sink": s, "relevance": 0.25} for h, s in enumerate([0.1, 0.3, 0.8, 0.6])]}]}
    l0 = point("enc-0.01", "enc", 0.01, 2, 24, 24, 24.0,
               gates={"log_alpha": {"enc": [2.0, 1.5, -1.0, -2.0]}})
    l0["layout"]["enc"] = [0, 1]
    l0["heads_source"]["encoder_self"] = 4
    sinks = [r for r in verdict_rows([l0], Comparisons(), "greedy", analysis)
             if "Sink" in r[0]][0]
    # The two highest of four closed: the largest difference of the 6 labellings, p = 1/6, not
    # evidence.
    assert sinks[2] == "not met", sinks
    assert "2 closed heads mean sink share 0.700, 2 kept 0.200 (permutation p = 0.167)" in sinks[3]
    # Eight heads, the four highest closed: p = 1/70: met.
    analysis["blocks"][0]["heads"] = [{"head": h, "sink": s, "relevance": 0.125} for h, s in
                                      enumerate([0.1, 0.3, 0.8, 0.6, 0.2, 0.9, 0.7, 0.05])]
    l0["gates"]["log_alpha"]["enc"] = [2.0, 1.5, -1.0, -2.0, 1.0, -3.0, -1.5, 2.5]
    l0["layout"]["enc"] = [0, 1, 4, 7]
    l0["heads_source"]["encoder_self"] = 8
    sinks = [r for r in verdict_rows([l0], Comparisons(), "greedy", analysis)
             if "Sink" in r[0]][0]
    assert sinks[2] == "met", sinks
    assert "4 closed heads mean sink share 0.750, 4 kept 0.163 (permutation p = 0.0143)" in sinks[3]


def test_sink_permutation_p_exact_and_sampled():
    from headwise_trainer.sweep import claims
    assert claims.sink_permutation_p([0.5, 0.5], [0.5, 0.5]) == 1.0  # ties count: no evidence
    assert claims.sink_permutation_p([0.1], [0.2, 0.3]) == 1.0        # the lowest closed
    assert abs(claims.sink_permutation_p([0.3], [0.1, 0.2]) - 1 / 3) < 1e-12
    # 40 of 48 (C(48, 40) labellings: sampled, seeded): the same answer twice; with the
    # 40 highest closed far from chance, with interleaved shares near 0.5.
    high = [1.0 + i for i in range(40)]
    low = [0.01 * i for i in range(8)]
    p = claims.sink_permutation_p(high, low)
    assert p == claims.sink_permutation_p(high, low) and p < 1e-3
    mixed = claims.sink_permutation_p([i / 48 for i in range(0, 48, 6)],
                                      [i / 48 for i in range(48) if i % 6])
    assert 0.2 < mixed < 0.8


def test_gates_sorts_unsettled_gates_by_their_last_move(tmp_path, capsys):
    from headwise_trainer.model import run_state
    from headwise_trainer.sweep.gate_paths import classify

    assert classify(0.3, -0.2, 0.1) == "crossed"
    assert classify(-0.5, -0.55, 0.1) == "held"
    assert classify(0.4, 0.8, 0.1) == "away"
    assert classify(-0.9, -0.4, 0.1) == "toward"

    def save(point, step, enc, dec, margin=1.0):
        run = tmp_path / point / "run"
        run.mkdir(parents=True, exist_ok=True)
        torch.save({"format": run_state.FORMAT, "step": step, "epoch": 0, "batch_idx": 0,
                    "optimizer": {}, "rng": {}, "config": {},
                    "prune_args": {"settle_margin": margin},
                    "model": {"model.encoder.layers.0.self_attn.head_gate.log_alpha": torch.tensor(enc),
                              "model.decoder.layers.0.self_attn.head_gate.log_alpha": torch.tensor(dec),
                              "model.encoder.layers.0.fc1.weight": torch.zeros(2, 2)}},
                   run / f"ckpt-{step}.pt")

    # Heads: settled (3.0, -2.5), crossed, held, away, toward.
    save("enc-0.01", 750, [3.0, 0.3, -0.5], [-2.5, 0.4, -0.9])
    save("enc-0.01", 1000, [3.1, -0.2, -0.55], [-2.6, 0.8, -0.4])
    save("enc-0.02", 1000, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5])  # one checkpoint: not classified
    out = cli.main(["sweep", "gates", "--root", str(tmp_path), "--json", str(tmp_path / "g.json")])
    assert out == 0
    text = capsys.readouterr().out
    assert "enc-0.01: steps 750 -> 1000, 4 unsettled (|log_alpha| < 1): 1 crossed, 1 held, " \
           "1 away, 1 toward" in text
    assert "enc-0.02: fewer than two kept checkpoints" in text
    doc = json.loads((tmp_path / "g.json").read_text())
    assert doc["totals"] == {"crossed": 1, "held": 1, "away": 1, "toward": 1}
    assert doc["points"]["enc-0.02"] is None
    crossed = [g for g in doc["points"]["enc-0.01"]["gates"] if g["class"] == "crossed"]
    assert crossed == [{"block": "model.encoder.layers.0.self_attn", "head": 1, "from": 0.3,
                        "to": -0.2, "class": "crossed"}]


def test_settle_options_reach_prune():
    from argparse import Namespace
    from headwise_trainer.sweep.runs import settle_argv
    assert settle_argv(Namespace(settle_steps=0, settle_push=None)) == []
    assert settle_argv(Namespace()) == []
    assert settle_argv(Namespace(settle_steps=250, settle_push=None)) == ["--settle-steps", "250"]
    assert settle_argv(Namespace(settle_steps=250, settle_push=0.05)) == \
        ["--settle-steps", "250", "--settle-push", "0.05"]
    args = cli.build_parser().parse_args(["sweep", "runs", "--root", "r", "--data", "d",
                                          "--settle-steps", "250", "--settle-push", "0.1"])
    assert settle_argv(args) == ["--settle-steps", "250", "--settle-push", "0.1"]


def test_a_pinned_precision_reaches_prune_and_the_scratch_control():
    from headwise_trainer.sweep.runs import precision_argv, scratch_argv
    parse = cli.build_parser().parse_args
    assert precision_argv(parse(["sweep", "runs", "--root", "r", "--data", "d"])) == []
    args = parse(["sweep", "runs", "--root", "r", "--data", "d", "--precision", "fp32"])
    assert precision_argv(args) == ["--precision", "fp32"]
    # the base run's recorded bf16 is overridden: train's parser keeps the last --precision
    argv = scratch_argv({"precision": "bf16", "lr": 1e-3}, "d", "v", "out", "enc.0=0", 10, 1,
                        "cpu") + precision_argv(args)
    assert cli.build_parser().parse_args(argv).precision == "fp32"
