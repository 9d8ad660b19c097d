// Sentence boundaries (sentences.h): the rule of split_sentences in
// trainer/headwise_trainer/data/ui_text.py, a regular expression there, written out here as a
// scan over code points. Python's str methods decide some of its parts; the tables below are
// those of Python 3.11 (Unicode 14.0) for them.
#include "sentences.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "tokenizer.h"

namespace headwise {
namespace {

// schema/sentence_abbreviations.txt, as the build turned it into UTF-32 string literals.
constexpr const char32_t* kAbbreviations[] = {
#include "sentence_abbreviations.inc"
};

struct Range {
  char32_t lo, hi;
};

// Python's str.isspace() (and the `\s` of its regular expressions): exactly these.
bool IsSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

// Python's str.isdigit() (Unicode 14.0): decimal digits and the characters with a digit value
// (superscripts, circled digits). Printed by
//   [c for c in range(0x110000) if chr(c).isdigit()], as ranges.
constexpr Range kDigits[] = {
    {0x30, 0x39}, {0xB2, 0xB3}, {0xB9, 0xB9}, {0x660, 0x669}, {0x6F0, 0x6F9}, {0x7C0, 0x7C9},
    {0x966, 0x96F}, {0x9E6, 0x9EF}, {0xA66, 0xA6F}, {0xAE6, 0xAEF}, {0xB66, 0xB6F}, {0xBE6, 0xBEF},
    {0xC66, 0xC6F}, {0xCE6, 0xCEF}, {0xD66, 0xD6F}, {0xDE6, 0xDEF}, {0xE50, 0xE59}, {0xED0, 0xED9},
    {0xF20, 0xF29}, {0x1040, 0x1049}, {0x1090, 0x1099}, {0x1369, 0x1371}, {0x17E0, 0x17E9},
    {0x1810, 0x1819}, {0x1946, 0x194F}, {0x19D0, 0x19DA}, {0x1A80, 0x1A89}, {0x1A90, 0x1A99},
    {0x1B50, 0x1B59}, {0x1BB0, 0x1BB9}, {0x1C40, 0x1C49}, {0x1C50, 0x1C59}, {0x2070, 0x2070},
    {0x2074, 0x2079}, {0x2080, 0x2089}, {0x2460, 0x2468}, {0x2474, 0x247C}, {0x2488, 0x2490},
    {0x24EA, 0x24EA}, {0x24F5, 0x24FD}, {0x24FF, 0x24FF}, {0x2776, 0x277E}, {0x2780, 0x2788},
    {0x278A, 0x2792}, {0xA620, 0xA629}, {0xA8D0, 0xA8D9}, {0xA900, 0xA909}, {0xA9D0, 0xA9D9},
    {0xA9F0, 0xA9F9}, {0xAA50, 0xAA59}, {0xABF0, 0xABF9}, {0xFF10, 0xFF19}, {0x104A0, 0x104A9},
    {0x10A40, 0x10A43}, {0x10D30, 0x10D39}, {0x10E60, 0x10E68}, {0x11052, 0x1105A},
    {0x11066, 0x1106F}, {0x110F0, 0x110F9}, {0x11136, 0x1113F}, {0x111D0, 0x111D9},
    {0x112F0, 0x112F9}, {0x11450, 0x11459}, {0x114D0, 0x114D9}, {0x11650, 0x11659},
    {0x116C0, 0x116C9}, {0x11730, 0x11739}, {0x118E0, 0x118E9}, {0x11950, 0x11959},
    {0x11C50, 0x11C59}, {0x11D50, 0x11D59}, {0x11DA0, 0x11DA9}, {0x16A60, 0x16A69},
    {0x16AC0, 0x16AC9}, {0x16B50, 0x16B59}, {0x1D7CE, 0x1D7FF}, {0x1E140, 0x1E149},
    {0x1E2F0, 0x1E2F9}, {0x1E950, 0x1E959}, {0x1F100, 0x1F10A}, {0x1FBF0, 0x1FBF9},
};

bool IsDigit(char32_t c) {
  const Range* end = kDigits + sizeof(kDigits) / sizeof(kDigits[0]);
  const Range* r = std::upper_bound(kDigits, end, c,
                                    [](char32_t v, const Range& x) { return v < x.lo; });
  return r != kDigits && c <= (r - 1)->hi;
}

// . ! ? and U+2026 (…): what may end a sentence.
bool IsTerminator(char32_t c) { return c == '.' || c == '!' || c == '?' || c == 0x2026; }
// Closing quotes and brackets after the terminator: " ' » « “ ” ’ ) ].
bool IsCloser(char32_t c) {
  return c == '"' || c == '\'' || c == 0xBB || c == 0xAB || c == 0x201C || c == 0x201D ||
         c == 0x2019 || c == ')' || c == ']';
}
// Opening quotes and brackets before the next sentence: " ' „ “ « » ‚ ( [.
bool IsOpener(char32_t c) {
  return c == '"' || c == '\'' || c == 0x201E || c == 0x201C || c == 0xAB || c == 0xBB ||
         c == 0x201A || c == '(' || c == '[';
}
// What the next sentence starts with: A-Z, 0-9, U+00C0-U+00D6, U+00D8-U+00DE.
bool StartsSentence(char32_t c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (c >= 0xC0 && c <= 0xD6) ||
         (c >= 0xD8 && c <= 0xDE);
}
// Stripped from the front of the word before a period: ( " ' „ “ «.
bool IsWordOpener(char32_t c) {
  return c == '(' || c == '"' || c == '\'' || c == 0x201E || c == 0x201C || c == 0xAB;
}
// Appends Python's str.lower() of `c` for every character whose lower-case form can be part
// of an abbreviation (a-z, '.', U+00E0-U+00FE but U+00F7: the file's rule) or changes the
// word's length (U+0130 becomes two characters); others are kept, and such a word then
// matches no abbreviation, as in Python.
void AppendLower(char32_t c, std::u32string* out) {
  if ((c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7)) {
    out->push_back(c + 0x20);
  } else if (c == 0x212A) {  // KELVIN SIGN
    out->push_back('k');
  } else if (c == 0x212B) {  // ANGSTROM SIGN
    out->push_back(0xE5);
  } else if (c == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE
    out->push_back('i');
    out->push_back(0x307);
  } else {
    out->push_back(c);
  }
}

bool IsAbbreviation(const std::u32string& lowered) {
  for (const char32_t* a : kAbbreviations) {
    if (lowered == a) return true;
  }
  return false;
}

// Code points of valid UTF-8 and the byte offset of each (plus the text's size at the end).
void Decode(std::string_view text, std::u32string* cps, std::vector<size_t>* offsets) {
  for (size_t i = 0; i < text.size();) {
    char32_t c;
    const size_t n = DecodeCodePoint(text, i, &c);
    cps->push_back(c);
    offsets->push_back(i);
    i += n;
  }
  offsets->push_back(text.size());
}

// Whether the period at `dot` ends no sentence: the last word of [start, dot) (after
// whitespace), without opening quotes and parentheses, lower-cased, is at most one character
// long, ends with a digit, has a '.' among its last two characters, or is an abbreviation.
bool PeriodIsNoBoundary(const std::u32string& cps, size_t start, size_t dot) {
  size_t end = dot;
  while (end > start && IsSpace(cps[end - 1])) --end;
  size_t begin = end;
  while (begin > start && !IsSpace(cps[begin - 1])) --begin;
  while (begin < end && IsWordOpener(cps[begin])) ++begin;
  std::u32string word;
  for (size_t i = begin; i < end; ++i) AppendLower(cps[i], &word);
  const size_t len = word.size();
  if (len <= 1) return true;
  if (IsDigit(word[len - 1])) return true;
  if (word[len - 1] == '.' || word[len - 2] == '.') return true;
  return IsAbbreviation(word);
}

}  // namespace

std::vector<SentenceSpan> SplitValidUtf8Sentences(std::string_view text) {
  std::u32string cps;
  std::vector<size_t> at;
  Decode(text, &cps, &at);
  const size_t n = cps.size();
  std::vector<SentenceSpan> out;
  // [first, last) code points without surrounding whitespace, if any is left.
  const auto add = [&](size_t first, size_t last) {
    while (first < last && IsSpace(cps[first])) ++first;
    while (last > first && IsSpace(cps[last - 1])) --last;
    if (first < last) out.push_back(SentenceSpan{at[first], at[last]});
  };
  size_t start = 0;
  for (size_t i = 0; i < n;) {
    if (!IsTerminator(cps[i])) {
      ++i;
      continue;
    }
    // terminator, closers, then at least one space, then openers and a capital or digit
    size_t closed = i + 1;
    while (closed < n && IsCloser(cps[closed])) ++closed;
    size_t next = closed;
    while (next < n && IsSpace(cps[next])) ++next;
    size_t look = next;
    while (look < n && IsOpener(cps[look])) ++look;
    if (next == closed || look == n || !StartsSentence(cps[look])) {
      ++i;
      continue;
    }
    if (!(cps[i] == '.' && PeriodIsNoBoundary(cps, start, i))) {
      add(start, closed);
      start = next;
    }
    i = next;  // the next match starts after this one's whitespace, as re.finditer's does
  }
  add(start, n);
  return out;
}

Result<std::vector<SentenceSpan>> SplitSentences(const std::string& text) {
  const size_t bad = FindInvalidUtf8(text);
  if (bad != std::string::npos) return InvalidUtf8Error(text, bad);
  return SplitValidUtf8Sentences(text);
}

}  // namespace headwise
