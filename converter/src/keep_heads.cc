#include "converter/src/keep_heads.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "common/mapped_file.h"

namespace headwise::convert {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Removes all whitespace (the syntax has no tokens that contain spaces).
std::string Squeeze(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  }
  return out;
}

bool ParseNumber(std::string_view s, uint32_t* out) {
  if (s.empty() || s.size() > 9) return false;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  *out = v;
  return true;
}

// "N" or "N-M" (N <= M).
bool ParseRange(std::string_view s, uint32_t* first, uint32_t* last) {
  const size_t dash = s.find('-');
  if (dash == std::string_view::npos) {
    if (!ParseNumber(s, first)) return false;
    *last = *first;
    return true;
  }
  return ParseNumber(s.substr(0, dash), first) && ParseNumber(s.substr(dash + 1), last);
}

Status EntryError(size_t index, const std::string& text, const std::string& what) {
  return InvalidArgument("--keep-heads entry " + std::to_string(index) + " '" + text + "': " +
                         what);
}

Status ParseBlocks(std::string_view blocks, size_t index, KeepHeadsEntry* e) {
  const size_t dot = blocks.find('.');
  const std::string_view kind = blocks.substr(0, dot);
  if (kind == "enc") e->kinds = {AttentionKind::kEncoderSelf};
  else if (kind == "dec") e->kinds = {AttentionKind::kDecoderSelf};
  else if (kind == "cross") e->kinds = {AttentionKind::kDecoderCross};
  else if (kind == "*") e->kinds = {AttentionKind::kEncoderSelf, AttentionKind::kDecoderSelf, AttentionKind::kDecoderCross};
  else {
    return EntryError(index, e->text, "unknown block kind '" + std::string(kind) +
                                          "'; expected enc, dec, cross or *");
  }
  if (dot == std::string_view::npos) {
    return EntryError(index, e->text, "expected KIND.LAYER before '=', e.g. enc.0 or cross.*");
  }
  const std::string_view layers = blocks.substr(dot + 1);
  if (layers == "*") return Status::Ok();
  uint32_t first = 0, last = 0;
  if (!ParseRange(layers, &first, &last)) {
    return EntryError(index, e->text, "expected a layer N, a range N-M or *, found '" +
                                          std::string(layers) + "'");
  }
  if (last < first) {
    return EntryError(index, e->text, "layer range " + std::string(layers) + " is reversed");
  }
  e->first_layer = first;
  e->last_layer = last;
  return Status::Ok();
}

Status ParseHeads(std::string_view heads, size_t index, KeepHeadsEntry* e) {
  if (heads == "all") {
    e->all_heads = true;
    return Status::Ok();
  }
  if (heads.empty() || heads == "none") return Status::Ok();
  std::vector<uint32_t> out;
  size_t start = 0;
  while (start <= heads.size()) {
    const size_t comma = std::min(heads.find(',', start), heads.size());
    const std::string_view item = heads.substr(start, comma - start);
    uint32_t first = 0, last = 0;
    if (!ParseRange(item, &first, &last)) {
      return EntryError(index, e->text, "expected heads as all, none, N or N-M separated by "
                                        "commas, found '" + std::string(item) + "'");
    }
    if (last < first) {
      return EntryError(index, e->text, "head range " + std::string(item) + " is reversed");
    }
    for (uint32_t h = first; h <= last; ++h) {
      if (std::find(out.begin(), out.end(), h) != out.end()) {
        return EntryError(index, e->text, "head " + std::to_string(h) + " is listed twice");
      }
      out.push_back(h);
    }
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  e->heads = out;
  e->max_head = out.back();
  return Status::Ok();
}

const char* StackName(AttentionKind kind) {
  return kind == AttentionKind::kEncoderSelf ? "the encoder" : "the decoder";
}

}  // namespace

Result<KeepHeadsSpec> ParseKeepHeadsSpec(std::string_view text) {
  KeepHeadsSpec spec;
  spec.text = Trim(text);
  // Strip comments line by line, then split on ';' and newlines.
  std::vector<std::string> raw_entries;
  std::string current;
  bool in_comment = false;
  for (char c : text) {
    if (c == '\n') {
      in_comment = false;
      raw_entries.push_back(current);
      current.clear();
    } else if (in_comment) {
      continue;
    } else if (c == '#') {
      in_comment = true;
    } else if (c == ';') {
      raw_entries.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  raw_entries.push_back(current);

  for (const std::string& raw : raw_entries) {
    const std::string entry_text = Trim(raw);
    if (entry_text.empty()) continue;
    const size_t index = spec.entries.size() + 1;
    KeepHeadsEntry e;
    e.text = entry_text;
    const std::string squeezed = Squeeze(entry_text);
    const size_t eq = squeezed.find('=');
    if (eq == std::string::npos || squeezed.find('=', eq + 1) != std::string::npos) {
      return EntryError(index, e.text, "expected BLOCKS=HEADS with one '=', e.g. enc.0=0,3");
    }
    HW_RETURN_IF_ERROR(ParseBlocks(std::string_view(squeezed).substr(0, eq), index, &e));
    HW_RETURN_IF_ERROR(ParseHeads(std::string_view(squeezed).substr(eq + 1), index, &e));
    spec.entries.push_back(std::move(e));
  }
  if (spec.entries.empty()) {
    return InvalidArgument("--keep-heads: the spec has no entries; expected e.g. "
                           "'enc.0=0,3;dec.*=all'");
  }
  return spec;
}

Result<std::string> KeepHeadsArgumentText(const std::string& arg) {
  struct stat st {};
  if (::stat(arg.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    Result<std::string> text = ReadFileToString(arg);
    if (!text.ok()) return text.status().WithContext("--keep-heads file");
    return text;
  }
  return arg;
}

Status ApplyKeepHeads(const KeepHeadsSpec& spec, const ModelConfig& config,
                      std::vector<std::vector<uint32_t>>* kept) {
  for (size_t i = 0; i < spec.entries.size(); ++i) {
    const KeepHeadsEntry& e = spec.entries[i];
    size_t block_base = 0;
    for (AttentionKind kind : {AttentionKind::kEncoderSelf, AttentionKind::kDecoderSelf, AttentionKind::kDecoderCross}) {
      const uint32_t layers = kind == AttentionKind::kEncoderSelf ? config.encoder_layers : config.decoder_layers;
      const uint32_t heads = kind == AttentionKind::kEncoderSelf ? config.encoder_attention_heads
                                                             : config.decoder_attention_heads;
      const size_t base = block_base;
      block_base += layers;
      if (std::find(e.kinds.begin(), e.kinds.end(), kind) == e.kinds.end()) continue;
      const uint32_t last = e.last_layer.value_or(layers - 1);
      if (last >= layers) {
        return EntryError(i + 1, e.text, "layer " + std::to_string(last) + " out of range, " +
                                             StackName(kind) + " has " + std::to_string(layers) +
                                             " layers (0-" + std::to_string(layers - 1) + ")");
      }
      if (!e.all_heads && !e.heads.empty() && e.max_head >= heads) {
        return EntryError(i + 1, e.text, "head " + std::to_string(e.max_head) +
                                             " out of range, " + StackName(kind) +
                                             " blocks have " + std::to_string(heads) +
                                             " heads (0-" + std::to_string(heads - 1) + ")");
      }
      for (uint32_t l = e.first_layer; l <= last; ++l) {
        std::vector<uint32_t>& block = (*kept)[base + l];
        if (e.all_heads) {
          block.resize(heads);
          for (uint32_t h = 0; h < heads; ++h) block[h] = h;
        } else {
          block = e.heads;
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace headwise::convert
