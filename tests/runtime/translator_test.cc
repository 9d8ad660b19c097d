// End to end on synthetic models: teacher-forced logits and greedy/beam search against the
// plain reference (reference_model.h) over several head layouts, batching, the search
// invariants, and every limit.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "decoder.h"
#include "encoder.h"
#include "search.h"
#include "tests/runtime/reference_model.h"
#include "tests/runtime/test_model.h"
#include "translator_impl.h"

namespace headwise {
namespace {

using testing::ModelOptions;

struct Layout {
  const char* name;
  ModelOptions options;
};

void PrintTo(const Layout& l, std::ostream* os) { *os << l.name; }

std::vector<Layout> Layouts() {
  std::vector<Layout> out;
  {
    Layout l{"all_heads_swish_tied", {}};
    l.options.eos_bias = 1.0f;
    out.push_back(l);
  }
  {
    Layout l{"pruned_zero_blocks_relu_untied", {}};
    l.options.activation = convert::Activation::kRelu;
    l.options.tie_embeddings = false;
    // encoder 0, 1 | decoder self 0, 1 | decoder cross 0, 1
    l.options.kept = {{0, 3}, {}, {}, {1, 2}, {2}, {}};
    l.options.eos_bias = 1.0f;
    l.options.seed = 2;
    out.push_back(l);
  }
  {
    Layout l{"unshared_gelu_unscaled", {}};
    l.options.activation = convert::Activation::kGelu;
    l.options.share_embeddings = false;
    l.options.tie_embeddings = false;
    l.options.scale_embedding = false;
    l.options.kept = {{1}, {0, 1, 2}, {3}, {0}, {0, 1, 2, 3}, {1, 2}};
    l.options.eos_bias = 0.5f;
    l.options.seed = 3;
    out.push_back(l);
  }
  {
    Layout l{"odd_head_dim_three_layers", {}};
    l.options.d_model = 18;
    l.options.heads = 3;  // head_dim 6: vector loops with tails
    l.options.encoder_layers = 3;
    l.options.decoder_layers = 1;
    l.options.vocab = 37;
    l.options.pad = 36;
    l.options.start = 36;
    l.options.eos = 2;
    l.options.kept = {{0, 2}, {1}, {0, 1, 2}, {}, {2}};
    l.options.eos_bias = 1.5f;
    l.options.seed = 4;
    out.push_back(l);
  }
  return out;
}

class LayoutTest : public ::testing::TestWithParam<Layout> {
 protected:
  void SetUp() override {
    tm_ = testing::BuildModel(GetParam().options);
    ASSERT_NE(tm_->model, nullptr);
    ref_ = std::make_unique<testing::ReferenceModel>(tm_->spec);
  }
  std::unique_ptr<Translator> MakeTranslator(int max_batch = 4, int max_beam = 4, int threads = 1) {
    TranslatorLimits limits;
    limits.max_batch = max_batch;
    limits.max_source_tokens = 20;
    limits.max_target_tokens = 12;
    limits.max_beam = max_beam;
    limits.num_threads = threads;
    auto t = Translator::Create(tm_->model, limits);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(t).value() : nullptr;
  }
  std::unique_ptr<testing::TestModel> tm_;
  std::unique_ptr<testing::ReferenceModel> ref_;
};

TEST_P(LayoutTest, ForcedLogitsMatchReference) {
  auto tr = MakeTranslator();
  ASSERT_NE(tr, nullptr);
  const ModelOptions& o = GetParam().options;
  const size_t V = o.vocab;
  for (uint32_t seed = 0; seed < 4; ++seed) {
    const std::vector<int32_t> src = testing::RandomSource(o, 3 + seed * 5, 10 + seed);
    std::vector<int32_t> tgt = testing::RandomSource(o, 2 + seed * 3, 20 + seed);
    tgt.pop_back();  // a prefix without EOS, any length
    std::vector<float> logits((tgt.size() + 1) * V);
    ASSERT_TRUE(tr->ForcedLogits({src.data(), src.size()}, {tgt.data(), tgt.size()}, logits.data()).ok());
    std::vector<int32_t> dec_in = {o.start};
    dec_in.insert(dec_in.end(), tgt.begin(), tgt.end());
    const testing::Matrix want = ref_->DecoderLogits(ref_->Encode(src), src.size(), dec_in);
    for (size_t i = 0; i < logits.size(); ++i) {
      ASSERT_NEAR(logits[i], want[i], 1e-4) << "seed " << seed << " step " << i / V << " token " << i % V;
    }
  }
}

void ExpectSameAsReference(Translator& tr, const testing::ReferenceModel& ref,
                           const std::vector<int32_t>& src, const SearchOptions& so, size_t sentence,
                           size_t max_length) {
  const auto want = testing::ReferenceSearch(ref, src, so.beam_size, so.length_penalty, max_length);
  const size_t n = std::min<size_t>(want.size(), static_cast<size_t>(so.num_hypotheses));
  ASSERT_EQ(tr.num_hypotheses(sentence), n);
  for (size_t k = 0; k < n; ++k) {
    const HypothesisView h = tr.hypothesis(sentence, k);
    EXPECT_EQ(std::vector<int32_t>(h.ids, h.ids + h.size), want[k].ids) << "hypothesis " << k;
    EXPECT_NEAR(h.score, want[k].score, 1e-4) << "hypothesis " << k;
    EXPECT_EQ(h.finished, want[k].finished) << "hypothesis " << k;
  }
}

TEST_P(LayoutTest, GreedyAndBeamMatchReferenceSearch) {
  auto tr = MakeTranslator();
  ASSERT_NE(tr, nullptr);
  const ModelOptions& o = GetParam().options;
  struct Case {
    int beam, nbest;
    float lp;
    int max_length;
  };
  for (const Case c : {Case{1, 1, 1.0f, 0}, Case{2, 2, 1.0f, 0}, Case{3, 3, 0.6f, 0},
                       Case{4, 2, 1.3f, 0}, Case{3, 3, 1.0f, 4}}) {
    SearchOptions so;
    so.beam_size = c.beam;
    so.num_hypotheses = c.nbest;
    so.length_penalty = c.lp;
    so.max_length = c.max_length;
    const size_t max_length = c.max_length > 0 ? static_cast<size_t>(c.max_length) : 12;
    for (uint32_t seed = 0; seed < 3; ++seed) {
      SCOPED_TRACE("beam " + std::to_string(c.beam) + " lp " + std::to_string(c.lp) + " seed " +
                   std::to_string(seed));
      const std::vector<int32_t> src = testing::RandomSource(o, 2 + seed * 7, 30 + seed);
      const TokenSpan span{src.data(), src.size()};
      ASSERT_TRUE(tr->TranslateIds(&span, 1, so).ok());
      ExpectSameAsReference(*tr, *ref_, src, so, 0, max_length);
    }
  }
}

TEST_P(LayoutTest, BatchOfNEqualsNSingleCalls) {
  auto batched = MakeTranslator(4, 3, 2);
  auto single = MakeTranslator(1, 3, 1);
  ASSERT_NE(batched, nullptr);
  ASSERT_NE(single, nullptr);
  const ModelOptions& o = GetParam().options;
  std::vector<std::vector<int32_t>> sources;
  for (uint32_t s = 0; s < 4; ++s) sources.push_back(testing::RandomSource(o, 1 + s * 6, 40 + s));
  std::vector<TokenSpan> spans;
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  for (int beam : {1, 3}) {
    SearchOptions so;
    so.beam_size = beam;
    so.num_hypotheses = beam;
    ASSERT_TRUE(batched->TranslateIds(spans.data(), spans.size(), so).ok());
    for (size_t s = 0; s < sources.size(); ++s) {
      ASSERT_TRUE(single->TranslateIds(&spans[s], 1, so).ok());
      ASSERT_EQ(batched->num_hypotheses(s), single->num_hypotheses(0)) << "sentence " << s;
      for (size_t k = 0; k < single->num_hypotheses(0); ++k) {
        const HypothesisView a = batched->hypothesis(s, k), b = single->hypothesis(0, k);
        EXPECT_EQ(std::vector<int32_t>(a.ids, a.ids + a.size), std::vector<int32_t>(b.ids, b.ids + b.size))
            << "beam " << beam << " sentence " << s << " hypothesis " << k;
        EXPECT_NEAR(a.score, b.score, 1e-5);
        EXPECT_EQ(a.finished, b.finished);
      }
    }
  }
}

TEST_P(LayoutTest, ScoresAreNormalisedSumsOfForcedLogProbabilities) {
  auto tr = MakeTranslator();
  ASSERT_NE(tr, nullptr);
  const ModelOptions& o = GetParam().options;
  const std::vector<int32_t> src = testing::RandomSource(o, 6, 50);
  SearchOptions so;
  so.beam_size = 4;
  so.num_hypotheses = 4;
  so.length_penalty = 0.8f;
  so.max_length = 11;  // teacher forcing a hypothesis needs one position more than it has
  const TokenSpan span{src.data(), src.size()};
  ASSERT_TRUE(tr->TranslateIds(&span, 1, so).ok());
  std::vector<std::vector<int32_t>> hyps;
  std::vector<HypothesisView> views;
  for (size_t k = 0; k < tr->num_hypotheses(0); ++k) {
    const HypothesisView h = tr->hypothesis(0, k);
    hyps.emplace_back(h.ids, h.ids + h.size);
    views.push_back(h);
    if (k > 0) {
      EXPECT_GE(views[k - 1].score, h.score) << "best first";
    }
  }
  for (size_t k = 0; k < hyps.size(); ++k) {
    std::vector<int32_t> tgt = hyps[k];
    if (views[k].finished) tgt.push_back(o.eos);
    std::vector<float> logits((tgt.size() + 1) * o.vocab);
    const Status forced = tr->ForcedLogits(span, {tgt.data(), tgt.size()}, logits.data());
    ASSERT_TRUE(forced.ok()) << forced.ToString();
    double sum = 0;
    for (size_t i = 0; i < tgt.size(); ++i) {
      const float* row = logits.data() + i * o.vocab;
      double mx = -1e300, z = 0;
      for (size_t v = 0; v < o.vocab; ++v) {
        if (static_cast<int32_t>(v) != o.pad) mx = std::max(mx, double{row[v]});
      }
      for (size_t v = 0; v < o.vocab; ++v) {
        if (static_cast<int32_t>(v) != o.pad) z += std::exp(row[v] - mx);
      }
      sum += row[tgt[i]] - mx - std::log(z);
      EXPECT_NE(tgt[i], o.pad) << "PAD is never produced";
    }
    EXPECT_NEAR(views[k].score, sum / std::pow(static_cast<double>(tgt.size()), 0.8), 1e-4) << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, LayoutTest, ::testing::ValuesIn(Layouts()),
                         [](const ::testing::TestParamInfo<Layout>& i) { return std::string(i.param.name); });

// Greedy is beam search with one beam: RunBeam(beam 1) reproduces RunGreedy exactly.
TEST(SearchTest, GreedyEqualsBeamOne) {
  for (const Layout& l : Layouts()) {
    auto tm = testing::BuildModel(l.options);
    ASSERT_NE(tm->model, nullptr);
    TranslatorLimits limits;
    limits.max_batch = 3;
    limits.max_source_tokens = 16;
    limits.max_target_tokens = 10;
    auto impl = CreateTranslatorImpl(tm->model, limits);
    ASSERT_TRUE(impl.ok()) << impl.status().ToString();
    Translator::Impl& t = **impl;
    std::vector<std::vector<int32_t>> sources;
    for (uint32_t s = 0; s < 3; ++s) sources.push_back(testing::RandomSource(l.options, 2 + 5 * s, 60 + s));
    std::vector<TokenSpan> spans;
    for (const auto& s : sources) spans.push_back({s.data(), s.size()});
    SearchOptions so;
    so.length_penalty = 0.7f;
    std::vector<std::vector<int32_t>> greedy_ids;
    std::vector<float> greedy_scores;
    ASSERT_TRUE(RunEncoder(t, spans.data(), 3).ok());
    ASSERT_TRUE(RunGreedy(t, 3, so, 10).ok());
    for (size_t s = 0; s < 3; ++s) {
      const size_t rec = static_cast<size_t>(t.buf.hyp_order[s * t.hyps_per_sentence]);
      const int32_t* ids = t.buf.hyp_ids + (s * t.hyps_per_sentence + rec) * 10;
      greedy_ids.emplace_back(ids, ids + t.buf.hyp[s * t.hyps_per_sentence + rec].length);
      greedy_scores.push_back(t.buf.hyp[s * t.hyps_per_sentence + rec].score);
    }
    ASSERT_TRUE(RunEncoder(t, spans.data(), 3).ok());
    ASSERT_TRUE(RunBeam(t, 3, so, 10).ok());
    for (size_t s = 0; s < 3; ++s) {
      const size_t rec = static_cast<size_t>(t.buf.hyp_order[s * t.hyps_per_sentence]);
      const int32_t* ids = t.buf.hyp_ids + (s * t.hyps_per_sentence + rec) * 10;
      EXPECT_EQ(std::vector<int32_t>(ids, ids + t.buf.hyp[s * t.hyps_per_sentence + rec].length), greedy_ids[s])
          << l.name << " sentence " << s;
      EXPECT_EQ(t.buf.hyp[s * t.hyps_per_sentence + rec].score, greedy_scores[s]) << l.name;
    }
  }
}

TEST(SearchTest, PadIsNeverProducedEvenWhenItHasTheBestLogit) {
  ModelOptions o;
  auto spec = testing::MakeSpec(o);
  for (auto& t : spec.tensors) {
    if (t.name == "final_logits_bias") t.data[static_cast<size_t>(o.pad)] = 100.0f;
  }
  testing::AlignedBytes image(testing::Serialize(spec));
  auto model = Model::LoadFromMemory(image.data(), image.size());
  ASSERT_TRUE(model.ok());
  TranslatorLimits limits;
  limits.max_source_tokens = 16;
  limits.max_target_tokens = 8;
  auto tr = Translator::Create(*model, limits);
  ASSERT_TRUE(tr.ok()) << tr.status().ToString();
  const std::vector<int32_t> src = testing::RandomSource(o, 5, 70);
  const TokenSpan span{src.data(), src.size()};
  std::vector<float> logits(o.vocab);
  ASSERT_TRUE((*tr)->ForcedLogits(span, {}, logits.data()).ok());
  EXPECT_EQ(std::max_element(logits.begin(), logits.end()) - logits.begin(), o.pad) << "unmasked";
  for (int beam : {1, 3}) {
    SearchOptions so;
    so.beam_size = beam;
    so.num_hypotheses = beam;
    ASSERT_TRUE((*tr)->TranslateIds(&span, 1, so).ok());
    for (size_t k = 0; k < (*tr)->num_hypotheses(0); ++k) {
      const HypothesisView h = (*tr)->hypothesis(0, k);
      for (size_t i = 0; i < h.size; ++i) EXPECT_NE(h.ids[i], o.pad);
    }
  }
}

TEST(SearchTest, MaxLengthCutsUnfinishedHypotheses) {
  ModelOptions o;
  o.eos_bias = -50.0f;  // never ends on its own
  auto tm = testing::BuildModel(o);
  TranslatorLimits limits;
  limits.max_source_tokens = 16;
  limits.max_target_tokens = 9;
  auto tr = Translator::Create(tm->model, limits);
  ASSERT_TRUE(tr.ok()) << tr.status().ToString();
  const std::vector<int32_t> src = testing::RandomSource(o, 4, 71);
  const TokenSpan span{src.data(), src.size()};
  for (int max_length : {0, 1, 5}) {
    for (int beam : {1, 2}) {
      SearchOptions so;
      so.beam_size = beam;
      so.num_hypotheses = beam;
      so.max_length = max_length;
      ASSERT_TRUE((*tr)->TranslateIds(&span, 1, so).ok());
      ASSERT_EQ((*tr)->num_hypotheses(0), static_cast<size_t>(beam));
      for (size_t k = 0; k < (*tr)->num_hypotheses(0); ++k) {
        EXPECT_FALSE((*tr)->hypothesis(0, k).finished);
        EXPECT_EQ((*tr)->hypothesis(0, k).size, static_cast<size_t>(max_length > 0 ? max_length : 9));
      }
    }
  }
}

// Two threads (matrix products and attention heads on the pool) give the single-threaded
// results: the model is big enough to cross the parallel-work thresholds.
TEST(ThreadingTest, TwoThreadsMatchOne) {
  ModelOptions o;
  o.d_model = 64;
  o.encoder_ffn = o.decoder_ffn = 256;
  o.eos_bias = 1.0f;
  o.kept = {{0, 1, 2}, {}, {1, 3}, {0, 1, 2, 3}, {2}, {0, 3}};
  auto tm = testing::BuildModel(o);
  ASSERT_NE(tm->model, nullptr);
  std::unique_ptr<Translator> tr[2];
  for (int i = 0; i < 2; ++i) {
    TranslatorLimits limits;
    limits.max_batch = 4;
    limits.max_source_tokens = 40;
    limits.max_target_tokens = 40;
    limits.num_threads = i + 1;
    auto t = Translator::Create(tm->model, limits);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    tr[i] = std::move(t).value();
  }
  std::vector<std::vector<int32_t>> sources;
  for (uint32_t s = 0; s < 4; ++s) sources.push_back(testing::RandomSource(o, 10 + 10 * s, 90 + s));
  std::vector<TokenSpan> spans;
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  for (int beam : {1, 4}) {
    SearchOptions so;
    so.beam_size = beam;
    so.num_hypotheses = beam;
    for (auto& t : tr) ASSERT_TRUE(t->TranslateIds(spans.data(), spans.size(), so).ok());
    for (size_t s = 0; s < spans.size(); ++s) {
      ASSERT_EQ(tr[0]->num_hypotheses(s), tr[1]->num_hypotheses(s));
      for (size_t k = 0; k < tr[0]->num_hypotheses(s); ++k) {
        const HypothesisView a = tr[0]->hypothesis(s, k), b = tr[1]->hypothesis(s, k);
        EXPECT_EQ(std::vector<int32_t>(a.ids, a.ids + a.size), std::vector<int32_t>(b.ids, b.ids + b.size));
        EXPECT_NEAR(a.score, b.score, 1e-5);
      }
    }
  }
}

class LimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tm_ = testing::BuildModel(o_);
    limits_.max_batch = 2;
    limits_.max_source_tokens = 6;
    limits_.max_target_tokens = 5;
    limits_.max_beam = 2;
    auto tr = Translator::Create(tm_->model, limits_);
    ASSERT_TRUE(tr.ok()) << tr.status().ToString();
    tr_ = std::move(tr).value();
  }
  void Expect(const Status& s, ErrorCode code, const std::string& fragment) {
    EXPECT_EQ(s.code(), code) << s.ToString();
    EXPECT_NE(s.message().find(fragment), std::string::npos) << s.ToString();
  }
  ModelOptions o_;
  TranslatorLimits limits_;
  std::unique_ptr<testing::TestModel> tm_;
  std::unique_ptr<Translator> tr_;
};

TEST_F(LimitsTest, RequestsOutsideTheLimitsAreRejectedAndKeepThePreviousResults) {
  const std::vector<int32_t> ok = testing::RandomSource(o_, 4, 80);
  const std::vector<int32_t> too_long = testing::RandomSource(o_, 7, 81);
  const std::vector<int32_t> bad_id = {3, 23, 0};
  const TokenSpan good{ok.data(), ok.size()};
  ASSERT_TRUE(tr_->TranslateIds(&good, 1, SearchOptions()).ok());
  const HypothesisView before = tr_->hypothesis(0, 0);
  const std::vector<int32_t> first(before.ids, before.ids + before.size);

  const TokenSpan three[] = {good, good, good};
  Expect(tr_->TranslateIds(three, 3, SearchOptions()), ErrorCode::kBatchTooLarge, "max_batch is 2");
  const TokenSpan long_span{too_long.data(), too_long.size()};
  Expect(tr_->TranslateIds(&long_span, 1, SearchOptions()), ErrorCode::kInputTooLong,
         "sentence 0 has 7 tokens; TranslatorLimits.max_source_tokens is 6");
  const TokenSpan empty{ok.data(), 0};
  Expect(tr_->TranslateIds(&empty, 1, SearchOptions()), ErrorCode::kInvalidArgument, "empty");
  const TokenSpan bad{bad_id.data(), bad_id.size()};
  Expect(tr_->TranslateIds(&bad, 1, SearchOptions()), ErrorCode::kInvalidArgument,
         "position 1: id 23 is outside the vocabulary");
  SearchOptions so;
  so.beam_size = 3;
  Expect(tr_->TranslateIds(&good, 1, so), ErrorCode::kInvalidArgument, "beam_size 3");
  so.beam_size = 2;
  so.num_hypotheses = 3;
  Expect(tr_->TranslateIds(&good, 1, so), ErrorCode::kInvalidArgument, "num_hypotheses 3");
  so.num_hypotheses = 1;
  so.max_length = 6;
  Expect(tr_->TranslateIds(&good, 1, so), ErrorCode::kInvalidArgument, "max_length 6");
  so.max_length = 0;
  so.length_penalty = std::nanf("");
  Expect(tr_->TranslateIds(&good, 1, so), ErrorCode::kInvalidArgument, "length_penalty");

  ASSERT_EQ(tr_->num_hypotheses(0), 1u);
  const HypothesisView after = tr_->hypothesis(0, 0);
  EXPECT_EQ(std::vector<int32_t>(after.ids, after.ids + after.size), first);
  EXPECT_EQ(tr_->num_hypotheses(1), 0u);
  EXPECT_EQ(tr_->hypothesis(0, 1).ids, nullptr);
  EXPECT_EQ(tr_->hypothesis(5, 0).ids, nullptr);

  std::vector<float> logits(5 * o_.vocab);
  const std::vector<int32_t> target = {3, 4, 5, 6, 7};
  Expect(tr_->ForcedLogits(good, {target.data(), 5}, logits.data()), ErrorCode::kInputTooLong,
         "max_target_tokens 5");
  EXPECT_TRUE(tr_->ForcedLogits(good, {target.data(), 4}, logits.data()).ok());
  Expect(tr_->ForcedLogits(long_span, {target.data(), 1}, logits.data()), ErrorCode::kInputTooLong, "source");
}

TEST_F(LimitsTest, CreateRejectsBadLimits) {
  TranslatorLimits l = limits_;
  l.max_beam = 0;
  auto r = Translator::Create(tm_->model, l);
  ASSERT_FALSE(r.ok());
  Expect(r.status(), ErrorCode::kInvalidArgument, "max_beam must be >= 1");
  l = limits_;
  l.max_source_tokens = 65;
  r = Translator::Create(tm_->model, l);
  ASSERT_FALSE(r.ok());
  Expect(r.status(), ErrorCode::kInvalidArgument, "max_position_embeddings 64");
  l = limits_;
  l.num_threads = 0;
  r = Translator::Create(tm_->model, l);
  ASSERT_FALSE(r.ok());
  Expect(r.status(), ErrorCode::kInvalidArgument, "num_threads");
  r = Translator::Create(nullptr, limits_);
  ASSERT_FALSE(r.ok());
}

TEST_F(LimitsTest, MaxMemoryBytesCapsTheArena) {
  const size_t needed = tr_->arena_bytes();
  EXPECT_GT(needed, 0u);
  TranslatorLimits l = limits_;
  l.max_memory_bytes = needed;
  auto fits = Translator::Create(tm_->model, l);
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_EQ((*fits)->arena_bytes(), needed);
  l.max_memory_bytes = needed - 1;
  auto over = Translator::Create(tm_->model, l);
  ASSERT_FALSE(over.ok());
  Expect(over.status(), ErrorCode::kLimitExceeded,
         "need " + std::to_string(needed) + " bytes of activation memory; max_memory_bytes is " +
             std::to_string(needed - 1));
  // The plan grows with the limits: a larger beam needs more cache.
  l = limits_;
  l.max_beam = 4;
  auto bigger = Translator::Create(tm_->model, l);
  ASSERT_TRUE(bigger.ok());
  EXPECT_GT((*bigger)->arena_bytes(), needed);
}

}  // namespace
}  // namespace headwise
