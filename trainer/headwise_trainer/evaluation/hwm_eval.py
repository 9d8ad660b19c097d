"""`headwise-train evaluate --hwm MODEL.hwm`: a converted model translated by the headwise
runtime (its Python module, python/) and scored with the same BLEU/chrF code and the same
decoding limits as the PyTorch evaluation (evaluate.py); with --model too, both and their
difference, so the runtime-vs-PyTorch BLEU gap on a split is one command."""
from __future__ import annotations

import time
from typing import List, Optional, Sequence, Tuple

from ..data.batching import length_sorted_chunks
from .metrics import corpus_bleu, corpus_chrf, scores_by_length


def max_len_for(positions: int, src_len: int, a: float = 1.5, b: int = 10) -> int:
    """evaluate.decode_max_len's rule for a model with `positions` positions."""
    return max(1, min(positions, int(a * src_len) + b))


def translate_hwm(path: str, texts: Sequence[str], sources: Optional[Sequence[Sequence[int]]],
                  use_ids: bool, beam: int, length_penalty: float, batch_size: int,
                  threads: int, beam_stop: Optional[str] = None):
    """Translates `texts` with the runtime (or, with `use_ids`, the trainer-encoded `sources`,
    EOS included) in the PyTorch evaluation's length-sorted chunks of `batch_size` with its
    per-chunk maximum length and the beam stopping rule `beam_stop` (None: the runtime's
    default); chunks are formed from the lengths of `sources` when given (as
    PyTorch forms them), else of the runtime's own encoding. Returns (hypotheses, failed
    [(line, error)], seconds, model, agreement): agreement counts lines whose runtime source
    ids equal `sources` (None without them or without a tokenizer)."""
    from .runtime_module import import_headwise
    headwise = import_headwise()
    model = headwise.Model(path)
    positions = model.config.max_position_embeddings
    translator = headwise.Translator(model, threads=threads, max_source_tokens=positions,
                                     max_target_tokens=positions, max_beam=max(1, beam))
    encoded: List[Optional[List[int]]] = []
    for t in texts:
        try:
            encoded.append(model.encode(t) if model.has_tokenizer else None)
        except headwise.Error:
            encoded.append(None)
    ids = [[int(x) for x in s] for s in sources] if sources is not None else None
    agreement = (sum(e == s for e, s in zip(encoded, ids))
                 if ids is not None and model.has_tokenizer else None)
    lengths = ([len(s) for s in ids] if ids is not None else
               [len(e) if e is not None else 1 for e in encoded])
    hyps, failed = [""] * len(texts), []
    t0 = time.time()
    for chunk in length_sorted_chunks(lengths, batch_size):
        options = dict(beam_size=max(1, beam), length_penalty=length_penalty,
                       max_length=max_len_for(positions, max(lengths[i] for i in chunk)),
                       beam_stop=beam_stop)
        if use_ids:
            results = translator.translate_ids([ids[i] for i in chunk], **options)
        else:
            results = translator.translate([texts[i] for i in chunk], **options)
        for i, r in zip(chunk, results):
            if r.ok:
                hyps[i] = r.text if r.text is not None else ""
            else:
                failed.append((i, str(r.error)))
    return hyps, failed, time.time() - t0, model, agreement


def describe(model) -> str:
    kept, total = model.info.num_heads_kept
    return f"{model.path} (headwise, {model.weight_format}, {kept}/{total} heads)"


def evaluate_hwm(args, texts: Sequence[str], refs: Sequence[str],
                 sources: Optional[Sequence[Sequence[int]]], split: str,
                 log=print) -> Tuple[dict, List[str]]:
    """Scores args.hwm on the split's texts and references; `sources` are the trainer's ids
    of the texts, when a vocabulary is at hand (needed for --hwm-input ids)."""
    hyps, failed, seconds, model, agreement = translate_hwm(
        args.hwm, texts, sources, args.hwm_input == "ids", args.beam, args.length_penalty,
        args.batch_size, args.threads, args.beam_stop)
    for line, error in failed[:5]:
        log(f"evaluate --hwm: line {line + 1} failed: {error}")
    bleu = corpus_bleu(hyps, refs)
    result = {"model": describe(model), "split": split, "sentences": len(texts),
              "search": "greedy" if args.beam <= 1 else f"beam {args.beam}",
              "beam_stop": None if args.beam <= 1 else args.beam_stop,
              "input": args.hwm_input, "failed_lines": len(failed),
              "bleu": round(bleu.score, 2), "bleu_detail": str(bleu),
              "chrf": round(corpus_chrf(hyps, refs), 2),
              "by_source_length": scores_by_length(texts, hyps, refs),
              "decode_seconds": round(seconds, 1)}
    if agreement is not None:
        result["source_ids_as_trainer"] = f"{agreement}/{len(texts)}"
    return result, hyps


def difference(pytorch: dict, headwise: dict, pt_hyps: Sequence[str],
               hw_hyps: Sequence[str]) -> dict:
    same = sum(a == b for a, b in zip(pt_hyps, hw_hyps))
    return {"bleu": round(headwise["bleu"] - pytorch["bleu"], 2),
            "chrf": round(headwise["chrf"] - pytorch["chrf"], 2),
            "identical_lines": f"{same}/{len(pt_hyps)}"}
