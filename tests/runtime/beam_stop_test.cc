// The beam stopping rules (SearchOptions::beam_stop, include/headwise/headwise.hpp): each rule's
// results equal the plain reference search's under the same rule (kExhaustive: the rule every
// earlier version ran), an early rule never runs more decoder steps than kExhaustive and, on
// sources where EOS is likely, ends some sentence's search earlier and changes a result there.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "encoder.h"
#include "op_profile.h"
#include "search.h"
#include "tests/runtime/reference_model.h"
#include "tests/runtime/test_model.h"
#include "translator_impl.h"

namespace headwise {
namespace {

using testing::ModelOptions;

constexpr size_t kMaxLength = 12;

struct BeamRun {
  size_t steps = 0;  // decoder steps
  std::vector<std::vector<int32_t>> ids;  // the returned hypotheses, best first
};

// One sentence through RunBeam with `so`, counting decoder steps.
BeamRun Translate(Translator::Impl& t, const std::vector<int32_t>& src, const SearchOptions& so) {
  OpProfile profile;
  t.net.profile = &profile;
  const TokenSpan span{src.data(), src.size()};
  BeamRun run;
  EXPECT_TRUE(RunEncoder(t.net, t.buf.encoder, &span, 1).ok());
  EXPECT_TRUE(RunBeam(t.decoder(), t.buf.search, 1, so, kMaxLength).ok());
  t.net.profile = nullptr;
  run.steps = profile.steps;
  const HypothesisStore& hyps = t.buf.search.hyps;
  const size_t n = std::min(hyps.count(0), static_cast<size_t>(so.num_hypotheses));
  for (size_t k = 0; k < n; ++k) {
    const HypothesisView h = hyps.Get(0, k);
    run.ids.emplace_back(h.ids, h.ids + h.size);
  }
  return run;
}

const char* Name(BeamStop stop) {
  switch (stop) {
    case BeamStop::kExhaustive: return "exhaustive";
    case BeamStop::kTopEos: return "top-eos";
    case BeamStop::kOutscored: return "outscored";
  }
  return "?";
}

TEST(BeamStopTest, EarlyRulesEndSomeSearchesEarlierAndFollowTheReference) {
  const ModelOptions o = testing::EarlyEosModelOptions();
  auto tm = testing::BuildModel(o);
  ASSERT_NE(tm->model, nullptr);
  const testing::ReferenceModel ref(tm->spec);
  TranslatorLimits limits;
  limits.max_batch = 1;
  limits.max_beam = 4;
  limits.max_source_tokens = 24;
  limits.max_target_tokens = static_cast<int>(kMaxLength);
  auto impl = CreateTranslatorImpl(tm->model, limits);
  ASSERT_TRUE(impl.ok()) << impl.status().ToString();
  size_t changed = 0;  // results an early rule changed, over every search
  for (const auto& [beam, nbest, lp] :
       {std::tuple<int, int, float>{4, 1, 1.0f}, {3, 1, 0.6f}, {4, 2, 1.0f}, {2, 1, 1.3f}}) {
    size_t steps[3] = {}, fewer[3] = {};
    for (uint32_t seed = 0; seed < 16; ++seed) {
      const std::vector<int32_t> src = testing::RandomSource(o, 2 + seed % 9, 100 + seed);
      BeamRun runs[3];
      for (BeamStop stop : {BeamStop::kExhaustive, BeamStop::kTopEos, BeamStop::kOutscored}) {
        const int r = static_cast<int>(stop);
        SCOPED_TRACE(std::string(Name(stop)) + " beam " + std::to_string(beam) + " nbest " +
                     std::to_string(nbest) + " seed " + std::to_string(seed));
        SearchOptions so;
        so.beam_size = beam;
        so.num_hypotheses = nbest;
        so.length_penalty = lp;
        so.beam_stop = stop;
        runs[r] = Translate(**impl, src, so);
        const auto want = testing::ReferenceSearch(ref, src, so, kMaxLength);
        ASSERT_EQ(runs[r].ids.size(), std::min(want.size(), static_cast<size_t>(nbest)));
        for (size_t k = 0; k < runs[r].ids.size(); ++k) {
          EXPECT_EQ(runs[r].ids[k], want[k].ids) << "hypothesis " << k;
        }
        steps[r] += runs[r].steps;
        EXPECT_LE(runs[r].steps, runs[0].steps) << "an early rule ran more steps than exhaustive";
        fewer[r] += runs[r].steps < runs[0].steps;
        changed += runs[r].ids != runs[0].ids;
      }
    }
    for (int r : {1, 2}) {
      SCOPED_TRACE(std::string(Name(static_cast<BeamStop>(r))) + " beam " + std::to_string(beam));
      EXPECT_GT(fewer[r], 0u) << "no search ended earlier than exhaustive";
      EXPECT_LT(steps[r], steps[0]);
    }
  }
  // Ending earlier can change the result (here with beam 4, 2 hypotheses).
  EXPECT_GT(changed, 0u) << "no early rule changed a result";
}

TEST(BeamStopTest, ValidationNamesTheRules) {
  ModelOptions o;
  auto tm = testing::BuildModel(o);
  ASSERT_NE(tm->model, nullptr);
  TranslatorLimits limits;
  limits.max_source_tokens = 16;
  limits.max_target_tokens = 8;
  auto tr = Translator::Create(tm->model, limits);
  ASSERT_TRUE(tr.ok());
  const std::vector<int32_t> src = testing::RandomSource(o, 3, 1);
  const TokenSpan span{src.data(), src.size()};
  SearchOptions so;
  so.beam_size = 2;
  so.beam_stop = static_cast<BeamStop>(3);
  const Status s = (*tr)->TranslateIds(&span, 1, so);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("beam_stop 3"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace headwise
