#include "converter/src/keep_heads.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/converter/checkpoint_fixture.h"
#include "tests/converter/temp_dir.h"

namespace headwise::convert {
namespace {

using Kept = std::vector<std::vector<uint32_t>>;

// 3 encoder layers with 8 heads, 2 decoder layers with 4 heads: blocks enc0..2, dec0..1,
// cross0..1.
ModelConfig Config() {
  ModelConfig c;
  c.d_model = 16;
  c.encoder_layers = 3;
  c.decoder_layers = 2;
  c.encoder_attention_heads = 8;
  c.decoder_attention_heads = 4;
  return c;
}

Kept FromGates() { return {{0, 1}, {2}, {}, {0, 1, 2, 3}, {1}, {3}, {}}; }

Result<Kept> Apply(const std::string& text) {
  HW_ASSIGN_OR_RETURN(KeepHeadsSpec spec, ParseKeepHeadsSpec(text));
  Kept kept = FromGates();
  HW_RETURN_IF_ERROR(ApplyKeepHeads(spec, Config(), &kept));
  return kept;
}

TEST(KeepHeads, TheDocumentedExample) {
  auto r = Apply("enc.0=0,3,5;enc.1=;dec.1=all;cross.*=0-2");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (Kept{{0, 3, 5}, {}, {}, {0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2}, {0, 1, 2}}));
}

TEST(KeepHeads, BlocksNotNamedKeepTheirGates) {
  auto r = Apply("dec.0=none");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Kept expected = FromGates();
  expected[3] = {};
  EXPECT_EQ(*r, expected);
}

TEST(KeepHeads, WildcardsRangesOrderAndWhitespace) {
  auto r = Apply(" *.* = all ;\n enc.1-2 = 7 , 1-2 \n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (Kept{{0, 1, 2, 3, 4, 5, 6, 7}, {1, 2, 7}, {1, 2, 7}, {0, 1, 2, 3},
                      {0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}}));
  auto last_wins = Apply("enc.0=1;enc.0=2");
  ASSERT_TRUE(last_wins.ok());
  EXPECT_EQ((*last_wins)[0], std::vector<uint32_t>{2});
}

TEST(KeepHeads, FileWithCommentsAndNewlines) {
  testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir / "heads.txt";
  testing::WriteAll(path, "# prune the encoder\nenc.* = 0   # first head only\n\ncross.1=\n");
  auto text = KeepHeadsArgumentText(path);
  ASSERT_TRUE(text.ok());
  auto spec = ParseKeepHeadsSpec(*text);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_EQ(spec->entries.size(), 2u);
  EXPECT_EQ(spec->text, "# prune the encoder\nenc.* = 0   # first head only\n\ncross.1=");
  Kept kept = FromGates();
  ASSERT_TRUE(ApplyKeepHeads(*spec, Config(), &kept).ok());
  EXPECT_EQ(kept, (Kept{{0}, {0}, {0}, {0, 1, 2, 3}, {1}, {3}, {}}));

  auto inline_text = KeepHeadsArgumentText("enc.0=1");
  ASSERT_TRUE(inline_text.ok());
  EXPECT_EQ(*inline_text, "enc.0=1");
}

struct BadSpec {
  const char* name;
  const char* text;
  const char* message;
};

class KeepHeadsRejects : public ::testing::TestWithParam<BadSpec> {};

TEST_P(KeepHeadsRejects, WithTheEntryQuoted) {
  auto r = Apply(GetParam().text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(GetParam().message), std::string::npos)
      << r.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    AllPaths, KeepHeadsRejects,
    ::testing::Values(
        BadSpec{"Empty", " ; # nothing\n", "the spec has no entries"},
        BadSpec{"NoEquals", "enc.0", "entry 1 'enc.0': expected BLOCKS=HEADS"},
        BadSpec{"TwoEquals", "enc.0=1=2", "expected BLOCKS=HEADS with one '='"},
        BadSpec{"UnknownKind", "enc.0=1;encoder.1=0", "entry 2 'encoder.1=0': unknown block kind 'encoder'"},
        BadSpec{"NoLayer", "enc=1", "expected KIND.LAYER before '='"},
        BadSpec{"BadLayer", "dec.x=1", "expected a layer N, a range N-M or *, found 'x'"},
        BadSpec{"ReversedLayers", "enc.2-1=0", "layer range 2-1 is reversed"},
        BadSpec{"BadHead", "enc.0=1,a", "found 'a'"},
        BadSpec{"TrailingComma", "enc.0=1,", "found ''"},
        BadSpec{"ReversedHeads", "enc.0=3-1", "head range 3-1 is reversed"},
        BadSpec{"HeadTwice", "enc.0=1,0-2", "head 1 is listed twice"},
        BadSpec{"LayerOutOfRange", "dec.2=0", "entry 1 'dec.2=0': layer 2 out of range, the decoder has 2 layers (0-1)"},
        BadSpec{"HeadOutOfRange", "cross.0=4", "head 4 out of range, the decoder blocks have 4 heads (0-3)"},
        BadSpec{"WildcardKindHead", "*.0=5", "head 5 out of range, the decoder blocks have 4 heads"}),
    [](const ::testing::TestParamInfo<BadSpec>& param) { return param.param.name; });

}  // namespace
}  // namespace headwise::convert
