#include "tests/converter/model_readback.h"

#include <cstring>

#include "common/mapped_file.h"
#include "common/model_file.h"
#include "headwise_generated.h"
#include "tests/converter/flatbuffer_access.h"

namespace headwise::testing {

Result<ReadBackModel> ReadBack(const std::string& path) {
  HW_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path));
  HW_ASSIGN_OR_RETURN(ModelFileView view, VerifyModelFile(file.data(), file.size(), true));
  const schema::Model& m = Deref(view.model, "root");
  ReadBackModel out;
  for (const schema::Tensor* t : Tables(m.tensors())) {
    if (t->dtype() != schema::DType::F32) return InvalidModel("converter wrote a non-F32 tensor");
    ReadBackTensor r;
    r.shape = Vec(t->shape());
    r.values.resize(t->size() / sizeof(float));
    if (t->size() > 0) std::memcpy(r.values.data(), view.data + t->offset(), t->size());
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
  return out;
}

}  // namespace headwise::testing
