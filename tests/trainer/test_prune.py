"""L0 head pruning: gradients reach log_alpha, a large lambda closes heads and lambda 0 keeps
them, --encoder-only leaves the decoder untouched, the exported gated checkpoint round-trips,
resume is bit-identical, the --keep-heads spec and prune-eval variants."""
import json
import math
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "trainer"))

from headwise_trainer import cli  # noqa: E402
from headwise_trainer.model import run_state, safetensors_io  # noqa: E402
from headwise_trainer.model.checkpoint import (export_checkpoint, load_checkpoint,  # noqa: E402
                                              read_vocab)
from headwise_trainer.model.config import MarianConfig  # noqa: E402
from headwise_trainer.data.batching import encode_split  # noqa: E402
from headwise_trainer.evaluation.evaluate import translate_ids  # noqa: E402
from headwise_trainer.model.gates import attach_gates, gates, head_layout, strip_heads  # noqa: E402
from headwise_trainer.model.keep_heads import KeepHeadsError, apply_spec, parse_spec  # noqa: E402
from headwise_trainer.model.marian import MarianMTModel  # noqa: E402
from headwise_trainer.pruning.prune import PruneError, penalty, run_prune, settle_push  # noqa: E402
from headwise_trainer.pruning.prune_eval import pruning_run_facts, run_prune_eval  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from conftest import THREADS  # noqa: E402
from word_corpus import build_word_corpus  # noqa: E402
from headwise_trainer.pruning.prune_log import read_log  # noqa: E402
from headwise_trainer.data.spm_vocab import Vocab  # noqa: E402
from headwise_trainer.training.losses import smoothed_loss  # noqa: E402


