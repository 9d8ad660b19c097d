// End-to-end: the runtime (public API only) against the PyTorch reference of trainer/.
// Each parameter is one checkpoint of make_test_checkpoints.py, converted by headwise-convert
// (the e2e_prepare ctest fixture), and once more with a random vocabulary shortlist. Greedy,
// beam and sampled outputs must be identical token for token, scores within kScoreTolerance,
// teacher-forced logits within kLogitTolerance.
#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e_reference.h"
#include "headwise/headwise.hpp"

namespace headwise_e2e {
namespace {

constexpr float kScoreTolerance = 1e-4f;
constexpr float kLogitTolerance = 1e-4f;

std::vector<std::string> NamesForInstantiation() {
  const std::string dir = E2EDir();
  if (dir.empty()) return {"HEADWISE_E2E_DIR_not_set"};
  try {
    return CheckpointNames(dir);
  } catch (const std::exception&) {
    return {"manifest_missing"};  // SetUp reports the error
  }
}

std::string Ids(const std::vector<int32_t>& ids) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < ids.size(); ++i) s << (i ? ", " : "") << ids[i];
  s << "]";
  return s.str();
}

class E2ETest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string dir = E2EDir();
    ASSERT_FALSE(dir.empty()) << "HEADWISE_E2E_DIR is not set; run this test through ctest "
                                 "(the e2e_prepare fixture writes the models)";
    try {
      CheckpointNames(dir);
      ref_ = LoadReference(dir + "/ckpt/" + GetParam() + "/reference.json");
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
    const std::string path = dir + "/" + GetParam() + ".hwm";
    auto model = headwise::Model::Load(path);
    ASSERT_TRUE(model.ok()) << path << ": " << model.status().ToString();
    model_ = *model;
    auto translator = headwise::Translator::Create(model_, ref_.limits);
    ASSERT_TRUE(translator.ok()) << translator.status().ToString();
    translator_ = std::move(*translator);
  }

  // Translates sources [first, first + count) with `search` and compares every hypothesis
  // (on `translator`, default the plain model's).
  void CheckBatch(const RefSearch& search, size_t first, size_t count,
                  headwise::Translator* translator = nullptr) {
    headwise::Translator& t = translator != nullptr ? *translator : *translator_;
    std::vector<headwise::TokenSpan> spans, prefixes;
    for (size_t i = first; i < first + count; ++i) {
      spans.push_back({ref_.sources[i].data(), ref_.sources[i].size()});
      prefixes.push_back({ref_.prefixes[i].data(), ref_.prefixes[i].size()});
    }
    const headwise::Status status =
        t.TranslateIds(spans.data(), spans.size(), search.options,
                       search.target_prefix ? prefixes.data() : nullptr);
    ASSERT_TRUE(status.ok()) << search.name << ": " << status.ToString();
    for (size_t b = 0; b < count; ++b) {
      const size_t i = first + b;
      const std::vector<RefHypothesis>& want = search.results[i];
      SCOPED_TRACE(search.name + ", source " + std::to_string(i) + " " + Ids(ref_.sources[i]) +
                   ", batch of " + std::to_string(count));
      ASSERT_EQ(t.num_hypotheses(b), want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        const headwise::HypothesisView got = t.hypothesis(b, k);
        const std::vector<int32_t> ids(got.ids, got.ids + got.size);
        EXPECT_EQ(ids, want[k].ids) << "hypothesis " << k << ": expected " << Ids(want[k].ids)
                                    << " (score " << want[k].score << "), found " << Ids(ids)
                                    << " (score " << got.score << ")";
        EXPECT_NEAR(got.score, want[k].score, kScoreTolerance) << "hypothesis " << k;
        EXPECT_EQ(got.finished, want[k].finished) << "hypothesis " << k;
      }
    }
  }

  void CheckSearch(const RefSearch& search, size_t batch,
                   headwise::Translator* translator = nullptr) {
    for (size_t first = 0; first < ref_.sources.size(); first += batch) {
      CheckBatch(search, first, std::min(batch, ref_.sources.size() - first), translator);
    }
  }

  Reference ref_;
  std::shared_ptr<const headwise::Model> model_;
  std::unique_ptr<headwise::Translator> translator_;
};

TEST_P(E2ETest, ModelInfoMatchesCheckpoint) {
  const headwise::ModelInfo& info = model_->info();
  EXPECT_EQ(info.vocab_size, ref_.vocab_size);
  EXPECT_EQ(info.eos_token_id, ref_.eos_token_id);
  EXPECT_EQ(info.pad_token_id, ref_.pad_token_id);
  EXPECT_EQ(info.unk_token_id, ref_.unk_token_id);
  ASSERT_EQ(info.attention.size(), ref_.layout.size());
  for (const headwise::AttentionBlockInfo& block : info.attention) {
    const std::string name = BlockName(block.kind, block.layer);
    auto it = ref_.layout.find(name);
    ASSERT_NE(it, ref_.layout.end()) << "runtime block " << name << " not in the checkpoint";
    EXPECT_EQ(block.num_heads, static_cast<int>(it->second.size())) << name;
    EXPECT_EQ(block.head_dim * block.original_num_heads, info.d_model) << name;
  }
}

TEST_P(E2ETest, SearchesMatchReferenceInFullBatches) {
  for (const RefSearch& search : ref_.searches) {
    CheckSearch(search, static_cast<size_t>(ref_.limits.max_batch));
  }
}

TEST_P(E2ETest, SearchesMatchReferenceInOtherBatchSizes) {
  // Other batch compositions (the reference decodes each sentence independently).
  for (const RefSearch& search : ref_.searches) {
    CheckSearch(search, search.options.beam_size == 1 ? 1 : 3);
  }
}

