// The token-id entry points: request validation (every error detected before any state
// changes), then encoder + search or teacher-forced decoding. No heap allocation on the success
// path: messages are only built when a request is rejected.
#include <cmath>
#include <string>

#include "decoder.h"
#include "encoder.h"
#include "search.h"
#include "translator_impl.h"

namespace headwise {
namespace {

Status CheckSource(const Translator::Impl& t, const TokenSpan& src, size_t sentence,
                   const char* what) {
  const std::string where = std::string(what) + " " + std::to_string(sentence);
  if (src.size == 0) return InvalidArgument(where + " is empty (it must end with EOS)");
  if (src.ids == nullptr) return InvalidArgument(where + ": ids is null");
  if (src.size > static_cast<size_t>(t.limits.max_source_tokens)) {
    return Status(ErrorCode::kInputTooLong,
                  where + " has " + std::to_string(src.size) +
                      " tokens; TranslatorLimits.max_source_tokens is " +
                      std::to_string(t.limits.max_source_tokens));
  }
  return Status::Ok();
}

Status CheckIds(const Translator::Impl& t, const TokenSpan& span, size_t sentence,
                const char* what) {
  const int32_t V = t.m->dims.vocab_size;
  for (size_t i = 0; i < span.size; ++i) {
    if (span.ids[i] < 0 || span.ids[i] >= V) {
      return InvalidArgument(std::string(what) + " " + std::to_string(sentence) + " position " +
                             std::to_string(i) + ": id " + std::to_string(span.ids[i]) +
                             " is outside the vocabulary of " + std::to_string(V));
    }
  }
  return Status::Ok();
}

Status CheckOptions(const Translator::Impl& t, const SearchOptions& o) {
  if (o.beam_size < 1 || o.beam_size > t.limits.max_beam) {
    return InvalidArgument("SearchOptions.beam_size " + std::to_string(o.beam_size) +
                           " must be in [1, max_beam = " + std::to_string(t.limits.max_beam) + "]");
  }
  if (o.num_hypotheses < 1 || o.num_hypotheses > o.beam_size) {
    return InvalidArgument("SearchOptions.num_hypotheses " + std::to_string(o.num_hypotheses) +
                           " must be in [1, beam_size = " + std::to_string(o.beam_size) + "]");
  }
  if (!std::isfinite(o.length_penalty)) {
    return InvalidArgument("SearchOptions.length_penalty must be finite");
  }
  if (o.max_length < 0 || o.max_length > t.limits.max_target_tokens) {
    return InvalidArgument("SearchOptions.max_length " + std::to_string(o.max_length) +
                           " must be in [0, max_target_tokens = " +
                           std::to_string(t.limits.max_target_tokens) + "] (0 = the limit)");
  }
  return Status::Ok();
}

}  // namespace

Status Translator::TranslateIds(const TokenSpan* sources, size_t batch,
                                const SearchOptions& options) {
  Impl& t = *impl_;
  if (batch > static_cast<size_t>(t.limits.max_batch)) {
    return Status(ErrorCode::kBatchTooLarge,
                  "batch of " + std::to_string(batch) + " sentences; TranslatorLimits.max_batch is " +
                      std::to_string(t.limits.max_batch));
  }
  if (batch > 0 && sources == nullptr) return InvalidArgument("TranslateIds: sources is null");
  HW_RETURN_IF_ERROR(CheckOptions(t, options));
  for (size_t s = 0; s < batch; ++s) {
    HW_RETURN_IF_ERROR(CheckSource(t, sources[s], s, "sentence"));
    HW_RETURN_IF_ERROR(CheckIds(t, sources[s], s, "sentence"));
  }

  t.result_sentences = 0;  // the previous results are overwritten from here on
  if (batch == 0) return Status::Ok();
  const size_t max_length = options.max_length > 0 ? static_cast<size_t>(options.max_length)
                                                   : static_cast<size_t>(t.limits.max_target_tokens);
  HW_RETURN_IF_ERROR(RunEncoder(t, sources, batch));
  if (options.beam_size == 1) {
    HW_RETURN_IF_ERROR(RunGreedy(t, batch, options, max_length));
  } else {
    HW_RETURN_IF_ERROR(RunBeam(t, batch, options, max_length));
  }
  t.result_sentences = batch;
  t.result_hypotheses = static_cast<size_t>(options.num_hypotheses);
  return Status::Ok();
}

size_t Translator::num_hypotheses(size_t sentence) const {
  const Impl& t = *impl_;
  if (sentence >= t.result_sentences) return 0;
  const size_t stored = static_cast<size_t>(t.buf.hyp_stored[sentence]);
  return stored < t.result_hypotheses ? stored : t.result_hypotheses;
}

HypothesisView Translator::hypothesis(size_t sentence, size_t k) const {
  const Impl& t = *impl_;
  HypothesisView view;
  if (k >= num_hypotheses(sentence)) return view;
  const size_t H = t.hyps_per_sentence;
  const size_t T = static_cast<size_t>(t.limits.max_target_tokens);
  const size_t record = sentence * H + static_cast<size_t>(t.buf.hyp_order[sentence * H + k]);
  const HypothesisRecord& rec = t.buf.hyp[record];
  view.ids = t.buf.hyp_ids + record * T;
  view.size = static_cast<size_t>(rec.length);
  view.score = rec.score;
  view.finished = rec.finished;
  return view;
}

Status Translator::ForcedLogits(TokenSpan source, TokenSpan target, float* logits) {
  Impl& t = *impl_;
  HW_RETURN_IF_ERROR(CheckSource(t, source, 0, "source"));
  HW_RETURN_IF_ERROR(CheckIds(t, source, 0, "source"));
  if (target.size > 0 && target.ids == nullptr) return InvalidArgument("ForcedLogits: target ids is null");
  HW_RETURN_IF_ERROR(CheckIds(t, target, 0, "target"));
  if (target.size + 1 > static_cast<size_t>(t.limits.max_target_tokens)) {
    return Status(ErrorCode::kInputTooLong,
                  "target of " + std::to_string(target.size) +
                      " tokens plus decoder start exceeds TranslatorLimits.max_target_tokens " +
                      std::to_string(t.limits.max_target_tokens));
  }
  if (logits == nullptr) return InvalidArgument("ForcedLogits: logits is null");

  HW_RETURN_IF_ERROR(RunEncoder(t, &source, 1));
  const size_t V = static_cast<size_t>(t.m->dims.vocab_size);
  Buffers& b = t.buf;
  b.row_slot[0] = 0;
  b.row_sentence[0] = 0;
  for (size_t step = 0; step <= target.size; ++step) {
    b.row_token[0] = step == 0 ? t.m->dims.decoder_start_id : target.ids[step - 1];
    HW_RETURN_IF_ERROR(DecoderStep(t, 1, step, logits + step * V));
  }
  return Status::Ok();
}

}  // namespace headwise
