// runtime/src/tokenizer.h: the embedded tokenizers of a model, as OPUS-MT ships them.
// Source text -> source SentencePiece pieces -> ids through the shared vocabulary (unknown
// pieces -> unk) + EOS; target ids -> pieces (specials skipped) -> target SentencePiece decode;
// target text (a prefix) -> target pieces -> ids (no EOS; a piece outside the vocabulary fails).
//
// Hostile text (the rules Model::EncodeSource and Translator::Translate document):
//   - Invalid UTF-8 (RFC 3629: stray continuation bytes, truncated sequences, overlong forms,
//     surrogates U+D800..U+DFFF, code points over U+10FFFF) is rejected with kInvalidUtf8 naming
//     the byte offset of the first bad sequence; nothing is replaced or dropped silently.
//   - Control characters (C0 U+0000..U+001F including tab, newline and carriage return, DEL
//     U+007F, C1 U+0080..U+009F) are replaced by a space before SentencePiece sees the text, so
//     the result does not depend on the normalization rule of the embedded .spm.
//   - Blank text (only Unicode White_Space and control characters, or nothing) encodes to [EOS]
//     without calling SentencePiece.
//   - Text is taken as text: "</s>" or "<unk>" written in the input are encoded as ordinary
//     characters, never as the special tokens.
//   - Decoded text is always valid UTF-8 (a byte-fallback piece sequence that is not becomes
//     U+FFFD), with U+2581 "▁" turned into spaces and surrounding whitespace stripped as in
//     MarianTokenizer.
//
// Ownership: copies what it needs from the model file at Create (SentencePiece parses the
// protos into its own structures). Immutable after Create; Encode/Decode are thread-safe.
#ifndef HEADWISE_RUNTIME_TOKENIZER_H_
#define HEADWISE_RUNTIME_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "headwise/status.hpp"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace headwise {

struct SpecialIds {
  int32_t pad = 0;
  int32_t eos = 0;
  int32_t unk = 0;
};

class Tokenizer {
 public:
  // vocab[id] = piece. Errors: kTokenizer when a proto does not parse (SentencePiece's message
  // kept) or the vocabulary has duplicate pieces; kInvalidModel when special ids are outside
  // the vocabulary.
  static Result<std::unique_ptr<Tokenizer>> Create(std::string_view source_spm,
                                                   std::string_view target_spm,
                                                   std::vector<std::string> vocab,
                                                   SpecialIds specials);
  ~Tokenizer();

  // Source pieces mapped through the vocabulary (unknown pieces -> unk), then EOS.
  // Errors: kInvalidUtf8 naming the byte offset; kTokenizer (SentencePiece's message kept).
  Result<std::vector<int32_t>> EncodeSource(std::string_view text) const;
  // Target pieces mapped through the vocabulary, no EOS (a target prefix; blank text: none).
  // Errors: kInvalidUtf8 naming the byte offset; kTokenizer (SentencePiece's message kept, or a
  // piece the vocabulary lacks, named).
  Result<std::vector<int32_t>> EncodeTarget(std::string_view text) const;
  // pad, eos and unk ids are skipped. Errors: kInvalidArgument for an id outside the vocabulary;
  // kTokenizer.
  Result<std::string> DecodeTarget(const int32_t* ids, size_t size) const;

  size_t vocab_size() const { return vocab_.size(); }
  const std::string& piece(int32_t id) const { return vocab_[static_cast<size_t>(id)]; }

 private:
  Tokenizer() = default;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> source_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> target_;
  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int32_t> piece_to_id_;
  SpecialIds specials_;
};

// Returns the byte offset of the first invalid UTF-8 sequence in `text`, or npos when valid.
size_t FindInvalidUtf8(std::string_view text);

// kInvalidUtf8 for the bad sequence at byte `offset` of `text` (FindInvalidUtf8), naming the
// offset and the byte.
Status InvalidUtf8Error(std::string_view text, size_t offset);

// For valid UTF-8 only (check FindInvalidUtf8 first).
// Decodes the code point starting at text[i] into *cp and returns its length in bytes.
size_t DecodeCodePoint(std::string_view text, size_t i, char32_t* cp);
// True when `text` holds only Unicode White_Space and control characters (or nothing).
bool IsBlank(std::string_view text);
// `text` with every control character (see above) replaced by one ASCII space.
std::string ControlsToSpaces(std::string_view text);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_TOKENIZER_H_
