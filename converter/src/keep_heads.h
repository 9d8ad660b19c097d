// converter/src/keep_heads.h: the --keep-heads spec, which overrides the checkpoint's gates.
//
// Syntax (whitespace is ignored; entries are separated by ';' or newlines; '#' starts a comment
// that runs to the end of the line):
//   ENTRY  := BLOCKS '=' HEADS
//   BLOCKS := KIND '.' LAYERS
//   KIND   := enc (encoder self-attention) | dec (decoder self-attention)
//           | cross (decoder cross-attention) | * (all three)
//   LAYERS := N | N-M | *
//   HEADS  := all | none | (empty, = none) | ITEM (',' ITEM)*    ITEM := N | N-M
// Examples: "enc.0=0,3,5; enc.1=; dec.2=all; cross.*=0-3", "*.*=all" (ignore every gate).
// Entries apply in order; for each block the last entry naming it wins. Blocks no entry names
// keep their gates' decision (log_alpha > 0; all heads when the block has no gate).
//
// Errors are kInvalidArgument and quote the entry: "--keep-heads entry 2 'enc.9=0': layer 9
// out of range, the encoder has 6 layers (0-5)".
#ifndef HEADWISE_CONVERTER_KEEP_HEADS_H_
#define HEADWISE_CONVERTER_KEEP_HEADS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/model_layout.h"
#include "headwise/status.hpp"

namespace headwise::convert {

struct KeepHeadsEntry {
  std::string text;                 // the entry as written, for messages
  std::vector<AttentionKind> kinds;     // one, or all three for '*'
  uint32_t first_layer = 0;
  std::optional<uint32_t> last_layer;  // inclusive; nullopt = every layer from first_layer
  bool all_heads = false;
  std::vector<uint32_t> heads;      // ascending, unique; used when !all_heads
  uint32_t max_head = 0;            // largest index named (range check against the config)
};

struct KeepHeadsSpec {
  std::string text;  // the spec as given (inline text, or the file's contents)
  std::vector<KeepHeadsEntry> entries;
};

// Parses the syntax above (no knowledge of the model yet).
Result<KeepHeadsSpec> ParseKeepHeadsSpec(std::string_view text);

// The spec text for a --keep-heads argument: the contents of `arg` when it names an existing
// file, else `arg` itself. Errors: kIoError for an unreadable file.
Result<std::string> KeepHeadsArgumentText(const std::string& arg);

// Applies the entries to `kept` (one list per block, canonical block order, pre-filled from
// the gates), checking layers and heads against `config`.
Status ApplyKeepHeads(const KeepHeadsSpec& spec, const ModelConfig& config,
                      std::vector<std::vector<uint32_t>>* kept);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_KEEP_HEADS_H_