EN = ["file", "open", "close", "save", "print", "error", "user", "group", "name", "size"]
DE = ["Datei", "öffnen", "schließen", "speichern", "drucken", "Fehler", "Benutzer", "Gruppe",
      "Name", "Größe"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A tiny word-for-word corpus, its vocabulary, and a random start checkpoint (HF layout)."""
    d = tmp_path_factory.mktemp("prune")
    build_word_corpus(d, EN, DE, pairs=240, words=(1, 5))
    vocab = Vocab.load(str(d / "vocab"))
    config = MarianConfig(d_model=32, encoder_layers=2, decoder_layers=1,
                          encoder_attention_heads=4, decoder_attention_heads=4,
                          encoder_ffn_dim=48, decoder_ffn_dim=48, activation_function="swish",
                          vocab_size=len(vocab), max_position_embeddings=64,
                          pad_token_id=vocab.pad_id, eos_token_id=vocab.eos_id,
                          decoder_start_token_id=vocab.pad_id, scale_embedding=True, dropout=0.1)
    torch.manual_seed(0)
    model = MarianMTModel(config)
    export_checkpoint(model, d / "start", source_spm=d / "vocab" / "source.spm",
                      target_spm=d / "vocab" / "target.spm", vocab=read_vocab(d / "vocab"))
    return d


def prune_args(corpus, out, *extra):
    argv = ["prune", "--from", str(corpus / "start"), "--data", str(corpus / "data"),
            "--out", str(out), "--max-tokens", "120", "--threads", str(THREADS), "--warmup", "5",
            "--log-every", "2", "--checkpoint-every", "1000", "--lr", "1e-3", *extra]
    return cli.build_parser().parse_args(argv)


def quiet(*_):
    pass


def last_state(run_dir):
    return run_state.load_checkpoint_file(run_state.list_checkpoints(str(run_dir))[-1][1])


def test_gradients_reach_log_alpha_through_penalty_and_ce(corpus):
    model = load_checkpoint(corpus / "start")
    attach_gates(model)
    model.train()
    for mode in ("sum", "layer-mean"):
        model.zero_grad(set_to_none=True)
        penalty(model, mode).backward()
        for name, g in gates(model).items():
            assert g.log_alpha.grad is not None and bool((g.log_alpha.grad > 0).all()), name
    # CE: at log_alpha 3 most samples clamp to exactly 1 (no gradient, the Hard Concrete
    # property); near 0 the samples fall inside (0, 1) and the CE gradient flows.
    with torch.no_grad():
        for g in gates(model).values():
            g.log_alpha.zero_()
    torch.manual_seed(1)
    x = torch.tensor([[5, 6, 7, 0], [8, 9, 0, model.config.pad_token_id]])
    m = (x != model.config.pad_token_id).long()
    d = torch.tensor([[model.config.pad_token_id, 10, 11, 12]] * 2)
    reached = {name: torch.zeros(4) for name in gates(model)}
    for _ in range(8):  # one gate sample per forward: a head clamped at 0 or 1 gets none
        model.zero_grad(set_to_none=True)
        loss, _ = smoothed_loss(model(x, m, d), torch.tensor([[10, 11, 12, 0]] * 2),
                                model.config.pad_token_id, 0.1)
        loss.backward()
        for name, g in gates(model).items():
            reached[name] += g.log_alpha.grad.abs()
    for name, r in reached.items():
        assert bool((r > 0).all()), (name, r)
    # The layer-mean penalty is the sum divided by the number of gated blocks.
    assert math.isclose(float(penalty(model, "layer-mean")) * len(gates(model)),
                        float(penalty(model, "sum")), rel_tol=1e-6)


def test_large_lambda_closes_heads_lambda_zero_keeps_them(corpus, tmp_path):
    common = ("--steps", "40", "--gate-lr", "0.2", "--lambda")
    run_prune(prune_args(corpus, tmp_path / "hi", *common, "1.0"), log=quiet)
    run_prune(prune_args(corpus, tmp_path / "zero", *common, "0"), log=quiet)
    hi = head_layout(load_last(tmp_path / "hi"))
    zero = head_layout(load_last(tmp_path / "zero"))
    total = sum(len(v) for v in zero.values())
    assert total == 4 * 2 + 4 + 4  # lambda 0: every head kept
    assert sum(len(v) for v in hi.values()) < total // 2
    # The log has a step record every 2 steps with per-block expected/kept counts, and an end.
    log = read_log(tmp_path / "hi")
    assert log[0]["event"] == "start" and log[0]["penalty"] == "sum"
    steps = [r for r in log if r["event"] == "step"]
    assert [r["step"] for r in steps] == list(range(2, 41, 2))
    assert set(steps[0]["blocks"]) == set(hi)
    assert steps[-1]["expected_open"] < steps[0]["expected_open"]
    assert log[-1]["event"] == "end" and log[-1]["layout"] == hi
    # Each step record holds every gate's log_alpha: the last one is the saved model's.
    final = gates(load_last(tmp_path / "hi"))
    for name, g in final.items():
        want = [round(float(x), 3) for x in g.log_alpha.detach()]
        assert steps[-1]["blocks"][name]["log_alpha"] == want, name


def load_last(run_dir):
    from headwise_trainer.model.import_model import load_start_model
    return load_start_model(str(run_dir)).model


def test_encoder_only_leaves_decoder_bit_identical(corpus, tmp_path):
    run_prune(prune_args(corpus, tmp_path / "enc", "--steps", "6", "--encoder-only"),
              log=quiet)
    start = load_checkpoint(corpus / "start").state_dict()
    after = last_state(tmp_path / "enc")["model"]
    gated = [k for k in after if k.endswith(".head_gate.log_alpha")]
    assert gated and all(k.startswith("model.encoder.") for k in gated)  # default types: enc
    changed = [k for k in start if not torch.equal(start[k], after[k])]
    assert changed and all(k.startswith("model.encoder.") for k in changed), changed
    assert torch.equal(start["model.shared.weight"], after["model.shared.weight"])


def gated_start(corpus, out):
    """The start checkpoint with gates already attached, log_alpha alternating 0.2 / 4.0, so a
    short run closes about half of the heads."""
    model = load_checkpoint(corpus / "start")
    attach_gates(model)
    with torch.no_grad():
        for g in gates(model).values():
            g.log_alpha.copy_(torch.tensor([0.2, 4.0, 0.2, 4.0]))
    export_checkpoint(model, out, source_spm=corpus / "vocab" / "source.spm",
                      target_spm=corpus / "vocab" / "target.spm", vocab=read_vocab(corpus / "vocab"))
    return str(out)


def test_exported_gated_checkpoint_round_trips(corpus, tmp_path):
    args = prune_args(corpus, tmp_path / "run", "--steps", "8", "--gate-lr", "0.2",
                      "--lambda", "1", "--export", str(tmp_path / "ckpt"))
    args.start = gated_start(corpus, tmp_path / "gated-start")
    run_prune(args, log=quiet)
    trained = load_last(tmp_path / "run")
    loaded = load_checkpoint(tmp_path / "ckpt")
    tensors, _ = safetensors_io.read_file(tmp_path / "ckpt" / "model.safetensors")
    for name, t in trained.state_dict().items():
        if name.endswith(".head_gate.log_alpha"):
            assert tensors[name].dtype == torch.float32 and torch.equal(tensors[name], t), name
        else:
            assert tensors[name].dtype == torch.float16, name
            assert torch.equal(loaded.state_dict()[name], t.half().float()), name
    signs = {k[:-len(".head_gate.log_alpha")]: [i for i, a in enumerate(v.tolist()) if a > 0]
             for k, v in tensors.items() if k.endswith(".head_gate.log_alpha")}
    assert head_layout(loaded) == signs == head_layout(trained)
    assert 0 < sum(map(len, signs.values())) < 16  # the test is about a partly pruned model
    for f in ("source.spm", "target.spm", "vocab.json", "config.json"):
        assert (tmp_path / "ckpt" / f).is_file()
    # The run can be exported again later: --resume on the finished run only exports.
    args = prune_args(corpus, tmp_path / "run", "--steps", "8", "--resume",
                      "--export", str(tmp_path / "ckpt2"), "--export-dtype", "f32")
    run_prune(args, log=quiet)
    again = load_checkpoint(tmp_path / "ckpt2")
    assert all(torch.equal(again.state_dict()[k], v) for k, v in trained.state_dict().items())


def test_resume_is_bit_identical(corpus, tmp_path):
    extra = ("--lambda", "0.2", "--gate-lr", "0.1", "--checkpoint-every", "4")
    run_prune(prune_args(corpus, tmp_path / "straight", "--steps", "8", *extra), log=quiet)
    run_prune(prune_args(corpus, tmp_path / "split", "--steps", "4", *extra), log=quiet)
    run_prune(prune_args(corpus, tmp_path / "split", "--steps", "8", "--resume", *extra),
              log=quiet)
    a, b = last_state(tmp_path / "straight"), last_state(tmp_path / "split")
    assert a["step"] == b["step"] == 8
    assert a["model"].keys() == b["model"].keys()
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k
    for sa, sb in zip(a["optimizer"]["state"].values(), b["optimizer"]["state"].values()):
        assert torch.equal(sa["exp_avg"], sb["exp_avg"])
    steps = lambda run: [r for r in read_log(run) if r["event"] == "step"]  # noqa: E731
    assert steps(tmp_path / "straight") == steps(tmp_path / "split")


def test_settle_steps_move_unsettled_gates_off_zero_on_their_side(corpus, tmp_path):
    """A finished run resumed with more --steps and --settle-steps continues its own path, then
    the push moves every gate still within the margin out of it, keeping its sign."""
    extra = ("--lambda", "0.05", "--gate-lr", "0.1", "--init-log-alpha", "0",
             "--checkpoint-every", "10")
    run_prune(prune_args(corpus, tmp_path / "run", "--steps", "10", *extra), log=quiet)
    before = {n: v.clone() for n, v in last_state(tmp_path / "run")["model"].items()
              if n.endswith("log_alpha")}
    loose = {(n, i): float(x) for n, v in before.items() for i, x in enumerate(v) if abs(x) < 1}
    assert loose, "the test needs gates that have not settled after 10 steps"
    out = run_prune(prune_args(corpus, tmp_path / "run", "--steps", "30", "--resume",
                               "--settle-steps", "20", "--settle-push", "1.0", *extra), log=quiet)
    assert sum(len(v) for v in out["unsettled"].values()) == 0
    after = last_state(tmp_path / "run")["model"]
    for (n, i), x in loose.items():
        assert abs(float(after[n][i])) >= 1.0 and (float(after[n][i]) > 0) == (x > 0), (n, i, x)
    log = read_log(tmp_path / "run")
    steps = [r for r in log if r["event"] == "step"]
    assert [r["settling"] for r in steps] == [r["step"] > 10 for r in steps]
    assert log[-1]["event"] == "end" and log[-1]["settle"] == {"steps": 20, "push": 1.0}
    # The push's gradient: -sign(log_alpha) inside the margin (descent moves the gate away
    # from 0 on its side), 0 outside it.
    model = load_checkpoint(corpus / "start")
    attach_gates(model)
    g = next(iter(gates(model).values()))
    with torch.no_grad():
        g.log_alpha.copy_(torch.tensor([0.5, -0.25, 1.5, -3.0]))
    settle_push(model, 1.0).backward()
    assert g.log_alpha.grad.tolist() == [-1.0, 1.0, 0.0, 0.0]
    with pytest.raises(PruneError, match="--settle-steps 40"):
        run_prune(prune_args(corpus, tmp_path / "bad", "--steps", "30", "--settle-steps", "40"),
                  log=quiet)


def test_resume_rejects_training_checkpoint_and_missing_from(corpus, tmp_path):
    with pytest.raises(PruneError, match="--from is required"):
        args = prune_args(corpus, tmp_path / "x", "--steps", "2")
        args.start = None
        run_prune(args, log=quiet)
    state = {"step": 1, "epoch": 0, "batch_idx": 1, "model": {}, "optimizer": {}, "rng": [],
             "config": {}}
    os.makedirs(tmp_path / "t")
    run_state.save_checkpoint(str(tmp_path / "t"), state)
    with pytest.raises(PruneError, match="expected a pruning checkpoint"):
        run_prune(prune_args(corpus, tmp_path / "t", "--steps", "2", "--resume"), log=quiet)


def test_checkpoint_config_disagreeing_with_tensors_is_a_clear_error(corpus, tmp_path):
    run_prune(prune_args(corpus, tmp_path / "run", "--steps", "2", "--checkpoint-every", "2"),
              log=quiet)
    path = run_state.list_checkpoints(str(tmp_path / "run"))[-1][1]
    state = run_state.torch_load(path)
    state["config"]["encoder_ffn_dim"] = 50
    torch.save(state, path)
    with pytest.raises(run_state.ResumeError, match="disagree with the saved config"):
        run_prune(prune_args(corpus, tmp_path / "run", "--steps", "4", "--resume"), log=quiet)
    # The same through the CLI: exit status 1 and a message on stderr.
    assert cli.main(["prune-eval", "--model", str(tmp_path / "run"), "--data",
                     str(corpus / "data"), "--threads", str(THREADS)]) == 1


def test_bad_types_and_vocab_mismatch(corpus, tmp_path):
    with pytest.raises(PruneError, match="unknown attention type 'self'"):
        run_prune(prune_args(corpus, tmp_path / "a", "--types", "enc,self"), log=quiet)
    other = tmp_path / "other"
    assert cli.main(["spm", "--data", str(corpus / "data"), "--out", str(other),
                     "--vocab-size", "60"]) == 0
    with pytest.raises(ValueError, match="has 60 ids, the model expects vocab_size 64"):
        run_prune(prune_args(corpus, tmp_path / "b", "--vocab", str(other)), log=quiet)


def test_keep_heads_spec_matches_converter_syntax(corpus):
    model = load_checkpoint(corpus / "start")
    attach_gates(model, decoder_self=False)
    with torch.no_grad():
        gates(model)["model.encoder.layers.0.self_attn"].log_alpha.copy_(
            torch.tensor([1.0, -1.0, 2.0, -3.0]))
    layout = apply_spec(parse_spec("enc.1=0,2-3 # comment\n cross.*=none; dec.0 = all"), model)
    assert layout["model.encoder.layers.0.self_attn"] == [0, 2]  # not named: the gates decide
    assert layout["model.encoder.layers.1.self_attn"] == [0, 2, 3]
    assert layout["model.decoder.layers.0.encoder_attn"] == []
    assert layout["model.decoder.layers.0.self_attn"] == [0, 1, 2, 3]
    assert apply_spec(parse_spec("*.*=all"), model) == {
        k: [0, 1, 2, 3] for k in layout}
    assert apply_spec(parse_spec("enc.*=1;enc.0=3"), model)[
        "model.encoder.layers.0.self_attn"] == [3]  # the last entry naming a block wins
    for spec, msg in (("enc.2=0", "layer 2 out of range, the encoder has 2 layers"),
                      ("enc.0=4", "head 4 out of range"),
                      ("enc.0=0,0", "head 0 is listed twice"),
                      ("attn.0=1", "unknown block kind 'attn'"),
                      ("enc=1", "expected KIND.LAYER"),
                      ("enc.1-0=1", "reversed"),
                      ("enc.0", "expected BLOCKS=HEADS"),
                      ("enc.0=x", "found 'x'"),
                      (" ; # nothing", "no entries")):
        with pytest.raises(KeepHeadsError, match=msg):
            apply_spec(parse_spec(spec), model)


def test_prune_eval_variants(corpus, tmp_path):
    args = prune_args(corpus, tmp_path / "run", "--steps", "8", "--gate-lr", "0.2",
                      "--lambda", "1", "--export", str(tmp_path / "ckpt"))
    args.start = gated_start(corpus, tmp_path / "gated-start")
    run_prune(args, log=quiet)
    args = cli.build_parser().parse_args([
        "prune-eval", "--model", str(tmp_path / "ckpt"), "--data", str(corpus / "data"),
        "--keep-heads", "*.*=all", "--keep-heads", "enc.*=none", "--threads", str(THREADS),
        "--hyps-dir", str(tmp_path / "hyps"), "--json", str(tmp_path / "scores.json"),
        "--baseline", str(corpus / "start"), "--pruning-run", str(tmp_path / "run")])
    result = run_prune_eval(args, log=quiet)
    by = {v["variant"]: v for v in result["variants"]}
    assert list(by) == ["baseline", "full", "gated", "keep:*.*=all", "keep:enc.*=none"]
    assert result["baseline"] == f"checkpoint {corpus / 'start'}"
    assert by["baseline"]["heads_kept"]["kept"] == 16
    run = result["pruning_run"]
    assert run["steps"] == 8 and run["lambda"] == 1.0 and run["penalty"] == "sum"
    assert run["from"].endswith("gated-start") and run["train_seconds"] > 0
    one = pruning_run_facts(run_state.list_checkpoints(str(tmp_path / "run"))[-1][1])
    assert one["steps"] == 8 and one["checkpoint"] == run["checkpoint"]
    assert by["full"]["heads_kept"]["kept"] == 16
    assert by["keep:*.*=all"]["bleu_detail"] == by["full"]["bleu_detail"]
    gated = load_checkpoint(tmp_path / "ckpt")
    assert by["gated"]["layout"] == head_layout(gated)
    assert by["keep:enc.*=none"]["heads_kept"]["encoder_self"] == [0, 0]
    assert 0 < by["gated"]["heads_kept"]["kept"] < 16
    # The gated variant translates as the converter's stripped model does.
    vocab = Vocab.load(str(corpus / "vocab"))
    split = encode_split(vocab, str(corpus / "data"), "test")
    stripped = [vocab.decode_target(x) for x in translate_ids(strip_heads(gated), split.src)]
    gated_hyps = (tmp_path / "hyps" / "gated.test.txt").read_text(encoding="utf-8")
    assert gated_hyps == "".join(h + "\n" for h in stripped)
    assert len(stripped) == result["sentences"] > 0
    assert json.loads((tmp_path / "scores.json").read_text())["variants"][2]["variant"] == "gated"


def test_gate_settings_are_recorded_and_the_continuous_rule_is_exported(corpus, tmp_path):
    from headwise_trainer.pruning.prune import gate_lr
    args = prune_args(corpus, tmp_path / "run", "--steps", "10", "--lambda", "0.5",
                      "--init-log-alpha", "0.5", "--gate-lr", "0.2", "--gate-lr-schedule",
                      "linear", "--gate-rule", "continuous", "--settle-margin", "0.75",
                      "--penalty", "layer-mean", "--export", str(tmp_path / "ckpt"),
                      "--export-dtype", "f32")
    out = run_prune(args, log=quiet)
    settings = {"init_log_alpha": 0.5, "gate_lr": 0.2, "gate_lr_schedule": "linear",
                "warmup": 5, "penalty": "layer-mean", "lambda": 0.5, "gate_rule": "continuous"}
    log = read_log(tmp_path / "run")
    assert log[0]["gate_settings"] == settings
    with open(tmp_path / "run" / "run.json", encoding="utf-8") as f:
        saved = json.load(f)["prune_args"]
    assert {k: saved[k] for k in ("gate_rule", "gate_lr_schedule", "settle_margin")} == \
        {"gate_rule": "continuous", "gate_lr_schedule": "linear", "settle_margin": 0.75}
    # The schedule: linear warm-up over 5 steps, then a straight line to 0 at --steps 10.
    assert [round(gate_lr(args, s), 6) for s in (1, 5, 6, 10)] == [0.04, 0.2, 0.16, 0.0]
    steps = [r for r in log if r["event"] == "step"]
    assert [r["gate_lr"] for r in steps[:3]] == pytest.approx([0.08, 0.16, 0.16])
    # The end record: log_alpha values, and the heads within the margin counted.
    end = log[-1]
    la = [a for v in end["log_alpha"].values() for a in v]
    assert end["settle_margin"] == 0.75
    assert end["unsettled"] == sum(abs(a) < 0.75 for a in la) == \
        sum(len(v) for v in out["unsettled"].values())
    # The export carries the rule; its head layout is the continuous one (gate above 0).
    with open(tmp_path / "ckpt" / "config.json", encoding="utf-8") as f:
        assert json.load(f)["headwise_gate_rule"] == "continuous"
    loaded = load_checkpoint(tmp_path / "ckpt")
    assert loaded.config.gate_rule == "continuous"
    assert head_layout(loaded) == end["layout"]
    assert head_layout(loaded) == {k: [h for h, a in enumerate(v) if a > -math.log(11) + 1e-3]
                                   for k, v in end["log_alpha"].items()} | \
        {k: v for k, v in head_layout(loaded).items() if k not in end["log_alpha"]}


def test_resume_of_a_checkpoint_without_the_new_gate_settings(corpus, tmp_path):
    """Checkpoints written before --gate-rule / --gate-lr-schedule existed resume with the
    values they ran with (hard, constant)."""
    extra = ("--lambda", "0.2", "--gate-lr", "0.1", "--checkpoint-every", "4")
    run_prune(prune_args(corpus, tmp_path / "straight", "--steps", "8", *extra), log=quiet)
    run_prune(prune_args(corpus, tmp_path / "old", "--steps", "4", *extra), log=quiet)
    path = run_state.list_checkpoints(str(tmp_path / "old"))[-1][1]
    state = run_state.torch_load(path)
    for key in ("prune_args", "train_args"):
        for k in ("gate_rule", "gate_lr_schedule", "settle_margin", "device"):
            state[key].pop(k)
    torch.save(state, path)
    run_prune(prune_args(corpus, tmp_path / "old", "--steps", "8", "--resume",
                         "--gate-rule", "continuous", *extra), log=quiet)
    a, b = last_state(tmp_path / "straight"), last_state(tmp_path / "old")
    assert b["prune_args"]["gate_rule"] == "hard"
    assert b["prune_args"]["gate_lr_schedule"] == "constant"
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k


def test_precision_is_recorded_applied_and_old_checkpoints_resume_in_fp32(corpus, tmp_path):
    """--precision bf16 runs the forward pass under bf16 autocast (the losses differ from fp32's),
    both are recorded in the checkpoint, and a checkpoint written before --precision existed
    resumes in fp32, the precision it ran with."""
    extra = ("--lambda", "0.2", "--gate-lr", "0.1", "--checkpoint-every", "4")
    run_prune(prune_args(corpus, tmp_path / "fp32", "--steps", "8", "--precision", "fp32",
                         *extra), log=quiet)
    run_prune(prune_args(corpus, tmp_path / "bf16", "--steps", "4", "--precision", "bf16",
                         *extra), log=quiet)
    assert last_state(tmp_path / "fp32")["prune_args"]["precision"] == "fp32"
    assert last_state(tmp_path / "bf16")["prune_args"]["precision"] == "bf16"
    ce = lambda run: [r["ce"] for r in read_log(run) if r["event"] == "step"]  # noqa: E731
    assert ce(tmp_path / "fp32")[:2] != ce(tmp_path / "bf16")[:2]
    run_prune(prune_args(corpus, tmp_path / "old", "--steps", "4", "--precision", "fp32",
                         *extra), log=quiet)
    path = run_state.list_checkpoints(str(tmp_path / "old"))[-1][1]
    state = run_state.torch_load(path)
    state["prune_args"].pop("precision")
    torch.save(state, path)
    run_prune(prune_args(corpus, tmp_path / "old", "--steps", "8", "--resume", "--precision",
                         "bf16", *extra), log=quiet)
    a, b = last_state(tmp_path / "fp32"), last_state(tmp_path / "old")
    assert b["prune_args"]["precision"] == "fp32"
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k
