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

TEST(HeadStrip, TestTimeGateOfEachRule) {
  EXPECT_EQ(TestTimeGate(GateRule::kHard, 0.5f), 1.0f);
  EXPECT_EQ(TestTimeGate(GateRule::kHard, 0.0f), 0.0f);
  EXPECT_EQ(TestTimeGate(GateRule::kHard, -0.5f), 0.0f);
  // clamp(sigmoid(a) * 1.2 - 0.1, 0, 1), by hand: sigmoid(0) = 0.5 -> 0.5; sigmoid(1.5) =
  // 0.817574 -> 0.881089; sigmoid(-2.3) = 0.091123 -> 0.009348; below -log(11) = -2.3979: 0.
  EXPECT_FLOAT_EQ(TestTimeGate(GateRule::kContinuous, 0.0f), 0.5f);
  EXPECT_NEAR(TestTimeGate(GateRule::kContinuous, 1.5f), 0.881089f, 1e-6f);
  EXPECT_NEAR(TestTimeGate(GateRule::kContinuous, -2.3f), 0.009348f, 1e-6f);
  EXPECT_EQ(TestTimeGate(GateRule::kContinuous, -2.5f), 0.0f);
  EXPECT_EQ(TestTimeGate(GateRule::kContinuous, 3.0f), 1.0f);
}

TEST(HeadStrip, ScaleHeadColumnsMultipliesEachHeadsColumns) {
  // [2, 4]: 2 kept heads of size 2; head 0 times 0.5, head 1 times 2.
  std::vector<float> m = {1, 2, 3, 4, 5, 6, 7, 8};
  ScaleHeadColumns(&m, 2, 2, {0.5f, 2.0f});
  EXPECT_EQ(m, (std::vector<float>{0.5f, 1, 6, 8, 2.5f, 3, 14, 16}));
}

}  // namespace
}  // namespace headwise::convert
