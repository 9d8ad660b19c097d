// Per-layer benchmarks on one-layer models of the benchmark sizes: an encoder layer over one
// 20-token sentence, and one decoder layer step (self-attention over 32 cached positions,
// cross-attention over 20 source rows, feed-forward). The one-layer models have a 16-token
// vocabulary so the decoder step is the layer, not lm_head.
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/synthetic_model.h"
#include "decoder.h"
#include "encoder.h"
#include "translator_impl.h"

namespace headwise::bench {
namespace {

constexpr size_t kSourceLength = 20;
constexpr size_t kDecodeSteps = 32;

struct OneLayer {
  std::unique_ptr<LoadedModel> model;
  std::unique_ptr<Translator::Impl> impl;
  std::vector<int32_t> source;
};

OneLayer MakeOneLayer(const ModelSize& size, uint32_t heads, uint32_t cross_heads) {
  SyntheticOptions o;
  o.size = size;
  o.size.encoder_layers = 1;
  o.size.decoder_layers = 1;
  o.size.vocab = 16;
  o.encoder_heads = o.decoder_self_heads = heads;
  o.decoder_cross_heads = cross_heads;
  OneLayer l;
  l.model = LoadSynthetic(o);
  TranslatorLimits limits;
  limits.max_batch = 1;
  limits.max_beam = 1;
  limits.max_source_tokens = 64;
  limits.max_target_tokens = 64;
  Result<std::unique_ptr<Translator::Impl>> impl = CreateTranslatorImpl(l.model->model, limits);
  if (!impl.ok()) Die(impl.status().ToString());
  l.impl = std::move(impl).value();
  l.source = SyntheticSource(o.size, kSourceLength, 7);
  return l;
}

// Cross-attention heads 0: RunEncoder is then the encoder layer alone (no cross K/V work).
void BM_EncoderLayer(benchmark::State& state, ModelSize size, uint32_t heads) {
  OneLayer l = MakeOneLayer(size, heads, 0);
  const TokenSpan span{l.source.data(), l.source.size()};
  for (auto _ : state) {
    if (!RunEncoder(l.impl->net, l.impl->buf.encoder, &span, 1).ok()) Die("RunEncoder failed");
  }
  state.counters["heads"] = heads;
  state.counters["rows"] = static_cast<double>(kSourceLength);
}

void BM_DecoderLayerStep(benchmark::State& state, ModelSize size, uint32_t heads) {
  OneLayer l = MakeOneLayer(size, heads, heads);
  const TokenSpan span{l.source.data(), l.source.size()};
  Translator::Impl& t = *l.impl;
  if (!RunEncoder(t.net, t.buf.encoder, &span, 1).ok()) Die("RunEncoder failed");
  const Decoder decoder = t.decoder();
  decoder.rows().slot[0] = 0;
  decoder.rows().sentence[0] = 0;
  decoder.rows().token[0] = 3;
  float* logits = t.buf.search.logits;
  for (size_t step = 0; step < kDecodeSteps; ++step) {  // fill the cache up to the step timed
    if (!decoder.Step(1, step, logits).ok()) Die("DecoderStep failed");
  }
  for (auto _ : state) {
    if (!decoder.Step(1, kDecodeSteps, logits).ok()) Die("DecoderStep failed");
  }
  state.counters["heads"] = heads;
}

}  // namespace

void RegisterLayerBenchmarks(const BenchConfig& config) {
  std::vector<ModelSize> sizes = {config.smoke ? kTiny : kShipped};
  if (config.long_set) sizes.push_back(kBase);
  for (const ModelSize& z : sizes) {
    for (uint32_t heads : {z.heads, z.heads / 2, 0u}) {
      const std::string suffix = std::string(z.name) + "/heads:" + std::to_string(heads);
      auto* e = benchmark::RegisterBenchmark(("layer/encoder/" + suffix).c_str(), BM_EncoderLayer, z, heads);
      auto* d = benchmark::RegisterBenchmark(("layer/decoder_step32/" + suffix).c_str(), BM_DecoderLayerStep, z, heads);
      if (config.smoke) {
        e->Iterations(5);
        d->Iterations(5);
      }
    }
  }
}

}  // namespace headwise::bench
