#include "e2e_reference.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace headwise_e2e {
namespace {

using nlohmann::json;

json ReadJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open (did the e2e_prepare fixture run?)");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": not valid JSON: " + e.what());
  }
}

RefHypothesis ParseHypothesis(const json& j) {
  RefHypothesis h;
  h.ids = j.at("ids").get<std::vector<int32_t>>();
  h.score = j.at("score").get<float>();
  h.finished = j.at("finished").get<bool>();
  return h;
}

RefSearch ParseSearch(const json& j) {
  RefSearch s;
  s.name = j.at("name").get<std::string>();
  const json& o = j.at("options");
  s.options.beam_size = o.at("beam_size").get<int>();
  s.options.num_hypotheses = o.at("num_hypotheses").get<int>();
  s.options.length_penalty = o.at("length_penalty").get<float>();
  s.options.max_length = o.at("max_length").get<int>();
  s.target_prefix = j.at("target_prefix").get<bool>();
  s.options.min_length = o.value("min_length", 0);
  s.options.sample = o.value("sample", false);
  s.options.seed = o.value("seed", uint64_t{0});
  s.options.top_k = o.value("top_k", 0);
  s.options.top_p = o.value("top_p", 1.0f);
  s.options.temperature = o.value("temperature", 1.0f);
  if (o.contains("beam_stop")) {
    const std::string stop = o.at("beam_stop").get<std::string>();
    if (stop == "exhaustive") {
      s.options.beam_stop = headwise::BeamStop::kExhaustive;
    } else if (stop == "top-eos") {
      s.options.beam_stop = headwise::BeamStop::kTopEos;
    } else if (stop == "outscored") {
      s.options.beam_stop = headwise::BeamStop::kOutscored;
    } else {
      throw std::runtime_error(s.name + ": unknown beam_stop " + stop);
    }
  }
  s.margins = j.at("margins").get<std::vector<float>>();
  for (const json& per_source : j.at("results")) {
    std::vector<RefHypothesis> hyps;
    for (const json& h : per_source) hyps.push_back(ParseHypothesis(h));
    s.results.push_back(std::move(hyps));
  }
  return s;
}

RefForced ParseForced(const json& j, int vocab_size) {
  RefForced f;
  f.source = j.at("source").get<std::vector<int32_t>>();
  f.target = j.at("target").get<std::vector<int32_t>>();
  const json& rows = j.at("logits");
  if (rows.size() != f.target.size() + 1) {
    throw std::runtime_error("forced logits: expected " + std::to_string(f.target.size() + 1) +
                             " rows, found " + std::to_string(rows.size()));
  }
  for (const json& row : rows) {
    if (row.size() != static_cast<size_t>(vocab_size)) {
      throw std::runtime_error("forced logits: expected rows of " + std::to_string(vocab_size) +
                               " values, found " + std::to_string(row.size()));
    }
    for (const json& x : row) f.logits.push_back(x.get<float>());
  }
  return f;
}

}  // namespace

std::string E2EDir() {
  const char* dir = std::getenv("HEADWISE_E2E_DIR");
  return dir ? std::string(dir) : std::string();
}

std::vector<std::string> CheckpointNames(const std::string& dir) {
  const std::string path = dir + "/ckpt/manifest.json";
  try {
    return ReadJson(path).at("checkpoints").get<std::vector<std::string>>();
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

Reference LoadReference(const std::string& path) {
  const json j = ReadJson(path);
  try {
    Reference r;
    if (j.at("format").get<int>() != 1) {
      throw std::runtime_error("expected format 1, found " + j.at("format").dump());
    }
    r.name = j.at("name").get<std::string>();
    r.vocab_size = j.at("vocab_size").get<int>();
    r.eos_token_id = j.at("eos_token_id").get<int>();
    r.pad_token_id = j.at("pad_token_id").get<int>();
    r.unk_token_id = j.at("unk_token_id").get<int>();
    r.layout = j.at("layout").get<std::map<std::string, std::vector<int>>>();
    const json& limits = j.at("limits");
    r.limits.max_batch = limits.at("max_batch").get<int>();
    r.limits.max_source_tokens = limits.at("max_source_tokens").get<int>();
    r.limits.max_target_tokens = limits.at("max_target_tokens").get<int>();
    r.limits.max_beam = limits.at("max_beam").get<int>();
    r.limits.num_threads = 1;
    r.sources = j.at("sources").get<std::vector<std::vector<int32_t>>>();
    r.prefixes = j.at("prefixes").get<std::vector<std::vector<int32_t>>>();
    if (r.prefixes.size() != r.sources.size()) {
      throw std::runtime_error(std::to_string(r.prefixes.size()) + " prefixes for " +
                               std::to_string(r.sources.size()) + " sources");
    }
    for (const char* key : {"searches", "shortlist_searches"}) {
      std::vector<RefSearch>& into = std::string(key) == "searches" ? r.searches
                                                                    : r.shortlist_searches;
      for (const json& s : j.at(key)) {
        into.push_back(ParseSearch(s));
        if (into.back().results.size() != r.sources.size() ||
            into.back().margins.size() != r.sources.size()) {
          throw std::runtime_error(std::string(key) + " " + into.back().name + ": " +
                                   std::to_string(into.back().results.size()) +
                                   " results for " + std::to_string(r.sources.size()) +
                                   " sources");
        }
      }
    }
    for (const json& f : j.at("forced")) r.forced.push_back(ParseForced(f, r.vocab_size));
    for (const json& t : j.at("tokenizer")) {
      RefTokenizerCase c;
      c.text = t.at("text").get<std::string>();
      c.source_ids = t.at("source_ids").get<std::vector<int32_t>>();
      c.target_ids = t.at("target_ids").get<std::vector<int32_t>>();
      c.target_text = t.at("target_text").get<std::string>();
      r.tokenizer.push_back(std::move(c));
    }
    return r;
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

std::string BlockName(headwise::AttentionKind kind, int layer) {
  std::ostringstream s;
  s << (kind == headwise::AttentionKind::kEncoderSelf ? "model.encoder.layers."
                                                      : "model.decoder.layers.")
    << layer << (kind == headwise::AttentionKind::kDecoderCross ? ".encoder_attn" : ".self_attn");
  return s.str();
}

}  // namespace headwise_e2e
