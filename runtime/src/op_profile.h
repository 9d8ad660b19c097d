// runtime/src/op_profile.h: where a translation's time goes, per kind of operation, for bench/
// (the per-operation shares of a decode step). Off unless a benchmark points
// Network::profile at an OpProfile; off, a timer is one test of a null pointer.
//
// Timed regions are leaves (never nested), so the kinds add up to at most the call's time;
// what no timer covers (embedding lookups, bookkeeping) is the call's time minus their sum.
// Wall time (steady_clock): a pool's workers count as the calling thread waits for them.
// Not thread-safe: one OpProfile per Translator, as one call runs at a time.
#ifndef HEADWISE_RUNTIME_OP_PROFILE_H_
#define HEADWISE_RUNTIME_OP_PROFILE_H_

#include <chrono>
#include <cstddef>

namespace headwise {

enum class OpKind : int {
  kEncoder = 0,    // RunEncoder: the whole encoder, its cross-attention K/V included
  kProjection,     // decoder attention projections: self qkv, out_proj, cross q, out_proj
                   // (each out_proj with its residual + LayerNorm)
  kAttention,      // decoder self- and cross-attention over the heads, KV cache appends
  kFeedForward,    // decoder fc1, activation, fc2, residual + LayerNorm
  kOutputLayer,    // lm_head
  kSearch,         // greedy's argmax, beam's log-softmax and top-k over beam x vocab
  kCacheCopy,      // beam search copying a parent's KV cache into a new slot
  kCount,
};

inline constexpr const char* kOpKindNames[] = {"encoder", "projections", "attention", "ffn",
                                               "output_layer", "search", "cache_copy"};
static_assert(sizeof(kOpKindNames) / sizeof(kOpKindNames[0]) == static_cast<size_t>(OpKind::kCount));

struct OpProfile {
  double seconds[static_cast<int>(OpKind::kCount)] = {};
  size_t steps = 0;      // Decoder::Step calls
  size_t step_rows = 0;  // rows over those calls
  void Clear() { *this = OpProfile(); }
};

// Adds the time from construction to destruction to profile->seconds[kind] (profile may be
// null: nothing is timed).
class OpTimer {
 public:
  OpTimer(OpProfile* profile, OpKind kind) : profile_(profile), kind_(kind) {
    if (profile_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  ~OpTimer() {
    if (profile_ != nullptr) {
      profile_->seconds[static_cast<int>(kind_)] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  OpProfile* profile_;
  OpKind kind_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_OP_PROFILE_H_
