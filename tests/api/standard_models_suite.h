// tests/api/standard_models_suite.h: the base of the API test suites that run on the standard
// test models: WriteStandardModels into a fresh ScratchDir once per suite (dir_), removed when
// the suite ends. Suites that also load a model do so in their own SetUpTestSuite after calling
// this one's; TinyModelSuite loads tiny.hwm for them. Tests only (GoogleTest).
#ifndef HEADWISE_TESTS_API_STANDARD_MODELS_SUITE_H_
#define HEADWISE_TESTS_API_STANDARD_MODELS_SUITE_H_

#include <gtest/gtest.h>

#include <memory>

#include "headwise/headwise.hpp"
#include "tests/api/test_model.h"

namespace headwise::testing {

class StandardModelsSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    ASSERT_FALSE(dir_->path().empty());
    const Status written = WriteStandardModels(dir_->path());
    ASSERT_TRUE(written.ok()) << written.ToString();
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static inline ScratchDir* dir_ = nullptr;
};

// StandardModelsSuite with tiny.hwm loaded once per suite: tiny(), and Translators of it.
class TinyModelSuite : public StandardModelsSuite {
 protected:
  static void SetUpTestSuite() {
    StandardModelsSuite::SetUpTestSuite();
    if (HasFatalFailure()) return;
    auto m = Model::Load(*dir_ / "tiny.hwm");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    tiny_ = new std::shared_ptr<const Model>(std::move(m).value());
  }
  static void TearDownTestSuite() {
    delete tiny_;
    tiny_ = nullptr;
    StandardModelsSuite::TearDownTestSuite();
  }

  static const std::shared_ptr<const Model>& tiny() { return *tiny_; }

  // A Translator of tiny() with these limits (sort_window 0: the default); null, with a test
  // failure, when Create fails.
  static std::unique_ptr<Translator> MakeTiny(int max_batch, int max_source, int max_target,
                                              int max_beam, int sort_window = 0) {
    TranslatorLimits limits;
    limits.max_batch = max_batch;
    limits.max_source_tokens = max_source;
    limits.max_target_tokens = max_target;
    limits.max_beam = max_beam;
    limits.sort_window = sort_window;
    auto t = Translator::Create(tiny(), limits);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(t).value() : nullptr;
  }

 private:
  static inline std::shared_ptr<const Model>* tiny_ = nullptr;
};

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_API_STANDARD_MODELS_SUITE_H_
