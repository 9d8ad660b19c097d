// bench/op_profile.h: where the time of a translation goes, by operation, for
// headwise_throughput --profile. The bench binary is linked with `ld --wrap` on the runtime's
// FullyConnected::Run, kernels::AttentionHead / Attention, Decoder::Step, RunGreedy, RunBeam
// and RunEncoder (bench/CMakeLists.txt), so every call from the library to them passes through
// a timer here (the cycle counter on x86-64, the virtual counter on aarch64); nothing in the
// runtime knows. While no profile is running the wrappers only forward.
//
// Categories: projections (q/k/v, out, cross q/kv products), attention (the attention kernels),
// feed-forward (fc1/fc2 products), output layer (lm_head), search (greedy / beam minus the
// decoder steps they run), the rest of TranslateIds ("other": embeddings, LayerNorm, residual
// adds, batching and result copies). A product is classed by its shape: output = vocabulary ->
// output layer; d -> ffn or ffn -> d -> feed-forward; anything else -> projections
// (`ambiguous` is set when a kept-head width could equal the ffn width).
//
// Single thread only (num_threads 1): with a pool, kernels on worker threads would be counted
// as their CPU time next to the calling thread's wall time.
#ifndef HEADWISE_BENCH_OP_PROFILE_H_
#define HEADWISE_BENCH_OP_PROFILE_H_

#include <cstddef>
#include <cstdint>

#include "headwise/headwise.hpp"

namespace headwise::bench {

struct OpTimes {
  double projections_s = 0;
  double attention_s = 0;
  double feed_forward_s = 0;
  double output_layer_s = 0;
  double search_s = 0;      // greedy / beam outside the decoder steps
  double encoder_s = 0;     // RunEncoder in all (its products and attention are in the above too)
  double decoder_steps_s = 0;
  uint64_t timed_calls = 0;  // calls that went through a timer
  double timer_pair_s = 0;   // the measured cost of one start/stop pair
  bool ambiguous = false;
};

// Whether this build has the wrappers (LP64 Linux with GNU ld; else --profile is refused).
bool OpProfileAvailable();

// Starts a profile of translations by a Translator of `model` (its dimensions class the
// products). Resets the counters.
void StartOpProfile(const ModelInfo& model);
// Stops it and returns the times, in seconds (ticks calibrated against steady_clock over the
// profile).
OpTimes StopOpProfile();

}  // namespace headwise::bench

#endif  // HEADWISE_BENCH_OP_PROFILE_H_
