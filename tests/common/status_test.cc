#include "headwise/status.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace headwise {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Status Chain(int x, int* out) {
  HW_ASSIGN_OR_RETURN(int h, Half(x));
  HW_ASSIGN_OR_RETURN(*out, Half(h));
  return Status::Ok();
}

TEST(Status, OkAndErrorToString) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().ToString(), "OK");
  Status s = InvalidModel("bad tensor");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(s.ToString(), "INVALID_MODEL: bad tensor");
  EXPECT_EQ(s.WithContext("layer 3").message(), "layer 3: bad tensor");
}

TEST(Result, PropagatesThroughMacros) {
  int out = 0;
  EXPECT_TRUE(Chain(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status s = Chain(6, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "odd: 3");
}

TEST(Result, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r(std::make_unique<int>(7));
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
  Result<std::unique_ptr<int>> e(IoError("x"));
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), ErrorCode::kIoError);
}

}  // namespace
}  // namespace headwise
