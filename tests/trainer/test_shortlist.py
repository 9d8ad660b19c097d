"""`headwise-train shortlist` (headwise_trainer/data/shortlist.py): the vectorised sentence-level
counts and the list rules against plain loops written from the module docstring, the file's
write/read round trip, and the union as format/shortlist.h defines it. The end to end path
(trainer -> converter -> runtime) is python/tests/test_shortlist.py."""
import os
import random
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "trainer"))

from headwise_trainer.data import shortlist as sl  # noqa: E402


def random_corpus(seed, lines, vocab, longest=9):
    rng = random.Random(seed)
    def side():
        return [[rng.randrange(vocab) for _ in range(rng.randrange(longest + 1))]
                for _ in range(lines)]
    return side(), side()


def packed(lines):
    lengths = np.array([len(x) for x in lines], dtype=np.int64)
    ids = np.array([i for x in lines for i in x], dtype=np.int64)
    return lengths, ids


def plain_counts(src, tgt, vocab):
    c_s, c_t, tokens, both = [0] * vocab, [0] * vocab, [0] * vocab, {}
    for s_line, t_line in zip(src, tgt):
        for s in set(s_line):
            c_s[s] += 1
        for t in set(t_line):
            c_t[t] += 1
        for t in t_line:
            tokens[t] += 1
        for s in set(s_line):
            for t in set(t_line):
                both[(s, t)] = both.get((s, t), 0) + 1
    return c_s, c_t, tokens, both


@pytest.mark.parametrize("seed,chunk", [(1, 20000), (2, 3), (3, 1)])
def test_counts_are_the_plain_loops(seed, chunk):
    vocab = 13
    src, tgt = random_corpus(seed, 60, vocab)
    c = sl.count(packed(src), packed(tgt), vocab, chunk=chunk)
    c_s, c_t, tokens, both = plain_counts(src, tgt, vocab)
    assert c.pairs == 60
    assert c.source.tolist() == c_s and c.target.tolist() == c_t and c.tokens.tolist() == tokens
    got = {(int(k) // vocab, int(k) % vocab): int(n) for k, n in zip(c.keys, c.both)}
    assert got == both
    assert c.keys.tolist() == sorted(c.keys.tolist())


def plain_lists(src, tgt, vocab, top_k, frequent, score, min_count, copy):
    c_s, c_t, tokens, both = plain_counts(src, tgt, vocab)
    ranked = sorted(range(vocab), key=lambda t: (-tokens[t], t))[:frequent]
    freq = sorted(t for t in ranked if tokens[t] > 0)
    lists = {}
    for s in range(vocab):
        cand = []
        for t in range(vocab):
            n = both.get((s, t), 0)
            if n == 0 or n < min_count or t in freq:
                continue
            value = 2.0 * n / (c_s[s] + c_t[t]) if score == "dice" else n / c_s[s]
            cand.append((-value, t))
        chosen = [t for _, t in sorted(cand)][:top_k]
        if copy and c_s[s] > 0 and c_t[s] > 0 and s not in freq and s not in chosen:
            chosen = [s] + chosen
        if chosen:
            lists[s] = chosen
    return freq, lists


@pytest.mark.parametrize("score", sl.SCORES)
@pytest.mark.parametrize("top_k,frequent,min_count,copy", [
    (3, 2, 1, True), (0, 0, 1, True), (5, 4, 2, False), (100, 0, 1, False)])
def test_lists_follow_the_documented_rules(score, top_k, frequent, min_count, copy):
    vocab = 17
    src, tgt = random_corpus(7, 80, vocab)
    c = sl.count(packed(src), packed(tgt), vocab)
    got = sl.make_lists(c, vocab, top_k, frequent, score, min_count, copy)
    assert got == plain_lists(src, tgt, vocab, top_k, frequent, score, min_count, copy)


def test_a_translation_pair_outranks_a_merely_frequent_piece_under_dice():
    # Source piece 1 always meets target 5; target 2 is in every line (frequent, but excluded
    # from lists only when it is among the --frequent pieces: here frequent = 0).
    src = [[1], [1], [3], [3], [4]]
    tgt = [[5, 2], [5, 2], [6, 2], [6, 2], [2]]
    c = sl.count(packed(src), packed(tgt), 8)
    freq, lists = sl.make_lists(c, 8, 1, 0, "dice", 1, False)
    assert freq == [] and lists[1] == [5] and lists[3] == [6] and lists[4] == [2]
    _, cond = sl.make_lists(c, 8, 1, 0, "cond", 1, False)
    assert cond[1] == [2]  # c(1,2) / c(1) = c(1,5) / c(1) = 1: the tie goes to the lower id


def test_file_round_trip_and_union(tmp_path):
    s = sl.Shortlist(9, "ab" * 32, [1, 4], {2: [7, 3], 5: [5]}, {"description": "x y"})
    path = str(tmp_path / "s.tsv")
    sl.write(path, s)
    text = open(path, encoding="utf-8").read()
    assert text == ("headwise-shortlist\t1\nvocab_size\t9\nvocab_sha256\t" + "ab" * 32 +
                    "\ndescription\tx y\nfrequent\t1 4\nsource\t2\t7 3\nsource\t5\t5\n")
    assert sl.read(path) == s
    assert s.union([[2, 0], [8]], [0, 6]).tolist() == [0, 1, 3, 4, 6, 7]
    with pytest.raises(sl.ShortlistError):
        sl.write(path, sl.Shortlist(9, "", [], {}, {"frequent": "1"}))


def test_vocab_hash_is_of_the_pieces_each_followed_by_nul():
    import hashlib
    assert sl.vocab_sha256(["</s>", "ä"]) == hashlib.sha256("</s>\0ä\0".encode()).hexdigest()
