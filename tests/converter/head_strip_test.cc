#include "converter/src/head_strip.h"

#include <gtest/gtest.h>

namespace headwise::convert {
namespace {

// 3 heads of size 2 over d = 2: a [6, 2] weight whose element (r, c) is 10*r + c.
std::vector<float> Weight() {
  std::vector<float> w;
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 2; ++c) w.push_back(static_cast<float>(10 * r + c));
  }
  return w;
}

TEST(HeadStrip, KeepsTheKeptHeadsRowsInOrder) {
  EXPECT_EQ(KeepHeadRows(Weight(), 2, 2, {0, 2}),
            (std::vector<float>{0, 1, 10, 11, 40, 41, 50, 51}));
  EXPECT_EQ(KeepHeadRows(Weight(), 2, 2, {1}), (std::vector<float>{20, 21, 30, 31}));
  EXPECT_EQ(KeepHeadRows(Weight(), 2, 2, {0, 1, 2}), Weight());
  EXPECT_TRUE(KeepHeadRows(Weight(), 2, 2, {}).empty());
  // A bias is a [6] vector: row width 1.
  EXPECT_EQ(KeepHeadRows({0, 1, 2, 3, 4, 5}, 1, 2, {2}), (std::vector<float>{4, 5}));
}

TEST(HeadStrip, KeepsTheKeptHeadsColumnsOfOutProj) {
  // out_proj [2, 6]: element (r, c) = 10*r + c.
  std::vector<float> out;
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 6; ++c) out.push_back(static_cast<float>(10 * r + c));
  }
  EXPECT_EQ(KeepHeadColumns(out, 2, 2, {0, 2}), (std::vector<float>{0, 1, 4, 5, 10, 11, 14, 15}));
  EXPECT_EQ(KeepHeadColumns(out, 2, 2, {1}), (std::vector<float>{2, 3, 12, 13}));
  EXPECT_TRUE(KeepHeadColumns(out, 2, 2, {}).empty());
}

}  // namespace
}  // namespace headwise::convert
