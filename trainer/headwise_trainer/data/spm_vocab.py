"""SentencePiece vocabularies written the way OPUS-MT ships them.

Files: source.spm, target.spm (SentencePiece models; the same model twice when the vocabulary
is shared) and vocab.json (piece -> model id). Model ids follow OPUS-MT/Marian:
    0 = "</s>" (eos), 1 = "<unk>", 2.. = the pieces, vocab_size-1 = "<pad>"
and decoder_start_token_id = pad. SentencePiece is trained with eos_id=0 and unk_id=1, so for a
shared vocabulary a piece's model id equals its SentencePiece id. With separate vocabularies
the target pieces that the source model lacks follow the source pieces (one joint embedding).
Text -> ids: spm pieces -> vocab.json (unknown pieces -> <unk>) + </s>.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Dict, List, Sequence

import sentencepiece as spm

EOS, UNK, PAD = "</s>", "<unk>", "<pad>"


class VocabError(ValueError):
    pass


def _train_one(text_files: Sequence[str], out_path: str, spm_size: int, model_type: str,
               character_coverage: float) -> None:
    """Trains from an in-memory sentence iterator into an in-memory writer, so the model file
    records no paths (and is byte-identical wherever it is built)."""
    lines: List[str] = []
    for path in text_files:
        with open(path, encoding="utf-8") as f:
            lines.extend(ln for ln in f.read().split("\n") if ln)
    buf = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines), model_writer=buf, vocab_size=spm_size,
            model_type=model_type, character_coverage=character_coverage,
            eos_id=0, unk_id=1, bos_id=-1, pad_id=-1, eos_piece=EOS, unk_piece=UNK,
            input_sentence_size=0, shuffle_input_sentence=False, num_threads=1,
            hard_vocab_limit=True, minloglevel=2)
    except RuntimeError as e:  # SentencePiece status -> our error, keeping its message
        raise VocabError(f"SentencePiece training on {', '.join(text_files)} failed: "
                         f"{str(e).splitlines()[0]}") from e
    with open(out_path, "wb") as f:
        f.write(buf.getvalue())


def _pieces(model_path: str) -> List[str]:
    sp = spm.SentencePieceProcessor(model_file=model_path)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


def train_vocab(data_dir: str, out_dir: str, vocab_size: int = 8000, shared: bool = True,
                model_type: str = "unigram", character_coverage: float = 1.0,
                log=print) -> dict:
    """Trains on DATA_DIR/train.{src,tgt} (languages from manifest.json). `vocab_size` is the
    model vocabulary (incl. <pad>) for a shared vocabulary, and the size of each SentencePiece
    model + 1 for separate ones."""
    man_path = os.path.join(data_dir, "manifest.json")
    if not os.path.isfile(man_path):
        raise VocabError(f"{man_path}: not found; expected a corpus directory made by "
                         "'headwise-train data'")
    with open(man_path, encoding="utf-8") as f:
        man = json.load(f)
    src_lang, tgt_lang = man["source_lang"], man["target_lang"]
    src_txt = os.path.join(data_dir, f"train.{src_lang}")
    tgt_txt = os.path.join(data_dir, f"train.{tgt_lang}")
    for p in (src_txt, tgt_txt):
        if not os.path.isfile(p) or os.path.getsize(p) == 0:
            raise VocabError(f"{p}: expected a non-empty training split")
    if vocab_size < 16:
        raise VocabError(f"--vocab-size: expected at least 16, found {vocab_size}")
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        if shared:
            _train_one([src_txt, tgt_txt], os.path.join(tmp, "source.spm"), vocab_size - 1,
                       model_type, character_coverage)
            shutil.copyfile(os.path.join(tmp, "source.spm"), os.path.join(tmp, "target.spm"))
        else:
            _train_one([src_txt], os.path.join(tmp, "source.spm"), vocab_size - 1, model_type,
                       character_coverage)
            _train_one([tgt_txt], os.path.join(tmp, "target.spm"), vocab_size - 1, model_type,
                       character_coverage)
        vocab: Dict[str, int] = {}
        for piece in _pieces(os.path.join(tmp, "source.spm")) + \
                _pieces(os.path.join(tmp, "target.spm")):
            vocab.setdefault(piece, len(vocab))
        if vocab.get(EOS) != 0 or vocab.get(UNK) != 1:
            raise VocabError(f"internal: expected {EOS}=0 and {UNK}=1 in the trained vocabulary")
        vocab[PAD] = len(vocab)
        with open(os.path.join(tmp, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump(vocab, f, ensure_ascii=False, indent=2)
            f.write("\n")
        info = {"vocab_size": len(vocab), "shared": shared, "model_type": model_type,
                "source_lang": src_lang, "target_lang": tgt_lang,
                "eos_token_id": 0, "unk_token_id": 1, "pad_token_id": vocab[PAD],
                "decoder_start_token_id": vocab[PAD], "files": {}}
        for name in ("source.spm", "target.spm", "vocab.json"):
            with open(os.path.join(tmp, name), "rb") as f:
                info["files"][name] = hashlib.sha256(f.read()).hexdigest()
        with open(os.path.join(tmp, "vocab_info.json"), "w", encoding="utf-8") as f:
            json.dump(info, f, indent=2, sort_keys=True)
            f.write("\n")
        for name in ("source.spm", "target.spm", "vocab.json", "vocab_info.json"):
            os.replace(os.path.join(tmp, name), os.path.join(out_dir, name))
    log(f"spm: {len(vocab)} model ids ({'shared' if shared else 'separate'} {model_type}) "
        f"-> {out_dir}")
    return info


@dataclass
class Vocab:
    """Text <-> model ids with the OPUS-MT files of a vocabulary or checkpoint directory."""
    source: spm.SentencePieceProcessor
    target: spm.SentencePieceProcessor
    piece_to_id: Dict[str, int]
    id_to_piece: List[str]

    @property
    def eos_id(self) -> int:
        return self.piece_to_id[EOS]

    @property
    def unk_id(self) -> int:
        return self.piece_to_id[UNK]

    @property
    def pad_id(self) -> int:
        return self.piece_to_id[PAD]

    def __len__(self) -> int:
        return len(self.id_to_piece)

    @classmethod
    def load(cls, directory: str) -> "Vocab":
        paths = {n: os.path.join(directory, n) for n in ("source.spm", "target.spm", "vocab.json")}
        for p in paths.values():
            if not os.path.isfile(p):
                raise VocabError(f"{p}: not found; expected source.spm, target.spm and "
                                 "vocab.json in the vocabulary directory")
        with open(paths["vocab.json"], encoding="utf-8") as f:
            p2i = json.load(f)
        for tok in (EOS, UNK, PAD):
            if tok not in p2i:
                raise VocabError(f"{paths['vocab.json']}: expected the piece {tok!r}, not found")
        n = max(p2i.values()) + 1
        i2p = [UNK] * n
        for p, i in p2i.items():
            i2p[i] = p
        return cls(spm.SentencePieceProcessor(model_file=paths["source.spm"]),
                   spm.SentencePieceProcessor(model_file=paths["target.spm"]), p2i, i2p)

    def _ids(self, sp: spm.SentencePieceProcessor, text: str) -> List[int]:
        unk = self.unk_id
        return [self.piece_to_id.get(p, unk) for p in sp.encode(text, out_type=str)] + [self.eos_id]

    def encode_source(self, text: str) -> List[int]:
        return self._ids(self.source, text)

    def encode_target(self, text: str) -> List[int]:
        return self._ids(self.target, text)

    def decode_target(self, ids: Sequence[int]) -> str:
        """The text of target ids up to EOS (PAD skipped), stripped as transformers'
        MarianTokenizer and the runtime's Model::DecodeTarget strip it (an output ending in a
        lone word-boundary piece would otherwise end in a space)."""
        special = {self.eos_id, self.pad_id}
        pieces = []
        for i in ids:
            i = int(i)
            if i == self.eos_id:
                break
            if i in special:
                continue
            pieces.append(self.id_to_piece[i])
        return self.target.decode_pieces(pieces).strip()
