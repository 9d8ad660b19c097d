// runtime/src/model_verify.h: the semantic half of loading a model. Given a file image that
// passed VerifyModelFile (format/model_file.h), checks the config and the attention blocks with
// ValidateLayout, compares the tensor list with ExpectedTensors (every expected tensor present
// with its shape and a dtype this build executes, nothing unexpected or duplicated), checks the
// special ids and max_position_embeddings, checks the vocabulary shortlist when there is one
// (format/shortlist.h), and fills Model::Impl's config, info (the
// description too: model_describe.h) and weight views.
// The tokenizer is not touched here (model_load.cc creates it).
//
// Errors: kInvalidModel naming the tensor, block or config field and what was expected.
#ifndef HEADWISE_RUNTIME_MODEL_VERIFY_H_
#define HEADWISE_RUNTIME_MODEL_VERIFY_H_

#include "format/model_file.h"
#include "headwise/status.hpp"
#include "model_impl.h"

namespace headwise {

Status BindModel(const ModelFileView& file, Model::Impl* impl);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_MODEL_VERIFY_H_
