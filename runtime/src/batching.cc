// Length-sorted batching: Translator::TranslateIdsEach plans a window's batches (batching.h),
// runs each with TranslateIds and copies its hypotheses into the window's results, so the
// caller reads them in input order. No heap allocation: the plan and the results live in the
// arena, and a failing line's fault is recorded there too; its message is built when the
// caller asks for it (line_status). Only a batch that fails (its TranslateIds status, already
// a message) is copied into its lines' statuses.
#include "batching.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include "search_options.h"
#include "translator_impl.h"

namespace headwise {

void LayoutWindowBuffers(const TranslatorLimits& limits, ArenaCarver& c, WindowBuffers* buf) {
  const size_t W = static_cast<size_t>(limits.sort_window);
  const size_t K = static_cast<size_t>(limits.max_beam);
  const size_t T = static_cast<size_t>(limits.max_target_tokens);
  buf->max_lines = W;
  buf->per_line = K;
  buf->max_ids = T;
  buf->order = c.Take<size_t>({W});
  buf->length = c.Take<size_t>({W});
  buf->spans = c.Take<TokenSpan>({static_cast<size_t>(limits.max_batch)});
  buf->prefixes = c.Take<TokenSpan>({static_cast<size_t>(limits.max_batch)});
  buf->fault = c.Take<LineFault>({W});
  buf->count = c.Take<int32_t>({W});
  buf->hyps = c.Take<WindowHypothesis>({W, K});
  buf->ids = c.Take<int32_t>({W, K, T});
}

Result<int> ResolveSortWindow(const TranslatorLimits& limits) {
  if (limits.sort_window < 0) {
    return InvalidArgument("TranslatorLimits.sort_window must be >= 0 (0 = 16 x max_batch), found " +
                           std::to_string(limits.sort_window));
  }
  if (limits.sort_window > 0) return limits.sort_window;
  constexpr int kDefaultFactor = 16;
  if (limits.max_batch > INT32_MAX / kDefaultFactor) {
    return InvalidArgument("TranslatorLimits: 16 x max_batch (the default sort_window) overflows; "
                           "set sort_window");
  }
  return limits.max_batch * kDefaultFactor;
}

void SortByLength(const size_t* length, size_t* order, size_t n) {
  // std::sort does not allocate (std::stable_sort may); the index tie-break makes it stable.
  std::sort(order, order + n, [length](size_t a, size_t b) {
    return length[a] != length[b] ? length[a] < length[b] : a < b;
  });
}

size_t NextBatchSize(const size_t* length, const size_t* order, size_t start, size_t n,
                     size_t max_lines, size_t max_tokens) {
  size_t lines = 1;
  size_t longest = length[order[start]];
  while (lines < max_lines && start + lines < n) {
    const size_t longer = std::max(longest, length[order[start + lines]]);
    if (max_tokens > 0 && (lines + 1) * longer > max_tokens) break;
    longest = longer;
    ++lines;
  }
  return lines;
}

Status ValidateBatchOptions(const BatchOptions& b, const TranslatorLimits& limits) {
  if (b.max_lines < 0 || b.max_lines > limits.max_batch) {
    return InvalidArgument("BatchOptions.max_lines " + std::to_string(b.max_lines) +
                           " is outside [0, max_batch " + std::to_string(limits.max_batch) + "]");
  }
  if (b.max_tokens < 0) {
    return InvalidArgument("BatchOptions.max_tokens must be >= 0 (0 = no token budget), found " +
                           std::to_string(b.max_tokens));
  }
  return Status::Ok();
}

LineFault FindFault(const TokenSpan& src, const TranslatorLimits& limits, int32_t vocab_size) {
  LineFault f;
  if (src.size == 0) {
    f.kind = LineFault::kEmpty;
  } else if (src.ids == nullptr) {
    f.kind = LineFault::kNullIds;
  } else if (src.size > static_cast<size_t>(limits.max_source_tokens)) {
    f.kind = LineFault::kTooLong;
    f.size = src.size;
  } else {
    for (size_t i = 0; i < src.size; ++i) {
      if (src.ids[i] < 0 || src.ids[i] >= vocab_size) {
        f.kind = LineFault::kBadId;
        f.position = i;
        f.id = src.ids[i];
        break;
      }
    }
  }
  return f;
}

LineFault FindPrefixFault(const TokenSpan& prefix, size_t max_length, const ModelConfig& config) {
  LineFault f;
  if (prefix.size == 0) return f;
  if (prefix.ids == nullptr) {
    f.kind = LineFault::kPrefixNullIds;
  } else if (prefix.size > max_length) {
    f.kind = LineFault::kPrefixTooLong;
    f.size = prefix.size;
    f.limit = max_length;
  } else {
    for (size_t i = 0; i < prefix.size; ++i) {
      const int32_t id = prefix.ids[i];
      if (id < 0 || static_cast<uint32_t>(id) >= config.vocab_size || id == config.pad_token_id ||
          id == config.eos_token_id) {
        f.kind = LineFault::kPrefixBadId;
        f.position = i;
        f.id = id;
        break;
      }
    }
  }
  return f;
}

ErrorCode FaultCode(const LineFault& f) {
  switch (f.kind) {
    case LineFault::kNone: return ErrorCode::kOk;
    case LineFault::kTooLong:
    case LineFault::kPrefixTooLong: return ErrorCode::kInputTooLong;
    case LineFault::kEmpty:
    case LineFault::kNullIds:
    case LineFault::kBadId:
    case LineFault::kPrefixNullIds:
    case LineFault::kPrefixBadId: break;
    case LineFault::kBatch: return ErrorCode::kInternal;  // the batch's own status says
  }
  return ErrorCode::kInvalidArgument;
}

Status DescribeFault(const LineFault& f, const TranslatorLimits& limits,
                     const ModelConfig& config) {
  const int32_t vocab_size = static_cast<int32_t>(config.vocab_size);
  switch (f.kind) {
    case LineFault::kEmpty:
      return InvalidArgument("source is empty (it must end with EOS)");
    case LineFault::kNullIds:
      return InvalidArgument("source ids is null");
    case LineFault::kTooLong:
      return Status(ErrorCode::kInputTooLong,
                    std::to_string(f.size) + " tokens exceed TranslatorLimits.max_source_tokens " +
                        std::to_string(limits.max_source_tokens));
    case LineFault::kBadId:
      return InvalidArgument("position " + std::to_string(f.position) + ": id " +
                             std::to_string(f.id) + " is outside the vocabulary of " +
                             std::to_string(vocab_size));
    case LineFault::kPrefixNullIds:
      return InvalidArgument("target prefix ids is null");
    case LineFault::kPrefixTooLong:
      return Status(ErrorCode::kInputTooLong,
                    "target prefix of " + std::to_string(f.size) +
                        " tokens exceeds the maximum length " + std::to_string(f.limit) +
                        " (SearchOptions.max_length, else TranslatorLimits.max_target_tokens)");
    case LineFault::kPrefixBadId: {
      std::string what = "is outside the vocabulary of " + std::to_string(vocab_size);
      if (f.id == config.eos_token_id) what = "is EOS (a prefix cannot end the translation)";
      if (f.id == config.pad_token_id) what = "is PAD (never produced)";
      return InvalidArgument("target prefix position " + std::to_string(f.position) + ": id " +
                             std::to_string(f.id) + " " + what);
    }
    case LineFault::kNone:
    case LineFault::kBatch:
      break;
  }
  return Status::Ok();
}

Status Translator::TranslateIdsEach(const TokenSpan* sources, size_t n,
                                    const SearchOptions& options, const BatchOptions& batching,
                                    const TokenSpan* target_prefixes) {
  Impl& t = *impl_;
  const WindowBuffers& w = t.buf.window;
  if (n > w.max_lines) {
    return Status(ErrorCode::kBatchTooLarge,
                  "TranslateIdsEach: " + std::to_string(n) +
                      " sources; TranslatorLimits.sort_window is " + std::to_string(w.max_lines));
  }
  if (n > 0 && sources == nullptr) return InvalidArgument("TranslateIdsEach: sources is null");
  HW_RETURN_IF_ERROR(ValidateSearchOptions(options, t.limits));
  HW_RETURN_IF_ERROR(ValidateBatchOptions(batching, t.limits));
  if (batching.split_sentences) {
    return InvalidArgument(
        "TranslateIdsEach: BatchOptions.split_sentences applies to text (Translate, "
        "TranslateEach), not to token ids");
  }

  t.window_lines = 0;  // the previous results are overwritten from here on
  t.result_sentences = 0;
  const ModelConfig& config = t.model_impl().config;
  const size_t max_length = MaxLength(options, t.limits);
  size_t valid = 0;
  for (size_t i = 0; i < n; ++i) {
    w.count[i] = 0;
    w.fault[i] = FindFault(sources[i], t.limits, config.vocab_size);
    if (w.fault[i].kind == LineFault::kNone && target_prefixes != nullptr) {
      w.fault[i] = FindPrefixFault(target_prefixes[i], max_length, config);
    }
    if (w.fault[i].kind == LineFault::kNone) {
      w.length[i] = sources[i].size;
      w.order[valid++] = i;
    } else {
      w.length[i] = 0;
    }
  }
  if (batching.sort_by_length) SortByLength(w.length, w.order, valid);

  const size_t max_lines =
      static_cast<size_t>(batching.max_lines > 0 ? batching.max_lines : t.limits.max_batch);
  const size_t max_tokens = static_cast<size_t>(batching.max_tokens);
  const size_t K = static_cast<size_t>(options.num_hypotheses);
  for (size_t start = 0; start < valid;) {
    const size_t lines = NextBatchSize(w.length, w.order, start, valid, max_lines, max_tokens);
    size_t longest = 0;
    for (size_t j = 0; j < lines; ++j) {
      w.spans[j] = sources[w.order[start + j]];
      if (target_prefixes != nullptr) w.prefixes[j] = target_prefixes[w.order[start + j]];
      longest = std::max(longest, w.spans[j].size);
    }
    const auto begin = std::chrono::steady_clock::now();
    const Status s =
        TranslateIds(w.spans, lines, options, target_prefixes != nullptr ? w.prefixes : nullptr);
    const std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - begin;
    for (size_t j = 0; j < lines; ++j) {
      const size_t line = w.order[start + j];
      if (!s.ok()) {
        w.fault[line].kind = LineFault::kBatch;
        t.line_status[line] = s;
        continue;
      }
      const size_t count = std::min(num_hypotheses(j), K);
      for (size_t k = 0; k < count; ++k) {
        const HypothesisView h = hypothesis(j, k);
        WindowHypothesis& out = w.hyps[line * w.per_line + k];
        out.length = static_cast<int32_t>(h.size);
        out.score = h.score;
        out.finished = h.finished;
        if (h.size > 0) {
          std::memcpy(w.ids + (line * w.per_line + k) * w.max_ids, h.ids, h.size * sizeof(int32_t));
        }
      }
      w.count[line] = static_cast<int32_t>(count);
    }
    if (batching.observer != nullptr) {
      BatchReport report;
      report.lines = w.order + start;
      report.num_lines = lines;
      report.longest_source = longest;
      report.milliseconds = elapsed.count();
      report.status = &s;
      batching.observer->OnBatch(report);
    }
    start += lines;
  }
  t.result_sentences = 0;
  t.window_lines = n;
  t.result_hypotheses = K;
  return Status::Ok();
}

const Status& Translator::line_status(size_t sentence) const {
  static const Status kOk;
  Impl& t = *impl_;
  if (sentence >= t.window_lines) return kOk;
  LineFault& f = t.buf.window.fault[sentence];
  if (f.kind == LineFault::kNone) return kOk;
  if (f.kind != LineFault::kBatch && !f.described) {  // built on the first question only
    t.line_status[sentence] = DescribeFault(f, t.limits, t.model_impl().config);
    f.described = true;
  }
  return t.line_status[sentence];
}

ErrorCode Translator::line_code(size_t sentence) const {
  const Impl& t = *impl_;
  if (sentence >= t.window_lines) return ErrorCode::kOk;
  const LineFault& f = t.buf.window.fault[sentence];
  return f.kind == LineFault::kBatch ? t.line_status[sentence].code() : FaultCode(f);
}

}  // namespace headwise
