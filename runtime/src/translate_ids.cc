// The token-id entry points: request validation (every error detected before any state
// changes), then encoder + search or teacher-forced decoding. No heap allocation on the success
// path: messages are only built when a request is rejected.
#include <string>

#include "batching.h"
#include "decoder.h"
#include "encoder.h"
#include "search.h"
#include "search_options.h"
#include "translator_impl.h"

namespace headwise {
namespace {

Status CheckSource(const TranslatorLimits& limits, const TokenSpan& src, size_t sentence,
                   const char* what) {
  const std::string where = std::string(what) + " " + std::to_string(sentence);
  if (src.size == 0) return InvalidArgument(where + " is empty (it must end with EOS)");
  if (src.ids == nullptr) return InvalidArgument(where + ": ids is null");
  if (src.size > static_cast<size_t>(limits.max_source_tokens)) {
    return Status(ErrorCode::kInputTooLong,
                  where + " has " + std::to_string(src.size) +
                      " tokens; TranslatorLimits.max_source_tokens is " +
                      std::to_string(limits.max_source_tokens));
  }
  return Status::Ok();
}

Status CheckIds(int32_t vocab_size, const TokenSpan& span, size_t sentence, const char* what) {
  for (size_t i = 0; i < span.size; ++i) {
    if (span.ids[i] < 0 || span.ids[i] >= vocab_size) {
      return InvalidArgument(std::string(what) + " " + std::to_string(sentence) + " position " +
                             std::to_string(i) + ": id " + std::to_string(span.ids[i]) +
                             " is outside the vocabulary of " + std::to_string(vocab_size));
    }
  }
  return Status::Ok();
}

}  // namespace

Status Translator::TranslateIds(const TokenSpan* sources, size_t batch,
                                const SearchOptions& options, const TokenSpan* target_prefixes) {
  Impl& t = *impl_;
  const int32_t vocab_size = t.model_impl().config.vocab_size;
  if (batch > static_cast<size_t>(t.limits.max_batch)) {
    return Status(ErrorCode::kBatchTooLarge,
                  "batch of " + std::to_string(batch) + " sentences; TranslatorLimits.max_batch is " +
                      std::to_string(t.limits.max_batch));
  }
  if (batch > 0 && sources == nullptr) return InvalidArgument("TranslateIds: sources is null");
  HW_RETURN_IF_ERROR(ValidateSearchOptions(options, t.limits));
  const size_t max_length = MaxLength(options, t.limits);
  for (size_t s = 0; s < batch; ++s) {
    HW_RETURN_IF_ERROR(CheckSource(t.limits, sources[s], s, "sentence"));
    HW_RETURN_IF_ERROR(CheckIds(vocab_size, sources[s], s, "sentence"));
    if (target_prefixes == nullptr) continue;
    const LineFault fault = FindPrefixFault(target_prefixes[s], max_length, t.model_impl().config);
    if (fault.kind != LineFault::kNone) {
      const Status why = DescribeFault(fault, t.limits, t.model_impl().config);
      return Status(why.code(), "sentence " + std::to_string(s) + ": " + why.message());
    }
  }

  t.result_sentences = 0;  // the previous results are overwritten from here on
  t.result_lanes = 0;
  t.window_lines = 0;
  if (batch == 0) return Status::Ok();
  t.buf.search.prefixes = target_prefixes;
  t.buf.search.sources = sources;
  // Batch lanes for two sentences or more; not while profiling (OpProfile counts from one
  // thread).
  if (batch >= 2 && !t.lanes.lanes.empty() && t.net.profile == nullptr) {
    if (t.shortlist.valid()) {  // the union only
      t.shortlist.Prepare(sources, target_prefixes, batch, t.buf.search.logits, 0);
    }
    HW_ASSIGN_OR_RETURN(t.result_lanes, RunLanes(t.lanes, t.net, t.shortlist, sources,
                                                 target_prefixes, batch, options, max_length));
    t.result_sentences = batch;
    t.result_hypotheses = static_cast<size_t>(options.num_hypotheses);
    return Status::Ok();
  }
  const auto run = [&]() -> Status {
    HW_RETURN_IF_ERROR(RunEncoder(t.net, t.buf.encoder, sources, batch));
    if (t.shortlist.valid()) {
      // The rows a step of this call can use: one per sentence, or per live beam.
      t.shortlist.Prepare(sources, target_prefixes, batch, t.buf.search.logits,
                          batch * static_cast<size_t>(options.beam_size));
    }
    if (options.beam_size == 1) {
      return RunGreedy(t.decoder(), t.buf.search, batch, options, max_length);
    }
    return RunBeam(t.decoder(), t.buf.search, batch, options, max_length);
  };
  if (t.use_team) {
    t.net.team = &t.team;
    const Status status = t.team.Run(t.net.pool.get(), t.net.spin_workers, run);
    t.net.team = nullptr;
    HW_RETURN_IF_ERROR(status);
  } else {
    HW_RETURN_IF_ERROR(run());
  }
  t.result_sentences = batch;
  t.result_hypotheses = static_cast<size_t>(options.num_hypotheses);
  return Status::Ok();
}

size_t Translator::num_hypotheses(size_t sentence) const {
  const Impl& t = *impl_;
  if (t.window_lines > 0) {  // after TranslateIdsEach (batching.cc): its results, input order
    return sentence < t.window_lines ? static_cast<size_t>(t.buf.window.count[sentence]) : 0;
  }
  if (sentence >= t.result_sentences) return 0;
  const size_t stored =
      t.result_lanes > 0
          ? t.lanes.lanes[sentence % t.result_lanes]->buf.search.hyps.count(sentence / t.result_lanes)
          : t.buf.search.hyps.count(sentence);
  return stored < t.result_hypotheses ? stored : t.result_hypotheses;
}

HypothesisView Translator::hypothesis(size_t sentence, size_t k) const {
  if (k >= num_hypotheses(sentence)) return HypothesisView{};
  const Impl& t = *impl_;
  if (t.window_lines > 0) return t.buf.window.Get(sentence, k);
  if (t.result_lanes > 0) {
    return t.lanes.lanes[sentence % t.result_lanes]->buf.search.hyps.Get(sentence / t.result_lanes, k);
  }
  return t.buf.search.hyps.Get(sentence, k);
}

Status Translator::ForcedLogits(TokenSpan source, TokenSpan target, float* logits) {
  Impl& t = *impl_;
  const ModelConfig& dims = t.model_impl().config;
  HW_RETURN_IF_ERROR(CheckSource(t.limits, source, 0, "source"));
  HW_RETURN_IF_ERROR(CheckIds(dims.vocab_size, source, 0, "source"));
  if (target.size > 0 && target.ids == nullptr) return InvalidArgument("ForcedLogits: target ids is null");
  HW_RETURN_IF_ERROR(CheckIds(dims.vocab_size, target, 0, "target"));
  if (target.size + 1 > static_cast<size_t>(t.limits.max_target_tokens)) {
    return Status(ErrorCode::kInputTooLong,
                  "target of " + std::to_string(target.size) +
                      " tokens plus decoder start exceeds TranslatorLimits.max_target_tokens " +
                      std::to_string(t.limits.max_target_tokens));
  }
  if (logits == nullptr) return InvalidArgument("ForcedLogits: logits is null");

  HW_RETURN_IF_ERROR(RunEncoder(t.net, t.buf.encoder, &source, 1));
  const size_t V = static_cast<size_t>(dims.vocab_size);
  const Decoder decoder = t.full_decoder();  // every logit, shortlist or not
  const StepRows& rows = decoder.rows();
  rows.slot[0] = 0;
  rows.sentence[0] = 0;
  for (size_t step = 0; step <= target.size; ++step) {
    rows.token[0] = step == 0 ? dims.decoder_start_token_id : target.ids[step - 1];
    HW_RETURN_IF_ERROR(decoder.Step(1, step, logits + step * V));
  }
  return Status::Ok();
}

}  // namespace headwise
