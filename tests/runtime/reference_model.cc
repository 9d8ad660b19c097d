#include "tests/runtime/reference_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace headwise::testing {

ReferenceModel::ReferenceModel(const ModelSpec& spec) : spec_(spec) {
  for (const TensorSpec& t : spec_.tensors) tensors_[t.name] = &t.data;
}

const std::vector<float>& ReferenceModel::W(const std::string& name) const {
  return *tensors_.at(name);
}

Matrix ReferenceModel::Positions(size_t n_pos, size_t dim) {
  // position_enc[pos, j] = pos / 10000^(2 * (j // 2) / dim) in float64; the first half of the
  // output is sin of the even columns, the second half cos of the odd ones, stored as float32.
  Matrix out(n_pos * dim);
  for (size_t pos = 0; pos < n_pos; ++pos) {
    std::vector<double> enc(dim);
    for (size_t j = 0; j < dim; ++j) {
      enc[j] = static_cast<double>(pos) /
               std::pow(10000.0, static_cast<double>(2 * (j / 2)) / static_cast<double>(dim));
    }
    size_t col = 0;
    for (size_t j = 0; j < dim; j += 2) out[pos * dim + col++] = static_cast<float>(std::sin(enc[j]));
    for (size_t j = 1; j < dim; j += 2) out[pos * dim + col++] = static_cast<float>(std::cos(enc[j]));
  }
  return out;
}

Matrix ReferenceModel::Embed(const std::string& table, const std::vector<int32_t>& ids) const {
  const size_t d = d_model();
  const double scale = spec_.config.scale_embedding ? std::sqrt(static_cast<double>(d)) : 1.0;
  const Matrix pos = Positions(ids.size(), d);
  const std::vector<float>& e = W(table);
  Matrix x(ids.size() * d);
  for (size_t r = 0; r < ids.size(); ++r) {
    for (size_t j = 0; j < d; ++j) {
      x[r * d + j] = e[static_cast<size_t>(ids[r]) * d + j] * scale + pos[r * d + j];
    }
  }
  return x;
}

Matrix ReferenceModel::Linear(const Matrix& x, size_t rows, const std::string& prefix) const {
  const std::vector<float>& w = W(prefix + ".weight");
  const std::vector<float>& b = W(prefix + ".bias");
  const size_t out = b.size(), in = w.size() / out;
  Matrix y(rows * out);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t o = 0; o < out; ++o) {
      double acc = b[o];
      for (size_t i = 0; i < in; ++i) acc += x[r * in + i] * w[o * in + i];
      y[r * out + o] = acc;
    }
  }
  return y;
}

Matrix ReferenceModel::Attention(const std::string& p, size_t heads, size_t hd, const Matrix& x,
                                 size_t q_rows, const Matrix& kv, size_t k_rows, bool causal) const {
  const size_t d = d_model();
  Matrix out(q_rows * d);
  if (heads == 0) {  // nothing left but the output bias
    const std::vector<float>& b = W(p + ".out_proj.bias");
    for (size_t r = 0; r < q_rows; ++r) std::copy(b.begin(), b.end(), out.begin() + static_cast<long>(r * d));
    return out;
  }
  const Matrix q = Linear(x, q_rows, p + ".q_proj");
  const Matrix k = Linear(kv, k_rows, p + ".k_proj");
  const Matrix v = Linear(kv, k_rows, p + ".v_proj");
  const size_t inner = heads * hd;
  const double scaling = std::pow(static_cast<double>(hd), -0.5);
  Matrix ctx(q_rows * inner, 0.0);
  for (size_t h = 0; h < heads; ++h) {
    for (size_t i = 0; i < q_rows; ++i) {
      const size_t keys = causal ? i + 1 : k_rows;
      std::vector<double> s(keys);
      double m = -std::numeric_limits<double>::infinity();
      for (size_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (size_t c = 0; c < hd; ++c) dot += q[i * inner + h * hd + c] * k[j * inner + h * hd + c];
        s[j] = dot * scaling;
        m = std::max(m, s[j]);
      }
      double sum = 0;
      for (double& e : s) sum += (e = std::exp(e - m));
      for (size_t j = 0; j < keys; ++j) {
        for (size_t c = 0; c < hd; ++c) ctx[i * inner + h * hd + c] += s[j] / sum * v[j * inner + h * hd + c];
      }
    }
  }
  return Linear(ctx, q_rows, p + ".out_proj");
}

