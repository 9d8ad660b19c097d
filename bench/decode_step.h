// bench/decode_step.h: the CPU time of one batch-1 greedy decode step, measured the one way the
// model benchmarks share (model_bench.cc, bandwidth_bench.cc): an encode plus a `steps`-step
// greedy translation, minus an encode plus a 1-step one, over steps - 1, so the encoder and the
// first step cancel. Calling-thread CPU time (ThreadCpuSeconds). Dies if a translation fails.
#ifndef HEADWISE_BENCH_DECODE_STEP_H_
#define HEADWISE_BENCH_DECODE_STEP_H_

#include "bench/bench_util.h"
#include "bench/synthetic_model.h"
#include "encoder.h"
#include "search.h"
#include "translator_impl.h"

namespace headwise::bench {

inline double DecodeStepSeconds(Translator::Impl& t, const TokenSpan& source, int steps) {
  auto translate = [&](int max_length) {
    SearchOptions options;
    options.max_length = max_length;
    const double t0 = ThreadCpuSeconds();
    if (!RunEncoder(t.net, t.buf.encoder, &source, 1).ok() ||
        !RunGreedy(t.decoder(), t.buf.search, 1, options, static_cast<size_t>(max_length)).ok()) {
      Die("greedy failed");
    }
    return ThreadCpuSeconds() - t0;
  };
  const double all = translate(steps);
  const double first = translate(1);
  return (all - first) / (steps - 1);
}

}  // namespace headwise::bench

#endif  // HEADWISE_BENCH_DECODE_STEP_H_
