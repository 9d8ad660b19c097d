"""Evaluation (BLEU/chrF on a corpus split, greedy or beam, gates, masked heads) and export
of a training run to a Hugging Face-layout checkpoint directory."""
from __future__ import annotations

import json
import os
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..threads import set_threads
from ..model import run_state
from ..data.batching import encode_split, length_sorted_chunks
from .metrics import corpus_bleu, corpus_chrf, scores_by_length
from ..model.marian import MarianMTModel
from ..data.spm_vocab import Vocab


class EvalError(ValueError):
    pass


def decode_max_len(model: MarianMTModel, src_len: int, a: float = 1.5, b: int = 10) -> int:
    from .hwm_eval import max_len_for  # the same rule for the runtime (evaluate --hwm)
    return max_len_for(model.config.max_position_embeddings, src_len, a, b)


def translate_ids(model: MarianMTModel, sources: Sequence[Sequence[int]], beam: int = 1,
                  batch_size: int = 64, length_penalty: float = 1.0,
                  beam_stop: Optional[str] = None,
                  allowed: Optional[Callable[[Sequence[int]], Sequence[int]]] = None
                  ) -> List[List[int]]:
    """Target ids (without start and EOS) per source, in the input order; `beam_stop` is the
    beam search's stopping rule (decode.BEAM_STOPS; None = decode.DEFAULT_BEAM_STOP);
    `allowed` maps a source to the ids a vocabulary shortlist allows for it (decode.py's
    ``allowed``; None = the whole vocabulary)."""
    from ..model import decode
    out: List[Optional[List[int]]] = [None] * len(sources)
    for chunk in length_sorted_chunks([len(s) for s in sources], batch_size):
        batch = [list(map(int, sources[i])) for i in chunk]
        max_len = decode_max_len(model, max(len(s) for s in batch))
        lists = [allowed(s) for s in batch] if allowed is not None else None
        if beam <= 1:
            hyps = decode.greedy(model, batch, max_len, length_penalty, allowed=lists)
        else:
            hyps = [h[0] for h in decode.beam_search(
                model, batch, beam, 1, length_penalty, max_len,
                stop=beam_stop or decode.DEFAULT_BEAM_STOP, allowed=lists)]
        for i, h in zip(chunk, hyps):
            out[i] = list(h.ids)
    return out  # type: ignore[return-value]


def load_model(path: str) -> Tuple[MarianMTModel, Optional[str], str]:
    """A model from a run directory (newest ckpt), a ckpt-*.pt file, or an exported checkpoint
    directory (config.json + model.safetensors). Returns (model, vocab dir or None, what)."""
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, "config.json")):
        from ..model.checkpoint import load_checkpoint
        return load_checkpoint(path), path, f"checkpoint {path}"
    ckpt = path
    if os.path.isdir(path) and not run_state.is_shard_dir(path):
        ckpts = run_state.list_checkpoints(path)
        if not ckpts:
            raise EvalError(f"{path}: expected a run directory with ckpt-*.pt or a checkpoint "
                            "directory with config.json; found neither")
        ckpt = ckpts[-1][1]
    state = run_state.load_checkpoint_file(ckpt)
    # With a gate on every block the checkpoint holds one (a pruning run, or `train
    # --head-layout`): evaluated with its test-time gates, exported with them.
    from ..model.import_model import model_from_state
    model = model_from_state(state, ckpt)
    return model, state.get("train_args", {}).get("vocab"), f"{ckpt} (step {state['step']})"


def parse_mask_specs(specs: Sequence[str], model: MarianMTModel) -> Dict[str, List[float]]:
    """'BLOCK=H,H,...' (heads to switch off) -> 0/1 masks per block."""
    blocks = {name: attn.num_heads for name, _, _, attn in model.attention_blocks()}
    masks: Dict[str, List[float]] = {}
    for spec in specs:
        name, sep, heads = spec.partition("=")
        if not sep or name not in blocks:
            raise EvalError(f"--mask-heads {spec!r}: expected BLOCK=H[,H...] with BLOCK one of "
                            f"{next(iter(blocks))}, ... ({len(blocks)} blocks)")
        m = masks.setdefault(name, [1.0] * blocks[name])
        for h in heads.split(","):
            if not h.strip().isdigit() or int(h) >= blocks[name]:
                raise EvalError(f"--mask-heads {spec!r}: head {h!r} is not an index in "
                                f"[0, {blocks[name]})")
            m[int(h)] = 0.0
    return masks


