#include "line_writer.h"

#include <utility>

#include <nlohmann/json.hpp>

namespace headwise::cli {
namespace {

// A decoded text may contain a line break if the vocabulary has one; one input line must stay
// one output line.
std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

void WriteJson(std::ostream& out, const LineResult& r) {
  nlohmann::ordered_json j;
  j["line"] = r.line;
  j["input"] = r.input;
  if (r.has_prefix) j["prefix"] = r.prefix;
  if (r.status.ok()) {
    j["translations"] = nlohmann::ordered_json::array();
    for (const auto& h : r.hypotheses) {
      j["translations"].push_back({{"text", h.text}, {"score", h.score}, {"finished", h.finished}});
    }
    nlohmann::ordered_json timing;
    if (r.split_sentences) {
      timing["batch_ms"] = nlohmann::ordered_json::array();
      timing["batch_lines"] = nlohmann::ordered_json::array();
      timing["batch"] = nlohmann::ordered_json::array();
      for (const LineResult::Batch& b : r.batches) {
        timing["batch_ms"].push_back(b.ms);
        timing["batch_lines"].push_back(b.lines);
        timing["batch"].push_back(b.number);
      }
    } else {
      const bool in_batch = !r.batches.empty();
      timing["batch_ms"] = in_batch ? r.batches[0].ms : 0.0;
      timing["batch_lines"] = in_batch ? r.batches[0].lines : 0;
      timing["batch"] = in_batch ? nlohmann::ordered_json(r.batches[0].number) : nlohmann::ordered_json();
    }
    timing["window_ms"] = r.window_ms;
    timing["window_lines"] = r.window_lines;
    timing["window"] = r.window;
    j["timing"] = std::move(timing);
  } else {
    j["error"] = {{"code", ErrorCodeName(r.status.code())}, {"message", r.status.message()}};
  }
  // Invalid UTF-8 in the echoed input (the very thing that failed the line) must not stop the
  // output: it is written as U+FFFD.
  out << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

}  // namespace

void WriteLine(std::ostream& out, const LineResult& r, bool json, int nbest) {
  if (json) {
    WriteJson(out, r);
  } else if (nbest <= 1) {
    out << (r.status.ok() && !r.hypotheses.empty() ? OneLine(r.hypotheses[0].text) : "") << '\n';
  } else if (r.status.ok()) {
    for (const auto& h : r.hypotheses) {
      out << (r.line - 1) << " ||| " << OneLine(h.text) << " ||| " << h.score << '\n';
    }
  }
}

}  // namespace headwise::cli
