#include "network.h"

#include <algorithm>
#include <string>
#include <utility>

namespace headwise {
namespace {

FcParams ClampFor(Activation a) {
  FcParams p;
  if (a == Activation::kRelu) p.output_min = 0.0f;
  return p;
}

// The fused [q | k | v] projection and out_proj of a self-attention block with heads.
Status CreateSelfAttention(const AttentionWeights& a, const FcParams& params,
                           const std::string& name, FullyConnected* qkv, FullyConnected* out) {
  if (a.num_heads == 0) return Status::Ok();
  const FcPart parts[] = {{a.q_w, a.q_b}, {a.k_w, a.k_b}, {a.v_w, a.v_b}};
  HW_ASSIGN_OR_RETURN(*qkv, FullyConnected::Create(parts, 3, params, name + "self-attention qkv"));
  const FcPart o{a.out_w, a.out_b};
  HW_ASSIGN_OR_RETURN(*out, FullyConnected::Create(&o, 1, params, name + "self-attention out_proj"));
  return Status::Ok();
}

Status CreateFeedForward(const FfnWeights& w, const FcParams& fc1_params,
                         const FcParams& fc2_params, const std::string& name, FullyConnected* fc1,
                         FullyConnected* fc2) {
  const FcPart p1{w.fc1_w, w.fc1_b}, p2{w.fc2_w, w.fc2_b};
  HW_ASSIGN_OR_RETURN(*fc1, FullyConnected::Create(&p1, 1, fc1_params, name + "fc1"));
  HW_ASSIGN_OR_RETURN(*fc2, FullyConnected::Create(&p2, 1, fc2_params, name + "fc2"));
  return Status::Ok();
}

}  // namespace

std::string KernelPaths(const Network& net) {
  std::vector<const FullyConnected*> ops;
  for (const EncoderLayerOps& e : net.encoder) ops.insert(ops.end(), {&e.qkv, &e.out, &e.fc1, &e.fc2});
  for (const DecoderLayerOps& d : net.decoder) {
    ops.insert(ops.end(), {&d.self_qkv, &d.self_out, &d.cross_q, &d.cross_kv, &d.cross_out, &d.fc1, &d.fc2});
  }
  ops.push_back(&net.lm_head);
  struct Path {
    std::string name;
    bool one_row = false, more_rows = false;
  };
  std::vector<Path> paths;
  const auto note = [&paths](const std::string& name, bool one_row) {
    auto it = std::find_if(paths.begin(), paths.end(), [&](const Path& p) { return p.name == name; });
    if (it == paths.end()) it = paths.insert(paths.end(), Path{name});
    (one_row ? it->one_row : it->more_rows) = true;
  };
  for (const FullyConnected* op : ops) {
    if (!op->valid()) continue;  // a block without heads
    note(op->KernelName(2), false);
    note(op->KernelName(1), true);
  }
  std::string out;
  for (const Path& p : paths) {
    if (!out.empty()) out += ", ";
    out += p.name;
    if (!p.more_rows) out += " (1 row)";
    if (!p.one_row) out += " (2+ rows)";
  }
  return out;
}

bool HoldsWeightCopies(const Network& net) {
  bool copies = net.lm_head.HoldsWeightCopy();
  for (const EncoderLayerOps& l : net.encoder) {
    for (const FullyConnected* fc : {&l.qkv, &l.out, &l.fc1, &l.fc2}) {
      copies = copies || fc->HoldsWeightCopy();
    }
  }
  for (const DecoderLayerOps& l : net.decoder) {
    for (const FullyConnected* fc : {&l.self_qkv, &l.self_out, &l.cross_q, &l.cross_kv,
                                     &l.cross_out, &l.fc1, &l.fc2}) {
      copies = copies || fc->HoldsWeightCopy();
    }
  }
  return copies;
}

Status CreateNetwork(const Model::Impl& m, int num_threads, const Int8Scratch* int8,
                     const F16Scratch* f16, Network* net) {
  net->model = &m;
  HW_ASSIGN_OR_RETURN(net->pool, ThreadPool::Create(num_threads));
  FcParams plain;
  plain.int8_scratch = int8;
  plain.f16_scratch = f16;
  plain.weight_pages = &m.file;  // empty (releases nothing) for a model loaded from memory
  FcParams ffn1 = ClampFor(m.config.activation);
  ffn1.int8_scratch = plain.int8_scratch;
  ffn1.f16_scratch = plain.f16_scratch;
  ffn1.weight_pages = plain.weight_pages;
  // lm_head first: where operators pack their weights, the largest matrix (often the tied
  // embedding table) is copied while nothing else is packed yet, so its source and its copy
  // are resident together only beside the layers' unpacked (released) weights.
  // int8 matrices are packed where this CPU packs them (int8_packed_store.h), lm_head too: the
  // embedding lookups of a table tied to it and the shortlist's gather read the packed rows.
  plain.int8_packed = &m.int8_packed;
  ffn1.int8_packed = &m.int8_packed;
  const FcPart lm{m.lm_head, m.final_logits_bias};
  HW_ASSIGN_OR_RETURN(net->lm_head, FullyConnected::Create(&lm, 1, plain, "lm_head"));
  if (m.encoder_embed.dtype == DType::kI8) net->encoder_embed_packed = m.int8_packed.Find(m.encoder_embed.i8());
  if (m.decoder_embed.dtype == DType::kI8) net->decoder_embed_packed = m.int8_packed.Find(m.decoder_embed.i8());
  for (size_t l = 0; l < m.encoder_layers.size(); ++l) {
    const EncoderLayerWeights& w = m.encoder_layers[l];
    const std::string name = "encoder layer " + std::to_string(l) + " ";
    EncoderLayerOps ops;
    HW_RETURN_IF_ERROR(CreateSelfAttention(w.self_attn, plain, name, &ops.qkv, &ops.out));
    HW_RETURN_IF_ERROR(CreateFeedForward(w.ffn, ffn1, plain, name, &ops.fc1, &ops.fc2));
    net->encoder.push_back(std::move(ops));
  }
  for (size_t l = 0; l < m.decoder_layers.size(); ++l) {
    const DecoderLayerWeights& w = m.decoder_layers[l];
    const std::string name = "decoder layer " + std::to_string(l) + " ";
    DecoderLayerOps ops;
    HW_RETURN_IF_ERROR(CreateSelfAttention(w.self_attn, plain, name, &ops.self_qkv, &ops.self_out));
    const AttentionWeights& c = w.cross_attn;
    if (c.num_heads > 0) {
      const FcPart q{c.q_w, c.q_b};
      HW_ASSIGN_OR_RETURN(ops.cross_q, FullyConnected::Create(&q, 1, plain, name + "cross-attention q_proj"));
      const FcPart kv[] = {{c.k_w, c.k_b}, {c.v_w, c.v_b}};
      HW_ASSIGN_OR_RETURN(ops.cross_kv, FullyConnected::Create(kv, 2, plain, name + "cross-attention kv"));
      const FcPart out{c.out_w, c.out_b};
      HW_ASSIGN_OR_RETURN(ops.cross_out, FullyConnected::Create(&out, 1, plain, name + "cross-attention out_proj"));
    }
    HW_RETURN_IF_ERROR(CreateFeedForward(w.ffn, ffn1, plain, name, &ops.fc1, &ops.fc2));
    net->decoder.push_back(std::move(ops));
  }
  return Status::Ok();
}

}  // namespace headwise
