// The wrappers of bench/op_profile.h. Each is declared with the assembler name `ld --wrap`
// gives it (__wrap_<mangled>), and reaches the runtime's function through __real_<mangled>.
// A member function and a free function taking the object pointer first have the same calling
// convention in the Itanium C++ ABI (the hidden Status return slot included), on x86-64 and
// aarch64 alike, which is what lets a free function stand in for FullyConnected::Run and
// Decoder::Step. Built only where HEADWISE_OP_PROFILE is defined (bench/CMakeLists.txt, LP64
// with GNU ld); a renamed or re-typed function then fails the link, never silently.
#include "op_profile.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#if defined(HEADWISE_OP_PROFILE)
#include "decoder.h"
#include "encoder.h"
#include "fc/fully_connected.h"
#include "kernels/attention.h"
#include "search.h"
#if defined(__x86_64__)
#include <x86intrin.h>
#endif
#endif

namespace headwise::bench {

#if defined(HEADWISE_OP_PROFILE)
namespace {

inline uint64_t Ticks() {
#if defined(__x86_64__)
  return __rdtsc();
#elif defined(__aarch64__)
  uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

enum Slot { kProjections, kAttention, kFeedForward, kOutputLayer, kSearch, kSteps, kEncoder, kSlots };

struct State {
  bool on = false;
  uint64_t ticks[kSlots] = {};
  uint64_t calls = 0;
  size_t vocab = 0, d_model = 0, encoder_ffn = 0, decoder_ffn = 0;
  bool ambiguous = false;
  uint64_t start_ticks = 0;
  std::chrono::steady_clock::time_point start_time;
};
State g;

Slot Classify(const FullyConnected& fc) {
  const size_t in = fc.input_channels(), out = fc.output_channels();
  if (out == g.vocab) return kOutputLayer;
  const bool ffn_out = out == g.encoder_ffn || out == g.decoder_ffn;
  const bool ffn_in = in == g.encoder_ffn || in == g.decoder_ffn;
  if ((in == g.d_model && ffn_out) || (ffn_in && out == g.d_model)) return kFeedForward;
  return kProjections;
}

}  // namespace

// The runtime's functions, reached through the linker's __real_ names.
Status RealFcRun(const FullyConnected* self, size_t rows, const float* x, float* y,
                 pthreadpool* pool) __asm__("__real__ZNK8headwise14FullyConnected3RunEmPKfPfP11pthreadpool");
Status RealStep(const Decoder* self, size_t rows, size_t step,
                float* logits) __asm__("__real__ZNK8headwise7Decoder4StepEmmPf");
Status RealGreedy(const Decoder& decoder, const SearchBuffers& buf, size_t batch,
                  const SearchOptions& options, size_t max_length)
    __asm__("__real__ZN8headwise9RunGreedyERKNS_7DecoderERKNS_13SearchBuffersEmRKNS_13SearchOptionsEm");
Status RealBeam(const Decoder& decoder, const SearchBuffers& buf, size_t batch,
                const SearchOptions& options, size_t max_length)
    __asm__("__real__ZN8headwise7RunBeamERKNS_7DecoderERKNS_13SearchBuffersEmRKNS_13SearchOptionsEm");
Status RealEncoder(const Network& net, const EncoderBuffers& buf, const TokenSpan* sources,
                   size_t batch)
    __asm__("__real__ZN8headwise10RunEncoderERKNS_7NetworkERKNS_14EncoderBuffersEPKNS_9TokenSpanEm");
void RealAttentionHead(size_t h, const float* q, size_t q_stride, size_t num_queries,
                       const float* k, size_t k_stride, const float* v, size_t v_stride,
                       size_t num_keys, const kernels::AttentionShape& shape, float* out,
                       size_t out_stride, float* scores)
    __asm__("__real__ZN8headwise7kernels13AttentionHeadEmPKfmmS2_mS2_mmRKNS0_14AttentionShapeEPfmS6_");
void RealAttention(const float* q, size_t q_stride, size_t num_queries, const float* k,
                   size_t k_stride, const float* v, size_t v_stride, size_t num_keys,
                   const kernels::AttentionShape& shape, float* out, size_t out_stride,
                   float* scores)
    __asm__("__real__ZN8headwise7kernels9AttentionEPKfmmS2_mS2_mmRKNS0_14AttentionShapeEPfmS6_");

// The wrappers the library's calls reach.
Status WrapFcRun(const FullyConnected* self, size_t rows, const float* x, float* y,
                 pthreadpool* pool) __asm__("__wrap__ZNK8headwise14FullyConnected3RunEmPKfPfP11pthreadpool");
Status WrapStep(const Decoder* self, size_t rows, size_t step,
                float* logits) __asm__("__wrap__ZNK8headwise7Decoder4StepEmmPf");
Status WrapGreedy(const Decoder& decoder, const SearchBuffers& buf, size_t batch,
                  const SearchOptions& options, size_t max_length)
    __asm__("__wrap__ZN8headwise9RunGreedyERKNS_7DecoderERKNS_13SearchBuffersEmRKNS_13SearchOptionsEm");
Status WrapBeam(const Decoder& decoder, const SearchBuffers& buf, size_t batch,
                const SearchOptions& options, size_t max_length)
    __asm__("__wrap__ZN8headwise7RunBeamERKNS_7DecoderERKNS_13SearchBuffersEmRKNS_13SearchOptionsEm");
Status WrapEncoder(const Network& net, const EncoderBuffers& buf, const TokenSpan* sources,
                   size_t batch)
    __asm__("__wrap__ZN8headwise10RunEncoderERKNS_7NetworkERKNS_14EncoderBuffersEPKNS_9TokenSpanEm");
void WrapAttentionHead(size_t h, const float* q, size_t q_stride, size_t num_queries,
                       const float* k, size_t k_stride, const float* v, size_t v_stride,
                       size_t num_keys, const kernels::AttentionShape& shape, float* out,
                       size_t out_stride, float* scores)
    __asm__("__wrap__ZN8headwise7kernels13AttentionHeadEmPKfmmS2_mS2_mmRKNS0_14AttentionShapeEPfmS6_");
void WrapAttention(const float* q, size_t q_stride, size_t num_queries, const float* k,
                   size_t k_stride, const float* v, size_t v_stride, size_t num_keys,
                   const kernels::AttentionShape& shape, float* out, size_t out_stride,
                   float* scores)
    __asm__("__wrap__ZN8headwise7kernels9AttentionEPKfmmS2_mS2_mmRKNS0_14AttentionShapeEPfmS6_");

Status WrapFcRun(const FullyConnected* self, size_t rows, const float* x, float* y,
                 pthreadpool* pool) {
  if (!g.on) return RealFcRun(self, rows, x, y, pool);
  const uint64_t t0 = Ticks();
  Status s = RealFcRun(self, rows, x, y, pool);
  g.ticks[Classify(*self)] += Ticks() - t0;
  ++g.calls;
  return s;
}

Status WrapStep(const Decoder* self, size_t rows, size_t step, float* logits) {
  if (!g.on) return RealStep(self, rows, step, logits);
  const uint64_t t0 = Ticks();
  Status s = RealStep(self, rows, step, logits);
  g.ticks[kSteps] += Ticks() - t0;
  ++g.calls;
  return s;
}

Status WrapGreedy(const Decoder& decoder, const SearchBuffers& buf, size_t batch,
                  const SearchOptions& options, size_t max_length) {
  if (!g.on) return RealGreedy(decoder, buf, batch, options, max_length);
  const uint64_t t0 = Ticks();
  Status s = RealGreedy(decoder, buf, batch, options, max_length);
  g.ticks[kSearch] += Ticks() - t0;
  ++g.calls;
  return s;
}

Status WrapBeam(const Decoder& decoder, const SearchBuffers& buf, size_t batch,
                const SearchOptions& options, size_t max_length) {
  if (!g.on) return RealBeam(decoder, buf, batch, options, max_length);
  const uint64_t t0 = Ticks();
  Status s = RealBeam(decoder, buf, batch, options, max_length);
  g.ticks[kSearch] += Ticks() - t0;
  ++g.calls;
  return s;
}

Status WrapEncoder(const Network& net, const EncoderBuffers& buf, const TokenSpan* sources,
                   size_t batch) {
  if (!g.on) return RealEncoder(net, buf, sources, batch);
  const uint64_t t0 = Ticks();
  Status s = RealEncoder(net, buf, sources, batch);
  g.ticks[kEncoder] += Ticks() - t0;
  ++g.calls;
  return s;
}

void WrapAttentionHead(size_t h, const float* q, size_t q_stride, size_t num_queries,
                       const float* k, size_t k_stride, const float* v, size_t v_stride,
                       size_t num_keys, const kernels::AttentionShape& shape, float* out,
                       size_t out_stride, float* scores) {
  if (!g.on) {
    RealAttentionHead(h, q, q_stride, num_queries, k, k_stride, v, v_stride, num_keys, shape, out,
                      out_stride, scores);
    return;
  }
  const uint64_t t0 = Ticks();
  RealAttentionHead(h, q, q_stride, num_queries, k, k_stride, v, v_stride, num_keys, shape, out,
                    out_stride, scores);
  g.ticks[kAttention] += Ticks() - t0;
  ++g.calls;
}

void WrapAttention(const float* q, size_t q_stride, size_t num_queries, const float* k,
                   size_t k_stride, const float* v, size_t v_stride, size_t num_keys,
                   const kernels::AttentionShape& shape, float* out, size_t out_stride,
                   float* scores) {
  if (!g.on) {
    RealAttention(q, q_stride, num_queries, k, k_stride, v, v_stride, num_keys, shape, out,
                  out_stride, scores);
    return;
  }
  const uint64_t t0 = Ticks();
  RealAttention(q, q_stride, num_queries, k, k_stride, v, v_stride, num_keys, shape, out,
                out_stride, scores);
  g.ticks[kAttention] += Ticks() - t0;
  ++g.calls;
}

bool OpProfileAvailable() { return true; }

void StartOpProfile(const ModelInfo& m) {
  g = State{};
  g.vocab = static_cast<size_t>(m.vocab_size);
  g.d_model = static_cast<size_t>(m.d_model);
  g.encoder_ffn = static_cast<size_t>(m.encoder_ffn_dim);
  g.decoder_ffn = static_cast<size_t>(m.decoder_ffn_dim);
  for (const AttentionBlockInfo& b : m.attention) {
    const size_t inner = static_cast<size_t>(b.num_heads) * static_cast<size_t>(b.head_dim);
    for (size_t k : {size_t{1}, size_t{2}, size_t{3}}) {
      const size_t w = k * inner;
      if (w != 0 && (w == g.encoder_ffn || w == g.decoder_ffn || w == g.vocab)) g.ambiguous = true;
    }
  }
  g.start_time = std::chrono::steady_clock::now();
  g.start_ticks = Ticks();
  g.on = true;
}

OpTimes StopOpProfile() {
  g.on = false;
  const uint64_t ticks = Ticks() - g.start_ticks;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - g.start_time).count();
  const double per_tick = ticks > 0 ? seconds / static_cast<double>(ticks) : 0.0;
  auto s = [&](Slot slot) { return static_cast<double>(g.ticks[slot]) * per_tick; };
  OpTimes t;
  t.projections_s = s(kProjections);
  t.attention_s = s(kAttention);
  t.feed_forward_s = s(kFeedForward);
  t.output_layer_s = s(kOutputLayer);
  t.decoder_steps_s = s(kSteps);
  t.search_s = std::max(0.0, s(kSearch) - s(kSteps));
  t.encoder_s = s(kEncoder);
  t.timed_calls = g.calls;
  t.ambiguous = g.ambiguous;
  // One start/stop pair, measured: what each timed call added.
  constexpr int kPairs = 200000;
  uint64_t sink = 0;
  const uint64_t c0 = Ticks();
  for (int i = 0; i < kPairs; ++i) sink += Ticks() - Ticks();
  const uint64_t c1 = Ticks();
  t.timer_pair_s = static_cast<double>(c1 - c0 + (sink & 1)) * per_tick / kPairs;
  return t;
}

#else  // !HEADWISE_OP_PROFILE

bool OpProfileAvailable() { return false; }
void StartOpProfile(const ModelInfo&) {}
OpTimes StopOpProfile() { return OpTimes{}; }

#endif

}  // namespace headwise::bench
