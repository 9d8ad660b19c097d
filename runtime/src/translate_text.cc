// The text path of the C++ API: Model::EncodeSource / DecodeTarget and Translator::Translate,
// built on the embedded tokenizers and Translator::TranslateIds. It allocates (tokenization,
// result strings); the token-id path underneath does not.
#include <algorithm>
#include <string>
#include <utility>
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

namespace {

// One line's outcome in TranslateLines.
struct LineOutcome {
  Status status;
  std::vector<TextHypothesis> hypotheses;
};

// The text path shared by Translate and TranslateEach. Every line is encoded and checked before
// the model runs, so a bad line costs only itself. `each` false: the first bad line (or failed
// batch) is returned as the call's status; true: it is recorded in that line's outcome and the
// call goes on. Lines of similar length share a batch, so less of each batch is padding;
// outcomes keep the input order.
Status TranslateLines(Translator& translator, const Tokenizer& tokenizer,
                      const std::vector<std::string>& texts, const SearchOptions& options,
                      bool each, std::vector<LineOutcome>* out) {
  const TranslatorLimits& lim = translator.limits();
  out->assign(texts.size(), LineOutcome{});
  std::vector<std::vector<int32_t>> sources(texts.size());
  std::vector<size_t> pending;  // lines with at least one source piece
  for (size_t i = 0; i < texts.size(); ++i) {
    Status& line = (*out)[i].status;
    auto ids = tokenizer.EncodeSource(texts[i]);
    if (!ids.ok()) {
      line = ids.status().WithContext(TextIndex(i));
    } else if (ids->size() > static_cast<size_t>(lim.max_source_tokens)) {
      line = Status(ErrorCode::kInputTooLong,
                    TextIndex(i) + ": " + std::to_string(ids->size()) +
                        " source tokens (EOS included) exceed max_source_tokens " +
                        std::to_string(lim.max_source_tokens));
    } else if (ids->size() <= 1) {
      (*out)[i].hypotheses.push_back(TextHypothesis{"", {}, 0.0f, true});
    } else {
      pending.push_back(i);
      sources[i] = std::move(ids).value();
    }
    if (!line.ok() && !each) return line;
  }

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
    Status s = translator.TranslateIds(spans.data(), n, options);
    if (!s.ok()) {
      std::string which;
      for (size_t j = 0; j < n; ++j) which += (j ? ", " : "") + std::to_string(pending[start + j]);
      s = s.WithContext("translating texts [" + which + "]");
      if (!each) return s;
      for (size_t j = 0; j < n; ++j) (*out)[pending[start + j]].status = s;
      continue;
    }
    for (size_t j = 0; j < n; ++j) {
      const size_t line = pending[start + j];
      LineOutcome& o = (*out)[line];
      const size_t count = translator.num_hypotheses(j);
      o.hypotheses.reserve(count);
      for (size_t k = 0; k < count; ++k) {
        const HypothesisView h = translator.hypothesis(j, k);
        auto text = tokenizer.DecodeTarget(h.ids, h.size);
        if (!text.ok()) {
          o.status = text.status().WithContext(TextIndex(line));
          if (!each) return o.status;
          o.hypotheses.clear();
          break;
        }
        o.hypotheses.push_back(TextHypothesis{std::move(text).value(),
                                              std::vector<int32_t>(h.ids, h.ids + h.size),
                                              h.score, h.finished});
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::vector<TextHypothesis>>> Translator::Translate(
    const std::vector<std::string>& texts, const SearchOptions& options) {
  // Checked before tokenizing as well as in TranslateIds: a call whose lines are all blank
  // never reaches TranslateIds, and the answer to bad options must not depend on the text.
  HW_RETURN_IF_ERROR(ValidateSearchOptions(options, limits()));
  if (!model()->impl().tokenizer) return NoTokenizer();
  std::vector<LineOutcome> lines;
  HW_RETURN_IF_ERROR(
      TranslateLines(*this, *model()->impl().tokenizer, texts, options, false, &lines));
  std::vector<std::vector<TextHypothesis>> out(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) out[i] = std::move(lines[i].hypotheses);
  return out;
}

Result<std::vector<Result<std::vector<TextHypothesis>>>> Translator::TranslateEach(
    const std::vector<std::string>& texts, const SearchOptions& options) {
  HW_RETURN_IF_ERROR(ValidateSearchOptions(options, limits()));
  if (!model()->impl().tokenizer) return NoTokenizer();
  std::vector<LineOutcome> lines;
  HW_RETURN_IF_ERROR(
      TranslateLines(*this, *model()->impl().tokenizer, texts, options, true, &lines));
  std::vector<Result<std::vector<TextHypothesis>>> out;
  out.reserve(lines.size());
  for (LineOutcome& line : lines) {
    if (line.status.ok()) {
      out.emplace_back(std::move(line.hypotheses));
    } else {
      out.emplace_back(std::move(line.status));
    }
  }
  return out;
}

}  // namespace headwise
