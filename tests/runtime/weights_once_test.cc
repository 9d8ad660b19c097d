// Weights held once (issue 14): a process that loads a model file, creates a Translator and
// translates (greedy and beam 4) peaks at most at file size + arena + 16 MiB of resident memory,
// for fp32, fp16 and int8 weights. Measured as VmHWM of a fresh process (runtime_rss_probe,
// rss_probe.cc), so nothing this test binary did counts.
//
// What the 16 MiB holds: the process before the model (the probe's baseline, printed: about
// 5-6 MiB of libraries, libstdc++, XNNPACK's init, the allocator), the model's small copied
// state (config, tokenizer-free here, weight views, fused int8 parts), operator objects and
// allocator slack. A second copy of the weights is far above it: the model below is the shipped
// model's size (d 256, 6 + 3 layers, vocab 8000: 40 MB of F32, 20 MB of F16 weights), so an
// XNNPACK-packed copy beside the mapped file (+40 MB), or the F16 weights widened to F32
// (+20 MB over the file even with the file released) fails the bound by more than the slack.
// The probe's limits keep the arena at a few MB for the same reason.
//
// Where the in-place kernels serve every product of a format (no "xnnpack" in kernel_paths),
// two Translators on one Model must fit in file size + both arenas + 16 MiB: they share the
// weights. With XNNPACK each Translator packs its own copy, so that case is skipped.
//
// Skipped (HEADWISE_RSS_SKIP, tests/runtime/CMakeLists.txt) under emulation, where qemu-user
// does not pass MADV_DONTNEED through for private file mappings (it may have made them
// anonymous) and its own memory counts in VmHWM, and in sanitizer builds (shadow memory).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/runtime/test_model.h"

namespace headwise {
namespace {

constexpr size_t kSlack = size_t{16} << 20;

struct ProbeResult {
  bool ok = false;
  size_t baseline = 0, peak = 0, file = 0, arena = 0;
  std::string kernel_paths;
  std::string text;
};

size_t Field(const std::string& json, const std::string& name) {
  const size_t at = json.find("\"" + name + "\": ");
  if (at == std::string::npos) return 0;
  return static_cast<size_t>(std::strtoull(json.c_str() + at + name.size() + 4, nullptr, 10));
}

ProbeResult RunProbe(const std::string& model_path, int translators) {
  ProbeResult r;
  const std::string command = std::string("'") + HEADWISE_RSS_PROBE + "' '" + model_path + "' " +
                              std::to_string(translators);
  std::FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char chunk[512];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, p)) > 0) r.text.append(chunk, n);
  r.ok = pclose(p) == 0;
  r.baseline = Field(r.text, "baseline_rss_bytes");
  r.peak = Field(r.text, "peak_rss_bytes");
  r.file = Field(r.text, "file_bytes");
  r.arena = Field(r.text, "arena_bytes");
  const size_t at = r.text.find("\"kernel_paths\": \"");
  if (at != std::string::npos) {
    const size_t from = at + 17;
    r.kernel_paths = r.text.substr(from, r.text.find('"', from) - from);
  }
  return r;
}

std::string WriteModel(WeightFormat format) {
  testing::ModelOptions o;
  o.d_model = 256;
  o.encoder_layers = 6;
  o.decoder_layers = 3;
  o.heads = 8;
  o.encoder_ffn = 1024;
  o.decoder_ffn = 1024;
  o.vocab = 8000;
  o.pad = o.start = 7999;
  o.max_positions = 256;
  o.eos_bias = -4.0f;  // run to max_length
  o.weights = format;
  const std::vector<uint8_t> bytes = testing::Serialize(testing::MakeSpec(o));
  const std::string path = ::testing::TempDir() + "weights_once_" + WeightFormatName(format) +
                           ".hwm";
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return out.good() && !bytes.empty() ? path : "";
}

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

class WeightsOnceTest : public ::testing::TestWithParam<WeightFormat> {};

TEST_P(WeightsOnceTest, PeakRssAtMostFilePlusArenaPlus16MiB) {
  if (*HEADWISE_RSS_SKIP != '\0') GTEST_SKIP() << HEADWISE_RSS_SKIP;
  const std::string path = WriteModel(GetParam());
  ASSERT_FALSE(path.empty());
  for (int translators : {1, 2}) {
    const ProbeResult r = RunProbe(path, translators);
    ASSERT_TRUE(r.ok) << r.text;
    ASSERT_GT(r.file, size_t{8} << 20) << r.text;  // the model below, not an empty file
    ASSERT_GT(r.peak, r.baseline) << r.text;
    const size_t bound = r.file + r.arena + kSlack;
    std::printf("%s, %d Translator(s) (%s): peak RSS %.1f MiB = file %.1f + arena %.1f + %.1f "
                "(bound: + 16; the process before the model: %.1f)\n",
                WeightFormatName(GetParam()), translators, r.kernel_paths.c_str(), MiB(r.peak),
                MiB(r.file), MiB(r.arena), MiB(r.peak) - MiB(r.file) - MiB(r.arena),
                MiB(r.baseline));
    if (translators == 2 && r.kernel_paths.find("xnnpack") != std::string::npos) {
      std::printf("  (two Translators each pack their own XNNPACK copy: not bounded here)\n");
      continue;
    }
    EXPECT_LE(r.peak, bound) << r.text;
  }
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Formats, WeightsOnceTest,
                         ::testing::Values(WeightFormat::kF32, WeightFormat::kF16,
                                           WeightFormat::kI8),
                         [](const ::testing::TestParamInfo<WeightFormat>& p) {
                           return std::string(WeightFormatName(p.param));
                         });

}  // namespace
}  // namespace headwise