void ReferenceModel::AddNorm(Matrix& x, const Matrix& y, size_t rows, const std::string& norm) const {
  const size_t d = d_model();
  const std::vector<float>& g = W(norm + ".weight");
  const std::vector<float>& b = W(norm + ".bias");
  for (size_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (size_t j = 0; j < d; ++j) mean += (x[r * d + j] += y[r * d + j]);
    mean /= static_cast<double>(d);
    for (size_t j = 0; j < d; ++j) var += (x[r * d + j] - mean) * (x[r * d + j] - mean);
    var /= static_cast<double>(d);
    const double inv = 1.0 / std::sqrt(var + spec_.config.layer_norm_eps);
    for (size_t j = 0; j < d; ++j) x[r * d + j] = (x[r * d + j] - mean) * inv * g[j] + b[j];
  }
}

Matrix ReferenceModel::FeedForward(const Matrix& x, size_t rows, const std::string& layer) const {
  Matrix h = Linear(x, rows, layer + "fc1");
  for (double& v : h) {
    switch (spec_.config.activation) {
      case Activation::kRelu: v = v > 0 ? v : 0; break;
      case Activation::kSwish: v = v / (1.0 + std::exp(-v)); break;
      case Activation::kGelu: v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); break;
    }
  }
  return Linear(h, rows, layer + "fc2");
}

Matrix ReferenceModel::EncoderLayer(size_t l, const Matrix& x_in, size_t len) const {
  const ModelSpec& s = spec_;
  const std::string p = "model.encoder.layers." + std::to_string(l) + ".";
  const BlockLayout& b = s.blocks[l];
  Matrix x = x_in;
  AddNorm(x, Attention(p + "self_attn", b.num_heads, b.head_dim, x, len, x, len, false), len,
          p + "self_attn_layer_norm");
  AddNorm(x, FeedForward(x, len, p), len, p + "final_layer_norm");
  return x;
}

Matrix ReferenceModel::Encode(const std::vector<int32_t>& source) const {
  const std::string table = spec_.config.share_encoder_decoder_embeddings
                                ? "model.shared.weight" : "model.encoder.embed_tokens.weight";
  Matrix x = Embed(table, source);
  for (size_t l = 0; l < spec_.config.encoder_layers; ++l) x = EncoderLayer(l, x, source.size());
  return x;
}

Matrix ReferenceModel::DecoderLogits(const Matrix& enc, size_t src_len,
                                     const std::vector<int32_t>& dec_in) const {
  const ModelSpec& s = spec_;
  const std::string table = s.config.share_encoder_decoder_embeddings
                                ? "model.shared.weight" : "model.decoder.embed_tokens.weight";
  const size_t n = dec_in.size();
  Matrix y = Embed(table, dec_in);
  const size_t L = s.config.encoder_layers, D = s.config.decoder_layers;
  for (size_t l = 0; l < D; ++l) {
    const std::string p = "model.decoder.layers." + std::to_string(l) + ".";
    const BlockLayout& self = s.blocks[L + l];
    const BlockLayout& cross = s.blocks[L + D + l];
    AddNorm(y, Attention(p + "self_attn", self.num_heads, self.head_dim, y, n, y, n, true), n,
            p + "self_attn_layer_norm");
    AddNorm(y, Attention(p + "encoder_attn", cross.num_heads, cross.head_dim, y, n, enc, src_len, false),
            n, p + "encoder_attn_layer_norm");
    AddNorm(y, FeedForward(y, n, p), n, p + "final_layer_norm");
  }
  const std::vector<float>& lm = W(s.config.tie_word_embeddings ? table : "lm_head.weight");
  const std::vector<float>& bias = W("final_logits_bias");
  const size_t V = vocab(), d = d_model();
  Matrix logits(n * V);
  for (size_t r = 0; r < n; ++r) {
    for (size_t v = 0; v < V; ++v) {
      double acc = bias[v];
      for (size_t j = 0; j < d; ++j) acc += y[r * d + j] * lm[v * d + j];
      logits[r * V + v] = acc;
    }
  }
  return logits;
}

