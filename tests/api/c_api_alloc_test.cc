// Two promises of the C API that need control of the allocator: hw_translate_ids and
// hw_translate_ids_each perform no heap allocation (after the translator exists), and an allocation failure inside any entry point
// comes back as HW_ERR_OUT_OF_MEMORY instead of an exception crossing into C.
//
// This executable links the allocation counter (tests/support/alloc_counter.h), so it sees
// allocations made by headwise and by the libraries under it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "headwise/headwise.h"
#include "headwise/headwise.hpp"
#include "tests/api/standard_models_suite.h"
#include "tests/api/test_model.h"
#include "tests/support/alloc_counter.h"

namespace headwise {
namespace {

class CApiAllocTest : public testing::StandardModelsSuite {};

TEST_F(CApiAllocTest, TranslateIdsDoesNotAllocate) {
  hw_model* model = nullptr;
  ASSERT_EQ(hw_model_load((*dir_ / "tiny.hwm").c_str(), nullptr, &model), HW_OK) << hw_last_error_message();
  hw_translator_params tp = hw_translator_default_params();
  tp.max_batch = 2;
  tp.max_source_tokens = 32;
  tp.max_target_tokens = 16;
  tp.max_beam = 3;
  hw_translator* translator = nullptr;
  ASSERT_EQ(hw_translator_create(model, &tp, &translator), HW_OK) << hw_last_error_message();

  const int32_t a[] = {5, 9, 12, 7, testing::kEos};
  const int32_t b[] = {8, 3, testing::kEos};
  const int32_t* ids[] = {a, b};
  const size_t lengths[] = {5, 3};
  hw_search_params sp = hw_search_default_params();
  sp.beam_size = 3;
  sp.num_hypotheses = 2;
  // Target prefixes (hw_translate_ids_prefixed): two ids for `a`, none for `b`.
  const int32_t* prefix_ids[] = {b, nullptr};
  const size_t prefix_lengths[] = {2, 0};
  for (int round = 0; round < 3; ++round) {
    hw_status s, h, p;
    long counted = 0;
    {
      testing::AllocationCounter counter;
      s = hw_translate_ids(translator, ids, lengths, 2, &sp);
      const int32_t* out = nullptr;
      size_t len = 0;
      float score = 0;
      h = hw_translator_hypothesis(translator, 1, 1, &out, &len, &score);
      p = hw_translate_ids_prefixed(translator, ids, lengths, 2, prefix_ids, prefix_lengths, &sp);
      counted = counter.count();
    }
    ASSERT_EQ(s, HW_OK) << hw_last_error_message();
    ASSERT_EQ(h, HW_OK) << hw_last_error_message();
    ASSERT_EQ(p, HW_OK) << hw_last_error_message();
    EXPECT_EQ(counted, 0) << "round " << round;
  }
  hw_translator_free(translator);
  hw_model_free(model);
}

// hw_translate_ids_each over a shuffled mix of short and long sources, one of them too long,
// sorted and cut by a token budget, greedy and beam n-best: no allocation once warm, reading
// the hypotheses and the line statuses included (the message is built only when asked for).
TEST_F(CApiAllocTest, TranslateIdsEachDoesNotAllocate) {
  hw_model* model = nullptr;
  ASSERT_EQ(hw_model_load((*dir_ / "tiny.hwm").c_str(), nullptr, &model), HW_OK) << hw_last_error_message();
  hw_translator_params tp = hw_translator_default_params();
  tp.max_batch = 2;
  tp.max_source_tokens = 8;
  tp.max_target_tokens = 16;
  tp.max_beam = 3;
  tp.num_threads = 2;
  tp.sort_window = 6;
  hw_translator* translator = nullptr;
  ASSERT_EQ(hw_translator_create(model, &tp, &translator), HW_OK) << hw_last_error_message();
  ASSERT_EQ(hw_translator_sort_window(translator), 6);

  const int32_t a[] = {5, 9, 12, 7, 11, 6, testing::kEos};
  const int32_t b[] = {8, testing::kEos};
  const int32_t c[] = {5, 9, 12, 7, 11, 6, 5, 9, 12, testing::kEos};  // 10 > max_source_tokens
  const int32_t d[] = {7, 3, 9, 4, 6, testing::kEos};
  const int32_t e[] = {3, testing::kEos};
  const int32_t* ids[] = {a, b, c, d, e};
  const size_t lengths[] = {7, 2, 10, 6, 2};
  hw_batch_params bp = hw_batch_default_params();
  bp.max_tokens = 12;
  for (int beam : {1, 3}) {
    hw_search_params sp = hw_search_default_params();
    sp.beam_size = beam;
    sp.num_hypotheses = beam == 1 ? 1 : 2;
    ASSERT_EQ(hw_translate_ids_each(translator, ids, lengths, 5, &sp, &bp), HW_OK) << hw_last_error_message();
    for (int round = 0; round < 2; ++round) {
      hw_status s = HW_OK, failed = HW_OK;
      size_t hyps = 0;
      long counted = 0;
      {
        testing::AllocationCounter counter;
        s = hw_translate_ids_each(translator, ids, lengths, 5, &sp, &bp);
        for (size_t i = 0; i < 5; ++i) {
          hw_hypothesis h;
          for (size_t k = 0; k < hw_translator_num_hypotheses(translator, i); ++k) {
            if (hw_translator_get_hypothesis(translator, i, k, &h) == HW_OK) ++hyps;
          }
        }
        failed = hw_translator_line_status(translator, 2);
        counted = counter.count();
      }
      ASSERT_EQ(s, HW_OK) << hw_last_error_message();
      EXPECT_EQ(failed, HW_ERR_INPUT_TOO_LONG);
      EXPECT_EQ(hyps, 4u * static_cast<size_t>(sp.num_hypotheses));
      EXPECT_EQ(counted, 0) << "beam " << beam << " round " << round;
      EXPECT_STREQ(hw_translator_line_error_message(translator, 2),
                   "10 tokens exceed TranslatorLimits.max_source_tokens 8");
    }
  }
  hw_translator_free(translator);
  hw_model_free(model);
}

TEST_F(CApiAllocTest, AllocationFailureIsOutOfMemoryNotACrash) {
  const std::string path = *dir_ / "tiny.hwm";
  hw_model* model = nullptr;
  testing::SetNewFails(true);
  const hw_status load = hw_model_load(path.c_str(), nullptr, &model);
  testing::SetNewFails(false);
  EXPECT_EQ(load, HW_ERR_OUT_OF_MEMORY) << hw_last_error_message();
  EXPECT_EQ(model, nullptr);

  ASSERT_EQ(hw_model_load(path.c_str(), nullptr, &model), HW_OK) << hw_last_error_message();
  hw_translator* translator = nullptr;
  testing::SetNewFails(true);
  const hw_status create = hw_translator_create(model, nullptr, &translator);
  testing::SetNewFails(false);
  EXPECT_EQ(create, HW_ERR_OUT_OF_MEMORY) << hw_last_error_message();
  EXPECT_EQ(translator, nullptr);

  hw_translator_params tp = hw_translator_default_params();
  tp.max_source_tokens = 32;
  tp.max_target_tokens = 16;
  ASSERT_EQ(hw_translator_create(model, &tp, &translator), HW_OK) << hw_last_error_message();
  const char* texts[] = {"Open the file.", "Read."};
  hw_result* result = nullptr;
  testing::SetNewFails(true);
  const hw_status translate = hw_translate(translator, texts, 2, nullptr, &result);
  testing::SetNewFails(false);
  EXPECT_EQ(translate, HW_ERR_OUT_OF_MEMORY);
  EXPECT_STREQ(hw_last_error_message(), "out of memory");
  EXPECT_EQ(result, nullptr);

  // The translator is still usable afterwards.
  ASSERT_EQ(hw_translate(translator, texts, 2, nullptr, &result), HW_OK) << hw_last_error_message();
  EXPECT_EQ(hw_result_num_sentences(result), 2u);
  hw_result_free(result);
  hw_translator_free(translator);
  hw_model_free(model);
}

}  // namespace
}  // namespace headwise
