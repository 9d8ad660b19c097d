"""How the z-rule's head ranking depends on its stabiliser (rules.Z_EPSILON), on real sentences:
for each epsilon, the Spearman correlation of the pooled head ranking with AttnLRP's and with
the previous epsilon's, the largest block's summed |head relevance| over |target logit| (first
target position), and the shares of the target logits' relevance that the stabilised sums keep
and that reach the embeddings (first four positions). The numbers in models/en-de/analysis
README ("The z-rule's stabiliser") come from:

    PYTHONPATH=trainer python3 -m headwise_trainer.analysis.stabiliser \\
        --model models/en-de/base-checkpoint --data work/corpus-de --sentences 24 \\
        --epsilons 0,0.01,0.03,0.1,0.3
"""
from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Dict, Iterator, List, Optional, Sequence

import torch

from ..threads import set_threads
from ..data.batching import length_sorted_chunks
from . import compare, forward, lrp, pipeline, rules


@contextlib.contextmanager
def z_epsilon(value: float) -> Iterator[None]:
    """rules.Z_EPSILON set to ``value`` inside (this process only), restored after."""
    previous, rules.Z_EPSILON = rules.Z_EPSILON, value
    try:
        yield
    finally:
        rules.Z_EPSILON = previous


def _pooled(model, means: Dict[str, List[float]]) -> Dict[str, List[float]]:
    out: Dict[str, List[float]] = {}
    for name, kind, _, _ in model.attention_blocks():
        out.setdefault(kind, []).extend(means[name])
    return out


def balance(model, batch: lrp.Batch, rule: str, positions: int = 4) -> Dict[str, float]:
    """Over the first ``positions`` target positions: the shares of the target logits'
    relevance kept by the stabilised sums and reaching the embeddings (AttnLRP: the rest is
    the softmax rule's), and max over blocks of sum |R_h| / |target logits| at position 0."""
    top = kept = emb = 0.0
    peak = 0.0
    for pos in range(min(positions, batch.targets.shape[1])):
        with lrp.frozen(model), rules.taping() as tape:
            tr = forward.run(model, batch.input_ids, batch.attention_mask,
                             batch.decoder_input_ids, batch.decoder_mask, rule)
            rows = batch.decoder_mask.bool()[:, pos]
            logits = forward.target_logits(model, tr.hidden, batch.targets, rule)[rows, pos]
            inputs = [tr.encoder_states[0], tr.decoder_states[0]]
            merged = [b.merged for b in tr.blocks]
            outs = [o for _, o, _ in tape.entries]
            grads = torch.autograd.grad(logits.sum(), inputs + merged + outs, allow_unused=True)
        g_in, g_m, g_o = grads[:2], grads[2:2 + len(merged)], grads[2 + len(merged):]
        top += float(logits.double().sum())
        emb += sum(float((t * g).double().sum()) for t, g in zip(inputs, g_in))
        kept += sum(float((o * g * s).double().sum())
                    for (_, o, s), g in zip(tape.entries, g_o) if g is not None)
        if pos == 0:
            peak = max(float((m * g).abs().sum()) for m, g in zip(merged, g_m)) / \
                float(logits.abs().sum())
    return {"kept": kept / top, "embeddings": emb / top, "peak": peak}


def sweep(model, sources: Sequence[Sequence[int]], epsilons: Sequence[float],
          batch_size: int = 16) -> List[dict]:
    """One row for AttnLRP, then one per epsilon (z-rule)."""
    model.eval()
    hyps = pipeline.generate(model, sources, batch_size)
    batches = [lrp.Batch.make(model, [list(map(int, sources[i])) for i in chunk],
                              [hyps[i] for i in chunk])
               for chunk in length_sorted_chunks([len(h) for h in hyps], batch_size)]

    def ranking(rule):
        acc = lrp.RelevanceSum()
        for b in batches:
            lrp.head_relevance(model, b, rule, acc)
        return _pooled(model, acc.mean())

    ref = ranking("attnlrp")
    rows = [{"rule": "attnlrp", "epsilon": None, "predictions": sum(map(len, hyps)),
             "balance_sentences": int(batches[0].targets.shape[0]),
             **balance(model, batches[0], "attnlrp")}]
    previous = None
    for eps in epsilons:
        with z_epsilon(eps):
            ranks = ranking("z")
            row = {"rule": "z", "epsilon": eps, **balance(model, batches[0], "z")}
        row["vs_attnlrp"] = {k: compare.spearman(ref[k], ranks[k]) for k in ref}
        row["vs_previous"] = None if previous is None else \
            {k: compare.spearman(previous[k], ranks[k]) for k in ref}
        rows.append(row)
        previous = ranks
    return rows


def _fmt(d: Optional[dict]) -> str:
    if d is None:
        return "-"
    return " / ".join("n/a" if v is None else f"{v:.2f}" for v in d.values())


def main(argv: Optional[Sequence[str]] = None) -> int:
    from ..data.batching import encode_split
    from ..model.import_model import load_start_model, load_start_vocab

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--split", default="dev")
    p.add_argument("--sentences", type=int, default=24)
    p.add_argument("--epsilons", default="0,0.01,0.03,0.1,0.3")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    set_threads(args.threads)
    start = load_start_model(args.model)
    vocab, _ = load_start_vocab(start, None, args.model)
    split = encode_split(vocab, args.data, args.split, 128)
    rows = sweep(start.model, split.src[:args.sentences],
                 [float(x) for x in args.epsilons.split(",")])
    print(f"{len(split.src[:args.sentences])} {args.split} sentences, "
          f"{rows[0]['predictions']} predictions; kept / embeddings over the first "
          f"{rows[0]['balance_sentences']} sentences")
    print("rule     epsilon  spearman vs AttnLRP  vs previous eps  kept  embeddings  peak "
          "(enc self / dec self / dec cross)")
    for r in rows:
        eps = "-" if r["epsilon"] is None else f"{r['epsilon']:g}"
        print(f"{r['rule']:8} {eps:8} {_fmt(r.get('vs_attnlrp')):19}  "
              f"{_fmt(r.get('vs_previous')):15}  {r['kept']:.3f} {r['embeddings']:.3f} "
              f"{r['peak']:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
