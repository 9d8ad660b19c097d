#include "format/shortlist.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace headwise {
namespace {

// ids[0, n) ascending, unique, each < vocab; else the error naming `where` and the position.
Status CheckIds(const uint32_t* ids, size_t n, uint32_t vocab, const std::string& where,
                ErrorCode code) {
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] >= vocab) {
      return Status(code, "shortlist: " + where + ": id " + std::to_string(ids[i]) +
                              " at position " + std::to_string(i) +
                              " is outside the vocabulary of " + std::to_string(vocab));
    }
    if (i > 0 && ids[i] <= ids[i - 1]) {
      return Status(code, "shortlist: " + where + ": ids must be ascending and unique, found " +
                              std::to_string(ids[i - 1]) + " then " + std::to_string(ids[i]) +
                              " at position " + std::to_string(i));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<ShortlistStats> CheckShortlist(const ShortlistView& v, ErrorCode code) {
  if (v.vocab == 0) return Status(code, "shortlist: the vocabulary is empty");
  if (v.num_offsets != static_cast<size_t>(v.vocab) + 1) {
    return Status(code, "shortlist: offsets: expected " + std::to_string(size_t{v.vocab} + 1) +
                            " entries (vocab_size + 1), found " + std::to_string(v.num_offsets));
  }
  if ((v.num_frequent > 0 && v.frequent == nullptr) ||
      (v.num_targets > 0 && v.targets == nullptr) || v.offsets == nullptr) {
    return Status(code, "shortlist: an array is missing");
  }
  HW_RETURN_IF_ERROR(CheckIds(v.frequent, v.num_frequent, v.vocab, "frequent", code));
  if (v.offsets[0] != 0) {
    return Status(code, "shortlist: offsets[0] must be 0, found " + std::to_string(v.offsets[0]));
  }
  if (v.offsets[v.vocab] != v.num_targets) {
    return Status(code, "shortlist: offsets[" + std::to_string(v.vocab) + "] is " +
                            std::to_string(v.offsets[v.vocab]) + ", expected the " +
                            std::to_string(v.num_targets) + " targets");
  }
  ShortlistStats stats;
  for (uint32_t s = 0; s < v.vocab; ++s) {
    const uint32_t begin = v.offsets[s], end = v.offsets[s + 1];
    if (end > v.num_targets) {
      return Status(code, "shortlist: offsets[" + std::to_string(s + 1) + "] is " +
                              std::to_string(end) + ", past the " +
                              std::to_string(v.num_targets) + " targets");
    }
    if (end < begin) {
      return Status(code, "shortlist: offsets must not decrease, found " + std::to_string(begin) +
                              " then " + std::to_string(end) + " at source id " +
                              std::to_string(s));
    }
    // begin <= end <= num_targets: the list lies inside targets. A list of more than vocab
    // ascending unique ids < vocab cannot pass CheckIds.
    HW_RETURN_IF_ERROR(CheckIds(v.targets + begin, end - begin, v.vocab,
                                "list of source id " + std::to_string(s), code));
    if (end > begin) ++stats.sources;
    stats.longest = std::max<size_t>(stats.longest, end - begin);
  }
  return stats;
}

ShortlistView ViewOf(const ShortlistSpec& spec, uint32_t vocab) {
  ShortlistView v;
  v.frequent = spec.frequent.data();
  v.num_frequent = spec.frequent.size();
  v.offsets = spec.offsets.data();
  v.num_offsets = spec.offsets.size();
  v.targets = spec.targets.data();
  v.num_targets = spec.targets.size();
  v.vocab = vocab;
  v.description = spec.description;
  return v;
}

void ShortlistBegin(const ShortlistView& v, const int32_t* always, size_t num_always,
                    uint8_t* marks) {
  std::memset(marks, 0, v.vocab);
  for (size_t i = 0; i < v.num_frequent; ++i) marks[v.frequent[i]] = 1;
  for (size_t i = 0; i < num_always; ++i) marks[always[i]] = 1;
}

void ShortlistAddSource(const ShortlistView& v, const int32_t* source, size_t length,
                        uint8_t* marks) {
  for (size_t i = 0; i < length; ++i) {
    const uint32_t s = static_cast<uint32_t>(source[i]);
    for (const uint32_t* t = v.ListBegin(s); t != v.ListEnd(s); ++t) marks[*t] = 1;
  }
}

void ShortlistAddTargets(const int32_t* targets, size_t length, uint8_t* marks) {
  for (size_t i = 0; i < length; ++i) marks[targets[i]] = 1;
}

size_t ShortlistCollect(const ShortlistView& v, const uint8_t* marks, int32_t* ids) {
  size_t n = 0;
  for (uint32_t id = 0; id < v.vocab; ++id) {
    if (marks[id] == 0) continue;
    if (ids != nullptr) ids[n] = static_cast<int32_t>(id);
    ++n;
  }
  return n;
}

}  // namespace headwise
