// The text path of the C++ API: Model::EncodeSource / DecodeTarget and Translator::Translate,
// built on the embedded tokenizers and Translator::TranslateIds. It allocates (tokenization,
// result strings); the token-id path underneath does not.
#include <algorithm>
#include <string>
#include <vector>

#include "headwise/headwise.hpp"
#include "model_impl.h"
#include "search_options.h"
#include "tokenizer.h"

namespace headwise {
namespace {

Status NoTokenizer() { return Status(ErrorCode::kTokenizer, "model has no tokenizer"); }

std::string TextIndex(size_t i) { return "texts[" + std::to_string(i) + "]"; }

}  // namespace

Result<std::vector<int32_t>> Model::EncodeSource(const std::string& text) const {
  if (!impl_->tokenizer) return NoTokenizer();
  return impl_->tokenizer->EncodeSource(text);
}

Result<std::string> Model::DecodeTarget(const int32_t* ids, size_t size) const {
  if (!impl_->tokenizer) return NoTokenizer();
  return impl_->tokenizer->DecodeTarget(ids, size);
}

Result<std::vector<std::vector<TextHypothesis>>> Translator::Translate(
    const std::vector<std::string>& texts, const SearchOptions& options) {
  const TranslatorLimits& lim = limits();
  // Checked before tokenizing as well as in TranslateIds: a call whose lines are all blank
  // never reaches TranslateIds, and the answer to bad options must not depend on the text.
  HW_RETURN_IF_ERROR(ValidateSearchOptions(options, lim));
  const Model& m = *model();
  if (!m.impl().tokenizer) return NoTokenizer();
  const Tokenizer& tokenizer = *m.impl().tokenizer;

  // Every line is encoded and checked before the model runs, so a bad line fails the call
  // without wasting the work of the good ones.
  std::vector<std::vector<int32_t>> sources(texts.size());
  std::vector<size_t> pending;  // lines with at least one source piece
  for (size_t i = 0; i < texts.size(); ++i) {
    auto ids = tokenizer.EncodeSource(texts[i]);
    if (!ids.ok()) return ids.status().WithContext(TextIndex(i));
    if (ids->size() > static_cast<size_t>(lim.max_source_tokens)) {
      return Status(ErrorCode::kInputTooLong,
                    TextIndex(i) + ": " + std::to_string(ids->size()) +
                        " source tokens (EOS included) exceed max_source_tokens " +
                        std::to_string(lim.max_source_tokens));
    }
    if (ids->size() > 1) pending.push_back(i);
    sources[i] = std::move(ids).value();
  }

  std::vector<std::vector<TextHypothesis>> out(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    if (sources[i].size() <= 1) out[i].push_back(TextHypothesis{"", {}, 0.0f, true});
  }

  // Lines of similar length share a batch, so less of each batch is padding; results go back to
  // their input positions.
  std::stable_sort(pending.begin(), pending.end(), [&](size_t a, size_t b) {
    return sources[a].size() < sources[b].size();
  });
  const auto max_batch = static_cast<size_t>(lim.max_batch);
  std::vector<TokenSpan> spans;
  spans.reserve(std::min(max_batch, pending.size()));
  for (size_t start = 0; start < pending.size(); start += max_batch) {
    const size_t n = std::min(max_batch, pending.size() - start);
    spans.clear();
    for (size_t j = 0; j < n; ++j) {
      const auto& src = sources[pending[start + j]];
      spans.push_back(TokenSpan{src.data(), src.size()});
    }
    Status s = TranslateIds(spans.data(), n, options);
    if (!s.ok()) {
      std::string which;
      for (size_t j = 0; j < n; ++j) which += (j ? ", " : "") + std::to_string(pending[start + j]);
      return s.WithContext("translating texts [" + which + "]");
    }
    for (size_t j = 0; j < n; ++j) {
      const size_t line = pending[start + j];
      const size_t count = num_hypotheses(j);
      out[line].reserve(count);
      for (size_t k = 0; k < count; ++k) {
        const HypothesisView h = hypothesis(j, k);
        auto text = tokenizer.DecodeTarget(h.ids, h.size);
        if (!text.ok()) return text.status().WithContext(TextIndex(line));
        out[line].push_back(TextHypothesis{std::move(text).value(),
                                           std::vector<int32_t>(h.ids, h.ids + h.size), h.score,
                                           h.finished});
      }
    }
  }
  return out;
}

}  // namespace headwise