def run_evaluate(args, log=print) -> dict:
    """PyTorch (--model), the headwise runtime (--hwm), or both with their difference."""
    hwm = getattr(args, "hwm", None)
    if not args.model and not hwm:
        raise EvalError("evaluate: expected --model (PyTorch), --hwm (the headwise runtime) or "
                        "both; found neither")
    if not args.model:
        return _finish(args, log, _run_hwm(args, log, None))
    set_threads(args.threads)
    model, vocab_dir, what = load_model(args.model)
    vocab = Vocab.load(args.vocab or vocab_dir or "")
    from ..model import gates as gates_mod
    gated = list(gates_mod.gates(model))
    if args.no_gates:
        for _, _, _, attn in model.attention_blocks():
            attn.head_gate = None
    masks = parse_mask_specs(args.mask_heads or [], model)
    if masks:
        gates_mod.set_head_masks(model, masks)
    split = encode_split(vocab, args.data, args.split)
    n = min(args.limit, len(split.src)) if args.limit else len(split.src)
    allowed, shortlist = _shortlist_lists(getattr(args, "shortlist", None), vocab, model)
    t0 = time.time()
    ids = translate_ids(model, split.src[:n], beam=args.beam, batch_size=args.batch_size,
                        length_penalty=args.length_penalty, beam_stop=args.beam_stop,
                        allowed=allowed)
    seconds = time.time() - t0
    hyps = [vocab.decode_target(x) for x in ids]
    bleu = corpus_bleu(hyps, split.tgt_text[:n])
    chrf = corpus_chrf(hyps, split.tgt_text[:n])
    result = {"model": what, "split": args.split, "sentences": n,
              "search": "greedy" if args.beam <= 1 else f"beam {args.beam}",
              "beam_stop": None if args.beam <= 1 else args.beam_stop,
              "gates": ("ignored" if args.no_gates else "test-time") if gated else "none",
              "gated_blocks": len(gated), "masked": {k: [i for i, v in enumerate(m) if v == 0]
                                                     for k, m in masks.items()},
              "shortlist": shortlist,
              "bleu": round(bleu.score, 2), "bleu_detail": str(bleu), "chrf": round(chrf, 2),
              "by_source_length": scores_by_length(split.src_text[:n], hyps,
                                                   split.tgt_text[:n]),
              "decode_seconds": round(seconds, 1)}
    if gated and not args.no_gates:
        result["heads_kept"] = gates_mod.layout_summary(model)
    if args.hyps:
        with open(args.hyps, "w", encoding="utf-8") as f:
            f.writelines(h + "\n" for h in hyps)
    if not hwm:
        return _finish(args, log, result)
    from .hwm_eval import difference
    runtime = _run_hwm(args, log, (vocab, split, n))
    both = {"pytorch": result, "headwise": runtime,
            "difference": difference(result, runtime, hyps, runtime.pop("_hyps"))}
    return _finish(args, log, both)


def _shortlist_lists(path: Optional[str], vocab: Vocab, model: MarianMTModel):
    """(source -> the ids the shortlist file at `path` allows for it, a description for the
    result) or (None, None) without a file. The file must be made for this vocabulary."""
    if not path:
        return None, None
    from ..data import shortlist as sl_file
    try:
        sl = sl_file.read(path)
    except (OSError, sl_file.ShortlistError) as e:
        raise EvalError(f"--shortlist {path}: {e}") from e
    if sl.vocab_size != model.config.vocab_size or \
            sl.vocab_sha256 != sl_file.vocab_sha256(vocab.id_to_piece):
        raise EvalError(f"--shortlist {path}: made for another vocabulary (its vocab_size "
                        f"{sl.vocab_size} and vocab_sha256 do not match the model's "
                        f"{model.config.vocab_size} pieces)")
    always = [model.config.eos_token_id, vocab.unk_id]
    return (lambda src: sl.union([src], always).tolist(),
            {"file": path, "description": sl.header.get("description", "")})


