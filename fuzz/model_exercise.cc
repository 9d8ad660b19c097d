#include "fuzz/model_exercise.h"

#include <algorithm>
#include <string>
#include <vector>

namespace headwise::fuzz {
namespace {

// `allowed`: the shortlist's union for the call (ascending), empty when the translator does
// not use one.
Status CheckHypotheses(const Translator& t, const SearchOptions& search, int vocab_size,
                       const std::vector<int32_t>& allowed) {
  const size_t n = t.num_hypotheses(0);
  if (n < 1 || n > static_cast<size_t>(search.num_hypotheses)) {
    return InternalError(std::to_string(n) + " hypotheses for num_hypotheses " +
                         std::to_string(search.num_hypotheses));
  }
  for (size_t k = 0; k < n; ++k) {
    const HypothesisView h = t.hypothesis(0, k);
    if (h.size > static_cast<size_t>(t.limits().max_target_tokens)) {
      return InternalError("hypothesis " + std::to_string(k) + " has " + std::to_string(h.size) +
                           " ids, over max_target_tokens");
    }
    for (size_t i = 0; i < h.size; ++i) {
      if (h.ids[i] < 0 || h.ids[i] >= vocab_size) {
        return InternalError("hypothesis " + std::to_string(k) + " position " + std::to_string(i) +
                             ": id " + std::to_string(h.ids[i]) + " outside the vocabulary");
      }
      if (t.uses_shortlist() && !std::binary_search(allowed.begin(), allowed.end(), h.ids[i])) {
        return InternalError("hypothesis " + std::to_string(k) + " position " + std::to_string(i) +
                             ": id " + std::to_string(h.ids[i]) + " outside the shortlist's union");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status ExerciseModel(const std::shared_ptr<const Model>& model) {
  const ModelInfo& info = model->info();
  TranslatorLimits limits;
  limits.max_batch = 2;
  limits.max_source_tokens = std::min(4, info.max_position_embeddings);
  limits.max_target_tokens = std::min(4, info.max_position_embeddings);
  limits.max_beam = 2;
  HW_ASSIGN_OR_RETURN(std::unique_ptr<Translator> translator, Translator::Create(model, limits));

  std::vector<int32_t> source;
  for (int32_t id = 0; id < info.vocab_size &&
                       source.size() + 1 < static_cast<size_t>(limits.max_source_tokens);
       ++id) {
    if (id != info.eos_token_id && id != info.pad_token_id) source.push_back(id);
  }
  source.push_back(info.eos_token_id);
  const TokenSpan span{source.data(), source.size()};
  HW_ASSIGN_OR_RETURN(const std::vector<int32_t> allowed, model->ShortlistPieces({source}));
  if (info.has_shortlist != translator->uses_shortlist()) {
    return InternalError("the model's shortlist is not used by default");
  }
  SearchOptions greedy;
  HW_RETURN_IF_ERROR(translator->TranslateIds(&span, 1, greedy));
  HW_RETURN_IF_ERROR(CheckHypotheses(*translator, greedy, info.vocab_size, allowed));
  SearchOptions beam;
  beam.beam_size = 2;
  beam.num_hypotheses = 2;
  HW_RETURN_IF_ERROR(translator->TranslateIds(&span, 1, beam));
  HW_RETURN_IF_ERROR(CheckHypotheses(*translator, beam, info.vocab_size, allowed));

  auto encoded = model->EncodeSource("Open it.");
  if (!encoded.ok()) {
    // A model without tokenizer says so; anything else is the tokenizer's own clean error.
    return encoded.status().code() == ErrorCode::kTokenizer ? Status::Ok() : encoded.status();
  }
  HW_ASSIGN_OR_RETURN(auto text, translator->Translate({"Open it.", " "}, beam));
  if (text.size() != 2) {
    return InternalError("Translate returned " + std::to_string(text.size()) + " results for 2");
  }
  for (const auto& hyps : text) {
    for (const TextHypothesis& h : hyps) {
      // Decoded text is valid UTF-8 (headwise.hpp); EncodeSource is the runtime's own check.
      auto back = model->EncodeSource(h.text);
      if (!back.ok() && back.status().code() == ErrorCode::kInvalidUtf8) {
        return InternalError("Translate produced invalid UTF-8: " + back.status().message());
      }
    }
  }
  return Status::Ok();
}

}  // namespace headwise::fuzz
