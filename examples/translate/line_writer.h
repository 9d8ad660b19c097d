// examples/translate/line_writer.h: prints the result of one input line, as plain text or JSON,
// so that output stays aligned with input whether the line succeeded or failed.
#ifndef HEADWISE_EXAMPLES_TRANSLATE_LINE_WRITER_H_
#define HEADWISE_EXAMPLES_TRANSLATE_LINE_WRITER_H_

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "headwise/headwise.hpp"

namespace headwise::cli {

struct LineResult {
  size_t line = 0;  // 1-based position in the input
  std::string input;
  bool has_prefix = false;  // --prefix / --prefix-file: `prefix` is the line's (JSON "prefix")
  std::string prefix;
  Status status;    // OK: `hypotheses` holds the translations
  std::vector<TextHypothesis> hypotheses;
  // The model batches that translated the line (none for a blank line; one, or with
  // --split-sentences one per batch its sentences ran in): each one's number over the whole
  // run, the wall time of its encoder and search, and its lines (sentences).
  struct Batch {
    size_t number = 0;
    double ms = 0.0;
    size_t lines = 0;
  };
  std::vector<Batch> batches;
  bool split_sentences = false;  // JSON: the batch fields as arrays (--split-sentences)
  // The window the line was read in: its number, the wall time of the library call that
  // translated it (tokenizing, every batch, decoding) and its input lines.
  size_t window = 0;
  double window_ms = 0.0;
  size_t window_lines = 0;
};

// Plain, nbest == 1: the best text on one line ("" when failed).
// Plain, nbest > 1: "INDEX ||| TEXT ||| SCORE" per hypothesis, INDEX = line - 1; none when failed.
// JSON: one object per line (see --help). Newlines inside texts never break the alignment.
void WriteLine(std::ostream& out, const LineResult& r, bool json, int nbest);

}  // namespace headwise::cli

#endif  // HEADWISE_EXAMPLES_TRANSLATE_LINE_WRITER_H_
