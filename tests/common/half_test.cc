#include "common/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "common/checksum.h"

namespace headwise {
namespace {

TEST(Half, EveryF16RoundTripsThroughFloat) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = F16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(F16ToFloat(FloatToF16(f))));
      continue;
    }
    EXPECT_EQ(FloatToF16(f), h) << "h=" << h << " f=" << f;
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(F16ToFloat(0x3c00), 1.0f);
  EXPECT_EQ(F16ToFloat(0xc000), -2.0f);
  EXPECT_EQ(F16ToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(F16ToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(FloatToF16(1e6f), 0x7c00);                   // overflow -> +inf
  EXPECT_EQ(FloatToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie rounds to even
  EXPECT_EQ(Bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(Bf16ToFloat(0xc040), -3.0f);
}

TEST(Checksum, Fnv1a64KnownVectors) {
  EXPECT_EQ(Fnv1a64("", 0), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a", 1), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a64("foobar", 6), 0x85944171f73967e8ULL);
  // Incremental hashing equals one-shot hashing.
  EXPECT_EQ(Fnv1a64("bar", 3, Fnv1a64("foo", 3)), Fnv1a64("foobar", 6));
}

}  // namespace
}  // namespace headwise
