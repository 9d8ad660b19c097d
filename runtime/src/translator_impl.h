// runtime/src/translator_impl.h: the runtime-private state of a headwise::Translator.
//
// Memory regions (STYLE.md "memory is planned, not hoped for")
//   1. Load-time, per Translator: the Network (network.h: the operators, the XNNPACK ones each
//      owning its packed weights, the in-place ones pointing into the Model, and the thread
//      pool), created in Translator::Create and destroyed with the Translator.
//   2. The arena: one block planned from TranslatorLimits at Create (translator_plan.cc) and
//      carved into each stage's buffers (TranslatorBuffers). Nothing in TranslateIds /
//      ForcedLogits allocates; every pointer there points into the arena and lives as long as
//      the Translator.
//   3. Scratch reused per step: the encoder and decoder scratch share bytes (the encoder's is
//      dead once the cross-attention K/V are computed).
//
// Threads: one call at a time per Translator (headwise.hpp). Within a call of several sentences
// with batch lanes (lanes.h) each lane runs its sentences whole on one thread of the pool;
// otherwise the pool runs the matrix products and the attention heads (parallel.h) and
// everything else runs on the calling thread. The Model is only read.
//
// The stages get only their own part: RunEncoder(net, buf.encoder), Decoder(net, buf.decoder),
// RunGreedy / RunBeam(decoder, buf.search); TranslateIdsEach (batching.cc) plans its batches
// and keeps their results in buf.window.
#ifndef HEADWISE_RUNTIME_TRANSLATOR_IMPL_H_
#define HEADWISE_RUNTIME_TRANSLATOR_IMPL_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "arena.h"
#include "decoder.h"
#include "lanes.h"
#include "headwise/headwise.hpp"
#include "model_impl.h"
#include "network.h"
#include "shortlist.h"
#include "translator_plan.h"

namespace headwise {

struct Translator::Impl {
  std::shared_ptr<const Model> model;
  TranslatorLimits limits;

  // Decided at Create (translator.cc): the f16 path is on when `precision` is kF16.
  MatmulPrecision precision = MatmulPrecision::kF32;
  std::string precision_note;
  std::string kernel_paths;  // KernelPaths(net), once the network exists

  Arena arena;
  TranslatorBuffers buf;
  Network net;  // after buf: its operators point at buf.int8 / buf.f16
  // The output layer over the shortlist's union (shortlist.h); valid() only when
  // ShortlistEnabled(model, limits). Points at buf.shortlist and buf.int8.
  ShortlistOutput shortlist;
  // Batch lanes (lanes.h), limits.batch_lanes > 1 only; after buf (their views point into
  // buf.shortlist). Calls of at least two sentences run on them.
  BatchLanes lanes;
  // Calls that do not run on lanes run as a team (team.h) when the pool has workers and every
  // operator reads its weights in place (XNNPACK's operators take the pool, which a team holds).
  Team team;
  bool use_team = false;

  // Results of the last successful TranslateIds.
  size_t result_sentences = 0;
  size_t result_hypotheses = 0;  // requested num_hypotheses
  // Lanes the last successful TranslateIds ran on (0: none; its results are in buf.search):
  // sentence s is in lane s % result_lanes at index s / result_lanes.
  size_t result_lanes = 0;
  // Lines of the last successful TranslateIdsEach, whose results are in buf.window (0 after
  // any other call), and their statuses (sized sort_window at Create): a failed batch's status
  // is copied in, a line's own fault (buf.window.fault) described when line_status asks.
  size_t window_lines = 0;
  std::vector<Status> line_status;

  const Model::Impl& model_impl() const { return model->impl(); }
  // The decoder of TranslateIds: the output layer over the shortlist's union when it is on
  // (after shortlist.Prepare for the call).
  Decoder decoder() const {
    return Decoder(net, buf.decoder, shortlist.valid() ? &shortlist : nullptr);
  }
  // The decoder with the full output layer (ForcedLogits).
  Decoder full_decoder() const { return Decoder(net, buf.decoder, nullptr); }
};

// The Impl of a public Translator, for what the public API does not offer and bench/ needs
// (pointing net.profile at an OpProfile, op_profile.h). Runtime-private.
struct TranslatorAccess {
  static Translator::Impl& Of(Translator& translator) { return *translator.impl_; }
};

// What Translator::Create does, returning the Impl itself: for Translator::Create and for
// tests that drive the encoder or decoder directly. Errors as Translator::Create.
Result<std::unique_ptr<Translator::Impl>> CreateTranslatorImpl(std::shared_ptr<const Model> model,
                                                               const TranslatorLimits& limits);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_TRANSLATOR_IMPL_H_
