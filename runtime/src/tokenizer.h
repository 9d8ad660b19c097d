// runtime/src/tokenizer.h: the embedded tokenizers of a model, as OPUS-MT ships them.
// Source text -> source SentencePiece pieces -> ids through the shared vocabulary (unknown
// pieces -> unk) + EOS; target ids -> pieces (specials skipped) -> target SentencePiece decode.
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

  // Errors: kInvalidUtf8 naming the byte offset; kTokenizer.
  Result<std::vector<int32_t>> EncodeSource(std::string_view text) const;
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

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_TOKENIZER_H_
