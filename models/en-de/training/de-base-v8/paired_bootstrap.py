"""Paired bootstrap (sacreBLEU's, 1,000 resamples, seed 12345) of v8's average against the shipped
v6 base on the whole test and dev splits, greedy, from the translations `headwise-train evaluate
--hyps` wrote:

    for m in v6:models/en-de/base-checkpoint v8:$HOME/.cache/headwise/ship/de8/base-checkpoint; do
      for s in test dev; do
        trainer/headwise-train evaluate --model ${m#*:} --data ~/.cache/headwise/corpus/de --split $s \\
          --threads 1 --hyps /tmp/boot/${m%%:*}-$s.txt
      done
    done
    PYTHONPATH=trainer /usr/bin/python3 models/en-de/training/de-base-v8/paired_bootstrap.py /tmp/boot \\
        > models/en-de/training/de-base-v8/paired-bootstrap.json
"""
import json
import os
import sys

from headwise_trainer.evaluation import metrics

HYPS = sys.argv[1]
CORPUS = os.path.expanduser(sys.argv[2] if len(sys.argv) > 2 else "~/.cache/headwise/corpus/de")


def lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


out = {}
for split in ("test", "dev"):
    v8, v6 = lines(f"{HYPS}/v8-{split}.txt"), lines(f"{HYPS}/v6-{split}.txt")
    refs = lines(f"{CORPUS}/{split}.de")
    if not len(v8) == len(v6) == len(refs):
        sys.exit(f"{split}: {len(v8)} / {len(v6)} translations for {len(refs)} references")
    r = metrics.paired_bootstrap(metrics.bleu_segment_stats(v8, refs),
                                 metrics.bleu_segment_stats(v6, refs))
    out[split] = {"sentences": len(refs), "system": "v8 average", "control": "v6 (shipped)",
                  **{k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}}
json.dump(out, sys.stdout, indent=1)
print()
