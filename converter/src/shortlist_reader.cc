#include "converter/src/shortlist_reader.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/mapped_file.h"
#include "converter/src/sha256.h"

namespace headwise::convert {
namespace {

constexpr char kMagic[] = "headwise-shortlist";
constexpr char kVersion[] = "1";

// Splits on '\t' (every field kept, empty ones too).
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos
                                                                    : tab - start));
    if (tab == std::string_view::npos) return out;
    start = tab + 1;
  }
}

// A decimal number without sign or leading spaces that fits in uint32.
bool ParseId(std::string_view s, uint32_t* out) {
  if (s.empty() || s.size() > 10) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > UINT32_MAX) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

std::string Shown(std::string_view s) {
  std::string out(s.substr(0, 40));
  if (s.size() > 40) out += "...";
  return "'" + out + "'";
}

class Parser {
 public:
  Parser(const std::string& where, const std::vector<std::string>& pieces)
      : where_(where), pieces_(pieces) {}

  Status Error(size_t line, const std::string& what) const {
    return InvalidCheckpoint(where_ + ":" + std::to_string(line) + ": " + what);
  }

  // Space-separated ids < vocab, unique; ascending on return.
  Result<std::vector<uint32_t>> Ids(size_t line, std::string_view field,
                                    const std::string& what) const {
    std::vector<uint32_t> ids;
    if (field.empty()) return ids;
    size_t start = 0;
    for (;;) {
      const size_t space = field.find(' ', start);
      const std::string_view token = field.substr(
          start, space == std::string_view::npos ? std::string_view::npos : space - start);
      uint32_t id = 0;
      if (!ParseId(token, &id)) {
        return Error(line, what + ": expected ids separated by single spaces, found " +
                               Shown(token));
      }
      if (id >= pieces_.size()) {
        return Error(line, what + ": id " + std::to_string(id) + " is outside the vocabulary of " +
                               std::to_string(pieces_.size()));
      }
      ids.push_back(id);
      if (space == std::string_view::npos) break;
      start = space + 1;
    }
    std::sort(ids.begin(), ids.end());
    const auto dup = std::adjacent_find(ids.begin(), ids.end());
    if (dup != ids.end()) {
      return Error(line, what + ": id " + std::to_string(*dup) + " appears more than once");
    }
    return ids;
  }

  Result<ShortlistSpec> Parse(std::string_view text) {
    ShortlistSpec spec;
    const uint32_t vocab = static_cast<uint32_t>(pieces_.size());
    spec.offsets.assign(size_t{vocab} + 1, 0);
    enum { kStart, kHeader, kLists } state = kStart;
    bool have_size = false, have_hash = false;
    int64_t last_source = -1;
    size_t number = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t end = text.find('\n', pos);
      const std::string_view line =
          text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
      pos = end == std::string_view::npos ? text.size() : end + 1;
      ++number;
      if (line.empty() || line[0] == '#') continue;
      const std::vector<std::string_view> f = Fields(line);
      if (state == kStart) {
        if (f.size() != 2 || f[0] != kMagic || f[1] != kVersion) {
          return Error(number, std::string("expected the first record '") + kMagic +
                                   "<TAB>" + kVersion + "', found " + Shown(line));
        }
        state = kHeader;
        continue;
      }
      if (f[0] == "frequent") {
        if (state != kHeader || f.size() != 2) {
          return Error(number, state != kHeader ? "a second 'frequent' record"
                                                : "expected 'frequent<TAB>IDS'");
        }
        if (!have_size || !have_hash) {
          return Error(number, "'vocab_size' and 'vocab_sha256' must come before 'frequent'");
        }
        HW_ASSIGN_OR_RETURN(spec.frequent, Ids(number, f[1], "frequent"));
        state = kLists;
        continue;
      }
      if (f[0] == "source") {
        if (state != kLists) return Error(number, "a 'source' record before 'frequent'");
        uint32_t source = 0;
        if (f.size() != 3 || !ParseId(f[1], &source)) {
          return Error(number, "expected 'source<TAB>SOURCE_ID<TAB>IDS', found " + Shown(line));
        }
        if (source >= vocab) {
          return Error(number, "source id " + std::to_string(source) +
                                   " is outside the vocabulary of " + std::to_string(vocab));
        }
        if (static_cast<int64_t>(source) <= last_source) {
          return Error(number, "source ids must be ascending, found " + std::to_string(source) +
                                   " after " + std::to_string(last_source));
        }
        HW_ASSIGN_OR_RETURN(std::vector<uint32_t> ids,
                            Ids(number, f[2], "source id " + std::to_string(source)));
        for (int64_t s = last_source + 1; s <= static_cast<int64_t>(source); ++s) {
          spec.offsets[static_cast<size_t>(s)] = static_cast<uint32_t>(spec.targets.size());
        }
        if (spec.targets.size() + ids.size() > UINT32_MAX) {
          return Error(number, "more list entries than 2^32 - 1");
        }
        spec.targets.insert(spec.targets.end(), ids.begin(), ids.end());
        last_source = source;
        continue;
      }
      if (state != kHeader) {
        return Error(number, "expected a 'source' record after 'frequent', found " + Shown(line));
      }
      if (f.size() != 2) {
        return Error(number, "expected 'KEY<TAB>VALUE', found " + Shown(line));
      }
      if (f[0] == "vocab_size") {
        uint32_t n = 0;
        if (!ParseId(f[1], &n) || n != vocab) {
          return Error(number, "vocab_size: the checkpoint's vocabulary has " +
                                   std::to_string(vocab) + " pieces, the shortlist was made for " +
                                   Shown(f[1]));
        }
        have_size = true;
      } else if (f[0] == "vocab_sha256") {
        const std::string want = ShortlistVocabHash(pieces_);
        if (f[1] != want) {
          return Error(number, "vocab_sha256: the shortlist was made for another vocabulary ("
                               "found " + Shown(f[1]) + ", the checkpoint's is " + want + ")");
        }
        have_hash = true;
      } else if (f[0] == "description") {
        spec.description = std::string(f[1]);
      }
    }
    if (state != kLists) {
      return InvalidCheckpoint(where_ + ": " +
                               (state == kStart ? "empty (no 'headwise-shortlist' record)"
                                                : "no 'frequent' record"));
    }
    for (int64_t s = last_source + 1; s <= static_cast<int64_t>(vocab); ++s) {
      spec.offsets[static_cast<size_t>(s)] = static_cast<uint32_t>(spec.targets.size());
    }
    return spec;
  }

 private:
  const std::string& where_;
  const std::vector<std::string>& pieces_;
};

}  // namespace

std::string ShortlistVocabHash(const std::vector<std::string>& pieces) {
  Sha256 h;
  const char nul = '\0';
  for (const std::string& p : pieces) {
    h.Update(p.data(), p.size());
    h.Update(&nul, 1);
  }
  return h.FinishHex();
}

Result<ShortlistSpec> ParseShortlist(std::string_view text, const std::string& where,
                                     const std::vector<std::string>& pieces) {
  if (pieces.empty()) return InvalidCheckpoint(where + ": the checkpoint has no vocabulary");
  return Parser(where, pieces).Parse(text);
}

Result<ShortlistSpec> ReadShortlist(const std::string& path,
                                    const std::vector<std::string>& pieces) {
  HW_ASSIGN_OR_RETURN(const std::string text, ReadFileToString(path));
  return ParseShortlist(text, path, pieces);
}

}  // namespace headwise::convert
