// tests/api/standard_models_suite.h: the base of the API test suites that run on the standard
// test models: WriteStandardModels into a fresh ScratchDir once per suite (dir_), removed when
// the suite ends. Suites that also load a model do so in their own SetUpTestSuite after calling
// this one's. Tests only (GoogleTest).
#ifndef HEADWISE_TESTS_API_STANDARD_MODELS_SUITE_H_
#define HEADWISE_TESTS_API_STANDARD_MODELS_SUITE_H_

#include <gtest/gtest.h>

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

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_API_STANDARD_MODELS_SUITE_H_
