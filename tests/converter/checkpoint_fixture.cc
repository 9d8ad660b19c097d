#include "tests/converter/checkpoint_fixture.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/half.h"

namespace headwise::testing {
namespace {

namespace fs = std::filesystem;

void Fail(const std::string& what) {
  std::fprintf(stderr, "checkpoint fixture: %s\n", what.c_str());
  std::abort();
}

void AppendLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::string Encode(const FixtureTensor& t) {
  std::string out;
  for (float v : t.values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    if (t.dtype == "F32") {
      AppendLe(out, bits, 4);
    } else if (t.dtype == "F16") {
      AppendLe(out, FloatToF16(v), 2);
    } else if (t.dtype == "BF16") {
      AppendLe(out, bits >> 16, 2);  // exact for the fixture's values
    } else {
      Fail("unknown dtype " + t.dtype);
    }
  }
  return out;
}

void Add(CheckpointFixture& f, const std::string& name, std::vector<uint64_t> shape) {
  size_t n = 1;
  for (uint64_t d : shape) n *= d;
  FixtureTensor t{name, std::move(shape), {}, "F32"};
  const size_t index = f.tensors.size();
  for (size_t i = 0; i < n; ++i) t.values.push_back(PatternValue(index, i));
  f.tensors.push_back(std::move(t));
}

void AddAttention(CheckpointFixture& f, const std::string& p, uint64_t d) {
  for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
    Add(f, p + "." + proj + ".weight", {d, d});
    Add(f, p + "." + proj + ".bias", {d});
  }
}

void AddNorm(CheckpointFixture& f, const std::string& name, uint64_t d) {
  Add(f, name + ".weight", {d});
  Add(f, name + ".bias", {d});
}

}  // namespace

float PatternValue(size_t t, size_t i) {
  return static_cast<float>(static_cast<int>((t * 31 + i * 7) % 255) - 127) / 8.0f;
}

FixtureTensor& CheckpointFixture::Get(const std::string& name) {
  for (FixtureTensor& t : tensors) {
    if (t.name == name) return t;
  }
  Fail("no tensor " + name);
  return tensors.front();
}

bool CheckpointFixture::Has(const std::string& name) const {
  for (const FixtureTensor& t : tensors) {
    if (t.name == name) return true;
  }
  return false;
}

void CheckpointFixture::Remove(const std::string& name) {
  for (auto it = tensors.begin(); it != tensors.end(); ++it) {
    if (it->name == name) {
      tensors.erase(it);
      return;
    }
  }
  Fail("no tensor " + name + " to remove");
}

void CheckpointFixture::SetGate(const std::string& block, const std::vector<float>& log_alpha) {
  const std::string name = block + ".head_gate.log_alpha";
  if (Has(name)) Remove(name);
  tensors.push_back({name, {log_alpha.size()}, log_alpha, "F32"});
}

void CheckpointFixture::SetDType(const std::string& dtype) {
  for (FixtureTensor& t : tensors) {
    const bool gate = t.name.find(".head_gate.") != std::string::npos;
    if (!gate) t.dtype = dtype;
  }
}

std::string SerializeSafetensors(const std::vector<FixtureTensor>& tensors,
                                 const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string data;
  for (const FixtureTensor& t : tensors) {
    const std::string bytes = Encode(t);
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {data.size(), data.size() + bytes.size()}}};
    data += bytes;
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';
  std::string out;
  AppendLe(out, text.size(), 8);
  return out + text + data;
}

std::vector<float> ReferenceSinusoids(uint32_t positions, uint32_t dim) {
  std::vector<float> out(static_cast<size_t>(positions) * dim);
  for (uint32_t p = 0; p < positions; ++p) {
    std::vector<double> enc(dim);
    for (uint32_t j = 0; j < dim; ++j) enc[j] = p / std::pow(10000.0, 2.0 * (j / 2) / dim);
    for (uint32_t j = 0; j < dim / 2; ++j) {
      out[p * dim + j] = static_cast<float>(std::sin(enc[2 * j]));
      out[p * dim + dim / 2 + j] = static_cast<float>(std::cos(enc[2 * j + 1]));
    }
  }
  return out;
}

