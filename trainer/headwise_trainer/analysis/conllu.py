"""Syntactic heads (Voita et al. 2019, section 5.2) from CoNLL-U parses of source sentences.

A parse's sentence (``# text =``, else its word forms joined, honouring SpaceAfter=No) is
tokenised with the model's source SentencePiece; each word maps to its first subword (a
multi-word token's words share the token's first subword). For each relation in RELATIONS and
each direction, an instance is one arc: "REL:dep->head" asks whether the dependent's query puts
its maximum weight on the head's first subword, "REL:head->dep" the reverse. The baseline always
predicts the relation's most frequent relative offset (in subwords, over the instances seen);
a head is syntactic for a relation when its accuracy is >= baseline + SYNTACTIC_MARGIN with at
least MIN_INSTANCES instances. Encoder self-attention only: the parses are of the source, and
both ends of an arc must be positions of the same sequence.
UD v1 "dobj" is read as UD v2 "obj"; relation subtypes (nsubj:pass) count as their type.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import torch

RELATIONS = ("nsubj", "obj", "amod", "advmod")
DIRECTIONS = ("dep->head", "head->dep")
SYNTACTIC_MARGIN = 0.10
MIN_INSTANCES = 10


class ConlluError(ValueError):
    pass


@dataclass
class Word:
    index: int           # 1-based word id
    form: str
    head: int            # 0 = root
    deprel: str
    space_after: bool
    token: Tuple[int, int]  # the word ids of its surface token (itself, or its multi-word token)


@dataclass
class Sentence:
    text: str
    words: List[Word]
    line: int            # where it starts in the file


def read_conllu(path: str) -> List[Sentence]:
    """Parses ``path``; errors name the line and what was expected."""
    out: List[Sentence] = []
    words: List[Word] = []
    text: Optional[str] = None
    ranges: Dict[int, Tuple[int, int, bool, str]] = {}
    start = 1

    def finish():
        nonlocal words, text, ranges
        if words:
            out.append(Sentence(text if text is not None else _join(words), words, start))
        words, text, ranges = [], None, {}

    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n").rstrip("\r")
            if not line.strip():
                finish()
                start = n + 1
                continue
            if line.startswith("#"):
                if line.startswith("# text =") or line.startswith("# text="):
                    text = line.split("=", 1)[1].strip()
                continue
            cols = line.split("\t")
            if len(cols) != 10:
                raise ConlluError(f"{path}:{n}: expected 10 tab-separated CoNLL-U columns, "
                                  f"found {len(cols)}")
            wid, form, head, deprel, misc = cols[0], cols[1], cols[6], cols[7], cols[9]
            space = "SpaceAfter=No" not in misc.split("|")
            if "-" in wid:
                a, b = wid.split("-", 1)
                if not (a.isdigit() and b.isdigit()):
                    raise ConlluError(f"{path}:{n}: bad multi-word token id {wid!r}")
                for i in range(int(a), int(b) + 1):
                    ranges[i] = (int(a), int(b), space, form)
                continue
            if "." in wid:  # empty node of an enhanced graph
                continue
            if not wid.isdigit() or not head.isdigit():
                raise ConlluError(f"{path}:{n}: expected numeric ID and HEAD, found "
                                  f"{wid!r} and {head!r}")
            i = int(wid)
            tok = ranges.get(i)
            words.append(Word(i, tok[3] if tok else form, int(head), deprel,
                              tok[2] if tok else space, (tok[0], tok[1]) if tok else (i, i)))
    finish()
    return out


def _join(words: Sequence[Word]) -> str:
    parts, last = [], None
    for w in words:
        if w.token == last:
            continue
        last = w.token
        parts.append(w.form + (" " if w.space_after else ""))
    return "".join(parts).strip()


def relation(deprel: str) -> Optional[str]:
    base = deprel.split(":", 1)[0].lower()
    base = "obj" if base == "dobj" else base
    return base if base in RELATIONS else None


@dataclass
class Arcs:
    """A sentence as model ids (EOS appended) and its arcs between subword positions."""
    ids: List[int]
    arcs: List[Tuple[str, int, int]] = field(default_factory=list)  # (relation, dep, head)
    unmapped_words: int = 0


def to_subwords(sentence: Sentence, vocab) -> Arcs:
    """Tokenises the sentence as Vocab.encode_source does and maps words to first subwords."""
    proto = vocab.source.encode(sentence.text, out_type="immutable_proto")
    pieces = [(p.piece, p.begin, p.end) for p in proto.pieces]
    ids = [vocab.piece_to_id.get(p, vocab.unk_id) for p, _, _ in pieces] + [vocab.eos_id]
    first: Dict[Tuple[int, int], Optional[int]] = {}
    cursor = 0
    for w in sentence.words:
        if w.token in first:
            continue
        begin = sentence.text.find(w.form, cursor)
        if begin < 0:
            first[w.token] = None
            continue
        end = begin + len(w.form)
        cursor = end
        first[w.token] = next((k for k, (_, b, e) in enumerate(pieces)
                               if e > begin and b < end and e > b), None)
    position = {w.index: first[w.token] for w in sentence.words}
    out = Arcs(ids, unmapped_words=sum(1 for v in position.values() if v is None))
    for w in sentence.words:
        rel = relation(w.deprel)
        if rel is None or w.head == 0:
            continue
        d, h = position.get(w.index), position.get(w.head)
        if d is None or h is None or d == h:
            continue
        out.arcs.append((rel, d, h))
    return out


@dataclass
class SyntacticStats:
    """Per encoder block: hits per head and the true offsets, per "REL:direction"."""
    num_heads: Dict[str, int]
    hits: Dict[str, Dict[str, torch.Tensor]] = field(default_factory=dict)
    offsets: Dict[str, Counter] = field(default_factory=dict)

    def update(self, name: str, probs: torch.Tensor, arcs: Sequence[Arcs]) -> None:
        """``probs`` [B, H, S, S] of the sentences ``arcs`` (same order)."""
        arg = probs.detach().argmax(dim=-1)  # [B, H, S]
        block = self.hits.setdefault(name, {})
        for b, sent in enumerate(arcs):
            for rel, dep, head in sent.arcs:
                for direction, q, k in (("dep->head", dep, head), ("head->dep", head, dep)):
                    key = f"{rel}:{direction}"
                    block[key] = block.get(key, torch.zeros(self.num_heads[name])) \
                        + (arg[b, :, q] == k).double()
                    if name == next(iter(self.num_heads)):  # count offsets once
                        self.offsets.setdefault(key, Counter())[k - q] += 1

    def result(self, name: str, min_instances: int = MIN_INSTANCES,
               margin: float = SYNTACTIC_MARGIN) -> Tuple[List[dict], List[List[str]]]:
        """Per head: {"REL:dir": {"accuracy", "baseline", "count"}}, and its syntactic roles."""
        n_heads = self.num_heads[name]
        stats: List[dict] = [{} for _ in range(n_heads)]
        roles: List[List[str]] = [[] for _ in range(n_heads)]
        for key in sorted(self.offsets):
            count = sum(self.offsets[key].values())
            base = max(self.offsets[key].values()) / count
            hits = self.hits.get(name, {}).get(key)
            for h in range(n_heads):
                acc = float(hits[h]) / count if hits is not None else 0.0
                stats[h][key] = {"accuracy": acc, "baseline": base, "count": count}
                role = f"syntactic:{key.split(':')[0]}"
                if count >= min_instances and acc >= base + margin - 1e-12 and role not in roles[h]:
                    roles[h].append(role)
        return stats, roles
