// The vocabulary shortlist in the runtime (runtime/src/shortlist.h): the union a call computes
// and each line's list, the output layer over it against the full lm_head (per weight format
// and row count), the searches over it against the plain reference search restricted to each
// line's list, outputs independent of the other lines of a batch, identity with the full
// vocabulary when the lists hold every piece, use_shortlist = false, and the model's
// description of its shortlist.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/f32_gemv.h"
#include "shortlist.h"
#include "tests/runtime/reference_model.h"
#include "tests/runtime/test_model.h"
#include "translator_impl.h"

namespace headwise {
namespace {

using testing::ModelOptions;

ModelOptions Options(WeightFormat weights, uint32_t seed = 5) {
  ModelOptions o;
  o.d_model = 32;
  o.encoder_ffn = 48;
  o.decoder_ffn = 40;
  o.vocab = 97;
  o.pad = 96;
  o.start = 96;
  o.eos_bias = 0.5f;
  o.kept = {{0, 2}, {1, 2, 3}, {0, 1, 2, 3}, {3}, {1, 2}, {}};
  o.seed = seed;
  o.weights = weights;
  return o;
}

// The options' model with `shortlist` stored in it.
std::unique_ptr<testing::TestModel> BuildWith(const ModelOptions& o, ShortlistSpec shortlist) {
  ModelSpec spec = testing::MakeSpec(o);
  spec.shortlist = std::move(shortlist);
  auto loaded = testing::LoadSpec(std::move(spec));
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  return loaded.ok() ? std::move(loaded).value() : nullptr;
}

TranslatorLimits Limits(bool shortlist, int threads = 1) {
  TranslatorLimits l;
  l.max_batch = 4;
  l.max_source_tokens = 20;
  l.max_target_tokens = 12;
  l.max_beam = 4;
  l.num_threads = threads;
  l.use_shortlist = shortlist;
  return l;
}

std::unique_ptr<Translator> Make(const std::shared_ptr<const Model>& model, bool shortlist,
                                 int threads = 1, Fp16Compute fp16 = Fp16Compute::kAuto) {
  TranslatorLimits limits = Limits(shortlist, threads);
  limits.fp16_compute = fp16;
  auto t = Translator::Create(model, limits);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

struct Output {
  std::vector<std::vector<int32_t>> ids;
  std::vector<float> scores;
  std::vector<bool> finished;
  bool operator==(const Output& o) const {
    return ids == o.ids && scores == o.scores && finished == o.finished;
  }
};

// Every hypothesis of every sentence of the last call, in order.
Output Collect(const Translator& t, size_t batch) {
  Output out;
  for (size_t s = 0; s < batch; ++s) {
    for (size_t k = 0; k < t.num_hypotheses(s); ++k) {
      const HypothesisView h = t.hypothesis(s, k);
      out.ids.emplace_back(h.ids, h.ids + h.size);
      out.scores.push_back(h.score);
      out.finished.push_back(h.finished);
    }
  }
  return out;
}

std::vector<std::vector<int32_t>> Sources(const ModelOptions& o, size_t n, uint32_t seed) {
  std::vector<std::vector<int32_t>> sources;
  for (uint32_t s = 0; s < n; ++s) sources.push_back(testing::RandomSource(o, 3 + 4 * s, seed + s));
  return sources;
}

Output Translate(Translator& t, const std::vector<std::vector<int32_t>>& sources,
                 const SearchOptions& so) {
  std::vector<TokenSpan> spans;
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  const Status st = t.TranslateIds(spans.data(), spans.size(), so);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return Collect(t, sources.size());
}

std::vector<SearchOptions> Searches() {
  std::vector<SearchOptions> out;
  for (const auto& [beam, nbest, lp] : {std::tuple<int, int, float>{1, 1, 1.0f}, {2, 2, 1.0f},
                                       {4, 4, 0.6f}, {3, 2, 1.3f}}) {
    SearchOptions so;
    so.beam_size = beam;
    so.num_hypotheses = nbest;
    so.length_penalty = lp;
    out.push_back(so);
  }
  return out;
}

TEST(ShortlistModel, InfoDescribesTheShortlistAndPiecesAreItsUnion) {
  const ModelOptions o = Options(WeightFormat::kF32);
  ShortlistSpec spec = testing::MakeSyntheticShortlist(o.vocab, 5, 3, 11);
  const ShortlistSpec copy = spec;
  auto m = BuildWith(o, std::move(spec));
  ASSERT_NE(m, nullptr);
  const ModelInfo& info = m->model->info();
  EXPECT_TRUE(info.has_shortlist);
  EXPECT_EQ(info.shortlist_frequent, 5);
  EXPECT_EQ(info.shortlist_sources, static_cast<int>(o.vocab));
  EXPECT_EQ(info.shortlist_longest, 3);
  EXPECT_EQ(info.shortlist_entries, 3u * o.vocab);
  EXPECT_EQ(info.shortlist_description, copy.description);

  // ShortlistPieces is the union by its definition, computed here from the spec.
  const std::vector<std::vector<int32_t>> sources = {{7, 8, 0}, {40, 0}};
  std::vector<bool> want(o.vocab, false);
  for (uint32_t f : copy.frequent) want[f] = true;
  want[static_cast<size_t>(o.eos)] = want[static_cast<size_t>(o.unk)] = true;
  for (const auto& src : sources) {
    for (int32_t s : src) {
      const size_t id = static_cast<size_t>(s);
      for (uint32_t i = copy.offsets[id]; i < copy.offsets[id + 1]; ++i) want[copy.targets[i]] = true;
    }
  }
  std::vector<int32_t> expected;
  for (uint32_t id = 0; id < o.vocab; ++id) {
    if (want[id]) expected.push_back(static_cast<int32_t>(id));
  }
  auto pieces = m->model->ShortlistPieces(sources);
  ASSERT_TRUE(pieces.ok()) << pieces.status().ToString();
  EXPECT_EQ(*pieces, expected);
  EXPECT_EQ(m->model->ShortlistPieces({{5, 97}}).status().code(), ErrorCode::kInvalidArgument);

  auto plain = testing::BuildModel(o);
  EXPECT_FALSE(plain->model->info().has_shortlist);
  EXPECT_TRUE(plain->model->ShortlistPieces(sources)->empty());

  auto on = Make(m->model, true), off = Make(m->model, false), none = Make(plain->model, true);
  ASSERT_TRUE(on && off && none);
  EXPECT_TRUE(on->uses_shortlist());
  EXPECT_FALSE(off->uses_shortlist());
  EXPECT_FALSE(none->uses_shortlist());
  EXPECT_GT(on->arena_bytes(), off->arena_bytes());
  EXPECT_EQ(off->arena_bytes(), none->arena_bytes());
}

// The output layer over a union against the full lm_head, per weight format and row count:
// the union's logits equal the full product's (bit for bit where the two run the same kernel
// per output channel), every other logit is -inf.
class ShortlistOutputTest : public ::testing::TestWithParam<WeightFormat> {
 protected:
  // The format's model with a synthetic shortlist and a one-thread Translator on it.
  void SetUp() override {
    o_ = Options(GetParam());
    m_ = BuildWith(o_, testing::MakeSyntheticShortlist(o_.vocab, 4, 6, 3));
    ASSERT_NE(m_, nullptr);
    auto made = CreateTranslatorImpl(m_->model, Limits(true, 1));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    impl_ = std::move(made).value();
    ASSERT_TRUE(impl_->shortlist.valid());
  }

  ModelOptions o_;
  std::unique_ptr<testing::TestModel> m_;
  std::unique_ptr<Translator::Impl> impl_;
};

TEST_P(ShortlistOutputTest, UnionLogitsAreTheFullProductsOthersMinusInfinity) {
  const ModelOptions& o = o_;
  const testing::TestModel* m = m_.get();
  Translator::Impl& t = *impl_;
  // The shortlist's rows are computed in f32 (F16 weights widened), so the full products they
  // are held to come from an f32 output layer too: where fp16 arithmetic is on (aarch64 with
  // ARMv8.2 FP16), `t`'s own lm_head rounds through f16.
  TranslatorLimits f32_limits = Limits(true, 1);
  f32_limits.fp16_compute = Fp16Compute::kOff;
  auto reference = CreateTranslatorImpl(m->model, f32_limits);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  const size_t V = o.vocab, d = o.d_model;
  const std::vector<int32_t> src = {3, 9, 10, 11, 50, 51, 52, 0};  // runs of consecutive ids too
  const TokenSpan span{src.data(), src.size()};
  for (size_t rows : {size_t{1}, size_t{3}, size_t{16}}) {
    SCOPED_TRACE("rows " + std::to_string(rows));
    std::vector<float> x(rows * d);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i) + 0.1f);
    std::vector<float> full(rows * V), part(rows * V, 123.0f);
    ASSERT_TRUE((*reference)->net.lm_head.Run(rows, x.data(), full.data(), nullptr).ok());
    t.shortlist.Prepare(&span, nullptr, 1, part.data(), rows);
    const std::vector<int32_t> line_of_row(rows, 0);
    ASSERT_TRUE(t.shortlist.Run(rows, x.data(), line_of_row.data(), part.data(), nullptr).ok());
    auto pieces = m->model->ShortlistPieces({src});
    ASSERT_TRUE(pieces.ok());
    ASSERT_EQ(t.shortlist.size(), pieces->size());
    ASSERT_TRUE(std::equal(pieces->begin(), pieces->end(), t.shortlist.ids()));
    // int8: the same exact int32 sums and scalar finish on every kernel family; fp32 one row:
    // the gemv both ways where it runs (x86 AVX2 + FMA); otherwise XNNPACK against the gemv.
    const bool exact = GetParam() == WeightFormat::kI8 ||
                       (GetParam() == WeightFormat::kF32 && rows == 1 &&
                        kernels::HaveFastF32Gemv());
    for (size_t r = 0; r < rows; ++r) {
      for (size_t v = 0; v < V; ++v) {
        const float got = part[r * V + v], want = full[r * V + v];
        if (!t.shortlist.Allows(0, v)) {
          ASSERT_EQ(got, -std::numeric_limits<float>::infinity()) << "row " << r << " id " << v;
        } else if (exact) {
          ASSERT_EQ(got, want) << "row " << r << " id " << v;
        } else {
          ASSERT_NEAR(got, want, 1e-4f * (1.0f + std::fabs(want))) << "row " << r << " id " << v;
        }
      }
    }
  }
}

// Rows of different lines in one product: each row holds its own line's ids (the product's
// values, the same bits as that line prepared alone) and -inf for every other id, and its
// normaliser is the one the line alone gets.
TEST_P(ShortlistOutputTest, EachRowKeepsItsOwnLinesList) {
  const ModelOptions& o = o_;
  const testing::TestModel* m = m_.get();
  Translator::Impl& t = *impl_;
  const size_t V = o.vocab, d = o.d_model;
  const std::vector<std::vector<int32_t>> lines = {{3, 9, 10}, {50, 51, 0}, {77}};
  std::vector<TokenSpan> spans;
  for (const auto& l : lines) spans.push_back({l.data(), l.size()});
  const std::vector<int32_t> line_of_row = {2, 0, 1, 0, 2};
  const size_t rows = line_of_row.size();
  std::vector<float> x(rows * d);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.29f * static_cast<float>(i) + 0.3f);
  std::vector<float> together(rows * V);
  t.shortlist.Prepare(spans.data(), nullptr, lines.size(), together.data(), rows);
  ASSERT_TRUE(t.shortlist.Run(rows, x.data(), line_of_row.data(), together.data(), nullptr).ok());
  auto all = m->model->ShortlistPieces(lines);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(t.shortlist.size(), all->size());
  std::vector<float> norm(rows), maxes(rows);
  for (size_t r = 0; r < rows; ++r) {
    norm[r] = t.shortlist.LogSumExp(together.data() + r * V, line_of_row[r], &maxes[r]);
  }
  for (size_t r = 0; r < rows; ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    const size_t line = static_cast<size_t>(line_of_row[r]);
    auto own = m->model->ShortlistPieces({lines[line]});
    ASSERT_TRUE(own.ok());
    ASSERT_LT(own->size(), all->size());  // a real restriction inside the union
    ASSERT_EQ(t.shortlist.LineSize(line), own->size());
    // The line alone: one row, the same input.
    std::vector<float> alone(V);
    t.shortlist.Prepare(&spans[line], nullptr, 1, alone.data(), 1);
    const int32_t zero = 0;
    ASSERT_TRUE(t.shortlist.Run(1, x.data() + r * d, &zero, alone.data(), nullptr).ok());
    float alone_max = 0.0f;
    const float alone_norm = t.shortlist.LogSumExp(alone.data(), 0, &alone_max);
    for (size_t v = 0; v < V; ++v) {
      const bool in = std::binary_search(own->begin(), own->end(), static_cast<int32_t>(v));
      EXPECT_EQ(t.shortlist.Allows(0, v), in) << "id " << v;
      if (!in) {
        ASSERT_EQ(together[r * V + v], -std::numeric_limits<float>::infinity()) << "id " << v;
      } else {
        ASSERT_TRUE(std::isfinite(together[r * V + v])) << "id " << v;
      }
      ASSERT_EQ(together[r * V + v], alone[v]) << "id " << v;
    }
    EXPECT_EQ(norm[r], alone_norm);
    EXPECT_EQ(maxes[r], alone_max);
    // Back to the three lines for the next row's reference.
    t.shortlist.Prepare(spans.data(), nullptr, lines.size(), together.data(), 0);
  }
}

