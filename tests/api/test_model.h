// tests/api/test_model.h: tiny SentencePiece models trained with spm_train and random-weight
// .hwm models carrying them, for the text path, C API and CLI tests. Tests only.
//
// The models translate nothing meaningful: they exist to exercise tokenization, limits, batching
// and the API surface, whose results must not depend on what the weights say.
#ifndef HEADWISE_TESTS_API_TEST_MODEL_H_
#define HEADWISE_TESTS_API_TEST_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "format/model_writer.h"
#include "headwise/status.hpp"
#include "tests/support/synthetic_model.h"

namespace headwise::testing {

// Marian's special ids in every vocabulary built here: "</s>" = 0, "<unk>" = 1, "<pad>" last.
inline constexpr int32_t kEos = 0;
inline constexpr int32_t kUnk = 1;

struct Spm {
  std::string proto;                // serialized ModelProto (the .model file)
  std::vector<std::string> pieces;  // its pieces without <unk>, <s>, </s>, in id order
};

// Trains a unigram model with spm_train in `dir` on a small fixed corpus ("en": English
// sentences, "de": German ones). `byte_fallback` adds the 256 <0xNN> pieces. Deterministic.
Result<Spm> TrainSpm(const std::string& dir, const std::string& language, int vocab_size,
                     bool byte_fallback = false);

// Marian-style vocabulary: "</s>", "<unk>", the source pieces, the target pieces not already
// present, `extra` (pieces the .spm models do not know), "<pad>".
std::vector<std::string> MarianVocab(const Spm& source, const Spm& target,
                                     const std::vector<std::string>& extra = {});

// The API tests' preset of the shared builder (tests/support/synthetic_model.h): a valid
// ModelSpec with seeded N(0, 0.5) weights, d_model 16, 4 heads per block of which some are
// pruned (one decoder cross-attention block keeps none), relu. With a tokenizer, its vocab is
// MarianVocab(source, target); without (source == nullptr), vocab_size 40 and no tokenizer.
// pad = decoder_start = vocab_size - 1. A bias on EOS makes most outputs end early.
ModelSpec RandomModelSpec(const Spm* source, const Spm* target, uint32_t seed = 7,
                          uint32_t max_position_embeddings = 512);

// The corpus lines TrainSpm uses for `language`.
const std::vector<std::string>& Corpus(const std::string& language);

// A fresh directory under $TMPDIR (or /tmp) removed with its contents at destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }  // empty if creation failed
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Writes the standard test models into `dir`: tiny.hwm (tokenizer, source "en" / target "de"),
// tiny.fp16.hwm and tiny.int8.hwm (its weight matrices in F16 / I8) and no_tokenizer.hwm.
// Returns the first error.
Status WriteStandardModels(const std::string& dir);

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_API_TEST_MODEL_H_
