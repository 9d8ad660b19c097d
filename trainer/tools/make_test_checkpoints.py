#!/usr/bin/env python3
"""Writes small random gated MarianMT checkpoints and the PyTorch reference outputs that the C++
end-to-end tests compare the runtime with.

    make_test_checkpoints.py OUT_DIR [--only NAME ...] [--num-sources N]

For each layout in SPECS: OUT_DIR/NAME/ holds a complete checkpoint (config.json,
model.safetensors with gate log_alpha, source.spm, target.spm, vocab.json) and reference.json:
  {"format": 1, "name", "vocab_size", "eos_token_id", "pad_token_id",
   "layout": {block: [kept heads]},
   "limits": {"max_batch", "max_source_tokens", "max_target_tokens", "max_beam"},
   "sources": [[ids ending with EOS], ...],
   "searches": [{"name", "options": {"beam_size", "num_hypotheses", "length_penalty",
                 "max_length", "beam_stop" (beam only: exhaustive, top-eos or outscored),
                 "min_length" (optional), "sample", "seed", "top_k", "top_p", "temperature"
                 (optional, greedy only: random sampling)},
                 "results": [[{"ids", "score", "finished"}, ...] per source],
                 "margins": [the smallest decision margin (decode.py) per source]}],
   "shortlist_searches": [the same, with OUT_DIR/NAME/shortlist.tsv, a random vocabulary
                 shortlist in `headwise-train shortlist`'s file format: each source decoded over
                 the pieces that shortlist allows for it alone],
   "forced": [{"source", "target", "logits": [[vocab floats] x (len(target) + 1)]}],
   "tokenizer": [{"text", "source_ids", "target_ids", "target_text"}]}
Every output is computed by the gated model in eval mode (gates exactly 0 or 1), which is what a
runtime holding only the kept heads must reproduce. OUT_DIR/manifest.json lists the names.
Everything is seeded: two runs write identical bytes.

Weights are scaled so that next-token distributions are peaked (logit std ~5) and sources whose
search decisions hinge on a score gap below MIN_MARGIN (SAMPLE_MIN_MARGIN for the sampled searches'
shares of weight) are skipped, so float rounding differences between implementations cannot flip a
decision.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sentencepiece as spm  # noqa: E402

from headwise_trainer import (MarianConfig, MarianMTModel, Sampling, attach_gates,  # noqa: E402
                              beam_search, export_checkpoint, forced_logits, greedy, head_layout,
                              layout_summary)
from headwise_trainer.data import shortlist as sl_file  # noqa: E402
from headwise_trainer.model.gates import gates  # noqa: E402
from headwise_trainer.threads import set_threads  # noqa: E402

MIN_MARGIN = 2e-3
# Sampled searches: their margins are shares of the kept weight (and logit gaps), where the
# runtime's float32 logits move a running sum by about 1e-5 of it.
SAMPLE_MIN_MARGIN = 2e-4
LOGIT_STD = 4.0  # std of the logits of random inputs
EMB_IN = 2.0     # per-dimension std of a token embedding entering the first layer
NUM_SOURCES = 56
NUM_FORCED = 4
# Each beam search names its stopping rule (decode.BEAM_STOPS); beam4_nbest1_* run one search
# under each rule, so the end-to-end test also sees where the early rules change a result.
SEARCHES = [
    {"name": "greedy", "options": {"beam_size": 1, "num_hypotheses": 1, "length_penalty": 1.0,
                                   "max_length": 32}},
    {"name": "beam4_nbest4_lp1", "options": {"beam_size": 4, "num_hypotheses": 4,
                                             "length_penalty": 1.0, "max_length": 32,
                                             "beam_stop": "exhaustive"}},
    {"name": "beam3_nbest2_lp0.6_max12", "options": {"beam_size": 3, "num_hypotheses": 2,
                                                     "length_penalty": 0.6, "max_length": 12,
                                                     "beam_stop": "exhaustive"}},
    {"name": "beam3_nbest2_lp0.6_outscored", "options": {"beam_size": 3, "num_hypotheses": 2,
                                                         "length_penalty": 0.6, "max_length": 32,
                                                         "beam_stop": "outscored"}},
] + [{"name": f"beam4_nbest1_{stop}", "options": {"beam_size": 4, "num_hypotheses": 1,
                                                  "length_penalty": 1.0, "max_length": 32,
                                                  "beam_stop": stop}}
     for stop in ("exhaustive", "top-eos", "outscored")] + [
    # Forced through each source's target prefix ("prefixes": 0-3 random ids, none PAD or EOS).
    {"name": "greedy_prefixed", "target_prefix": True,
     "options": {"beam_size": 1, "num_hypotheses": 1, "length_penalty": 1.0, "max_length": 32}},
    {"name": "beam3_nbest2_prefixed", "target_prefix": True,
     "options": {"beam_size": 3, "num_hypotheses": 2, "length_penalty": 1.0, "max_length": 32,
                 "beam_stop": "exhaustive"}},
    # EOS held back (min_length) and random sampling: in id order, and cut by top_k / top_p
    # with a temperature, below a minimum length and after a prefix.
    {"name": "greedy_min6", "options": {"beam_size": 1, "num_hypotheses": 1,
                                        "length_penalty": 1.0, "max_length": 32, "min_length": 6}},
    {"name": "beam2_nbest2_min5_max12", "options": {"beam_size": 2, "num_hypotheses": 2,
                                                   "length_penalty": 1.0, "max_length": 12,
                                                   "beam_stop": "exhaustive", "min_length": 5}},
    {"name": "sample_seed7_max16", "options": {"beam_size": 1, "num_hypotheses": 1,
                                               "length_penalty": 1.0, "max_length": 16,
                                               "sample": True, "seed": 7}},
    {"name": "sample_k8_p0.9_t0.8_min3_prefixed", "target_prefix": True,
     "options": {"beam_size": 1, "num_hypotheses": 1, "length_penalty": 1.0, "max_length": 32,
                 "min_length": 3, "sample": True, "seed": 12345678901234567890, "top_k": 8,
                 "top_p": 0.9, "temperature": 0.8}},
]
# Searches under a random vocabulary shortlist (the runtime restricts each line to its own list).
SHORTLIST_SEARCHES = [
    {"name": "shortlist_greedy", "options": {"beam_size": 1, "num_hypotheses": 1,
                                             "length_penalty": 1.0, "max_length": 32}},
    {"name": "shortlist_beam3_nbest2_lp0.6", "options": {"beam_size": 3, "num_hypotheses": 2,
                                                         "length_penalty": 0.6, "max_length": 32,
                                                         "beam_stop": "exhaustive"}},
    {"name": "shortlist_sample_k8_seed5", "options": {"beam_size": 1, "num_hypotheses": 1,
                                                      "length_penalty": 1.0, "max_length": 16,
                                                      "sample": True, "seed": 5, "top_k": 8}},
]
SHORTLIST_FREQUENT = 0.25  # share of the vocabulary always allowed
SHORTLIST_LIST = 6         # targets per source id
MAX_BATCH = 8

SOURCE_TEXT = [
    "Open the file.", "Close the window before you leave.", "The cat sleeps on the warm roof.",
    "Where is the nearest train station?", "I would like a cup of coffee, please.",
    "The meeting starts at nine o'clock.", "Please save your work often.",
    "The children are playing in the garden.", "He reads a book every evening.",
    "We need more time to finish the project.", "The weather is cold and rainy today.",
    "Can you help me with this problem?", "She bought fresh bread at the market.",
    "The computer restarts after the update.", "My brother lives in a small town.",
    "The museum is closed on Mondays.", "Turn left at the next street.",
    "They travelled by bus to the mountains.", "The doctor will see you now.",
    "This translation model runs on a phone.", "Delete the old messages.",
    "The river flows through the old city.", "Our teacher explains the rules clearly.",
    "Press the button to start the engine.", "The price of the ticket is ten euros.",
    "I forgot my password again.", "The dog is waiting at the door.",
    "We eat dinner together on Sundays.", "The printer is out of paper.",
    "Summer holidays begin next week.", "The file could not be opened.",
    "Write a short letter to your friend.", "The shop sells shoes and hats.",
    "Rain is expected in the afternoon.", "Check the settings and try again.",
    "The train was late this morning.", "He plays the piano very well.",
    "Water boils at one hundred degrees.", "The library has many old books.",
    "Thank you for your patience.",
]
TARGET_TEXT = [
    "Öffne die Datei.", "Schließe das Fenster, bevor du gehst.", "Die Katze schläft auf dem warmen Dach.",
    "Wo ist der nächste Bahnhof?", "Ich hätte gern eine Tasse Kaffee, bitte.",
    "Die Besprechung beginnt um neun Uhr.", "Bitte speichere deine Arbeit oft.",
    "Die Kinder spielen im Garten.", "Er liest jeden Abend ein Buch.",
    "Wir brauchen mehr Zeit, um das Projekt zu beenden.", "Das Wetter ist heute kalt und regnerisch.",
    "Kannst du mir bei diesem Problem helfen?", "Sie kaufte frisches Brot auf dem Markt.",
    "Der Computer startet nach dem Update neu.", "Mein Bruder wohnt in einer kleinen Stadt.",
    "Das Museum ist montags geschlossen.", "Biege an der nächsten Straße links ab.",
    "Sie fuhren mit dem Bus in die Berge.", "Der Arzt empfängt Sie jetzt.",
    "Dieses Übersetzungsmodell läuft auf einem Telefon.", "Lösche die alten Nachrichten.",
    "Der Fluss fließt durch die Altstadt.", "Unser Lehrer erklärt die Regeln deutlich.",
    "Drücke den Knopf, um den Motor zu starten.", "Die Fahrkarte kostet zehn Euro.",
    "Ich habe mein Passwort schon wieder vergessen.", "Der Hund wartet an der Tür.",
    "Sonntags essen wir zusammen zu Abend.", "Der Drucker hat kein Papier mehr.",
    "Die Sommerferien beginnen nächste Woche.", "Die Datei konnte nicht geöffnet werden.",
    "Schreibe einen kurzen Brief an deinen Freund.", "Der Laden verkauft Schuhe und Hüte.",
    "Am Nachmittag wird Regen erwartet.", "Prüfe die Einstellungen und versuche es erneut.",
    "Der Zug hatte heute Morgen Verspätung.", "Er spielt sehr gut Klavier.",
    "Wasser kocht bei hundert Grad.", "Die Bibliothek hat viele alte Bücher.",
    "Danke für deine Geduld.",
]
TOKENIZER_CASES = ["Open the file.", "The old dog sleeps.", "Where is the zebra?", "ÄÖÜ ß 123",
                   "  leading and trailing spaces  "]


@dataclass
class Spec:
    name: str
    seed: int
    d_model: int
    encoder_layers: int
    decoder_layers: int
    encoder_heads: int
    decoder_heads: int
    ffn_dim: int
    activation: str
    shared: bool
    tied: bool
    scale_embedding: bool
    spm_vocab: int
    eos_bias: float  # final_logits_bias of EOS: sets how many outputs end before max length
    specials: Sequence[str]  # pieces at ids 0.. (and "<pad>" last when not listed)
    # Per kind, per layer, per head: 1 keep / 0 drop; a kind left out has no gates.
    keep: Dict[str, List[List[int]]] = field(default_factory=dict)


SPECS = [
    Spec("swish_shared_tied", seed=101, d_model=64, encoder_layers=3, decoder_layers=2,
         encoder_heads=4, decoder_heads=4, ffn_dim=128, activation="swish", shared=True,
         tied=True, scale_embedding=True, spm_vocab=110, eos_bias=12.0,
         specials=["</s>", "<unk>"],
         keep={"encoder_self": [[1, 1, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1]],
               "decoder_self": [[1, 0, 1, 0], [0, 1, 1, 1]],
               "decoder_cross": [[1, 1, 1, 0], [0, 0, 1, 0]]}),
    Spec("relu_unshared_untied", seed=202, d_model=48, encoder_layers=2, decoder_layers=3,
         encoder_heads=6, decoder_heads=3, ffn_dim=96, activation="relu", shared=False,
         tied=False, scale_embedding=False, spm_vocab=90, eos_bias=2.5,
         specials=["<pad>", "</s>", "<unk>"],
         keep={"encoder_self": [[1, 0, 1, 0, 1, 1], [0, 1, 0, 0, 0, 0]],
               "decoder_self": [[1, 1, 1], [0, 0, 1], [1, 0, 0]],
               "decoder_cross": [[1, 0, 1], [0, 0, 0], [1, 1, 1]]}),
    Spec("gelu_shared_untied", seed=303, d_model=32, encoder_layers=2, decoder_layers=2,
         encoder_heads=4, decoder_heads=2, ffn_dim=64, activation="gelu", shared=True,
         tied=False, scale_embedding=True, spm_vocab=80, eos_bias=2.5,
         specials=["</s>", "<unk>"],
         keep={"encoder_self": [[0, 0, 0, 0], [1, 0, 0, 1]],
               "decoder_self": [[1, 1], [0, 1]]}),
    Spec("swish_unshared_tied", seed=404, d_model=40, encoder_layers=2, decoder_layers=2,
         encoder_heads=5, decoder_heads=4, ffn_dim=80, activation="swish", shared=False,
         tied=True, scale_embedding=True, spm_vocab=100, eos_bias=3.5,
         specials=["</s>", "<unk>"],
         keep={"encoder_self": [[1, 1, 0, 0, 1], [1, 1, 1, 1, 1]]}),
]


def train_spm(sentences: Sequence[str], vocab_size: int) -> bytes:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_writer=out, vocab_size=vocab_size,
        model_type="unigram", character_coverage=1.0, hard_vocab_limit=False, num_threads=1,
        minloglevel=2)
    return out.getvalue()


def build_vocab(spec: Spec, source: spm.SentencePieceProcessor,
                target: spm.SentencePieceProcessor) -> List[str]:
    """id -> piece: the specials, then the source pieces, then target pieces not yet seen,
    then "<pad>" if it was not among the specials (OPUS-MT puts it last)."""
    pieces = list(spec.specials)
    seen = set(pieces) | {"<s>"}
    for sp in (source, target):
        for i in range(sp.get_piece_size()):
            p = sp.id_to_piece(i)
            if p not in seen and not sp.is_control(i) and not sp.is_unknown(i):
                pieces.append(p)
                seen.add(p)
    if "<pad>" not in seen:
        pieces.append("<pad>")
    return pieces


def make_model(spec: Spec, vocab: List[str]) -> MarianMTModel:
    ids = {p: i for i, p in enumerate(vocab)}
    config = MarianConfig(
        d_model=spec.d_model, encoder_layers=spec.encoder_layers,
        decoder_layers=spec.decoder_layers, encoder_attention_heads=spec.encoder_heads,
        decoder_attention_heads=spec.decoder_heads, encoder_ffn_dim=spec.ffn_dim,
        decoder_ffn_dim=spec.ffn_dim, activation_function=spec.activation,
        vocab_size=len(vocab), max_position_embeddings=128, pad_token_id=ids["<pad>"],
        eos_token_id=ids["</s>"], decoder_start_token_id=ids["<pad>"],
        scale_embedding=spec.scale_embedding, share_encoder_decoder_embeddings=spec.shared,
        tie_word_embeddings=spec.tied, dropout=0.0)
    model = MarianMTModel(config)
    g = torch.Generator().manual_seed(spec.seed)
    d = spec.d_model
    # Token embeddings enter the first layer with per-dimension std EMB_IN; the last LayerNorm's
    # gain then makes the logit std ~LOGIT_STD.
    emb_std = (EMB_IN / d ** 0.5) if spec.scale_embedding else EMB_IN
    last_norm = f"model.decoder.layers.{spec.decoder_layers - 1}.final_layer_norm.weight"
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("embed_tokens.weight") or name in ("model.shared.weight",
                                                                "lm_head.weight"):
                p.normal_(0.0, emb_std, generator=g)
            elif name == last_norm:
                p.uniform_(0.8, 1.2, generator=g).mul_(LOGIT_STD / (emb_std * d ** 0.5))
            elif "layer_norm.weight" in name:
                p.uniform_(0.7, 1.3, generator=g)
            elif p.dim() == 2:
                # N(0, 1/fan_in): larger q/k or output gains sharpen softmaxes and amplify
                # rounding, so float32 implementations would no longer agree to 1e-4.
                p.normal_(0.0, 1.0 / p.shape[1] ** 0.5, generator=g)
                if name.endswith("fc2.weight"):
                    # relu/swish/gelu outputs have a positive mean; zero row sums keep fc2 from
                    # turning it into one direction shared by every position.
                    p.sub_(p.mean(dim=1, keepdim=True))
            else:
                p.normal_(0.0, 0.1, generator=g)
        model.final_logits_bias.normal_(0.0, 0.5, generator=g)
        model.final_logits_bias[0, config.eos_token_id] = spec.eos_bias
    for kind in spec.keep:
        attach_gates(model, **{k: k == kind for k in ("encoder_self", "decoder_self",
                                                      "decoder_cross")})
    with torch.no_grad():
        blocks = {name: kind_layer for name, *kind_layer, _ in model.attention_blocks()}
        for name, gate in gates(model).items():
            kind, layer = blocks[name]
            keep = torch.tensor(spec.keep[kind][layer], dtype=torch.bool)
            magnitude = torch.empty(keep.shape).uniform_(0.5, 4.0, generator=g)
            gate.log_alpha.copy_(torch.where(keep, magnitude, -magnitude))
    return model.eval()


def random_sources(model: MarianMTModel, vocab: List[str], g: torch.Generator, count: int):
    cfg = model.config
    special = {cfg.pad_token_id, cfg.eos_token_id}
    ordinary = [i for i in range(cfg.vocab_size) if i not in special]
    out = []
    for k in range(count):
        length = 0 if k == 0 else int(torch.randint(1, 25, (1,), generator=g))
        ids = [ordinary[int(torch.randint(len(ordinary), (1,), generator=g))]
               for _ in range(length)]
        out.append(ids + [cfg.eos_token_id])
    return out


def encode_text(sp: spm.SentencePieceProcessor, ids: Dict[str, int], unk: int, eos: int,
                text: str) -> List[int]:
    return [ids.get(p, unk) for p in sp.encode(text, out_type=str)] + [eos]


def random_prefixes(model: MarianMTModel, g: torch.Generator, count: int) -> List[List[int]]:
    """Target prefixes of 0-3 ids (source k gets k % 4), none PAD or EOS."""
    cfg = model.config
    ordinary = [i for i in range(cfg.vocab_size) if i not in (cfg.pad_token_id, cfg.eos_token_id)]
    return [[ordinary[int(torch.randint(len(ordinary), (1,), generator=g))] for _ in range(k % 4)]
            for k in range(count)]


def run_search(model: MarianMTModel, sources, o: dict, prefixes=None, margins=None,
               allowed=None):
    """The hypotheses of one search (its "options" as written in reference.json) per source."""
    min_len = o.get("min_length", 0)
    if o["beam_size"] == 1:
        rule = (Sampling(o["seed"], o.get("top_k", 0), o.get("top_p", 1.0),
                         o.get("temperature", 1.0)) if o.get("sample") else None)
        return [[h] for h in greedy(model, sources, o["max_length"], o["length_penalty"],
                                    margins=margins, prefixes=prefixes, min_len=min_len,
                                    sampling=rule, allowed=allowed)]
    return beam_search(model, sources, o["beam_size"], o["num_hypotheses"], o["length_penalty"],
                       o["max_length"], margins=margins, stop=o["beam_stop"], prefixes=prefixes,
                       min_len=min_len, allowed=allowed)


def run_searches(model: MarianMTModel, sources: List[List[int]], prefixes: List[List[int]],
                 searches=SEARCHES, allowed=None):
    """Per search, per source: results and the smallest decision margin (``allowed``: each
    source's shortlist list)."""
    out = []
    for spec in searches:
        margins: List[float] = []
        results = []
        for i in range(0, len(sources), MAX_BATCH):
            forced = prefixes[i:i + MAX_BATCH] if spec.get("target_prefix") else None
            lists = allowed[i:i + MAX_BATCH] if allowed is not None else None
            results.extend(run_search(model, sources[i:i + MAX_BATCH], spec["options"], forced,
                                      margins, lists))
        out.append((results, margins))
    return out


def random_shortlist(model: MarianMTModel, vocab: List[str], g: torch.Generator,
                     unk: int) -> "sl_file.Shortlist":
    """A shortlist for this vocabulary: a random quarter of the pieces always allowed, and
    SHORTLIST_LIST random targets for every source piece (never PAD, EOS or UNK, which the
    runtime adds)."""
    cfg = model.config
    ordinary = [i for i in range(cfg.vocab_size) if i not in (cfg.pad_token_id, cfg.eos_token_id, unk)]
    order = torch.randperm(len(ordinary), generator=g).tolist()
    frequent = sorted(ordinary[k] for k in order[:int(SHORTLIST_FREQUENT * len(ordinary))])
    lists = {}
    for s in ordinary:
        picks = torch.randperm(len(ordinary), generator=g)[:SHORTLIST_LIST].tolist()
        lists[s] = [ordinary[k] for k in picks]
    return sl_file.Shortlist(cfg.vocab_size, sl_file.vocab_sha256(vocab), frequent, lists,
                             {"description": "random test shortlist"})


def build_reference(spec: Spec, model: MarianMTModel, vocab: List[str],
                    source_sp: spm.SentencePieceProcessor, target_sp: spm.SentencePieceProcessor,
                    num_sources: int) -> dict:
    cfg = model.config
    ids = {p: i for i, p in enumerate(vocab)}
    unk = ids["<unk>"]
    g = torch.Generator().manual_seed(spec.seed + 1)
    text_sources = [encode_text(source_sp, ids, unk, cfg.eos_token_id, t)
                    for t in SOURCE_TEXT[:10]]
    candidates = text_sources + random_sources(model, vocab, g, 4 * num_sources)
    # Their own generator: the other data stay as they were without prefixes.
    prefixes = random_prefixes(model, torch.Generator().manual_seed(spec.seed + 2),
                               len(candidates))
    per_search = run_searches(model, candidates, prefixes)
    shortlist = random_shortlist(model, vocab, torch.Generator().manual_seed(spec.seed + 3), unk)
    always = [cfg.eos_token_id, unk]
    allowed = [shortlist.union([src], always).tolist() for src in candidates]
    per_shortlist = run_searches(model, candidates, prefixes, SHORTLIST_SEARCHES, allowed)

    def passing(specs, runs):
        need = [SAMPLE_MIN_MARGIN if s["options"].get("sample") else MIN_MARGIN for s in specs]
        return {i for i in range(len(candidates))
                if all(margins[i] >= m for (_, margins), m in zip(runs, need))}

    plain, listed = passing(SEARCHES, per_search), passing(SHORTLIST_SEARCHES, per_shortlist)
    keep = sorted(plain & listed)[:num_sources]
    if len(keep) < num_sources:
        raise RuntimeError(f"{spec.name}: only {len(keep)} of {len(candidates)} sources have "
                           f"decision margins >= {MIN_MARGIN} ({len(plain)} in the searches, "
                           f"{len(listed)} in the shortlist searches); make the weights more "
                           "peaked")
    sources = [candidates[i] for i in keep]

    def records(specs, runs):
        return [{"name": search["name"], "options": search["options"],
                 "target_prefix": bool(search.get("target_prefix")), "results": [
                     [{"ids": h.ids, "score": h.score, "finished": h.finished}
                      for h in results[i]] for i in keep],
                 "margins": [margins[i] for i in keep]}
                for search, (results, margins) in zip(specs, runs)]

    searches = records(SEARCHES, per_search)
    shortlist_searches = records(SHORTLIST_SEARCHES, per_shortlist)
    # Forced pairs: greedy outputs (the runtime's own continuations) and random targets that
    # also feed special ids (EOS, PAD, unk) to the decoder.
    greedy_ids = [r[0]["ids"] for r in searches[0]["results"]]
    long_outputs = [i for i, ids in enumerate(greedy_ids) if len(ids) >= 4]
    forced = []
    for k in range(NUM_FORCED):
        if k % 2 == 0 and long_outputs:
            i = long_outputs[(k // 2) % len(long_outputs)]
            source, target = sources[i], greedy_ids[i][:12]
        else:
            source = sources[k]
            target = [int(t) for t in torch.randint(cfg.vocab_size, (3 + k,), generator=g)]
            target[1] = [cfg.eos_token_id, cfg.pad_token_id, unk][k % 3]
        logits = forced_logits(model, source, target)
        forced.append({"source": source, "target": target, "logits": logits.tolist()})
    tokenizer = []
    for text in TOKENIZER_CASES:
        target_ids = encode_text(target_sp, ids, unk, cfg.eos_token_id, text)[:-1]
        pieces = [vocab[i] for i in target_ids if i not in (cfg.pad_token_id, cfg.eos_token_id, unk)]
        tokenizer.append({"text": text,
                          "source_ids": encode_text(source_sp, ids, unk, cfg.eos_token_id, text),
                          "target_ids": target_ids,
                          # transformers' MarianTokenizer decodes, then strips.
                          "target_text": target_sp.decode_pieces(pieces).strip()})
    return {
        "format": 1, "name": spec.name, "vocab_size": cfg.vocab_size,
        "eos_token_id": cfg.eos_token_id, "pad_token_id": cfg.pad_token_id,
        "unk_token_id": unk, "layout": head_layout(model),
        "limits": {"max_batch": MAX_BATCH,
                   "max_source_tokens": max(len(s) for s in sources),
                   "max_target_tokens": max(s["options"]["max_length"] for s in SEARCHES),
                   "max_beam": max(s["options"]["beam_size"] for s in SEARCHES)},
        "sources": sources, "prefixes": [prefixes[i] for i in keep],
        "searches": searches, "shortlist_searches": shortlist_searches, "forced": forced,
        "tokenizer": tokenizer,
    }, shortlist


def write_json_atomic(path: Path, data) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, path)


def make_checkpoint(spec: Spec, out_dir: Path, num_sources: int) -> str:
    source_proto = train_spm(SOURCE_TEXT, spec.spm_vocab)
    target_proto = train_spm(TARGET_TEXT, spec.spm_vocab)
    source_sp = spm.SentencePieceProcessor(model_proto=source_proto)
    target_sp = spm.SentencePieceProcessor(model_proto=target_proto)
    vocab = build_vocab(spec, source_sp, target_sp)
    model = make_model(spec, vocab)
    reference, shortlist = build_reference(spec, model, vocab, source_sp, target_sp, num_sources)
    directory = export_checkpoint(model, out_dir / spec.name, source_proto, target_proto, vocab,
                                  overwrite=True)
    write_json_atomic(directory / "reference.json", reference)
    sl_file.write(str(Path(directory) / "shortlist.tsv"), shortlist)
    greedy_results = reference["searches"][0]["results"]
    finished = sum(r[0]["finished"] for r in greedy_results)
    distinct = len({tuple(r[0]["ids"]) for r in greedy_results})
    cfg = model.config
    return (f"{spec.name}: d_model {cfg.d_model}, {cfg.encoder_layers}+{cfg.decoder_layers} "
            f"layers, {cfg.activation_function}, vocab {cfg.vocab_size}, "
            f"{'shared' if cfg.share_encoder_decoder_embeddings else 'unshared'} embeddings, "
            f"{'tied' if cfg.tie_word_embeddings else 'untied'} lm_head\n"
            + "\n".join("  " + line for line in layout_summary(model).splitlines())
            + f"\n  {len(reference['sources'])} sources; greedy: {finished} finished, "
              f"{distinct} distinct outputs; {len(reference['forced'])} forced-logit pairs")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--only", action="append", default=None, metavar="NAME",
                        help="write only this checkpoint (repeatable)")
    parser.add_argument("--num-sources", type=int, default=NUM_SOURCES)
    args = parser.parse_args(argv)
    set_threads(1)  # torch's and OpenBLAS's: its float32 sums depend on its thread count
    names = [s.name for s in SPECS]
    chosen = args.only or names
    unknown = [n for n in chosen if n not in names]
    if unknown:
        parser.error(f"unknown checkpoint {unknown[0]!r}; expected one of {', '.join(names)}")
    if args.num_sources < NUM_FORCED:
        parser.error(f"--num-sources must be >= {NUM_FORCED}")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for spec in SPECS:
        if spec.name in chosen:
            print(make_checkpoint(spec, args.out_dir, args.num_sources), flush=True)
    write_json_atomic(args.out_dir / "manifest.json", {"checkpoints": chosen})
    return 0


if __name__ == "__main__":
    sys.exit(main())