// The searches compact their rows as sentences finish, so a row can hold another line at the
// next step: it must then hold that line's ids only (the earlier line's back at -inf).
TEST_P(ShortlistOutputTest, ARowGivenToAnotherLineHoldsOnlyThatLinesIds) {
  Translator::Impl& t = *impl_;
  const size_t V = o_.vocab, d = o_.d_model;
  const std::vector<std::vector<int32_t>> lines = {{3, 9, 10}, {50, 51, 0}, {77}};
  std::vector<TokenSpan> spans;
  for (const auto& l : lines) spans.push_back({l.data(), l.size()});
  std::vector<float> x(3 * d), logits(3 * V);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.11f * static_cast<float>(i) + 0.7f);
  t.shortlist.Prepare(spans.data(), nullptr, lines.size(), logits.data(), 3);
  const int32_t first[] = {0, 1, 2}, then[] = {1, 2}, last[] = {2};
  for (const int32_t* line_of_row : {first, then, last}) {
    const size_t rows = line_of_row == first ? 3 : line_of_row == then ? 2 : 1;
    ASSERT_TRUE(t.shortlist.Run(rows, x.data(), line_of_row, logits.data(), nullptr).ok());
    for (size_t r = 0; r < rows; ++r) {
      auto own = m_->model->ShortlistPieces({lines[static_cast<size_t>(line_of_row[r])]});
      ASSERT_TRUE(own.ok());
      for (size_t v = 0; v < V; ++v) {
        const bool in = std::binary_search(own->begin(), own->end(), static_cast<int32_t>(v));
        EXPECT_EQ(std::isfinite(logits[r * V + v]), in)
            << "row " << r << " (line " << line_of_row[r] << ") id " << v;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ShortlistOutputTest,
                         ::testing::Values(WeightFormat::kF32, WeightFormat::kF16,
                                           WeightFormat::kI8),
                         [](const ::testing::TestParamInfo<WeightFormat>& i) {
                           return std::string(WeightFormatName(i.param));
                         });

// Greedy and beam over a line's list are the reference search over the same list: the
// reference masks every other logit and never proposes another token; alone and in a batch of
// three.
TEST(ShortlistSearch, GreedyAndBeamMatchTheReferenceSearchOverEachLinesList) {
  const ModelOptions o = Options(WeightFormat::kF32, 8);
  auto m = BuildWith(o, testing::MakeSyntheticShortlist(o.vocab, 6, 4, 21));
  ASSERT_NE(m, nullptr);
  const testing::ReferenceModel ref(m->spec);
  auto t = Make(m->model, true);
  ASSERT_NE(t, nullptr);
  for (const SearchOptions& so : Searches()) {
    for (uint32_t seed = 0; seed < 3; ++seed) {
      SCOPED_TRACE("beam " + std::to_string(so.beam_size) + " seed " + std::to_string(seed));
      const std::vector<int32_t> src = testing::RandomSource(o, 2 + seed * 5, 70 + seed);
      auto allowed = m->model->ShortlistPieces({src});
      ASSERT_TRUE(allowed.ok());
      ASSERT_LT(allowed->size(), o.vocab);  // a real restriction
      const auto want = testing::ReferenceSearch(ref, src, so, 12, &*allowed);
      const size_t n = std::min<size_t>(want.size(), static_cast<size_t>(so.num_hypotheses));
      // Alone, then between two other lines (whose lists differ from this one's).
      const std::vector<int32_t> left = testing::RandomSource(o, 6, 170 + seed);
      const std::vector<int32_t> right = testing::RandomSource(o, 9, 270 + seed);
      for (bool batched : {false, true}) {
        SCOPED_TRACE(batched ? "batch of 3" : "alone");
        const Output all = batched ? Translate(*t, {left, src, right}, so) : Translate(*t, {src}, so);
        const size_t first = batched ? t->num_hypotheses(0) : 0;
        ASSERT_EQ(t->num_hypotheses(batched ? 1 : 0), n);
        for (size_t k = 0; k < n; ++k) {
          EXPECT_EQ(all.ids[first + k], want[k].ids) << "hypothesis " << k;
          EXPECT_NEAR(all.scores[first + k], want[k].score, 1e-4) << "hypothesis " << k;
          EXPECT_EQ(all.finished[first + k], want[k].finished) << "hypothesis " << k;
        }
      }
    }
  }
}

// A shortlist whose union holds every piece changes nothing: byte-identical ids, scores and
// flags, greedy and beam, n-best, length penalties, batches. int8 everywhere (its products are
// exact per output channel); fp32 where the full product is the same gemv (one row, x86 AVX2 +
// FMA); elsewhere fp32 products differ by rounding and ids must still agree.
class EverythingShortlistTest : public ::testing::TestWithParam<WeightFormat> {};

TEST_P(EverythingShortlistTest, OutputsAreTheFullVocabularys) {
  const ModelOptions o = Options(GetParam(), 9);
  auto with = BuildWith(o, testing::MakeSyntheticShortlist(o.vocab, o.vocab, 0, 1));
  auto plain = testing::BuildModel(o);
  ASSERT_TRUE(with && plain->model);
  auto on = Make(with->model, true), off = Make(plain->model, true);
  ASSERT_TRUE(on && off);
  ASSERT_TRUE(on->uses_shortlist());
  const bool int8 = GetParam() == WeightFormat::kI8;
  for (const SearchOptions& so : Searches()) {
    for (size_t batch : {size_t{1}, size_t{3}}) {
      SCOPED_TRACE("beam " + std::to_string(so.beam_size) + " batch " + std::to_string(batch));
      const auto sources = Sources(o, batch, 90);
      const Output a = Translate(*on, sources, so), b = Translate(*off, sources, so);
      const bool exact = int8 || (batch == 1 && so.beam_size == 1 && kernels::HaveFastF32Gemv());
      if (exact) {
        EXPECT_TRUE(a == b);
      }
      ASSERT_EQ(a.ids, b.ids);
      for (size_t k = 0; k < a.scores.size(); ++k) EXPECT_NEAR(a.scores[k], b.scores[k], 1e-5);
      EXPECT_EQ(a.finished, b.finished);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, EverythingShortlistTest,
                         ::testing::Values(WeightFormat::kF32, WeightFormat::kI8),
                         [](const ::testing::TestParamInfo<WeightFormat>& i) {
                           return std::string(WeightFormatName(i.param));
                         });

// A batch translates each line exactly as that line alone: the other lines' pieces are never
// produced and do not enter its normaliser. Every weight format, greedy, beam n-best and
// sampling, one thread or two (batch lanes); bit for bit where the products are exact per
// output channel (int8; fp32 and fp16 where the gemv runs, x86 AVX2 + FMA). fp16 weights in
// F32 arithmetic: fp16 arithmetic (aarch64 FEAT_FP16) rounds its products differently with the
// number of rows, batch or not, shortlist or not (headwise.hpp, Fp16Compute).
TEST(ShortlistSearch, EachLineOfABatchIsTranslatedAsAlone) {
  for (WeightFormat f : {WeightFormat::kF32, WeightFormat::kF16, WeightFormat::kI8}) {
    const ModelOptions o = Options(f, 16);
    auto m = BuildWith(o, testing::MakeSyntheticShortlist(o.vocab, 3, 3, 9));
    ASSERT_NE(m, nullptr);
    const bool exact = f == WeightFormat::kI8 || kernels::HaveFastF32Gemv();
    const auto sources = Sources(o, 4, 900);
    auto one = Make(m->model, true, 1, Fp16Compute::kOff);
    ASSERT_NE(one, nullptr);
    std::vector<SearchOptions> searches = Searches();
    // Sampling over every finite logit and greedy with EOS held back read whole rows, so a
    // row must not keep the ids of a sentence it held before rows were compacted.
    SearchOptions sample;
    sample.sample = true;
    sample.top_k = 5;
    sample.seed = 3;
    searches.push_back(sample);
    sample.top_k = 0;
    sample.seed = 11;
    searches.push_back(sample);
    SearchOptions held;
    held.min_length = 4;
    searches.push_back(held);
    for (int threads : {1, 2}) {
      auto t = Make(m->model, true, threads, Fp16Compute::kOff);
      ASSERT_NE(t, nullptr);
      for (const SearchOptions& so : searches) {
        SCOPED_TRACE(std::string(WeightFormatName(f)) + " threads " + std::to_string(threads) +
                     " beam " + std::to_string(so.beam_size) + (so.sample ? " sampled" : ""));
        const Output together = Translate(*t, sources, so);
        Output alone;
        for (const auto& src : sources) {
          const Output a = Translate(*one, {src}, so);
          alone.ids.insert(alone.ids.end(), a.ids.begin(), a.ids.end());
          alone.scores.insert(alone.scores.end(), a.scores.begin(), a.scores.end());
          alone.finished.insert(alone.finished.end(), a.finished.begin(), a.finished.end());
        }
        ASSERT_EQ(together.ids, alone.ids);
        EXPECT_EQ(together.finished, alone.finished);
        ASSERT_EQ(together.scores.size(), alone.scores.size());
        for (size_t k = 0; k < alone.scores.size(); ++k) {
          if (exact) {
            EXPECT_EQ(together.scores[k], alone.scores[k]) << "hypothesis " << k;
          } else {
            EXPECT_NEAR(together.scores[k], alone.scores[k], 1e-5) << "hypothesis " << k;
          }
        }
      }
    }
  }
}

// A small shortlist restricts every output to its own line's list (not the union of its
// call's lines), greedy and beam, one thread or two; a shortlist holding the full run's
// choices keeps greedy's ids; use_shortlist = false is the model without shortlist, bit for bit.
TEST(ShortlistSearch, OutputsStayInTheirOwnLinesList) {
  for (WeightFormat f : {WeightFormat::kF32, WeightFormat::kF16, WeightFormat::kI8}) {
    const ModelOptions o = Options(f, 12);
    auto m = BuildWith(o, testing::MakeSyntheticShortlist(o.vocab, 2, 2, 5));
    ASSERT_NE(m, nullptr);
    for (int threads : {1, 2}) {
      auto t = Make(m->model, true, threads);
      ASSERT_NE(t, nullptr);
      const auto sources = Sources(o, 3, 300);  // 21 source ids: at most 46 of 97 pieces
      auto allowed = m->model->ShortlistPieces(sources);
      ASSERT_TRUE(allowed.ok());
      ASSERT_LT(allowed->size(), o.vocab / 2);
      for (const SearchOptions& so : Searches()) {
        const Output out = Translate(*t, sources, so);
        ASSERT_FALSE(out.ids.empty());
        // Hypotheses come sentence by sentence, num_hypotheses each (every search finds them).
        size_t k = 0;
        for (size_t s = 0; s < sources.size(); ++s) {
          auto own = m->model->ShortlistPieces({sources[s]});
          ASSERT_TRUE(own.ok());
          ASSERT_LT(own->size(), allowed->size());
          for (size_t h = 0; h < t->num_hypotheses(s); ++h, ++k) {
            for (int32_t id : out.ids[k]) {
              EXPECT_TRUE(std::binary_search(own->begin(), own->end(), id))
                  << WeightFormatName(f) << " beam " << so.beam_size << " line " << s << ": id "
                  << id << " outside its list";
            }
          }
        }
        EXPECT_EQ(k, out.ids.size());
      }
    }
  }
}

TEST(ShortlistSearch, GreedyKeepsTheFullRunsIdsWhenTheUnionHoldsThem) {
  const ModelOptions o = Options(WeightFormat::kI8, 14);
  auto plain = testing::BuildModel(o);
  auto full = Make(plain->model, true);
  ASSERT_NE(full, nullptr);
  SearchOptions greedy;
  const auto sources = Sources(o, 3, 500);
  const Output want = Translate(*full, sources, greedy);
  // frequent = the ids the full run chose plus a few others; no lists: a strict subset.
  ShortlistSpec spec = testing::MakeSyntheticShortlist(o.vocab, 5, 0, 2);
  for (const auto& ids : want.ids) spec.frequent.insert(spec.frequent.end(), ids.begin(), ids.end());
  std::vector<uint32_t>& f = spec.frequent;
  std::sort(f.begin(), f.end());
  f.erase(std::unique(f.begin(), f.end()), f.end());
  ASSERT_LT(f.size() + 2, o.vocab);
  auto m = BuildWith(o, spec);
  ASSERT_NE(m, nullptr);
  auto t = Make(m->model, true);
  ASSERT_NE(t, nullptr);
  const Output got = Translate(*t, sources, greedy);
  EXPECT_EQ(got.ids, want.ids);
  EXPECT_EQ(got.finished, want.finished);
  // Scores are log-probabilities of the distribution over the union: each token's is >= the
  // full vocabulary's (its normaliser sums fewer terms).
  for (size_t k = 0; k < want.scores.size(); ++k) EXPECT_GE(got.scores[k], want.scores[k]);
}

TEST(ShortlistSearch, OffIsTheModelWithoutShortlistAndForcedLogitsAreFull) {
  const ModelOptions o = Options(WeightFormat::kF32, 15);
  auto m = BuildWith(o, testing::MakeSyntheticShortlist(o.vocab, 2, 2, 6));
  auto plain = testing::BuildModel(o);
  ASSERT_TRUE(m && plain->model);
  auto off = Make(m->model, false), none = Make(plain->model, true), on = Make(m->model, true);
  ASSERT_TRUE(off && none && on);
  const auto sources = Sources(o, 3, 700);
  for (const SearchOptions& so : Searches()) {
    EXPECT_TRUE(Translate(*off, sources, so) == Translate(*none, sources, so))
        << "beam " << so.beam_size;
  }
  // ForcedLogits computes every logit whether the shortlist is on or not.
  const std::vector<int32_t> target = {5, 9, 13};
  std::vector<float> a((target.size() + 1) * o.vocab), b(a.size());
  const TokenSpan src{sources[1].data(), sources[1].size()};
  ASSERT_TRUE(on->ForcedLogits(src, {target.data(), target.size()}, a.data()).ok());
  ASSERT_TRUE(none->ForcedLogits(src, {target.data(), target.size()}, b.data()).ok());
  EXPECT_EQ(a, b);
  // ... and a TranslateIds after it still keeps each line to its list.
  const Output out = Translate(*on, sources, SearchOptions{});
  ASSERT_EQ(out.ids.size(), sources.size());
  for (size_t s = 0; s < sources.size(); ++s) {
    auto allowed = m->model->ShortlistPieces({sources[s]});
    for (int32_t id : out.ids[s]) {
      EXPECT_TRUE(std::binary_search(allowed->begin(), allowed->end(), id));
    }
  }
}

// The arena's union capacity follows the limits, the longest list and the target prefixes;
// max_memory_bytes counts it.
TEST(ShortlistModel, CapacityAndMemoryCap) {
  const ModelOptions o = Options(WeightFormat::kI8);
  auto m = BuildWith(o, testing::MakeSyntheticShortlist(o.vocab, 3, 2, 7));
  ASSERT_NE(m, nullptr);
  TranslatorLimits small = Limits(true);
  small.max_batch = 1;
  small.max_source_tokens = 4;
  auto made = CreateTranslatorImpl(m->model, small);
  ASSERT_TRUE(made.ok());
  // frequent 3, EOS and UNK, 4 source ids x lists of 2, and room for a target prefix's ids
  // (1 line x max_target_tokens 12).
  EXPECT_EQ((*made)->buf.shortlist.capacity, 3u + 2u + 4u * 2u + 12u);
  auto big = CreateTranslatorImpl(m->model, Limits(true));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ((*big)->buf.shortlist.capacity, static_cast<size_t>(o.vocab));
  // A line's list: the same terms for one line (frequent 3, EOS and UNK, 20 source ids x 2,
  // 12 prefix ids), at most the union's capacity.
  EXPECT_EQ((*made)->buf.shortlist.line_capacity, 3u + 2u + 4u * 2u + 12u);
  EXPECT_EQ((*big)->buf.shortlist.line_capacity, 3u + 2u + 20u * 2u + 12u);
  TranslatorLimits capped = Limits(true);
  auto off = Make(m->model, false);
  ASSERT_NE(off, nullptr);
  capped.max_memory_bytes = off->arena_bytes();  // enough without the shortlist, not with it
  auto refused = Translator::Create(m->model, capped);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kLimitExceeded);
}

}  // namespace
}  // namespace headwise