def _run_hwm(args, log, pytorch_split) -> dict:
    """The --hwm evaluation; `pytorch_split` is (trainer vocab, encoded split, n) when --model
    ran too (then the runtime gets the same sentences and the same chunks), else None."""
    from ..data.batching import read_split
    from .hwm_eval import evaluate_hwm
    if pytorch_split is not None:
        _, split, n = pytorch_split
        texts, refs, sources = split.src_text[:n], split.tgt_text[:n], split.src[:n]
    else:
        texts, refs, _ = read_split(args.data, args.split)
        sources = None
        if args.vocab:
            split = encode_split(Vocab.load(args.vocab), args.data, args.split)
            texts, refs, sources = split.src_text, split.tgt_text, split.src
        n = min(args.limit, len(texts)) if args.limit else len(texts)
        texts, refs = texts[:n], refs[:n]
        sources = sources[:n] if sources is not None else None
    if args.hwm_input == "ids" and sources is None:
        raise EvalError("--hwm-input ids translates the trainer's source ids: give --vocab "
                        "(or --model)")
    result, hyps = evaluate_hwm(args, texts, refs, sources, args.split, log)
    hyps_path = args.hwm_hyps or (args.hyps if pytorch_split is None else None)
    if hyps_path:
        with open(hyps_path, "w", encoding="utf-8") as f:
            f.writelines(h + "\n" for h in hyps)
    if pytorch_split is not None:
        result["_hyps"] = hyps
    return result


def _finish(args, log, result: dict) -> dict:
    log(json.dumps(result, indent=2, ensure_ascii=False))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2, ensure_ascii=False)
            f.write("\n")
    return result


def load_averaged(run_dir: str, n: int) -> Tuple[MarianMTModel, Optional[str], str]:
    """The mean of the newest n checkpoints of run_dir (model/average.py), as load_model returns."""
    from ..model.average import average_files, newest
    from ..model.import_model import model_from_state
    if not os.path.isdir(run_dir):
        raise EvalError(f"--average {n}: {run_dir} is not a run directory; expected one with "
                        f"ckpt-*.pt files")
    paths = [p for _, p in newest(run_dir, n)]
    state = average_files(paths)
    steps = ", ".join(str(r["step"]) for r in state["averaged_from"])
    return (model_from_state(state, run_dir), state.get("train_args", {}).get("vocab"),
            f"{run_dir}: mean of steps {steps}")


def run_export(args, log=print) -> None:
    n = getattr(args, "average", 1)
    model, vocab_dir, what = load_averaged(args.run, n) if n > 1 else load_model(args.run)
    vocab_dir = args.vocab or vocab_dir
    if not vocab_dir:
        raise EvalError(f"{args.run}: no vocabulary directory recorded; pass --vocab")
    files = {n: os.path.join(vocab_dir, n) for n in ("source.spm", "target.spm", "vocab.json")}
    for p in files.values():
        if not os.path.isfile(p):
            raise EvalError(f"{p}: not found; expected the run's vocabulary files")
    with open(files["vocab.json"], encoding="utf-8") as f:
        vocab = json.load(f)
    from ..model.checkpoint import export_checkpoint
    out = export_checkpoint(model, args.out, source_spm=files["source.spm"],
                            target_spm=files["target.spm"], vocab=vocab,
                            dtype=args.dtype.upper(), overwrite=args.overwrite)
    log(f"export: {what} -> {out} ({args.dtype.upper()})")
    if getattr(args, "record", None):
        with open(args.record, "w", encoding="utf-8") as f:
            json.dump({"exported": what, "out": str(out), "dtype": args.dtype.upper(),
                       "average": n}, f, indent=2, ensure_ascii=False)
            f.write("\n")
