// format/shortlist.h: the vocabulary shortlist a .hwm file may carry (schema Shortlist): which
// target pieces a batch may produce, as Marian's lexical shortlists and CTranslate2's vocabulary
// map define it. For a batch of source sentences the allowed pieces are
//     frequent  U  list(s) for every source id s of every sentence  U  {EOS, UNK}
// (ShortlistBegin / AddSource / Collect below); the runtime computes the output layer over
// exactly those rows.
//
// Storage: `frequent` ascending and unique; the lists in CSR form by source id: the list of
// source id s is targets[offsets[s] .. offsets[s + 1]), each list ascending and unique;
// offsets has vocab_size + 1 entries, offsets[0] == 0, non-decreasing, and the last equals
// the number of targets; every id < vocab_size. So each list holds at most vocab_size ids and
// the union is bounded by vocab_size.
//
// The IR side (ShortlistSpec, in format/model_ir.h's ModelSpec) owns vectors; the reader side
// (ShortlistView) points into a file's flatbuffer (format/schema_map.h ShortlistFromSchema) or
// into a spec (ViewOf), and is valid while that memory is.
#ifndef HEADWISE_FORMAT_SHORTLIST_H_
#define HEADWISE_FORMAT_SHORTLIST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "headwise/status.hpp"

namespace headwise {

// What the converter stores (`headwise-convert --shortlist FILE`); all empty = no shortlist.
struct ShortlistSpec {
  std::vector<uint32_t> frequent;
  std::vector<uint32_t> offsets;  // vocab_size + 1 entries
  std::vector<uint32_t> targets;
  std::string description;  // how it was made, informational

  bool empty() const { return frequent.empty() && offsets.empty() && targets.empty(); }
};

// A read-only view of the same arrays.
struct ShortlistView {
  const uint32_t* frequent = nullptr;
  size_t num_frequent = 0;
  const uint32_t* offsets = nullptr;  // [num_offsets], vocab + 1 once checked
  size_t num_offsets = 0;
  const uint32_t* targets = nullptr;
  size_t num_targets = 0;
  uint32_t vocab = 0;
  std::string_view description;

  // The list of source id s < vocab: [begin, end).
  const uint32_t* ListBegin(uint32_t s) const { return targets + offsets[s]; }
  const uint32_t* ListEnd(uint32_t s) const { return targets + offsets[s + 1]; }
};

// Statistics CheckShortlist computes on the way.
struct ShortlistStats {
  size_t sources = 0;  // source ids with a non-empty list
  size_t longest = 0;  // entries of the longest list
};

// Checks every rule of the header for a vocabulary of view.vocab ids, reading nothing outside
// the view's arrays. Errors carry `code` (kInvalidModel for a file, kInvalidCheckpoint for the
// converter's input) and name the array, the source id and the position, e.g. "shortlist: list
// of source id 17: ids must be ascending and unique, found 60 then 52 at position 3".
Result<ShortlistStats> CheckShortlist(const ShortlistView& view, ErrorCode code);

// A view of a spec's vectors (vocab from the caller).
ShortlistView ViewOf(const ShortlistSpec& spec, uint32_t vocab);

// The union of one batch, in three steps on `marks` (vocab bytes; no allocation):
// ShortlistBegin clears it and marks the frequent ids and `always` (e.g. EOS, UNK; ids <
// vocab); ShortlistAddSource marks the list of every id of one source sentence (ids < vocab,
// unchecked); ShortlistAddTargets marks target ids themselves (a target prefix's; ids <
// vocab, unchecked); ShortlistCollect writes the marked ids ascending to `ids` (room for vocab
// ids; null: only count) and returns how many there are.
void ShortlistBegin(const ShortlistView& view, const int32_t* always, size_t num_always,
                    uint8_t* marks);
void ShortlistAddSource(const ShortlistView& view, const int32_t* source, size_t length,
                        uint8_t* marks);
void ShortlistAddTargets(const int32_t* targets, size_t length, uint8_t* marks);
size_t ShortlistCollect(const ShortlistView& view, const uint8_t* marks, int32_t* ids);

}  // namespace headwise

#endif  // HEADWISE_FORMAT_SHORTLIST_H_
