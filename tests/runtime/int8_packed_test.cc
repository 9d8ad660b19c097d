// The packed int8 weights (runtime/src/int8_packed_store.h): a model loaded from a file
// runs its layers' int8 products on the Model's packed copies where this CPU packs (x86 with the
// avx512-vnni or the avx2 family dispatched), a model loaded from memory reads the file's rows in place, and
// both give the same bits: forced logits, beam hypotheses and scores, on 1 and 2 threads, with
// and without a vocabulary shortlist (which gathers rows of the packed lm_head, tied to the
// embeddings that the lookups read packed too). The store packs a matrix once and hands every
// caller the same copy.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "common/mapped_file.h"
#include "int8_packed_store.h"
#include "kernels/int8_packed.h"
#include "tests/runtime/test_model.h"

namespace headwise {
namespace {

std::string WriteTemp(const std::vector<uint8_t>& bytes) {
  char path[] = "/tmp/headwise_packed_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  std::FILE* f = fdopen(fd, "wb");
  EXPECT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
  return path;
}

struct Output {
  std::vector<float> logits;
  std::vector<std::vector<int32_t>> ids;
  std::vector<float> scores;
  std::string paths;
};

Output Translate(const std::shared_ptr<const Model>& model, const testing::ModelOptions& o,
                 int threads, bool shortlist) {
  TranslatorLimits limits;
  limits.use_shortlist = shortlist;
  limits.max_batch = 3;
  limits.max_beam = 4;
  limits.max_source_tokens = 48;
  limits.max_target_tokens = 16;
  limits.num_threads = threads;
  auto tr = Translator::Create(model, limits);
  EXPECT_TRUE(tr.ok()) << tr.status().ToString();
  Output out;
  if (!tr.ok()) return out;
  std::vector<std::vector<int32_t>> sources;
  std::vector<TokenSpan> spans;
  for (uint32_t s = 0; s < 3; ++s) sources.push_back(testing::RandomSource(o, 40 - 9 * s, 70 + s));
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  const std::vector<int32_t> target = testing::RandomSource(o, 9, 80);
  out.logits.assign((target.size() + 1) * o.vocab, 0.0f);
  EXPECT_TRUE((*tr)->ForcedLogits(spans[0], {target.data(), target.size()}, out.logits.data()).ok());
  SearchOptions beam;
  beam.beam_size = 4;
  beam.num_hypotheses = 2;
  beam.max_length = 12;
  EXPECT_TRUE((*tr)->TranslateIds(spans.data(), spans.size(), beam).ok());
  for (size_t s = 0; s < spans.size(); ++s) {
    for (size_t k = 0; k < (*tr)->num_hypotheses(s); ++k) {
      const HypothesisView h = (*tr)->hypothesis(s, k);
      out.ids.emplace_back(h.ids, h.ids + h.size);
      out.scores.push_back(h.score);
    }
  }
  out.paths = (*tr)->kernel_paths();
  return out;
}

class Int8PackedModelTest : public ::testing::TestWithParam<bool> {};  // with a shortlist

TEST_P(Int8PackedModelTest, AFileModelTranslatesAsTheSameModelReadInPlace) {
  const bool shortlist = GetParam();
  testing::ModelOptions o;
  o.d_model = 96;  // k = 96 and 192: whole 4-byte groups; 3 heads of 32
  o.heads = 3;
  o.encoder_ffn = 200;  // fc2's k = 200, fc1's 200 channels: a partial 16-channel block
  o.decoder_ffn = 200;
  o.vocab = 1000;
  o.pad = o.start = 999;
  o.max_positions = 64;
  o.weights = WeightFormat::kI8;
  ModelSpec spec = testing::MakeSpec(o);
  if (shortlist) spec.shortlist = testing::MakeSyntheticShortlist(o.vocab, 40, 12, 5);
  const std::vector<uint8_t> bytes = testing::Serialize(spec);
  ASSERT_FALSE(bytes.empty());
  const std::string path = WriteTemp(bytes);
  auto file_model = Model::Load(path);
  std::remove(path.c_str());
  ASSERT_TRUE(file_model.ok()) << file_model.status().ToString();
  testing::AlignedBytes image(bytes);
  auto memory_model = Model::LoadFromMemory(image.data(), image.size());
  ASSERT_TRUE(memory_model.ok()) << memory_model.status().ToString();
  const std::shared_ptr<const Model> from_file = std::move(*file_model);
  const std::shared_ptr<const Model> from_memory = std::move(*memory_model);

  const Output want = Translate(from_memory, o, 1, shortlist);
  EXPECT_EQ(want.paths.find("-packed"), std::string::npos) << want.paths;
  for (int threads : {1, 2}) {
    const Output got = Translate(from_file, o, threads, shortlist);
    if (Int8PackedStore::PacksHere()) {
      const std::string packed = std::string("int8: ") + kernels::Int8PackedKernelHere().name;
      const std::string row_major = std::string("int8: ") + kernels::Int8GemmKernelName() + ",";
      EXPECT_NE(got.paths.find(packed), std::string::npos) << got.paths;
      EXPECT_EQ(got.paths.find(row_major), std::string::npos) << got.paths;
    } else {
      EXPECT_EQ(got.paths.find("-packed"), std::string::npos) << got.paths;
    }
    ASSERT_EQ(got.logits.size(), want.logits.size());
    EXPECT_EQ(std::memcmp(got.logits.data(), want.logits.data(), got.logits.size() * sizeof(float)), 0)
        << threads << " threads: forced logits differ";
    EXPECT_EQ(got.ids, want.ids) << threads << " threads";
    ASSERT_EQ(got.scores.size(), want.scores.size());
    EXPECT_EQ(std::memcmp(got.scores.data(), want.scores.data(), got.scores.size() * sizeof(float)), 0)
        << threads << " threads: scores differ";
  }
  if (!Int8PackedStore::PacksHere()) {
    GTEST_SKIP() << "this CPU does not pack int8 weights (the dispatched int8 family has no "
                    "packed kernel): both models read in place";
  }
}

INSTANTIATE_TEST_SUITE_P(Shortlist, Int8PackedModelTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return std::string(p.param ? "with_shortlist" : "full_vocabulary");
                         });

TEST(Int8Packed, TheStorePacksAMatrixOnceAndOnlyFromAMappedFile) {
  const size_t n = 40, k = 52;
  std::vector<int8_t> bytes(n * k);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<int8_t>(static_cast<int>(i % 251) - 125);
  const std::string path = WriteTemp(std::vector<uint8_t>(bytes.begin(), bytes.end()));
  auto file = MappedFile::Open(path);
  std::remove(path.c_str());
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const int8_t* w = reinterpret_cast<const int8_t*>(file->data());
  Int8PackedStore store;
  EXPECT_EQ(store.Get(bytes.data(), n, k, MappedFile()), nullptr) << "no mapping: nothing packed";
  const uint8_t* a = store.Get(w, n, k, *file);
  if (!Int8PackedStore::PacksHere()) {
    EXPECT_EQ(a, nullptr);
    GTEST_SKIP() << "this CPU does not pack int8 weights";
  }
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(store.Get(w, n, k, *file), a) << "the same copy for a second caller";
  EXPECT_EQ(store.bytes(), kernels::Int8VnniPackedBytes(n, k));
  std::vector<uint8_t> want(kernels::Int8VnniPackedBytes(n, k));
  kernels::PackInt8Vnni(bytes.data(), n, k, want.data());
  EXPECT_EQ(std::memcmp(a, want.data(), want.size()), 0);
  // Released pages read back the file's bytes.
  EXPECT_EQ(std::memcmp(w, bytes.data(), bytes.size()), 0);
}

}  // namespace
}  // namespace headwise
