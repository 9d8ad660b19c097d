// The text path of the C++ API: Model::EncodeSource / DecodeTarget and Translator::Translate,
// built on the embedded tokenizers and Translator::TranslateIdsEach (batching.cc), which sorts
// and batches each window of lines. It allocates (tokenization,
// result strings); the token-id path underneath does not.
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "batching.h"
#include "headwise/headwise.hpp"
#include "model_impl.h"
#include "search_options.h"
#include "sentences.h"
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

Result<std::vector<int32_t>> Model::EncodeTarget(const std::string& text) const {
  if (!impl_->tokenizer) return NoTokenizer();
  return impl_->tokenizer->EncodeTarget(text);
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

// What TranslateIdsEach translates: a whole line, or one sentence of it (split_sentences).
struct Unit {
  size_t line = 0;
  std::vector<int32_t> ids;  // encoder input, EOS included
  std::vector<int32_t> prefix;  // target prefix ids (none: empty)
  SentenceSpan span;         // the sentence's bytes in its line (split_sentences)
  TextHypothesis best;       // its translation (split_sentences)
};

// Passes each batch to the caller's observer with the units renumbered from the window's
// to indices into the call's texts.
class TextBatchObserver final : public BatchObserver {
 public:
  TextBatchObserver(BatchObserver* user, const std::vector<Unit>& units, const size_t& first)
      : user_(user), units_(units), first_(first) {}
  void OnBatch(const BatchReport& batch) override {
    lines_.resize(batch.num_lines);
    for (size_t j = 0; j < batch.num_lines; ++j) lines_[j] = units_[first_ + batch.lines[j]].line;
    BatchReport text = batch;
    text.lines = lines_.data();
    user_->OnBatch(text);
  }

 private:
  BatchObserver* user_;
  const std::vector<Unit>& units_;
  const size_t& first_;  // the window's first unit
  std::vector<size_t> lines_;
};

Status TooLong(size_t line, const std::string& what, size_t tokens, int limit) {
  return Status(ErrorCode::kInputTooLong, TextIndex(line) + ": " + what +
                                              std::to_string(tokens) +
                                              " source tokens (EOS included) exceed "
                                              "max_source_tokens " + std::to_string(limit));
}

// Encodes line i into `units` (nothing for a blank line, whose outcome gets its empty
// hypothesis); split: one unit per sentence. `prefix`: the line's target prefix text, or null.
// Returns the line's error, if any.
Status EncodeLine(const Tokenizer& tokenizer, const std::string& text, const std::string* prefix,
                  size_t i, bool split, int max_tokens, std::vector<Unit>* units,
                  LineOutcome* outcome) {
  const size_t units_before = units->size();
  const auto fail = [&](Status s) {
    units->resize(units_before);
    return s;
  };
  std::vector<int32_t> prefix_ids;
  if (prefix != nullptr) {
    auto ids = tokenizer.EncodeTarget(*prefix);
    if (!ids.ok()) return ids.status().WithContext("target_prefixes[" + std::to_string(i) + "]");
    prefix_ids = std::move(ids).value();
  }
  std::vector<SentenceSpan> spans;
  if (split) {
    auto sentences = SplitSentences(text);
    if (!sentences.ok()) return sentences.status().WithContext(TextIndex(i));
    spans = std::move(sentences).value();
  } else {
    spans.push_back(SentenceSpan{0, text.size()});
  }
  for (size_t s = 0; s < spans.size(); ++s) {
    const SentenceSpan& span = spans[s];
    auto ids =
        tokenizer.EncodeSource(std::string_view(text).substr(span.begin, span.end - span.begin));
    if (!ids.ok()) return fail(ids.status().WithContext(TextIndex(i)));
    if (ids->size() > static_cast<size_t>(max_tokens)) {
      const std::string what =
          split ? "sentence " + std::to_string(s + 1) + " of " + std::to_string(spans.size()) +
                      " (bytes " + std::to_string(span.begin) + "-" + std::to_string(span.end) +
                      "): "
                : "";
      return fail(TooLong(i, what, ids->size(), max_tokens));
    }
    if (ids->size() <= 1) continue;  // blank (or nothing SentencePiece keeps)
    Unit u;
    u.line = i;
    u.ids = std::move(ids).value();
    u.prefix = prefix_ids;  // one unit per line when there are prefixes (no split)
    u.span = span;
    units->push_back(std::move(u));
  }
  if (units->size() == units_before) {
    if (!prefix_ids.empty()) {
      return InvalidArgument(TextIndex(i) + ": the line is blank but its target prefix is not "
                             "(there is nothing to translate after it)");
    }
    outcome->hypotheses.push_back(TextHypothesis{"", {}, 0.0f, true});
  }
  return Status::Ok();
}

// A line's hypothesis from its sentences' (split_sentences; BatchOptions states the rules).
TextHypothesis JoinSentences(const std::string& text, const Unit* first, size_t count,
                             float length_penalty) {
  TextHypothesis joined;
  joined.finished = true;
  float log_prob = 0.0f, length = 0.0f;
  size_t previous_end = 0;
  for (size_t s = 0; s < count; ++s) {
    const Unit& u = first[s];
    const TextHypothesis& h = u.best;
    const float len = static_cast<float>(h.ids.size() + (h.finished ? 1 : 0));
    log_prob += h.score * std::pow(len, length_penalty);
    length += len;
    joined.finished = joined.finished && h.finished;
    joined.ids.insert(joined.ids.end(), h.ids.begin(), h.ids.end());
    if (h.text.empty()) continue;
    if (!joined.text.empty()) joined.text.append(text, previous_end, u.span.begin - previous_end);
    joined.text += h.text;
    previous_end = u.span.end;
  }
  joined.score = length > 0.0f ? log_prob / std::pow(length, length_penalty) : 0.0f;
  return joined;
}

// The text path shared by Translate and TranslateEach. Every line is encoded and checked before
// the model runs, so a bad line costs only itself (and Translate fails before translating
// anything). `each` false: the first bad line (or failed batch) is returned as the call's
// status; true: it is recorded in that line's outcome and the call goes on. The lines (or with
// split_sentences their sentences) that are neither bad nor blank go to TranslateIdsEach window
// by window (sort_window input lines at a time; split: sort_window sentences), which sorts
// them by length and cuts the batches; outcomes keep the input order.
Status TranslateLines(Translator& translator, const Tokenizer& tokenizer,
                      const std::vector<std::string>& texts, const SearchOptions& options,
                      const BatchOptions& batching, const std::vector<std::string>& prefixes,
                      bool each, std::vector<LineOutcome>* out) {
  const TranslatorLimits& lim = translator.limits();
  const bool split = batching.split_sentences;
  const bool with_prefixes = !prefixes.empty();
  out->assign(texts.size(), LineOutcome{});
  std::vector<Unit> units;
  for (size_t i = 0; i < texts.size(); ++i) {
    Status& line = (*out)[i].status;
    line = EncodeLine(tokenizer, texts[i], with_prefixes ? &prefixes[i] : nullptr, i, split,
                      lim.max_source_tokens, &units, &(*out)[i]);
    if (!line.ok() && !each) return line;
  }

  const auto window = static_cast<size_t>(lim.sort_window);
  std::vector<TokenSpan> spans, prefix_spans;
  size_t first = 0;  // the window's first unit
  TextBatchObserver text_observer(batching.observer, units, first);
  BatchOptions window_batching = batching;
  window_batching.split_sentences = false;
  if (batching.observer != nullptr) window_batching.observer = &text_observer;
  for (size_t line_window = 0; first < units.size(); line_window += window) {
    // The window: units of the next sort_window input lines, or (split) the next sort_window
    // sentences.
    const auto in_window = [&](size_t u) {
      return split ? u - first < window : units[u].line < line_window + window;
    };
    size_t last = first;
    while (last < units.size() && in_window(last)) ++last;
    if (last == first) continue;
    spans.clear();
    prefix_spans.clear();
    for (size_t u = first; u < last; ++u) {
      spans.push_back(TokenSpan{units[u].ids.data(), units[u].ids.size()});
      prefix_spans.push_back(TokenSpan{units[u].prefix.data(), units[u].prefix.size()});
    }
    HW_RETURN_IF_ERROR(translator.TranslateIdsEach(spans.data(), spans.size(), options,
                                                   window_batching,
                                                   with_prefixes ? prefix_spans.data() : nullptr));
    for (size_t j = 0; j < spans.size(); ++j) {
      Unit& unit = units[first + j];
      LineOutcome& o = (*out)[unit.line];
      if (!o.status.ok()) continue;  // an earlier sentence of the line failed
      if (const Status& s = translator.line_status(j); !s.ok()) {
        o.status = s.WithContext(TextIndex(unit.line));
        if (!each) return o.status;
        continue;
      }
      const size_t count = translator.num_hypotheses(j);
      for (size_t k = 0; k < count; ++k) {
        const HypothesisView h = translator.hypothesis(j, k);
        auto text = tokenizer.DecodeTarget(h.ids, h.size);
        if (!text.ok()) {
          o.status = text.status().WithContext(TextIndex(unit.line));
          if (!each) return o.status;
          o.hypotheses.clear();
          break;
        }
        TextHypothesis hyp{std::move(text).value(), std::vector<int32_t>(h.ids, h.ids + h.size),
                           h.score, h.finished};
        if (split) {
          unit.best = std::move(hyp);  // count is 1 (CheckTextBatching)
        } else {
          o.hypotheses.push_back(std::move(hyp));
        }
      }
    }
    first = last;
  }
  if (split) {
    for (size_t u = 0; u < units.size();) {
      size_t v = u;
      while (v < units.size() && units[v].line == units[u].line) ++v;
      LineOutcome& o = (*out)[units[u].line];
      if (o.status.ok()) {
        o.hypotheses.push_back(
            JoinSentences(texts[units[u].line], &units[u], v - u, options.length_penalty));
      }
      u = v;
    }
  }
  return Status::Ok();
}

// What the text path asks of its options beyond ValidateSearchOptions / ValidateBatchOptions.
Status CheckTextBatching(const SearchOptions& options, const BatchOptions& batching,
                         const std::vector<std::string>& texts,
                         const std::vector<std::string>& prefixes) {
  if (!prefixes.empty() && prefixes.size() != texts.size()) {
    return InvalidArgument("target_prefixes holds " + std::to_string(prefixes.size()) +
                           " texts for " + std::to_string(texts.size()) +
                           " lines (one per line, or none)");
  }
  if (!prefixes.empty() && batching.split_sentences) {
    return InvalidArgument(
        "target prefixes and BatchOptions.split_sentences do not combine (a line's sentences "
        "have no one start)");
  }
  if (batching.split_sentences && options.num_hypotheses != 1) {
    return InvalidArgument(
        "BatchOptions.split_sentences needs num_hypotheses 1 (the sentences' n-best lists do not "
        "combine into one for the line); found " + std::to_string(options.num_hypotheses));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::vector<TextHypothesis>>> Translator::Translate(
    const std::vector<std::string>& texts, const SearchOptions& options,
    const BatchOptions& batching, const std::vector<std::string>& target_prefixes) {
  // Checked before tokenizing as well as in TranslateIds: a call whose lines are all blank
  // never reaches TranslateIds, and the answer to bad options must not depend on the text.
  HW_RETURN_IF_ERROR(ValidateSearchOptions(options, limits()));
  HW_RETURN_IF_ERROR(ValidateBatchOptions(batching, limits()));
  HW_RETURN_IF_ERROR(CheckTextBatching(options, batching, texts, target_prefixes));
  if (!model()->impl().tokenizer) return NoTokenizer();
  std::vector<LineOutcome> lines;
  HW_RETURN_IF_ERROR(TranslateLines(*this, *model()->impl().tokenizer, texts, options, batching,
                                    target_prefixes, false, &lines));
  std::vector<std::vector<TextHypothesis>> out(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) out[i] = std::move(lines[i].hypotheses);
  return out;
}

Result<std::vector<Result<std::vector<TextHypothesis>>>> Translator::TranslateEach(
    const std::vector<std::string>& texts, const SearchOptions& options,
    const BatchOptions& batching, const std::vector<std::string>& target_prefixes) {
  HW_RETURN_IF_ERROR(ValidateSearchOptions(options, limits()));
  HW_RETURN_IF_ERROR(ValidateBatchOptions(batching, limits()));
  HW_RETURN_IF_ERROR(CheckTextBatching(options, batching, texts, target_prefixes));
  if (!model()->impl().tokenizer) return NoTokenizer();
  std::vector<LineOutcome> lines;
  HW_RETURN_IF_ERROR(TranslateLines(*this, *model()->impl().tokenizer, texts, options, batching,
                                    target_prefixes, true, &lines));
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
