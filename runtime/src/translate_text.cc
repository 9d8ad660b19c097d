// The text path of the C++ API: Model::EncodeSource / DecodeTarget and Translator::Translate,
// built on the embedded tokenizers and Translator::TranslateIdsEach (batching.cc), which sorts
// and batches each window of lines. It allocates (tokenization,
// result strings); the token-id path underneath does not.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "batching.h"
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

// Passes each batch to the caller's observer with the lines renumbered from the window's
// pending lines to indices into the call's texts.
class TextBatchObserver final : public BatchObserver {
 public:
  TextBatchObserver(BatchObserver* user, const std::vector<size_t>& pending)
      : user_(user), pending_(pending) {}
  void OnBatch(const BatchReport& batch) override {
    lines_.resize(batch.num_lines);
    for (size_t j = 0; j < batch.num_lines; ++j) lines_[j] = pending_[batch.lines[j]];
    BatchReport text = batch;
    text.lines = lines_.data();
    user_->OnBatch(text);
  }

 private:
  BatchObserver* user_;
  const std::vector<size_t>& pending_;
  std::vector<size_t> lines_;
};

// The text path shared by Translate and TranslateEach. Every line is encoded and checked before
// the model runs, so a bad line costs only itself (and Translate fails before translating
// anything). `each` false: the first bad line (or failed batch) is returned as the call's
// status; true: it is recorded in that line's outcome and the call goes on. The lines that are
// neither bad nor blank go to TranslateIdsEach window by window (sort_window input lines at a
// time), which sorts them by length and cuts the batches; outcomes keep the input order.
Status TranslateLines(Translator& translator, const Tokenizer& tokenizer,
                      const std::vector<std::string>& texts, const SearchOptions& options,
                      const BatchOptions& batching, bool each, std::vector<LineOutcome>* out) {
  const TranslatorLimits& lim = translator.limits();
  out->assign(texts.size(), LineOutcome{});
  std::vector<std::vector<int32_t>> sources(texts.size());  // empty: bad or blank line
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
      sources[i] = std::move(ids).value();
    }
    if (!line.ok() && !each) return line;
  }

  const auto window = static_cast<size_t>(lim.sort_window);
  std::vector<size_t> pending;  // the window's lines with at least one source piece
  std::vector<TokenSpan> spans;
  TextBatchObserver text_observer(batching.observer, pending);
  BatchOptions window_batching = batching;
  if (batching.observer != nullptr) window_batching.observer = &text_observer;
  for (size_t first = 0; first < texts.size(); first += window) {
    pending.clear();
    spans.clear();
    for (size_t i = first; i < std::min(texts.size(), first + window); ++i) {
      if (sources[i].empty()) continue;
      pending.push_back(i);
      spans.push_back(TokenSpan{sources[i].data(), sources[i].size()});
    }
    if (pending.empty()) continue;
    HW_RETURN_IF_ERROR(
        translator.TranslateIdsEach(spans.data(), spans.size(), options, window_batching));
    for (size_t j = 0; j < pending.size(); ++j) {
      const size_t line = pending[j];
      LineOutcome& o = (*out)[line];
      if (const Status& s = translator.line_status(j); !s.ok()) {
        o.status = s.WithContext(TextIndex(line));
        if (!each) return o.status;
        continue;
      }
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
    const std::vector<std::string>& texts, const SearchOptions& options,
    const BatchOptions& batching) {
  // Checked before tokenizing as well as in TranslateIds: a call whose lines are all blank
  // never reaches TranslateIds, and the answer to bad options must not depend on the text.
  HW_RETURN_IF_ERROR(ValidateSearchOptions(options, limits()));
  HW_RETURN_IF_ERROR(ValidateBatchOptions(batching, limits()));
  if (!model()->impl().tokenizer) return NoTokenizer();
  std::vector<LineOutcome> lines;
  HW_RETURN_IF_ERROR(TranslateLines(*this, *model()->impl().tokenizer, texts, options, batching,
                                    false, &lines));
  std::vector<std::vector<TextHypothesis>> out(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) out[i] = std::move(lines[i].hypotheses);
  return out;
}

Result<std::vector<Result<std::vector<TextHypothesis>>>> Translator::TranslateEach(
    const std::vector<std::string>& texts, const SearchOptions& options,
    const BatchOptions& batching) {
  HW_RETURN_IF_ERROR(ValidateSearchOptions(options, limits()));
  HW_RETURN_IF_ERROR(ValidateBatchOptions(batching, limits()));
  if (!model()->impl().tokenizer) return NoTokenizer();
  std::vector<LineOutcome> lines;
  HW_RETURN_IF_ERROR(TranslateLines(*this, *model()->impl().tokenizer, texts, options, batching,
                                    true, &lines));
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
