// tests/e2e/e2e_reference.h: the PyTorch reference outputs written by
// trainer/tools/make_test_checkpoints.py (reference.json per checkpoint, manifest.json listing
// the checkpoints), read into plain structs for the end-to-end tests.
#ifndef HEADWISE_TESTS_E2E_E2E_REFERENCE_H_
#define HEADWISE_TESTS_E2E_E2E_REFERENCE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "headwise/headwise.hpp"

namespace headwise_e2e {

struct RefHypothesis {
  std::vector<int32_t> ids;
  float score = 0.0f;
  bool finished = false;
};

struct RefSearch {
  std::string name;
  headwise::SearchOptions options;
  bool target_prefix = false;  // each source forced through its Reference::prefixes entry
  std::vector<std::vector<RefHypothesis>> results;  // per source, best first
  // Per source, the smallest score gap any decision of the search depended on (decode.py's
  // margins): a perturbation of the logits by less than half of it cannot change the result.
  std::vector<float> margins;
};

struct RefForced {
  std::vector<int32_t> source;
  std::vector<int32_t> target;
  std::vector<float> logits;  // (target.size() + 1) * vocab_size, row-major
};

struct RefTokenizerCase {
  std::string text;
  std::vector<int32_t> source_ids;  // Model::EncodeSource(text)
  std::vector<int32_t> target_ids;  // target-side pieces of text, without EOS
  std::string target_text;          // Model::DecodeTarget(target_ids)
};

struct Reference {
  std::string name;
  int vocab_size = 0;
  int eos_token_id = 0;
  int pad_token_id = 0;
  int unk_token_id = 0;
  std::map<std::string, std::vector<int>> layout;  // block name -> kept source heads
  headwise::TranslatorLimits limits;
  std::vector<std::vector<int32_t>> sources;
  std::vector<std::vector<int32_t>> prefixes;  // per source: the target_prefix searches' prefix
  std::vector<RefSearch> searches;
  // The same kind of searches on the checkpoint converted with its random shortlist.tsv
  // (NAME.shortlist.hwm): each source decoded over the pieces that shortlist allows for it.
  std::vector<RefSearch> shortlist_searches;
  std::vector<RefForced> forced;
  std::vector<RefTokenizerCase> tokenizer;
};

// Directory the ctest fixture wrote (environment HEADWISE_E2E_DIR); empty when unset.
std::string E2EDir();

// Checkpoint names from DIR/ckpt/manifest.json. Throws std::runtime_error naming the file.
std::vector<std::string> CheckpointNames(const std::string& dir);

// Parses a reference.json. Throws std::runtime_error naming the file and what was wrong.
Reference LoadReference(const std::string& path);

// "model.encoder.layers.3.self_attn" etc. for a block of ModelInfo::attention.
std::string BlockName(headwise::AttentionKind kind, int layer);

}  // namespace headwise_e2e

#endif  // HEADWISE_TESTS_E2E_E2E_REFERENCE_H_
