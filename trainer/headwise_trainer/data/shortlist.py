"""`headwise-train shortlist`: a lexical vocabulary shortlist from a parallel corpus.

For every source piece, the target pieces that co-occur with it most strongly in the training
pairs, plus the most frequent target pieces: the runtime (when the converter stored the file
with `headwise-convert --shortlist`) computes the output layer of a batch only over the union
of the lists of its source pieces, the frequent pieces, EOS and UNK, as Marian's lexical
shortlists and CTranslate2's vocabulary map do.

How the lists are made (deterministic: same corpus and vocabulary, same file):
  - Both sides of the split are encoded with the vocabulary's SentencePiece models and mapped
    to model ids through vocab.json (unknown pieces -> <unk>), as the runtime encodes.
  - Counted per sentence pair, each piece once per side: c(s) pairs whose source holds s,
    c(t) pairs whose target holds t, c(s, t) pairs holding both.
  - frequent: the `--frequent` target pieces with the most occurrences (tokens), ties by id.
  - The list of s: its `--top-k` target pieces by score, excluding the frequent ones (always
    allowed anyway), ties by id; only pieces with c(s, t) >= `--min-count`. Score `dice`
    (default) = 2 c(s, t) / (c(s) + c(t)) (favours translation pairs over pieces that are
    merely frequent), `cond` = c(s, t) / c(s) (Marian's p(t|s) without alignments).
  - Copies (unless `--no-copy`): s itself is put first in its own list, beyond the top k, when
    it also occurs as a target piece and is not frequent (names, placeholders and code are
    copied in software translations; the vocabulary is shared).
EOS and UNK are added by the runtime and are never in a list.

The file (UTF-8 text, one record per line, fields separated by one TAB; `#` lines are
comments; converter/src/shortlist_reader.h is the reader):
    headwise-shortlist  1
    vocab_size          N
    vocab_sha256        SHA-256 of the pieces in id order, each followed by one NUL byte
    description         how it was made (stored in the model file)
    top_k, frequent_pieces, score, min_count, copy, data, split, pairs   informational
    frequent            ID ID ...               (ascending)
    source              SOURCE_ID  ID ID ...    (one per source id with a list, ascending source
                                                 ids; the list best first)
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

MAGIC = "headwise-shortlist"
VERSION = "1"
SCORES = ("dice", "cond")


class ShortlistError(ValueError):
    pass


@dataclass
class Shortlist:
    """A shortlist in memory: `frequent` ascending, lists[s] best first."""
    vocab_size: int
    vocab_sha256: str
    frequent: List[int]
    lists: Dict[int, List[int]]
    header: Dict[str, str] = field(default_factory=dict)

    def union(self, sources: Sequence[Sequence[int]], always: Sequence[int]) -> np.ndarray:
        """The ids a batch of these source id sequences may produce (ascending), as the
        runtime computes it (format/shortlist.h) with `always` = EOS, UNK."""
        mark = np.zeros(self.vocab_size, dtype=bool)
        mark[self.frequent] = True
        mark[list(always)] = True
        for src in sources:
            for s in src:
                lst = self.lists.get(int(s))
                if lst:
                    mark[lst] = True
        return np.flatnonzero(mark)


def vocab_sha256(id_to_piece: Sequence[str]) -> str:
    h = hashlib.sha256()
    for p in id_to_piece:
        h.update(p.encode("utf-8") + b"\0")
    return h.hexdigest()


def encode_file(path: str, sp, piece_to_id: Dict[str, int], unk: int,
                limit: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """(lengths, ids) of every line of `path` (EOS not added): the SentencePiece ids mapped to
    model ids through the vocabulary, as the runtime's tokenizer maps pieces."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if limit:
        lines = lines[:limit]
    table = np.array([piece_to_id.get(sp.id_to_piece(i), unk) for i in range(sp.get_piece_size())],
                     dtype=np.int64)
    encoded = sp.encode(lines, out_type=int)
    lengths = np.fromiter((len(e) for e in encoded), dtype=np.int64, count=len(encoded))
    flat = np.fromiter((i for e in encoded for i in e), dtype=np.int64, count=int(lengths.sum()))
    return lengths, table[flat] if flat.size else flat


