// Packing int8 weights while other threads translate (runtime/src/int8_packed_store.h): 8
// threads each create a Translator from one freshly loaded int8 model file at once, so the
// Model's packed copies are made (and the file's pages released) while other threads already
// translate with the operators created first, and translate the same sources by token ids
// (beam 2); every result must equal, bit for bit, that of the same model loaded from memory
// (rows read in place) on one thread. Where this CPU does not pack, both read in place and the
// test still checks the shared model. The tsan preset runs this under ThreadSanitizer.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "headwise/headwise.hpp"
#include "tests/support/synthetic_model.h"

namespace headwise {
namespace {

constexpr int kThreads = 8;
constexpr size_t kSources = 24;

struct Hyp {
  std::vector<int32_t> ids;
  float score;
};

TranslatorLimits Limits() {
  TranslatorLimits limits;
  limits.max_batch = 2;
  limits.max_beam = 2;
  limits.max_source_tokens = 24;
  limits.max_target_tokens = 12;
  return limits;
}

Status TranslateAll(Translator& t, const std::vector<std::vector<int32_t>>& sources,
                    std::vector<Hyp>* out) {
  SearchOptions beam;
  beam.beam_size = 2;
  beam.max_length = 12;
  out->assign(sources.size(), Hyp{});
  for (size_t s = 0; s < sources.size(); ++s) {
    const TokenSpan span{sources[s].data(), sources[s].size()};
    HW_RETURN_IF_ERROR(t.TranslateIds(&span, 1, beam));
    const HypothesisView h = t.hypothesis(0, 0);
    (*out)[s] = Hyp{std::vector<int32_t>(h.ids, h.ids + h.size), h.score};
  }
  return Status::Ok();
}

TEST(SharedModel, EightThreadsPackingInt8WeightsMatchTheModelReadInPlace) {
  testing::SyntheticOptions o;
  o.d_model = 64;
  o.heads = 4;
  o.encoder_ffn = 128;
  o.decoder_ffn = 128;
  o.vocab = 600;
  o.pad = o.start = 599;
  o.max_positions = 32;
  o.weights = WeightFormat::kI8;
  auto in_memory = testing::LoadSpec(testing::MakeSyntheticSpec(o));
  ASSERT_TRUE(in_memory.ok()) << in_memory.status().ToString();
  const testing::LoadedModel& reference_model = **in_memory;
  char path[] = "/tmp/headwise_packed_concurrency_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::FILE* f = fdopen(fd, "wb");
  ASSERT_EQ(std::fwrite(reference_model.image->data(), 1, reference_model.image->size(), f),
            reference_model.image->size());
  std::fclose(f);
  auto loaded = Model::Load(path);
  std::remove(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const std::shared_ptr<const Model> model = std::move(loaded).value();

  std::vector<std::vector<int32_t>> sources;
  for (size_t s = 0; s < kSources; ++s) {
    sources.push_back(testing::RandomSource(o.vocab, o.pad, o.eos, 4 + s % 17, 100 + s));
  }
  std::vector<Hyp> reference;
  {
    auto t = Translator::Create(reference_model.model, Limits());
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ASSERT_TRUE(TranslateAll(**t, sources, &reference).ok());
  }

  std::vector<std::vector<Hyp>> results(kThreads);
  std::vector<Status> status(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto t = Translator::Create(model, Limits());  // the first ones pack, concurrently
      if (!t.ok()) {
        status[i] = t.status();
        return;
      }
      status[i] = TranslateAll(**t, sources, &results[i]);
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(status[i].ok()) << "thread " << i << ": " << status[i].ToString();
    for (size_t s = 0; s < kSources; ++s) {
      EXPECT_EQ(results[i][s].ids, reference[s].ids) << "thread " << i << " source " << s;
      EXPECT_EQ(std::memcmp(&results[i][s].score, &reference[s].score, sizeof(float)), 0)
          << "thread " << i << " source " << s;
    }
  }
}

}  // namespace
}  // namespace headwise
