// The token-id path performs zero heap allocations: this binary replaces malloc, calloc,
// realloc, posix_memalign, aligned_alloc, memalign and operator new with counting wrappers over
// glibc's internal entry points, and counts every call made (on any thread, XNNPACK and the
// thread pool included) while TranslateIds and ForcedLogits run after a warm-up call.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "format/weight_format.h"
#include "tests/runtime/test_model.h"

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* p);
}

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

inline void Count() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* malloc(size_t size) {
  Count();
  return __libc_malloc(size);
}
void* calloc(size_t n, size_t size) {
  Count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t size) {
  Count();
  return __libc_realloc(p, size);
}
void free(void* p) { __libc_free(p); }
int posix_memalign(void** out, size_t alignment, size_t size) {
  Count();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void* aligned_alloc(size_t alignment, size_t size) {
  Count();
  return __libc_memalign(alignment, size);
}
void* memalign(size_t alignment, size_t size) {
  Count();
  return __libc_memalign(alignment, size);
}
}

void* operator new(size_t size) {
  Count();
  void* p = __libc_malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new(size_t size, std::align_val_t a) {
  Count();
  void* p = __libc_memalign(static_cast<size_t>(a), size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size, std::align_val_t a) { return operator new(size, a); }
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { __libc_free(p); }

namespace headwise {
namespace {

class CountingScope {
 public:
  CountingScope() {
    g_allocations = 0;
    g_counting = true;
  }
  ~CountingScope() { g_counting = false; }
  long count() const { return g_allocations.load(); }
};

// The counter itself works, for each kind of call, or the real test below could not fail.
TEST(AllocationCounterTest, SeesNewMallocAndAlignedAllocations) {
  long counted = 0;
  {
    CountingScope scope;
    int* a = new int(3);
    void* b = std::malloc(16);
    void* c = nullptr;
    if (posix_memalign(&c, 64, 128) != 0) c = nullptr;
    delete a;
    std::free(b);
    std::free(c);
    counted = scope.count();
  }
  EXPECT_EQ(counted, 3);
}

// Parametrised over the weight format: F32, and F16 with fp16_compute kAuto, which takes the
// f16 path (its F16 activation copies in the arena) where the CPU has fp16 arithmetic (qemu's
// default aarch64 CPU "max", and tests/platforms' cortex-a76 run) and the F32 fallback
// elsewhere. HEADWISE_EXPECT_FP16=1 makes the f16 case insist on the f16 path.
class AllocationTest : public ::testing::TestWithParam<WeightFormat> {};

TEST_P(AllocationTest, TranslateIdsAndForcedLogitsAllocateNothing) {
  testing::ModelOptions o;
  o.d_model = 64;  // large enough that the bigger products run on the pool
  o.encoder_ffn = 256;
  o.decoder_ffn = 256;
  o.vocab = 61;
  o.pad = 60;
  o.start = 60;
  o.eos_bias = 1.0f;
  o.kept = {{0, 1}, {}, {1, 2, 3}, {0}, {2}, {}};  // pruned and empty blocks
  auto tm = std::make_unique<testing::TestModel>();
  tm->spec = testing::MakeSpec(o);
  ApplyWeightFormat(GetParam(), &tm->spec);
  tm->image = std::make_unique<testing::AlignedBytes>(testing::Serialize(tm->spec));
  auto loaded = Model::LoadFromMemory(tm->image->data(), tm->image->size());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  tm->model = *loaded;
  TranslatorLimits limits;
  limits.max_batch = 4;
  limits.max_source_tokens = 24;
  limits.max_target_tokens = 16;
  limits.max_beam = 4;
  limits.num_threads = 2;  // the pool's workers are counted too
  auto created = Translator::Create(tm->model, limits);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Translator& tr = **created;
  std::printf("%s\n", tr.precision_note().c_str());
  const char* expect = std::getenv("HEADWISE_EXPECT_FP16");
  if (GetParam() == WeightFormat::kF16 && expect != nullptr && std::string(expect) == "1") {
    ASSERT_EQ(tr.matmul_precision(), MatmulPrecision::kF16) << tr.precision_note();
  }

  std::vector<std::vector<int32_t>> sources;
  // Long enough that attention heads, too, are spread over the pool.
  for (uint32_t s = 0; s < 3; ++s) sources.push_back(testing::RandomSource(o, 8 + 8 * s, s));
  std::vector<TokenSpan> spans;
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  SearchOptions greedy;
  SearchOptions beam;
  beam.beam_size = 4;
  beam.num_hypotheses = 3;
  beam.length_penalty = 0.9f;
  const std::vector<int32_t> target = {5, 9, 13, 2, 7};
  std::vector<float> logits((target.size() + 1) * o.vocab);

  // Warm-up: first calls may touch lazily initialised state outside headwise.
  ASSERT_TRUE(tr.TranslateIds(spans.data(), spans.size(), greedy).ok());
  ASSERT_TRUE(tr.TranslateIds(spans.data(), spans.size(), beam).ok());
  ASSERT_TRUE(tr.ForcedLogits(spans[0], {target.data(), target.size()}, logits.data()).ok());

  Status s1, s2, s3, s4;
  size_t hyps = 0;
  long counted = 0;
  {
    CountingScope scope;
    s1 = tr.TranslateIds(spans.data(), spans.size(), greedy);
    s2 = tr.TranslateIds(spans.data(), spans.size(), beam);
    for (size_t s = 0; s < spans.size(); ++s) {
      for (size_t k = 0; k < tr.num_hypotheses(s); ++k) hyps += tr.hypothesis(s, k).size > 0 ? 1 : 0;
    }
    s3 = tr.ForcedLogits(spans[1], {target.data(), target.size()}, logits.data());
    s4 = tr.TranslateIds(spans.data() + 2, 1, greedy);
    counted = scope.count();
  }
  EXPECT_TRUE(s1.ok()) << s1.ToString();
  EXPECT_TRUE(s2.ok()) << s2.ToString();
  EXPECT_TRUE(s3.ok()) << s3.ToString();
  EXPECT_TRUE(s4.ok()) << s4.ToString();
  EXPECT_GT(hyps, 0u);
  EXPECT_EQ(counted, 0) << "heap allocations during TranslateIds / ForcedLogits ("
                        << tr.precision_note() << ")";
}

INSTANTIATE_TEST_SUITE_P(Formats, AllocationTest,
                         ::testing::Values(WeightFormat::kF32, WeightFormat::kF16),
                         [](const ::testing::TestParamInfo<WeightFormat>& i) {
                           return std::string(WeightFormatName(i.param));
                         });

}  // namespace
}  // namespace headwise
