// Model::Load / LoadFromMemory: structural checks (format/model_file), semantic checks and
// weight binding (model_verify), then the tokenizer. Weights are never copied: the Impl keeps
// the mapping (or borrows the caller's buffer) and the views point into it. Of a mapped file
// nothing stays resident after Load (model_impl.h, "Residency").
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/file_layout.h"
#include "common/mapped_file.h"
#include "format/model_file.h"
#include "headwise/headwise.hpp"
#include "headwise_generated.h"
#include "model_impl.h"
#include "model_verify.h"
#include "tokenizer.h"

namespace headwise {
namespace {

std::string_view BytesOf(const flatbuffers::Vector<uint8_t>* v) {
  if (v == nullptr) return {};
  return {reinterpret_cast<const char*>(v->data()), v->size()};
}

Status CreateTokenizer(const schema::Model& m, Model::Impl* impl) {
  const schema::Tokenizer* t = m.tokenizer();
  const std::string_view src = t != nullptr ? BytesOf(t->source_spm()) : std::string_view();
  const std::string_view tgt = t != nullptr ? BytesOf(t->target_spm()) : std::string_view();
  const auto* vocab = t != nullptr ? t->vocab() : nullptr;
  const size_t vocab_size = vocab != nullptr ? vocab->size() : 0;
  if (src.empty() && tgt.empty() && vocab_size == 0) return Status::Ok();  // ids-only model
  if (src.empty() || tgt.empty() || vocab_size == 0) {
    return InvalidModel("tokenizer: source_spm (" + std::to_string(src.size()) +
                        " bytes), target_spm (" + std::to_string(tgt.size()) +
                        " bytes) and vocab (" + std::to_string(vocab_size) +
                        " pieces) must be all present or all empty");
  }
  if (vocab_size != static_cast<size_t>(impl->config.vocab_size)) {
    return InvalidModel("tokenizer: vocab has " + std::to_string(vocab_size) +
                        " pieces, config vocab_size is " + std::to_string(impl->config.vocab_size));
  }
  std::vector<std::string> pieces;
  pieces.reserve(vocab_size);
  for (flatbuffers::uoffset_t i = 0; i < vocab->size(); ++i) {
    const flatbuffers::String* s = vocab->Get(i);
    pieces.emplace_back(s != nullptr ? s->str() : std::string());
  }
  SpecialIds specials;
  specials.pad = impl->config.pad_token_id;
  specials.eos = impl->config.eos_token_id;
  specials.unk = impl->config.unk_token_id;
  HW_ASSIGN_OR_RETURN(impl->tokenizer, Tokenizer::Create(src, tgt, std::move(pieces), specials));
  return Status::Ok();
}

Status Populate(const uint8_t* bytes, size_t size, const LoadOptions& options, Model::Impl* impl) {
  // Each chunk the checksum has read leaves the resident set again (a mapped file only): the
  // weights come back when the Translators read or pack them, and nothing else needs them.
  const Model::Impl& pages = *impl;
  HW_ASSIGN_OR_RETURN(ModelFileView view,
                      VerifyModelFile(bytes, size, options.verify_checksum,
                                      [&pages](const uint8_t* chunk, size_t n) {
                                        pages.ReleasePages(chunk, n);
                                      }));
  impl->base = bytes;
  impl->size = size;
  HW_RETURN_IF_ERROR(BindModel(view, impl));
  impl->info.file_bytes = size;
  HW_RETURN_IF_ERROR(CreateTokenizer(*view.model, impl));
  impl->info.has_tokenizer = impl->tokenizer != nullptr;
  // The metadata (tokenizer models, vocabulary, descriptions) has been copied out; the few
  // pages still read (int8 row scales) come back on their own.
  impl->ReleasePages(bytes, static_cast<size_t>(view.data - bytes));
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<const Model>> Model::Load(const std::string& path,
                                                 const LoadOptions& options) {
  auto impl = std::make_unique<Impl>();
  HW_ASSIGN_OR_RETURN(impl->file, MappedFile::Open(path));
  const uint8_t* bytes = impl->file.data();
  const size_t size = impl->file.size();
  Status s = Populate(bytes, size, options, impl.get());
  if (!s.ok()) return s.WithContext(path);
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

Result<std::shared_ptr<const Model>> Model::LoadFromMemory(const void* data, size_t size,
                                                           const LoadOptions& options) {
  if (data == nullptr) return InvalidArgument("LoadFromMemory: data is null");
  if (reinterpret_cast<uintptr_t>(data) % kTensorAlignment != 0) {
    return InvalidArgument("LoadFromMemory: the buffer must be " +
                           std::to_string(kTensorAlignment) + "-byte aligned");
  }
  auto impl = std::make_unique<Impl>();
  HW_RETURN_IF_ERROR(Populate(static_cast<const uint8_t*>(data), size, options, impl.get()));
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

}  // namespace headwise
