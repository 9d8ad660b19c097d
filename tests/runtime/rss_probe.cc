// runtime_rss_probe MODEL [TRANSLATORS]: the fresh process in which weights_once_test.cc
// measures peak memory. Loads MODEL from its file (Model::Load: mapped, checksum verified),
// creates TRANSLATORS (default 1) Translators on it (batch 4, beam 4, 32 source and target
// tokens: an arena of a few MB, so that a second copy of the weights cannot hide in the bound's
// arena term), and with each translates one sentence greedily (one-row products) and four
// sentences with beam 4 (products of 16 rows), then prints one JSON line:
//   {"baseline_rss_bytes": VmHWM before the model, "peak_rss_bytes": VmHWM at the end,
//    "file_bytes": ..., "arena_bytes": the Translators' arena_bytes() summed,
//    "translators": N, "kernel_paths": "..."}
// Exit status 1 with a message on stderr on any error. Public API only.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "headwise/headwise.hpp"

namespace {

size_t VmHwmBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 6, "VmHWM:") == 0) return std::stoull(line.substr(6)) * 1024;  // kB
  }
  return 0;
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "runtime_rss_probe: %s\n", what.c_str());
  return 1;
}

// `length - 1` ids in [2, vocab - 2) (never eos 0, unk 1 or the synthetic models' pad), then eos.
std::vector<int32_t> Source(const headwise::ModelInfo& info, size_t length, int seed) {
  std::vector<int32_t> ids;
  const int span = info.vocab_size - 4;
  for (size_t i = 0; i + 1 < length; ++i) {
    ids.push_back(2 + static_cast<int32_t>((static_cast<int>(i) * 7 + seed * 13) % span));
  }
  ids.push_back(info.eos_token_id);
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) return Fail("usage: runtime_rss_probe MODEL [TRANSLATORS]");
  const size_t baseline = VmHwmBytes();
  const int count = argc == 3 ? std::atoi(argv[2]) : 1;
  if (count < 1) return Fail("TRANSLATORS must be >= 1");
  auto model = headwise::Model::Load(argv[1]);
  if (!model.ok()) return Fail(model.status().ToString());
  const headwise::ModelInfo& info = (*model)->info();
  std::vector<std::unique_ptr<headwise::Translator>> translators;
  size_t arena = 0;
  headwise::TranslatorLimits limits;
  limits.max_batch = 4;
  limits.max_beam = 4;
  limits.max_source_tokens = 32;
  limits.max_target_tokens = 32;
  for (int t = 0; t < count; ++t) {
    auto tr = headwise::Translator::Create(*model, limits);
    if (!tr.ok()) return Fail(tr.status().ToString());
    arena += (*tr)->arena_bytes();
    translators.push_back(std::move(*tr));
  }
  std::vector<std::vector<int32_t>> sources;
  for (int s = 0; s < 4; ++s) sources.push_back(Source(info, 12 + 3 * static_cast<size_t>(s), s));
  std::vector<headwise::TokenSpan> spans;
  for (const auto& s : sources) spans.push_back({s.data(), s.size()});
  for (const auto& tr : translators) {
    headwise::SearchOptions greedy;
    greedy.max_length = 24;
    headwise::Status st = tr->TranslateIds(spans.data(), 1, greedy);
    if (!st.ok()) return Fail(st.ToString());
    headwise::SearchOptions beam = greedy;
    beam.beam_size = 4;
    st = tr->TranslateIds(spans.data(), spans.size(), beam);
    if (!st.ok()) return Fail(st.ToString());
  }
  std::printf(
      "{\"baseline_rss_bytes\": %zu, \"peak_rss_bytes\": %zu, \"file_bytes\": %llu, "
      "\"arena_bytes\": %zu, \"translators\": %d, \"kernel_paths\": \"%s\"}\n",
      baseline, VmHwmBytes(), static_cast<unsigned long long>(info.file_bytes), arena, count,
      translators[0]->kernel_paths().c_str());
  return 0;
}
