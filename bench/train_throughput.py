#!/usr/bin/python3
"""Training throughput of `headwise-train train`'s step (trainer/headwise_trainer/training/loop.py:
accumulate_gradients + clip + Adam) under several precision/thread settings, alternated round
by round in one process so that a shared, noisy machine affects them alike. Prints one JSON
object: tokens/s (source + target, non-pad) per setting and round, and the median.

    bench/train_throughput.py --data CORPUS --vocab VOCAB [--rounds 4 --steps 12]
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trainer"))

import torch  # noqa: E402

from headwise_trainer.data.batching import TokenBatcher, collate, encode_split  # noqa: E402
from headwise_trainer.model.config import MarianConfig  # noqa: E402
from headwise_trainer.model.marian import MarianMTModel  # noqa: E402
from headwise_trainer.data.spm_vocab import Vocab  # noqa: E402
from headwise_trainer.training.loop import accumulate_gradients  # noqa: E402
from headwise_trainer.threads import blas_threads, set_threads  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--settings", default="fp32:1,fp32:2,bf16:1,bf16:2",
                    help="PRECISION:THREADS,... (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=12, help="timed steps per setting and round")
    ap.add_argument("--max-tokens", type=int, default=2500)
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--encoder-layers", type=int, default=6)
    ap.add_argument("--decoder-layers", type=int, default=3)
    ap.add_argument("--dropout", type=float, default=0.1)
    a = ap.parse_args()
    vocab = Vocab.load(a.vocab)
    train = encode_split(vocab, a.data, "train", 128)
    batches = TokenBatcher(train.src, train.tgt, a.max_tokens, 1).epoch_batches(0)
    cfg = MarianConfig(d_model=a.d_model, encoder_layers=a.encoder_layers,
                       decoder_layers=a.decoder_layers, encoder_attention_heads=8,
                       decoder_attention_heads=8, encoder_ffn_dim=4 * a.d_model,
                       decoder_ffn_dim=4 * a.d_model, activation_function="swish",
                       vocab_size=len(vocab), max_position_embeddings=512,
                       pad_token_id=vocab.pad_id, eos_token_id=vocab.eos_id,
                       decoder_start_token_id=vocab.pad_id, scale_embedding=True,
                       dropout=a.dropout)
    torch.manual_seed(0)
    model = MarianMTModel(cfg)
    model.freeze_pad_rows()
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    settings = [(s.split(":")[0], int(s.split(":")[1])) for s in a.settings.split(",")]
    cpu = torch.device("cpu")
    pos = 0
    results = {f"{p}:{t}": [] for p, t in settings}
    for r in range(a.rounds + 1):  # round 0 warms up (oneDNN kernel creation), not reported
        for prec, threads in settings:
            set_threads(threads)
            tokens, t0 = 0, time.perf_counter()
            for _ in range(a.steps):
                micro = [collate(train.src, train.tgt, batches[pos % len(batches)],
                                 cfg.pad_token_id, cfg.decoder_start_token_id)]
                pos += 1
                opt.zero_grad(set_to_none=True)
                _, ntok, nsrc = accumulate_gradients(model, micro, cfg.pad_token_id, 0.1, cpu,
                                                     prec)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                tokens += ntok + nsrc
            if r:
                results[f"{prec}:{threads}"].append(round(tokens / (time.perf_counter() - t0)))
    out = {"bench": "train_throughput", "pairs": len(train.src), "max_tokens": a.max_tokens,
           "model": f"{a.d_model} wide, {a.encoder_layers}+{a.decoder_layers} layers",
           "steps_per_round": a.steps, "rounds": a.rounds, "load_avg": os.getloadavg(),
           "blas": "OpenBLAS, threads set with each setting" if blas_threads() is not None else "not OpenBLAS",
           "tokens_per_second": results,
           "median": {k: statistics.median(v) for k, v in results.items()}}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
