#include "tests/converter/model_readback.h"

#include <cstring>

#include "common/half.h"
#include "common/mapped_file.h"
#include "format/model_file.h"
#include "headwise_generated.h"
#include "tests/converter/flatbuffer_access.h"

namespace headwise::testing {

Result<ReadBackModel> ReadBack(const std::string& path) {
  HW_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path));
  HW_ASSIGN_OR_RETURN(ModelFileView view, VerifyModelFile(file.data(), file.size(), true));
  const schema::Model& m = Deref(view.model, "root");
  ReadBackModel out;
  for (const schema::Tensor* t : Tables(m.tensors())) {
    ReadBackTensor r;
    r.shape = Vec(t->shape());
    r.dtype = static_cast<int>(t->dtype());
    const uint8_t* bytes = view.data + t->offset();
    switch (t->dtype()) {
      case schema::DType::F32:
        r.values.resize(t->size() / sizeof(float));
        if (t->size() > 0) std::memcpy(r.values.data(), bytes, t->size());
        break;
      case schema::DType::F16:
        r.values.resize(t->size() / sizeof(uint16_t));
        for (size_t i = 0; i < r.values.size(); ++i) {
          uint16_t h;
          std::memcpy(&h, bytes + i * sizeof h, sizeof h);
          r.values[i] = F16ToFloat(h);
        }
        break;
      case schema::DType::I8: {
        const schema::Quantization* q = t->quantization();
        if (q == nullptr || r.shape.size() != 2) return InvalidModel("I8 tensor without row scales");
        r.scales = Vec(q->scale());
        if (r.scales.size() != r.shape[0]) return InvalidModel("I8 tensor: scale count != rows");
        r.values.resize(t->size());
        const size_t cols = r.shape[1];
        for (size_t i = 0; i < r.values.size(); ++i) {
          r.values[i] = static_cast<float>(static_cast<int8_t>(bytes[i])) * r.scales[i / cols];
        }
        break;
      }
    }
    out.tensors[Str(t->name())] = std::move(r);
  }
  for (const schema::AttentionBlock* a : Tables(m.attention())) {
    out.blocks.push_back({static_cast<int>(a->kind()), a->layer(), a->num_heads(),
                          Vec(a->kept_heads()), Vec(a->gate_log_alpha())});
  }
  const schema::Tokenizer& tok = Deref(m.tokenizer(), "tokenizer");
  for (const flatbuffers::String* s : Tables(tok.vocab())) out.vocab.push_back(Str(s));
  out.source_spm = Bytes(tok.source_spm());
  out.target_spm = Bytes(tok.target_spm());
  out.unk_token_id = Deref(m.config(), "config").unk_token_id();
  const schema::Provenance& p = Deref(m.provenance(), "provenance");
  out.keep_heads_spec = Str(p.keep_heads_spec());
  out.source_dtype = Str(p.source_dtype());
  out.source_sha256 = Str(p.source_checkpoint_sha256());
  out.source_name = Str(p.source_checkpoint_name());
  out.converter_version = Str(p.converter_version());
  out.gate_rule = Str(p.gate_rule());
  return out;
}

}  // namespace headwise::testing
