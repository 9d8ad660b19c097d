// Tokenization as Hugging Face's MarianTokenizer does it, with two deliberate differences for
// hostile text (see tokenizer.h): invalid UTF-8 is rejected instead of being handed to
// SentencePiece, and control characters become spaces before SentencePiece sees them, so the
// result does not depend on the normalization rule a model's .spm happens to carry.
#include "tokenizer.h"

#include <sentencepiece_processor.h>

#include <exception>
#include <new>
#include <utility>

namespace headwise {
namespace {

constexpr size_t kNpos = std::string_view::npos;

std::string HexByte(char c) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const auto b = static_cast<unsigned char>(c);
  return std::string{'0', 'x', kHex[b >> 4], kHex[b & 15]};
}

bool IsControl(char32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

// Unicode White_Space, plus the controls (which EncodeSource treats as spaces anyway).
bool IsSpaceOrControl(char32_t cp) {
  if (cp == 0x20 || IsControl(cp)) return true;
  switch (cp) {
    case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

// SentencePiece's statuses become kTokenizer; its code name and message are kept because they
// are the only clue when an embedded .spm misbehaves.
Status FromSentencePiece(const sentencepiece::util::Status& s, const char* what) {
  return Status(ErrorCode::kTokenizer, std::string(what) + ": SentencePiece " + s.ToString());
}

// SentencePiece reports most broken protos with a Status, but its trie builder (Darts) throws
// on some (fuzz/regressions/model_loader): either way a hostile model is kTokenizer, not an
// exception out of Model::Load. Out of memory stays std::bad_alloc, as everywhere else.
Status LoadProto(sentencepiece::SentencePieceProcessor* processor, std::string_view proto,
                 const char* what) {
  try {
    const auto s = processor->LoadFromSerializedProto(proto);
    if (!s.ok()) return FromSentencePiece(s, what);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    return Status(ErrorCode::kTokenizer, std::string(what) + ": SentencePiece threw: " + e.what());
  }
  return Status::Ok();
}

// Python's str.strip() after HF's "▁" -> " " replacement, restricted to what that leaves.
std::string_view TrimSpaces(std::string_view s) {
  size_t begin = 0;
  size_t end = s.size();
  while (begin < end) {
    char32_t cp;
    const size_t n = DecodeCodePoint(s, begin, &cp);
    if (!IsSpaceOrControl(cp)) break;
    begin += n;
  }
  while (end > begin) {
    size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    char32_t cp;
    DecodeCodePoint(s, start, &cp);
    if (!IsSpaceOrControl(cp)) break;
    end = start;
  }
  return s.substr(begin, end - begin);
}

// Byte-fallback pieces can decode to byte sequences that are not UTF-8; callers (C strings,
// JSON output) are promised valid UTF-8, so each invalid sequence becomes U+FFFD.
std::string ReplaceInvalidUtf8(std::string s) {
  size_t bad = FindInvalidUtf8(s);
  if (bad == kNpos) return s;
  std::string out;
  out.reserve(s.size() + 8);
  std::string_view rest(s);
  while (bad != kNpos) {
    out.append(rest.substr(0, bad));
    out.append("\xEF\xBF\xBD");
    // Skip the lead byte and any continuation bytes that belonged to the broken sequence.
    size_t skip = bad + 1;
    while (skip < rest.size() && (static_cast<unsigned char>(rest[skip]) & 0xC0) == 0x80) ++skip;
    rest.remove_prefix(skip);
    bad = FindInvalidUtf8(rest);
  }
  out.append(rest);
  return out;
}

}  // namespace

size_t DecodeCodePoint(std::string_view text, size_t i, char32_t* cp) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  auto cont = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(text[i + k]) & 0x3F); };
  if (b0 < 0x80) { *cp = b0; return 1; }
  if (b0 < 0xE0) { *cp = (static_cast<char32_t>(b0 & 0x1F) << 6) | cont(1); return 2; }
  if (b0 < 0xF0) {
    *cp = (static_cast<char32_t>(b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2);
    return 3;
  }
  *cp = (static_cast<char32_t>(b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
  return 4;
}

Status InvalidUtf8Error(std::string_view text, size_t offset) {
  return Status(ErrorCode::kInvalidUtf8, "invalid UTF-8 at byte offset " + std::to_string(offset) +
                                             " (byte " + HexByte(text[offset]) + ")");
}

size_t FindInvalidUtf8(std::string_view text) {
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    if (b0 < 0x80) { ++i; continue; }
    // RFC 3629, table 3-7 of the Unicode standard: the second byte's range depends on the lead
    // byte, which is what excludes overlong forms, surrogates and code points over U+10FFFF.
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) { len = 2; }
    else if (b0 == 0xE0) { len = 3; lo = 0xA0; }
    else if (b0 >= 0xE1 && b0 <= 0xEC) { len = 3; }
    else if (b0 == 0xED) { len = 3; hi = 0x9F; }
    else if (b0 >= 0xEE && b0 <= 0xEF) { len = 3; }
    else if (b0 == 0xF0) { len = 4; lo = 0x90; }
    else if (b0 >= 0xF1 && b0 <= 0xF3) { len = 4; }
    else if (b0 == 0xF4) { len = 4; hi = 0x8F; }
    else { return i; }  // 0x80..0xC1 (continuation or overlong lead), 0xF5..0xFF
    if (i + len > n) return i;
    const auto b1 = static_cast<unsigned char>(text[i + 1]);
    if (b1 < lo || b1 > hi) return i;
    for (size_t k = 2; k < len; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return i;
    }
    i += len;
  }
  return kNpos;
}

bool IsBlank(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    char32_t cp;
    i += DecodeCodePoint(text, i, &cp);
    if (!IsSpaceOrControl(cp)) return false;
  }
  return true;
}