CheckpointFixture MakeCheckpoint(const FixtureOptions& o) {
  CheckpointFixture f;
  const uint64_t d = 8, vocab = 12;
  f.config = {{"model_type", "marian"},
              {"architectures", {"MarianMTModel"}},
              {"d_model", d},
              {"encoder_layers", 2},
              {"decoder_layers", 2},
              {"encoder_attention_heads", 4},
              {"decoder_attention_heads", 4},
              {"encoder_ffn_dim", 16},
              {"decoder_ffn_dim", 12},
              {"activation_function", o.activation},
              {"vocab_size", vocab},
              {"decoder_vocab_size", vocab},
              {"max_position_embeddings", 16},
              {"pad_token_id", 11},
              {"eos_token_id", 0},
              {"decoder_start_token_id", 11},
              {"scale_embedding", true},
              {"share_encoder_decoder_embeddings", o.share_embeddings},
              {"tie_word_embeddings", o.tie_embeddings},
              {"normalize_before", false},
              {"dropout", 0.1}};
  if (o.share_embeddings) {
    Add(f, "model.shared.weight", {vocab, d});
  } else {
    Add(f, "model.encoder.embed_tokens.weight", {vocab, d});
    Add(f, "model.decoder.embed_tokens.weight", {vocab, d});
  }
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.encoder.layers." + std::to_string(l) + ".";
    AddAttention(f, p + "self_attn", d);
    AddNorm(f, p + "self_attn_layer_norm", d);
    Add(f, p + "fc1.weight", {16, d});
    Add(f, p + "fc1.bias", {16});
    Add(f, p + "fc2.weight", {d, 16});
    Add(f, p + "fc2.bias", {d});
    AddNorm(f, p + "final_layer_norm", d);
  }
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.decoder.layers." + std::to_string(l) + ".";
    AddAttention(f, p + "self_attn", d);
    AddNorm(f, p + "self_attn_layer_norm", d);
    AddAttention(f, p + "encoder_attn", d);
    AddNorm(f, p + "encoder_attn_layer_norm", d);
    Add(f, p + "fc1.weight", {12, d});
    Add(f, p + "fc1.bias", {12});
    Add(f, p + "fc2.weight", {d, 12});
    Add(f, p + "fc2.bias", {d});
    AddNorm(f, p + "final_layer_norm", d);
  }
  if (!o.tie_embeddings) Add(f, "lm_head.weight", {vocab, d});
  Add(f, "final_logits_bias", {1, vocab});
  if (o.with_duplicates) {
    if (o.share_embeddings) {
      const FixtureTensor shared = f.Get("model.shared.weight");
      f.tensors.push_back({"model.encoder.embed_tokens.weight", shared.shape, shared.values, "F32"});
      f.tensors.push_back({"model.decoder.embed_tokens.weight", shared.shape, shared.values, "F32"});
    }
    if (o.tie_embeddings) {
      const FixtureTensor& dec = f.Get(o.share_embeddings ? "model.shared.weight"
                                                          : "model.decoder.embed_tokens.weight");
      f.tensors.push_back({"lm_head.weight", dec.shape, dec.values, "F32"});
    }
    for (const char* name : {"model.encoder.embed_positions.weight",
                             "model.decoder.embed_positions.weight"}) {
      f.tensors.push_back({name, {16, d}, ReferenceSinusoids(16, d), "F32"});
    }
  }
  f.vocab = {{"</s>", 0}, {"<unk>", 1}};
  for (int i = 2; i < 11; ++i) f.vocab["\xe2\x96\x81w" + std::to_string(i)] = i;
  f.vocab["<pad>"] = 11;
  return f;
}

void CheckpointFixture::Write(const std::string& dir) const {
  std::error_code ec;
  fs::create_directories(dir, ec);
  WriteAll(dir + "/config.json", config.dump(2));
  WriteAll(dir + "/model.safetensors", SerializeSafetensors(tensors, metadata));
  WriteAll(dir + "/vocab.json", vocab.dump(2));
  WriteAll(dir + "/source.spm", source_spm);
  WriteAll(dir + "/target.spm", target_spm);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) Fail("cannot write " + path);
}

std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), dir, ec).string();
    files[rel] = it->is_regular_file() ? ReadAll(it->path().string()) : std::string("<dir>");
  }
  return files;
}

}  // namespace headwise::testing