def _unique_per_line(lengths: np.ndarray, ids: np.ndarray, vocab: int) -> Tuple[np.ndarray, np.ndarray]:
    """Each line's distinct ids, ascending: (per-line counts, ids)."""
    line = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    keys = np.unique(line * vocab + ids)
    return np.bincount(keys // vocab, minlength=lengths.size), (keys % vocab).astype(np.int64)


def _merge(parts: List[Tuple[np.ndarray, np.ndarray]]) -> Tuple[np.ndarray, np.ndarray]:
    keys = np.concatenate([p[0] for p in parts])
    counts = np.concatenate([p[1] for p in parts])
    order = np.argsort(keys, kind="stable")
    keys, counts = keys[order], counts[order]
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    return keys[starts], np.add.reduceat(counts, starts)


@dataclass
class Counts:
    pairs: int
    keys: np.ndarray     # s * V + t of every co-occurring pair, ascending
    both: np.ndarray     # c(s, t)
    source: np.ndarray   # c(s), [V]
    target: np.ndarray   # c(t), [V]
    tokens: np.ndarray   # target occurrences, [V]


def count(src: Tuple[np.ndarray, np.ndarray], tgt: Tuple[np.ndarray, np.ndarray], vocab: int,
          chunk: int = 20000) -> Counts:
    """Sentence-level co-occurrence counts of source and target ids."""
    (src_len, src_ids), (tgt_len, tgt_ids) = src, tgt
    if src_len.size != tgt_len.size:
        raise ShortlistError(f"{src_len.size} source lines but {tgt_len.size} target lines")
    s_len, s_ids = _unique_per_line(src_len, src_ids, vocab)
    t_len, t_ids = _unique_per_line(tgt_len, tgt_ids, vocab)
    s_start = np.concatenate([[0], np.cumsum(s_len)])
    t_start = np.concatenate([[0], np.cumsum(t_len)])
    n = src_len.size
    parts: List[Tuple[np.ndarray, np.ndarray]] = []
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        lines = np.repeat(np.arange(a, b), s_len[a:b])  # the line of each source id
        src = s_ids[s_start[a]:s_start[b]]
        reps = t_len[lines]                             # pair it with each target id
        total = int(reps.sum())
        if total == 0:
            continue
        within = np.arange(total) - np.repeat(np.cumsum(reps) - reps, reps)
        tgt = t_ids[np.repeat(t_start[lines], reps) + within]
        keys, counts = np.unique(np.repeat(src, reps) * vocab + tgt, return_counts=True)
        parts.append((keys, counts))
        if len(parts) >= 8:
            parts = [_merge(parts)]
    keys, both = _merge(parts) if parts else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    return Counts(n, keys, both, np.bincount(s_ids, minlength=vocab),
                  np.bincount(t_ids, minlength=vocab), np.bincount(tgt_ids, minlength=vocab))


def make_lists(c: Counts, vocab: int, top_k: int, frequent: int, score: str = "dice",
               min_count: int = 1, copy: bool = True) -> Tuple[List[int], Dict[int, List[int]]]:
    """(frequent ids ascending, {source id: target ids best first})."""
    if score not in SCORES:
        raise ShortlistError(f"score {score!r}: expected one of {', '.join(SCORES)}")
    by_tokens = np.lexsort((np.arange(vocab), -c.tokens))  # most occurrences first, ties by id
    freq = np.sort(by_tokens[:frequent][c.tokens[by_tokens[:frequent]] > 0])
    is_frequent = np.zeros(vocab, dtype=bool)
    is_frequent[freq] = True
    s, t = c.keys // vocab, c.keys % vocab
    both = c.both.astype(np.float64)
    if score == "dice":
        value = 2.0 * both / (c.source[s] + c.target[t])
    else:
        value = both / c.source[s]
    keep = (~is_frequent[t]) & (c.both >= min_count)
    s, t, value = s[keep], t[keep], value[keep]
    order = np.lexsort((t, -value, s))  # per source: best score first, ties by lower id
    s, t = s[order], t[order]
    first = np.searchsorted(s, np.arange(vocab + 1))
    lists: Dict[int, List[int]] = {}
    for src in range(vocab):
        chosen = t[first[src]:first[src + 1]][:top_k].tolist()
        if copy and c.source[src] > 0 and c.target[src] > 0 and not is_frequent[src] \
                and src not in chosen:
            chosen = [src] + chosen
        if chosen:
            lists[src] = chosen
    return freq.tolist(), lists


def write(path: str, sl: Shortlist) -> None:
    """Writes the file atomically (temporary file + rename)."""
    lines = [f"{MAGIC}\t{VERSION}", f"vocab_size\t{sl.vocab_size}",
             f"vocab_sha256\t{sl.vocab_sha256}"]
    for key, value in sl.header.items():
        if key in ("frequent", "source", MAGIC, "vocab_size", "vocab_sha256"):
            raise ShortlistError(f"header {key!r}: a reserved record name")
        if "\t" in key or "\n" in key or "\t" in value or "\n" in value:
            raise ShortlistError(f"header {key!r}: tabs and newlines are not allowed")
        lines.append(f"{key}\t{value}")
    lines.append("frequent\t" + " ".join(map(str, sl.frequent)))
    for s in sorted(sl.lists):
        lines.append(f"source\t{s}\t" + " ".join(map(str, sl.lists[s])))
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def read(path: str) -> Shortlist:
    """Reads a shortlist file (the converter checks it more strictly)."""
    header: Dict[str, str] = {}
    frequent: Optional[List[int]] = None
    lists: Dict[int, List[int]] = {}
    with open(path, encoding="utf-8") as f:
        lines = [ln.rstrip("\n") for ln in f]
    body = [ln for ln in lines if ln and not ln.startswith("#")]
    if not body or body[0] != f"{MAGIC}\t{VERSION}":
        raise ShortlistError(f"{path}: not a headwise shortlist (expected '{MAGIC}<TAB>{VERSION}' "
                             "first)")
    for ln in body[1:]:
        f_ = ln.split("\t")
        if f_[0] == "frequent":
            frequent = [int(x) for x in f_[1].split()] if len(f_) > 1 else []
        elif f_[0] == "source":
            lists[int(f_[1])] = [int(x) for x in f_[2].split()]
        elif frequent is None and len(f_) == 2:
            header[f_[0]] = f_[1]
        else:
            raise ShortlistError(f"{path}: unexpected record {ln[:60]!r}")
    if frequent is None or "vocab_size" not in header or "vocab_sha256" not in header:
        raise ShortlistError(f"{path}: vocab_size, vocab_sha256 and frequent are required")
    size, sha = int(header.pop("vocab_size")), header.pop("vocab_sha256")
    return Shortlist(size, sha, frequent, lists, header)


def coverage(sl: Shortlist, sources: Sequence[np.ndarray], targets: Sequence[np.ndarray],
             always: Sequence[int]) -> dict:
    """How much of each target line the union of its source line allows (batch of one): the
    share of target tokens inside, the share of lines entirely inside, the union sizes."""
    sizes, inside, tokens, whole = [], 0, 0, 0
    for src, tgt in zip(sources, targets):
        mark = np.zeros(sl.vocab_size, dtype=bool)
        mark[sl.union([src], always)] = True
        sizes.append(int(mark.sum()))
        got = int(mark[np.asarray(tgt, dtype=np.int64)].sum()) if len(tgt) else 0
        inside += got
        tokens += len(tgt)
        whole += got == len(tgt)
    lines = max(len(sizes), 1)
    return {"lines": len(sizes), "tokens_inside": inside / max(tokens, 1),
            "lines_inside": whole / lines, "union_mean": float(np.mean(sizes)) if sizes else 0.0,
            "union_max": max(sizes) if sizes else 0, "vocab_size": sl.vocab_size}


def split_lines(lengths: np.ndarray, ids: np.ndarray) -> List[np.ndarray]:
    starts = np.concatenate([[0], np.cumsum(lengths)])
    return [ids[starts[i]:starts[i + 1]] for i in range(lengths.size)]