std::string ControlsToSpaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char32_t cp;
    const size_t n = DecodeCodePoint(text, i, &cp);
    if (IsControl(cp)) {
      out.push_back(' ');
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::Create(std::string_view source_spm,
                                                     std::string_view target_spm,
                                                     std::vector<std::string> vocab,
                                                     SpecialIds specials) {
  const auto size = static_cast<int64_t>(vocab.size());
  auto check_special = [&](int32_t id, const char* name) -> Status {
    if (id < 0 || id >= size) {
      return InvalidModel("tokenizer: " + std::string(name) + " id " + std::to_string(id) +
                          " outside the vocabulary of " + std::to_string(size) + " pieces");
    }
    return Status::Ok();
  };
  HW_RETURN_IF_ERROR(check_special(specials.pad, "pad"));
  HW_RETURN_IF_ERROR(check_special(specials.eos, "eos"));
  HW_RETURN_IF_ERROR(check_special(specials.unk, "unk"));
  if (size > INT32_MAX) return InvalidModel("tokenizer: vocabulary larger than INT32_MAX pieces");

  std::unique_ptr<Tokenizer> t(new Tokenizer());
  t->source_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  t->target_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  HW_RETURN_IF_ERROR(
      LoadProto(t->source_.get(), source_spm, "source tokenizer model does not parse"));
  HW_RETURN_IF_ERROR(
      LoadProto(t->target_.get(), target_spm, "target tokenizer model does not parse"));

  t->piece_to_id_.reserve(vocab.size());
  for (size_t id = 0; id < vocab.size(); ++id) {
    auto [it, inserted] = t->piece_to_id_.emplace(vocab[id], static_cast<int32_t>(id));
    if (!inserted) {
      return Status(ErrorCode::kTokenizer, "vocabulary: piece \"" + vocab[id] + "\" has ids " +
                                               std::to_string(it->second) + " and " +
                                               std::to_string(id));
    }
  }
  t->vocab_ = std::move(vocab);
  t->specials_ = specials;
  return t;
}

namespace {

// The pieces `processor` cuts `text` into, under the rules of the header: invalid UTF-8 is
// kInvalidUtf8, blank text has no pieces (decided here, not by the .spm's normalizer: an
// "identity" rule would otherwise turn spaces into pieces and make the model translate nothing
// into something), control characters count as spaces.
Result<std::vector<std::string>> Pieces(const sentencepiece::SentencePieceProcessor& processor,
                                        std::string_view text, const char* what) {
  const size_t bad = FindInvalidUtf8(text);
  if (bad != kNpos) return InvalidUtf8Error(text, bad);
  std::vector<std::string> pieces;
  if (IsBlank(text)) return pieces;
  const auto s = processor.Encode(ControlsToSpaces(text), &pieces);
  if (!s.ok()) return FromSentencePiece(s, what);
  return pieces;
}

}  // namespace

Result<std::vector<int32_t>> Tokenizer::EncodeSource(std::string_view text) const {
  HW_ASSIGN_OR_RETURN(const std::vector<std::string> pieces,
                      Pieces(*source_, text, "source encode"));
  std::vector<int32_t> ids;
  ids.reserve(pieces.size() + 1);
  for (const auto& p : pieces) {
    const auto it = piece_to_id_.find(p);
    ids.push_back(it == piece_to_id_.end() ? specials_.unk : it->second);
  }
  ids.push_back(specials_.eos);
  return ids;
}

Result<std::vector<int32_t>> Tokenizer::EncodeTarget(std::string_view text) const {
  HW_ASSIGN_OR_RETURN(const std::vector<std::string> pieces,
                      Pieces(*target_, text, "target encode"));
  std::vector<int32_t> ids;
  ids.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    const auto it = piece_to_id_.find(pieces[i]);
    if (it == piece_to_id_.end()) {
      return Status(ErrorCode::kTokenizer, "target piece " + std::to_string(i) + " \"" +
                                               pieces[i] + "\" is not in the vocabulary");
    }
    ids.push_back(it->second);
  }
  return ids;
}

Result<std::string> Tokenizer::DecodeTarget(const int32_t* ids, size_t size) const {
  if (ids == nullptr && size > 0) return InvalidArgument("DecodeTarget: ids is null");
  std::vector<std::string> pieces;
  pieces.reserve(size);
  for (size_t i = 0; i < size; ++i) {
    const int32_t id = ids[i];
    if (id < 0 || static_cast<size_t>(id) >= vocab_.size()) {
      return InvalidArgument("DecodeTarget: id " + std::to_string(id) + " at position " +
                             std::to_string(i) + " outside the vocabulary of " +
                             std::to_string(vocab_.size()) + " pieces");
    }
    if (id == specials_.pad || id == specials_.eos || id == specials_.unk) continue;
    pieces.push_back(vocab_[static_cast<size_t>(id)]);
  }
  std::string decoded;
  const auto s = target_->Decode(pieces, &decoded);
  if (!s.ok()) return FromSentencePiece(s, "target decode");
  // Pieces the target .spm does not know are returned verbatim, "▁" included (MarianTokenizer
  // then replaces "▁" by a space and strips; so do we).
  static constexpr std::string_view kMeta = "\xE2\x96\x81";  // U+2581
  std::string text;
  text.reserve(decoded.size());
  for (size_t i = 0; i < decoded.size();) {
    if (decoded.compare(i, kMeta.size(), kMeta) == 0) {
      text.push_back(' ');
      i += kMeta.size();
    } else {
      text.push_back(decoded[i++]);
    }
  }
  text = ReplaceInvalidUtf8(std::move(text));
  return std::string(TrimSpaces(text));
}

}  // namespace headwise
