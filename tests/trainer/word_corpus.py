"""A tiny deterministic word-for-word 'translation' corpus and its SentencePiece vocabulary,
built with the trainer's own `data` and `spm` commands (shared by the trainer tests)."""
from pathlib import Path
from typing import Sequence, Tuple

import numpy as np

from headwise_trainer import cli


def build_word_corpus(d: Path, en: Sequence[str], de: Sequence[str], pairs: int,
                      words: Tuple[int, int]) -> None:
    """Writes d/a.en, d/a.de (`pairs` lines of `words[0]` to `words[1] - 1` random words, the
    German line the word-by-word translation, each ending in its line number), then d/data
    (`data`, 5% dev, 5% test) and d/vocab (`spm`, 64 pieces). Same seed, same files."""
    rng = np.random.default_rng(0)
    src, tgt = [], []
    for i in range(pairs):
        idx = rng.integers(0, len(en), size=int(rng.integers(*words)))
        src.append(" ".join(en[j] for j in idx) + f" {i}")
        tgt.append(" ".join(de[j] for j in idx) + f" {i}")
    (d / "a.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    (d / "a.de").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    assert cli.main(["data", "--src-file", str(d / "a.en"), "--tgt-file", str(d / "a.de"),
                     "--out", str(d / "data"), "--dev-percent", "5", "--test-percent", "5"]) == 0
    assert cli.main(["spm", "--data", str(d / "data"), "--out", str(d / "vocab"),
                     "--vocab-size", "64"]) == 0
