// End to end on synthetic models: teacher-forced logits and greedy/beam search against the
// plain reference (reference_model.h) over several head layouts, batching, scores, and greedy
// as beam search with one beam.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

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
    l.options.activation = Activation::kRelu;
    l.options.tie_embeddings = false;
    // encoder 0, 1 | decoder self 0, 1 | decoder cross 0, 1
    l.options.kept = {{0, 3}, {}, {}, {1, 2}, {2}, {}};
    l.options.eos_bias = 1.0f;
    l.options.seed = 2;
    out.push_back(l);
  }
  {
    Layout l{"unshared_gelu_unscaled", {}};
    l.options.activation = Activation::kGelu;
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
  const auto want = testing::ReferenceSearch(ref, src, so, max_length);
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
                       Case{4, 2, 1.3f, 0}, Case{3, 3, 1.0f, 4}, Case{4, 1, 1.0f, 0}}) {
    for (BeamStop stop : {BeamStop::kExhaustive, BeamStop::kTopEos, BeamStop::kOutscored}) {
      SearchOptions so;
      so.beam_size = c.beam;
      so.num_hypotheses = c.nbest;
      so.length_penalty = c.lp;
      so.max_length = c.max_length;
      so.beam_stop = stop;
      const size_t max_length = c.max_length > 0 ? static_cast<size_t>(c.max_length) : 12;
      for (uint32_t seed = 0; seed < 3; ++seed) {
        SCOPED_TRACE("beam " + std::to_string(c.beam) + " lp " + std::to_string(c.lp) + " stop " +
                     std::to_string(static_cast<int>(stop)) + " seed " + std::to_string(seed));
        const std::vector<int32_t> src = testing::RandomSource(o, 2 + seed * 7, 30 + seed);
        const TokenSpan span{src.data(), src.size()};
        ASSERT_TRUE(tr->TranslateIds(&span, 1, so).ok());
        ExpectSameAsReference(*tr, *ref_, src, so, 0, max_length);
      }
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
    const HypothesisStore& hyps = t.buf.search.hyps;
    ASSERT_TRUE(RunEncoder(t.net, t.buf.encoder, spans.data(), 3).ok());
    ASSERT_TRUE(RunGreedy(t.decoder(), t.buf.search, 3, so, 10).ok());
    for (size_t s = 0; s < 3; ++s) {
      const HypothesisView best = hyps.Get(s, 0);
      greedy_ids.emplace_back(best.ids, best.ids + best.size);
      greedy_scores.push_back(best.score);
    }
    ASSERT_TRUE(RunEncoder(t.net, t.buf.encoder, spans.data(), 3).ok());
    ASSERT_TRUE(RunBeam(t.decoder(), t.buf.search, 3, so, 10).ok());
    for (size_t s = 0; s < 3; ++s) {
      const HypothesisView best = hyps.Get(s, 0);
      EXPECT_EQ(std::vector<int32_t>(best.ids, best.ids + best.size), greedy_ids[s])
          << l.name << " sentence " << s;
      EXPECT_EQ(best.score, greedy_scores[s]) << l.name;
    }
  }
}

}  // namespace
}  // namespace headwise
