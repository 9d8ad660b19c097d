// Batch lanes (lanes.h): the plan of each lane's arena, its operators, and the one parallel call
// that runs a batch's sentences on them.
#include "lanes.h"

#include <pthreadpool.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "encoder.h"
#include "kernels/embedding.h"
#include "search.h"

namespace headwise {
namespace {

// The limits one lane plans for: ceil(max_batch / lanes) sentences, no shortlist of its own
// (it adopts the Translator's union; LayoutLane adds its scratch).
TranslatorLimits LaneLimits(const TranslatorLimits& limits) {
  TranslatorLimits l = limits;
  const int lanes = limits.batch_lanes;
  l.max_batch = (limits.max_batch + lanes - 1) / lanes;
  l.use_shortlist = false;
  return l;
}

// Everything of one lane's arena (run to measure, then to carve; arena.h).
void LayoutLane(const Model::Impl& model, const TranslatorLimits& lane_limits,
                size_t hyps_per_sentence, const ShortlistBuffers* shortlist, ArenaCarver& c,
                Lane* lane) {
  LayoutBuffers(model, lane_limits, hyps_per_sentence, /*f16_compute=*/false, c, &lane->buf,
                /*with_window=*/false);
  lane->max_sentences = static_cast<size_t>(lane_limits.max_batch);
  lane->spans = c.Take<TokenSpan>({lane->max_sentences});
  lane->prefixes = c.Take<TokenSpan>({lane->max_sentences});
  if (shortlist == nullptr) return;
  // The union, its runs and gathered rows are the Translator's; the product's output rows,
  // LogSumExp's row, the marks and the lines' lists are per lane (shortlist.h).
  ShortlistBuffers& view = lane->shortlist_view;
  view = *shortlist;
  view.max_rows = static_cast<size_t>(lane_limits.max_batch) * static_cast<size_t>(lane_limits.max_beam);
  view.row = c.Take<float>({view.capacity});
  view.marks = c.Take<uint8_t>({static_cast<size_t>(model.config.vocab_size)});
  view.max_lines = lane->max_sentences;
  view.line_pos = c.Take<int32_t>({view.max_lines, view.line_capacity});
  view.line_size = c.Take<int32_t>({view.max_lines});
  view.out = c.Take<float>({view.max_rows, view.capacity});
  view.row_line = c.Take<int32_t>({view.max_rows});
}

}  // namespace

Result<int> ResolveBatchLanes(const TranslatorLimits& limits, const Network& net) {
  const int asked = limits.batch_lanes;
  if (asked < 0) {
    return InvalidArgument("TranslatorLimits.batch_lanes must be >= 0 (0 = automatic), found " +
                           std::to_string(asked));
  }
  const bool copies = HoldsWeightCopies(net);
  if (asked == 0) {
    return limits.num_threads > 1 && !copies ? std::min(limits.num_threads, limits.max_batch) : 1;
  }
  if (asked > limits.num_threads || asked > limits.max_batch) {
    return InvalidArgument("TranslatorLimits.batch_lanes " + std::to_string(asked) +
                           " exceeds num_threads (" + std::to_string(limits.num_threads) +
                           ") or max_batch (" + std::to_string(limits.max_batch) + ")");
  }
  if (asked > 1 && copies) {
    return InvalidArgument(
        "TranslatorLimits.batch_lanes " + std::to_string(asked) +
        ": this model's operators hold packed copies of their weights here (XNNPACK: " +
        KernelPaths(net) + "), and every lane would need its own; use 0 (automatic) or 1");
  }
  return asked;
}

size_t MeasureLanes(const Model::Impl& model, const TranslatorLimits& limits,
                    size_t hyps_per_sentence, const ShortlistBuffers* shortlist) {
  ArenaCarver measure;
  Lane lane;
  LayoutLane(model, LaneLimits(limits), hyps_per_sentence, shortlist, measure, &lane);
  const size_t lanes = static_cast<size_t>(limits.batch_lanes);
  if (measure.overflowed() || measure.bytes() > SIZE_MAX / lanes) return SIZE_MAX;
  return measure.bytes() * lanes;
}

Status CreateLanes(const Model::Impl& model, const TranslatorLimits& limits,
                   size_t hyps_per_sentence, const ShortlistBuffers* shortlist, BatchLanes* out) {
  const TranslatorLimits lane_limits = LaneLimits(limits);
  const ModelConfig& dims = model.config;
  out->lanes.clear();
  out->bytes = 0;
  for (int i = 0; i < limits.batch_lanes; ++i) {
    auto lane = std::make_unique<Lane>();
    ArenaCarver measure;
    LayoutLane(model, lane_limits, hyps_per_sentence, shortlist, measure, lane.get());
    HW_ASSIGN_OR_RETURN(lane->arena, Arena::Allocate(measure.bytes()));
    ArenaCarver carve(lane->arena.data());
    LayoutLane(model, lane_limits, hyps_per_sentence, shortlist, carve, lane.get());
    kernels::SinusoidalPositions(
        static_cast<size_t>(std::max(limits.max_source_tokens, limits.max_target_tokens)),
        static_cast<size_t>(dims.d_model), lane->buf.positions);
    HW_RETURN_IF_ERROR(CreateNetwork(model, /*num_threads=*/1, &lane->buf.int8,
                                     /*f16=*/nullptr, &lane->net));
    if (shortlist != nullptr) {
      lane->shortlist = ShortlistOutput(model, lane->shortlist_view, &lane->buf.int8);
    }
    out->bytes += lane->arena.size();
    out->lanes.push_back(std::move(lane));
  }
  return Status::Ok();
}

namespace {

struct LaneCall {
  BatchLanes* lanes;
  const ShortlistOutput* main_shortlist;
  const SearchOptions* options;
  size_t max_length;
};

Status RunLane(Lane& lane, const LaneCall& call) {
  const size_t n = lane.sentences;
  HW_RETURN_IF_ERROR(RunEncoder(lane.net, lane.buf.encoder, lane.spans, n));
  const ShortlistOutput* shortlist = nullptr;
  if (call.main_shortlist->valid()) {
    lane.shortlist.AdoptUnion(*call.main_shortlist, lane.spans, lane.buf.search.prefixes, n,
                              lane.buf.search.logits,
                              n * static_cast<size_t>(call.options->beam_size));
    shortlist = &lane.shortlist;
  }
  const Decoder decoder(lane.net, lane.buf.decoder, shortlist);
  if (call.options->beam_size == 1) {
    return RunGreedy(decoder, lane.buf.search, n, *call.options, call.max_length);
  }
  return RunBeam(decoder, lane.buf.search, n, *call.options, call.max_length);
}

}  // namespace

Result<size_t> RunLanes(BatchLanes& lanes, const Network& main,
                        const ShortlistOutput& main_shortlist, const TokenSpan* sources,
                        const TokenSpan* prefixes, size_t batch, const SearchOptions& options,
                        size_t max_length) {
  const size_t n = std::min(lanes.lanes.size(), batch);
  for (size_t j = 0; j < n; ++j) {
    Lane& lane = *lanes.lanes[j];
    lane.sentences = 0;
    lane.buf.search.prefixes = prefixes != nullptr ? lane.prefixes : nullptr;
    lane.buf.search.sources = lane.spans;
  }
  for (size_t s = 0; s < batch; ++s) {
    Lane& lane = *lanes.lanes[s % n];
    if (lane.sentences == lane.max_sentences) {
      return InternalError("batch lanes: " + std::to_string(batch) +
                           " sentences exceed the lanes' plan");
    }
    if (prefixes != nullptr) lane.prefixes[lane.sentences] = prefixes[s];
    lane.spans[lane.sentences++] = sources[s];
  }
  LaneCall call{&lanes, &main_shortlist, &options, max_length};
  const Workers workers = main.threads();
  pthreadpool_parallelize_1d(
      workers.pool,
      [](void* context, size_t j) {
        const LaneCall& c = *static_cast<const LaneCall*>(context);
        Lane& lane = *c.lanes->lanes[j];
        lane.status = RunLane(lane, c);
      },
      &call, n, workers.flags());
  for (size_t j = 0; j < n; ++j) {
    if (!lanes.lanes[j]->status.ok()) return lanes.lanes[j]->status;
  }
  return n;
}

}  // namespace headwise
