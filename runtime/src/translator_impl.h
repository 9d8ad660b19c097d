// runtime/src/translator_impl.h: the runtime-private state of a headwise::Translator.
//
// Memory regions (STYLE.md "memory is planned, not hoped for")
//   1. Load-time, per Translator: the XNNPACK operators (each owns its packed weights) and the
//      thread pool, created in Translator::Create and destroyed with the Translator.
//   2. The arena: one block planned from TranslatorLimits at Create (translator_plan.cc) and
//      carved into the Buffers below. Nothing in TranslateIds/ForcedLogits allocates; every
//      pointer here points into the arena and lives as long as the Translator.
//   3. Scratch reused per step: the encoder and decoder scratch share bytes (the encoder's is
//      dead once the cross-attention K/V are computed).
//
// Threads: one call at a time per Translator (headwise.hpp). Within a call the Translator's
// pool runs the XNNPACK operators and the attention heads (parallel.h); everything else runs
// on the calling thread. The Model is only read.
//
// Shapes use B = max_batch, S = max_source_tokens, T = max_target_tokens, K = max_beam,
// R = B * K decoder rows (= cache slots), N = B * S packed source rows, d = d_model, V = vocab,
// I = kept heads * head_dim of the block in question.
#ifndef HEADWISE_RUNTIME_TRANSLATOR_IMPL_H_
#define HEADWISE_RUNTIME_TRANSLATOR_IMPL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arena.h"
#include "headwise/headwise.hpp"
#include "model_impl.h"
#include "fc/fully_connected.h"
#include "thread_pool.h"

namespace headwise {

struct EncoderLayerOps {
  FullyConnected qkv;  // d -> 3I, [q | k | v]; not created when the block has no heads
  FullyConnected out;  // I -> d
  FullyConnected fc1;  // d -> ffn (relu fused as an output clamp)
  FullyConnected fc2;  // ffn -> d
};

struct DecoderLayerOps {
  FullyConnected self_qkv;  // d -> 3I
  FullyConnected self_out;
  FullyConnected cross_q;   // d -> I
  FullyConnected cross_kv;  // d -> 2I, [k | v], run once per call on the encoder output
  FullyConnected cross_out;
  FullyConnected fc1;
  FullyConnected fc2;
};

// One stored hypothesis slot of the search results.
struct HypothesisRecord {
  int32_t length;  // generated ids stored (EOS excluded)
  float score;     // normalised
  bool finished;
};

// Every pointer points into the arena.
struct Buffers {
  float* positions = nullptr;  // [max(S, T), d] sinusoidal table
  float* scores = nullptr;     // [H_max, max(S, T)] attention scratch, one row per kept head
  size_t scores_stride = 0;    // max(S, T)

  // Encoder scratch (packed rows of all sentences).
  float* enc_x = nullptr;    // [N, d]
  float* enc_qkv = nullptr;  // [N, 3 I_max]
  float* enc_ctx = nullptr;  // [N, I_max]
  float* enc_tmp = nullptr;  // [N, d]
  float* enc_ffn = nullptr;  // [N, ffn]

  // Decoder scratch (one row per live hypothesis).
  float* dec_y = nullptr;    // [R, d]
  float* dec_qkv = nullptr;  // [R, 3 I_max] (also the cross-attention q)
  float* dec_ctx = nullptr;  // [R, I_max]
  float* dec_tmp = nullptr;  // [R, d]
  float* dec_ffn = nullptr;  // [R, ffn]

  // Per decoder layer, head-major so that one head's keys (and values) are contiguous and
  // stream through the cache: cross-attention K and V of the packed source [heads, N, hd], and
  // the self-attention cache [R slots, heads, T, hd] for K and for V. Null where the block has
  // no heads.
  std::vector<float*> cross_k;
  std::vector<float*> cross_v;
  std::vector<float*> self_k;
  std::vector<float*> self_v;
  float* enc_kv = nullptr;  // [N, 2 I_max] encoder-phase scratch: the fused k|v projection

  float* logits = nullptr;  // [R, V]

  // Quantized input rows of the int8 operators ([max(N, R), widest input]); empty unless the
  // model has I8 weights.
  Int8Scratch int8;
  // F16 copies of one operator's input and output rows; empty unless the f16 path is on.
  F16Scratch f16;

  // Source layout of the current call.
  int32_t* src_offset = nullptr;  // [B] first packed row of each sentence
  int32_t* src_len = nullptr;     // [B]

  // The rows of the current decoder step.
  int32_t* row_token = nullptr;     // [R] token fed at this step
  int32_t* row_slot = nullptr;      // [R] cache slot the row reads and appends to
  int32_t* row_sentence = nullptr;  // [R] sentence whose source the row attends to

  // Per cache slot: the ids generated so far and the running sum of log-probabilities.
  int32_t* slot_ids = nullptr;    // [R, T]
  float* slot_score = nullptr;    // [R]

  // Beam bookkeeping.
  int32_t* live_slot = nullptr;   // [B, K] slots of each sentence's live beams, in beam order
  int32_t* live_count = nullptr;  // [B]
  uint8_t* done = nullptr;        // [B]
  float* cand_value = nullptr;    // [2K] best candidates of one sentence
  int32_t* cand_index = nullptr;  // [2K] beam * V + token
  int32_t* next_parent = nullptr; // [K]
  int32_t* next_token = nullptr;  // [K]
  float* next_score = nullptr;    // [K]
  int32_t* next_slot = nullptr;   // [K]
  uint8_t* slot_claimed = nullptr;  // [K]

  // Results: H hypothesis records per sentence with T ids each, and their order.
  HypothesisRecord* hyp = nullptr;  // [B, H]
  int32_t* hyp_ids = nullptr;       // [B, H, T]
  int32_t* hyp_stored = nullptr;    // [B] records written
  int32_t* hyp_order = nullptr;     // [B, H] record indices, best first
};

struct Translator::Impl {
  std::shared_ptr<const Model> model;
  const Model::Impl* m = nullptr;  // model->impl(), kept alive by `model`
  TranslatorLimits limits;
  ThreadPool pool;

  std::vector<EncoderLayerOps> encoder_ops;
  std::vector<DecoderLayerOps> decoder_ops;
  FullyConnected lm_head;  // d -> V with final_logits_bias

  // Decided at Create (translator.cc): the f16 path is on when `precision` is kF16.
  MatmulPrecision precision = MatmulPrecision::kF32;
  std::string precision_note;

  Arena arena;
  Buffers buf;
  size_t hyps_per_sentence = 0;  // H = 3 * max_beam (see beam.cc for the bound)

  // Results of the last successful TranslateIds.
  size_t result_sentences = 0;
  size_t result_hypotheses = 0;  // requested num_hypotheses
};

// What Translator::Create does, returning the Impl itself: for Translator::Create and for
// tests that drive the encoder or decoder directly. Errors as Translator::Create.
Result<std::unique_ptr<Translator::Impl>> CreateTranslatorImpl(std::shared_ptr<const Model> model,
                                                               const TranslatorLimits& limits);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_TRANSLATOR_IMPL_H_
