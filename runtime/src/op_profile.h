// runtime/src/op_profile.h: where a translation's time goes, per kind of operation: the one
// operation profile of headwise, read by bench/ (file_bench.cc's shares of a decode step,
// headwise_throughput --profile). Off unless a benchmark points Network::profile at an
// OpProfile (TranslatorAccess::Of(translator).net.profile for a public Translator,
// translator_impl.h); off, a timer is one test of a null pointer.
//
// Kinds are leaves (never nested), timed in the encoder and the decoder alike, so they add up
// to at most the call's time; what no timer covers (embedding lookups, LayerNorm outside the
// sub-layers, bookkeeping) is the call's time minus their sum. encoder_seconds is RunEncoder
// in all, an outer total whose products and attention are in the kinds too.
// Wall time (steady_clock): a pool's workers count as the calling thread waits for them.
// Not thread-safe: one OpProfile per Translator, as one call runs at a time.
#ifndef HEADWISE_RUNTIME_OP_PROFILE_H_
#define HEADWISE_RUNTIME_OP_PROFILE_H_

#include <chrono>
#include <cstddef>

namespace headwise {

enum class OpKind : int {
  kProjection = 0,  // attention projections: encoder qkv and out_proj, the decoder's cross K/V
                    // (once per call), decoder self qkv, out_proj, cross q, out_proj (each
                    // out_proj with its residual + LayerNorm)
  kAttention,       // self- and cross-attention over the heads, KV cache appends
  kFeedForward,     // fc1, activation, fc2, residual + LayerNorm
  kOutputLayer,     // lm_head
  kSearch,          // greedy's argmax, beam's log-softmax and top-k over beam x vocab
  kCacheCopy,       // beam search giving a new slot its parent's cache history (Decoder::ShareCacheSlot)
  kCount,
};

inline constexpr const char* kOpKindNames[] = {"projections", "attention", "ffn", "output_layer",
                                               "search", "cache_copy"};
static_assert(sizeof(kOpKindNames) / sizeof(kOpKindNames[0]) == static_cast<size_t>(OpKind::kCount));

struct OpProfile {
  double seconds[static_cast<int>(OpKind::kCount)] = {};
  double encoder_seconds = 0;  // RunEncoder in all (outer; its leaves are in seconds[] too)
  size_t steps = 0;      // Decoder::Step calls
  size_t step_rows = 0;  // rows over those calls
  void Clear() { *this = OpProfile(); }
};

// Adds the time from construction to destruction to *sink (null: nothing is timed).
class ScopedSeconds {
 public:
  explicit ScopedSeconds(double* sink) : sink_(sink) {
    if (sink_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  ~ScopedSeconds() {
    if (sink_ != nullptr) {
      *sink_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }
  }
  ScopedSeconds(const ScopedSeconds&) = delete;
  ScopedSeconds& operator=(const ScopedSeconds&) = delete;

 private:
  double* sink_;
  std::chrono::steady_clock::time_point start_;
};

// Adds the time from construction to destruction to profile->seconds[kind] (profile may be
// null: nothing is timed).
class OpTimer : public ScopedSeconds {
 public:
  OpTimer(OpProfile* profile, OpKind kind)
      : ScopedSeconds(profile != nullptr ? &profile->seconds[static_cast<int>(kind)] : nullptr) {}
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_OP_PROFILE_H_