namespace {

// log_softmax of the last row of the decoder output with PAD at -inf.
std::vector<double> NextLogProbs(const ReferenceModel& m, const Matrix& enc, size_t src_len,
                                 const std::vector<int32_t>& prefix,
                                 const std::vector<bool>& allowed) {
  const Matrix logits = m.DecoderLogits(enc, src_len, prefix);
  const size_t V = m.vocab();
  std::vector<double> row(logits.end() - static_cast<long>(V), logits.end());
  row[static_cast<size_t>(m.spec().config.pad_token_id)] = -std::numeric_limits<double>::infinity();
  for (size_t v = 0; v < V; ++v) {
    if (!allowed[v]) row[v] = -std::numeric_limits<double>::infinity();
  }
  const double mx = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (double x : row) sum += std::exp(x - mx);
  for (double& x : row) x = x - mx - std::log(sum);
  return row;
}

}  // namespace

namespace {

// headwise.hpp's uniform number, written out again from its words.
double ReferenceUniform(uint64_t seed, const std::vector<int32_t>& source, size_t step) {
  const auto mix = [](uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  uint64_t key = mix(seed);
  for (int32_t id : source) key = mix(key ^ static_cast<uint32_t>(id));
  return std::ldexp(static_cast<double>(mix(key + step) >> 11), -53);
}

}  // namespace

std::vector<ReferenceHypothesis> ReferenceSearch(const ReferenceModel& m,
                                                 const std::vector<int32_t>& source,
                                                 const SearchOptions& options, size_t max_length,
                                                 const std::vector<int32_t>* allowed_ids,
                                                 const std::vector<int32_t>* forced) {
  const double lp = options.length_penalty;
  const Matrix enc = m.Encode(source);
  const int32_t eos = m.spec().config.eos_token_id, start = m.spec().config.decoder_start_token_id;
  const size_t V = m.vocab();
  std::vector<bool> allowed(V, allowed_ids == nullptr);
  if (allowed_ids != nullptr) {
    for (int32_t id : *allowed_ids) allowed[static_cast<size_t>(id)] = true;
  }
  auto norm = [lp](double sum, size_t len) { return sum / std::pow(static_cast<double>(len), lp); };

  struct Beam {
    std::vector<int32_t> ids;
    double score;
  };
  std::vector<Beam> live = {{{}, 0.0}};
  std::vector<ReferenceHypothesis> finished;
  const size_t K = static_cast<size_t>(options.beam_size);
  const size_t n = static_cast<size_t>(options.num_hypotheses);
  for (size_t step = 0; step < max_length; ++step) {
    if (forced != nullptr && step < forced->size()) {  // a forced step: one live beam
      std::vector<int32_t> prefix = {start};
      prefix.insert(prefix.end(), live[0].ids.begin(), live[0].ids.end());
      const std::vector<double> logp = NextLogProbs(m, enc, source.size(), prefix, allowed);
      const int32_t tok = (*forced)[step];
      live[0].ids.push_back(tok);
      live[0].score += logp[static_cast<size_t>(tok)];
      continue;
    }
    struct Cand {
      double value;
      size_t index;
    };
    std::vector<Cand> cands;
    const bool eos_allowed = step >= static_cast<size_t>(options.min_length);
    for (size_t b = 0; b < live.size(); ++b) {
      std::vector<int32_t> prefix = {start};
      prefix.insert(prefix.end(), live[b].ids.begin(), live[b].ids.end());
      const std::vector<double> logp = NextLogProbs(m, enc, source.size(), prefix, allowed);
      for (size_t v = 0; v < V; ++v) {
        if (static_cast<int32_t>(v) == m.spec().config.pad_token_id || !allowed[v]) continue;
        if (!eos_allowed && static_cast<int32_t>(v) == eos) continue;
        cands.push_back({live[b].score + logp[v], b * V + v});
      }
    }
    std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
      return a.value > b.value || (a.value == b.value && a.index < b.index);
    });
    if (options.sample) {  // one beam: draw from cands (logp + a constant), headwise.hpp's steps
      std::vector<Cand> kept = cands;
      const bool ranked = options.top_k > 0 || options.top_p < 1.0f;
      if (!ranked) {
        std::sort(kept.begin(), kept.end(), [](const Cand& a, const Cand& b) { return a.index < b.index; });
      } else if (options.top_k > 0 && kept.size() > static_cast<size_t>(options.top_k)) {
        kept.resize(static_cast<size_t>(options.top_k));
      }
      std::vector<double> w;
      double total = 0;
      for (const Cand& c : kept) w.push_back(std::exp((c.value - cands[0].value) / options.temperature));
      if (options.top_k > 0) {
        for (double wi : w) total += wi;
      } else {  // every candidate, in ascending id order
        std::vector<Cand> by_id = cands;
        std::sort(by_id.begin(), by_id.end(), [](const Cand& a, const Cand& b) { return a.index < b.index; });
        for (const Cand& c : by_id) total += std::exp((c.value - cands[0].value) / options.temperature);
      }
      if (options.top_p < 1.0f) {
        double sum = 0;
        size_t keep = 0;
        while (keep < kept.size() && !(sum >= options.top_p * total)) sum += w[keep++];
        kept.resize(keep);
        total = sum;
      }
      const double target = ReferenceUniform(options.seed, source, step) * total;
      size_t pick = kept.size() - 1;
      double sum = 0;
      for (size_t i = 0; i < kept.size(); ++i) {
        sum += w[i];
        if (sum > target) {
          pick = i;
          break;
        }
      }
      cands = {kept[pick]};
    }
    if (K == 1) {  // greedy: argmax, lowest id on ties
      const Cand& c = cands[0];
      const int32_t tok = static_cast<int32_t>(c.index % V);
      if (tok == eos) return {{live[0].ids, norm(c.value, step + 1), true}};
      live[0].ids.push_back(tok);
      live[0].score = c.value;
      continue;
    }
    std::vector<Beam> next;
    for (size_t i = 0; i < std::min(cands.size(), 2 * K) && next.size() < K; ++i) {
      const size_t b = cands[i].index / V;
      const int32_t tok = static_cast<int32_t>(cands[i].index % V);
      if (tok == eos) {
        finished.push_back({live[b].ids, norm(cands[i].value, step + 1), true});
      } else {
        Beam nb = live[b];
        nb.ids.push_back(tok);
        nb.score = cands[i].value;
        next.push_back(nb);
      }
    }
    live = next;
    bool early = false;  // options.beam_stop's rule
    if (finished.size() >= n && !live.empty()) {
      if (options.beam_stop == BeamStop::kTopEos) {
        early = static_cast<int32_t>(cands[0].index % V) == eos;
      } else if (options.beam_stop == BeamStop::kOutscored) {
        std::vector<double> scores;
        for (const ReferenceHypothesis& h : finished) scores.push_back(h.score);
        std::sort(scores.begin(), scores.end(), std::greater<double>());
        early = scores[n - 1] >= norm(live[0].score, step + 1);
      }
    }
    if (finished.size() >= K || live.empty() || early) {
      live.clear();
      break;
    }
  }
  for (const Beam& b : live) finished.push_back({b.ids, norm(b.score, b.ids.size()), false});
  std::stable_sort(finished.begin(), finished.end(),
                   [](const ReferenceHypothesis& a, const ReferenceHypothesis& b) { return a.score > b.score; });
  return finished;
}

}  // namespace headwise::testing
