// Fuzz target: the checkpoint readers on arbitrary bytes, each parsing the same input: the
// safetensors header parser (then every tensor it accepts is widened to float, reading its
// bytes in place), the MarianMT config.json parser, the vocab.json parser, the head
// analysis (analysis.json) parser against a 2-block layout and the vocabulary shortlist file
// parser against the 8-piece vocabulary of the vocab8.json seed. Accepted results must be
// self-consistent: tensors inside the input, sizes that match their shapes, a shortlist that
// passes the format's rules.
#include <cstdint>
#include <string>
#include <string_view>

#include "converter/src/analysis_reader.h"
#include "converter/src/config_reader.h"
#include "converter/src/safetensors_reader.h"
#include "converter/src/shortlist_reader.h"
#include "converter/src/vocab_reader.h"
#include "format/shortlist.h"
#include "fuzz/fuzz_check.h"

namespace {

using headwise::ErrorCode;
namespace convert = headwise::convert;

void CheckCleanError(const headwise::Status& s) {
  FUZZ_CHECK(s.code() == ErrorCode::kInvalidCheckpoint, "%s", s.ToString().c_str());
  FUZZ_CHECK(s.message().rfind("fuzz", 0) == 0, "message does not name the file: %s",
             s.message().c_str());
}

void Safetensors(const uint8_t* data, size_t size) {
  auto parsed = convert::ParseSafetensors(data, size, "fuzz");
  if (!parsed.ok()) return CheckCleanError(parsed.status());
  uint64_t budget = 1 << 16;  // elements widened per input, so one input stays fast
  for (const convert::SafetensorsTensor& t : parsed->tensors) {
    const uint64_t elem = t.dtype == convert::SafetensorsDType::kF32 ? 4 : 2;
    uint64_t product = 1;
    for (uint64_t d : t.shape) product *= d;  // the parser refused any product that overflows
    FUZZ_CHECK(product == t.num_elements, "'%s': shape product != num_elements", t.name.c_str());
    if (t.num_elements > 0) {
      FUZZ_CHECK(t.data >= data && t.num_elements <= size / elem &&
                     t.data + t.num_elements * elem <= data + size,
                 "'%s': tensor bytes outside the input", t.name.c_str());
    }
    if (t.num_elements <= budget) {
      budget -= t.num_elements;
      FUZZ_CHECK(convert::SafetensorsToFloat(t).size() == t.num_elements, "'%s'", t.name.c_str());
    }
    FUZZ_CHECK(parsed->Find(t.name) == &t, "'%s': Find disagrees", t.name.c_str());
  }
}

// analysis.json for an encoder-self layer 0 and a decoder-cross layer 0 of 2 heads each.
void Analysis(std::string_view text) {
  std::vector<headwise::BlockLayout> blocks(2);
  blocks[0].kind = headwise::AttentionKind::kEncoderSelf;
  blocks[1].kind = headwise::AttentionKind::kDecoderCross;
  for (headwise::BlockLayout& b : blocks) {
    b.original_num_heads = b.num_heads = 2;
    b.head_dim = 4;
    b.kept_heads = {0, 1};
  }
  auto parsed = convert::ParseHeadAnalysis(text, "fuzz", blocks, "00");
  if (!parsed.ok()) return CheckCleanError(parsed.status());
  FUZZ_CHECK(parsed->blocks.size() == 2, "%zu blocks", parsed->blocks.size());
  for (const auto& heads : parsed->blocks) {
    FUZZ_CHECK(heads.size() == 2, "%zu heads", heads.size());
    for (size_t h = 0; h < heads.size(); ++h) FUZZ_CHECK(heads[h].source_head == h, "order");
  }
}

// A shortlist file for vocab8.json's pieces (the seed shortlist.tsv carries their hash).
void Shortlist(std::string_view text) {
  static const std::vector<std::string> pieces = {"</s>", "<unk>", "a", "b", "c", "d", "e",
                                                  "<pad>"};
  auto parsed = convert::ParseShortlist(text, "fuzz", pieces);
  if (!parsed.ok()) return CheckCleanError(parsed.status());
  auto checked =
      headwise::CheckShortlist(headwise::ViewOf(*parsed, 8), ErrorCode::kInvalidCheckpoint);
  FUZZ_CHECK(checked.ok(), "the reader accepted a shortlist the rules refuse: %s",
             checked.status().ToString().c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Safetensors(data, size);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = convert::ParseMarianConfig(text, "fuzz");
  if (!config.ok()) CheckCleanError(config.status());
  Analysis(text);
  Shortlist(text);
  auto vocab = convert::ParseVocabJson(text, 8, "fuzz");
  if (vocab.ok()) {
    FUZZ_CHECK(vocab->pieces.size() == 8, "%zu pieces", vocab->pieces.size());
    FUZZ_CHECK(vocab->unk_id >= 0 && vocab->unk_id < 8, "unk %d", vocab->unk_id);
  } else {
    CheckCleanError(vocab.status());
  }
  return 0;
}
