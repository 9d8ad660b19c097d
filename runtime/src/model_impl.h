// runtime/src/model_impl.h: the runtime-private state of a loaded headwise::Model.
//
// Built once by Model::Load / LoadFromMemory (model_load.cc) after the file passed the
// structural (common/model_file.h) and semantic (common/model_layout.h) checks; immutable
// afterwards, so any number of Translators on any number of threads may read it at once.
//
// Ownership: `file` owns the mapping when the model was loaded from a path (empty for
// LoadFromMemory, where the caller's buffer must outlive the Model). Every WeightView points
// into that memory. `tokenizer` owns its SentencePiece processors.
#ifndef HEADWISE_RUNTIME_MODEL_IMPL_H_
#define HEADWISE_RUNTIME_MODEL_IMPL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/mapped_file.h"
#include "headwise/headwise.hpp"
#include "tokenizer.h"
#include "weights.h"

namespace headwise {

enum class ActivationKind : uint8_t { kRelu = 0, kSwish = 1, kGelu = 2 };

// The config values the math needs, widened to the types the kernels use.
struct ModelDims {
  int d_model = 0;
  int encoder_layers = 0;
  int decoder_layers = 0;
  int encoder_ffn_dim = 0;
  int decoder_ffn_dim = 0;
  int vocab_size = 0;
  int max_position_embeddings = 0;
  int32_t pad_id = 0;
  int32_t eos_id = 0;
  int32_t unk_id = 0;
  int32_t decoder_start_id = 0;
  ActivationKind activation = ActivationKind::kSwish;
  bool scale_embedding = false;
  float layer_norm_eps = 1e-5f;
};

struct Model::Impl {
  MappedFile file;              // owns the bytes when loaded from a path
  const uint8_t* base = nullptr;  // start of the file image
  size_t size = 0;

  ModelDims dims;
  ModelInfo info;

  // Embedding matrices [vocab, d_model]; encoder and decoder alias when shared.
  WeightView encoder_embed;
  WeightView decoder_embed;
  // Output projection [vocab, d_model] (the decoder embedding when tied) and its bias [vocab].
  WeightView lm_head;
  WeightView final_logits_bias;

  std::vector<EncoderLayerWeights> encoder_layers;
  std::vector<DecoderLayerWeights> decoder_layers;

  // Null when the file carries no tokenizer (source_spm, target_spm and vocab all empty).
  std::unique_ptr<Tokenizer> tokenizer;
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_MODEL_IMPL_H_