// The checkpoint converted with its random vocabulary shortlist: each source translates as the
// reference decodes it over the pieces the shortlist allows for that source alone, in full
// batches (whose other lines allow other pieces), in batches of 3 and alone; and the shortlist
// changes some results against the same search without it, so the comparison sees it at work.
TEST_P(E2ETest, ShortlistSearchesMatchReferenceInEveryBatchSize) {
  const std::string path = E2EDir() + "/" + GetParam() + ".shortlist.hwm";
  auto model = headwise::Model::Load(path);
  ASSERT_TRUE(model.ok()) << path << ": " << model.status().ToString();
  ASSERT_TRUE((*model)->info().has_shortlist);
  auto translator = headwise::Translator::Create(*model, ref_.limits);
  ASSERT_TRUE(translator.ok()) << translator.status().ToString();
  ASSERT_TRUE((*translator)->uses_shortlist());
  ASSERT_FALSE(ref_.shortlist_searches.empty());
  for (const RefSearch& search : ref_.shortlist_searches) {
    for (size_t batch : {static_cast<size_t>(ref_.limits.max_batch), size_t{3}, size_t{1}}) {
      CheckSearch(search, batch, translator->get());
    }
  }
  size_t changed = 0;
  for (const RefSearch& search : ref_.shortlist_searches) {
    if (search.options.sample) continue;
    for (size_t i = 0; i < ref_.sources.size(); ++i) {
      const headwise::TokenSpan span{ref_.sources[i].data(), ref_.sources[i].size()};
      ASSERT_TRUE(translator_->TranslateIds(&span, 1, search.options).ok());
      const headwise::HypothesisView h = translator_->hypothesis(0, 0);
      changed += std::vector<int32_t>(h.ids, h.ids + h.size) != search.results[i][0].ids;
    }
  }
  EXPECT_GT(changed, 0u) << "the shortlist changes no result: the comparison proves little";
}

// beam4_nbest1_<rule> are one search under each stopping rule. The searches above hold the
// runtime to the reference under every rule; here the early rules must end some sentence's
// search with another result than the exhaustive one (the runtime's own outputs), so that
// the comparison sees each rule at work.
TEST_P(E2ETest, EarlyStopRulesChangeSomeResults) {
  const RefSearch* exhaustive = nullptr;
  std::vector<const RefSearch*> early;
  for (const RefSearch& search : ref_.searches) {
    if (search.name == "beam4_nbest1_exhaustive") exhaustive = &search;
    if (search.name == "beam4_nbest1_top-eos" || search.name == "beam4_nbest1_outscored") {
      early.push_back(&search);
    }
  }
  ASSERT_NE(exhaustive, nullptr);
  ASSERT_EQ(early.size(), 2u);
  std::vector<std::vector<int32_t>> best_exhaustive;
  for (const RefSearch* search : {exhaustive, early[0], early[1]}) {
    size_t changed = 0;
    for (size_t i = 0; i < ref_.sources.size(); ++i) {
      const headwise::TokenSpan span{ref_.sources[i].data(), ref_.sources[i].size()};
      ASSERT_TRUE(translator_->TranslateIds(&span, 1, search->options).ok()) << search->name;
      const headwise::HypothesisView got = translator_->hypothesis(0, 0);
      std::vector<int32_t> ids(got.ids, got.ids + got.size);
      ASSERT_EQ(ids, search->results[i][0].ids) << search->name << ", source " << i;
      if (search == exhaustive) {
        best_exhaustive.push_back(std::move(ids));
      } else {
        changed += ids != best_exhaustive[i];
      }
    }
    if (search != exhaustive) {
      EXPECT_GT(changed, 0u) << search->name << " changed no result";
    }
  }
}

TEST_P(E2ETest, ForcedLogitsMatchReference) {
  ASSERT_FALSE(ref_.forced.empty());
  for (size_t p = 0; p < ref_.forced.size(); ++p) {
    const RefForced& f = ref_.forced[p];
    std::vector<float> logits(f.logits.size(), std::nanf(""));
    const headwise::Status status = translator_->ForcedLogits(
        {f.source.data(), f.source.size()}, {f.target.data(), f.target.size()}, logits.data());
    ASSERT_TRUE(status.ok()) << "pair " << p << ": " << status.ToString();
    float worst = 0.0f;
    size_t worst_at = 0;
    for (size_t i = 0; i < logits.size(); ++i) {
      const float diff = std::fabs(logits[i] - f.logits[i]);
      if (!(diff <= worst)) {  // also catches NaN
        worst = std::isnan(diff) ? INFINITY : diff;
        worst_at = i;
      }
    }
    const size_t vocab = static_cast<size_t>(ref_.vocab_size);
    EXPECT_LE(worst, kLogitTolerance)
        << "pair " << p << " (source " << Ids(f.source) << ", target " << Ids(f.target)
        << "): largest difference at position " << worst_at / vocab << ", token "
        << worst_at % vocab << ": expected " << f.logits[worst_at] << ", found "
        << logits[worst_at];
  }
}

TEST_P(E2ETest, TokenizerMatchesSentencePiece) {
  for (const RefTokenizerCase& c : ref_.tokenizer) {
    SCOPED_TRACE("text \"" + c.text + "\"");
    auto ids = model_->EncodeSource(c.text);
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    EXPECT_EQ(*ids, c.source_ids) << "expected " << Ids(c.source_ids) << ", found " << Ids(*ids);
    auto text = model_->DecodeTarget(c.target_ids.data(), c.target_ids.size());
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    EXPECT_EQ(*text, c.target_text);
  }
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, E2ETest, ::testing::ValuesIn(NamesForInstantiation()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param;
                         });

}  // namespace
}  // namespace headwise_e2e
