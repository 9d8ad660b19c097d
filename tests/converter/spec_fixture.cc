#include "tests/converter/spec_fixture.h"

#include <string>

namespace headwise::testing {

float FixtureValue(size_t tensor_index, size_t i) {
  return static_cast<float>(tensor_index) * 1000.0f + static_cast<float>(i) * 0.5f;
}

ModelSpec MakeSpec(const std::vector<std::vector<uint32_t>>& kept) {
  ModelSpec spec;
  ModelConfig& c = spec.config;
  c.d_model = 8;
  c.encoder_layers = 2;
  c.decoder_layers = 1;
  c.encoder_attention_heads = 4;
  c.decoder_attention_heads = 4;
  c.encoder_ffn_dim = 16;
  c.decoder_ffn_dim = 12;
  c.vocab_size = 10;
  spec.config.activation = Activation::kRelu;
  spec.config.max_position_embeddings = 32;
  spec.config.pad_token_id = 9;
  spec.config.eos_token_id = 0;
  spec.config.decoder_start_token_id = 9;
  spec.config.unk_token_id = 1;
  spec.config.scale_embedding = true;

  size_t index = 0;
  for (AttentionKind kind : {AttentionKind::kEncoderSelf, AttentionKind::kDecoderSelf, AttentionKind::kDecoderCross}) {
    const uint32_t layers = kind == AttentionKind::kEncoderSelf ? c.encoder_layers : c.decoder_layers;
    for (uint32_t l = 0; l < layers; ++l, ++index) {
      BlockLayout b;
      b.kind = kind;
      b.layer = l;
      b.head_dim = 2;
      b.original_num_heads = 4;
      b.kept_heads = index < kept.size() ? kept[index] : std::vector<uint32_t>{0, 1, 2, 3};
      b.num_heads = static_cast<uint32_t>(b.kept_heads.size());
      spec.blocks.push_back(b);
      spec.gate_log_alpha.push_back({1.5f, -2.0f, 0.25f, static_cast<float>(index)});
    }
  }
  const std::vector<ExpectedTensor> expected = ExpectedTensors(spec.config, spec.blocks);
  for (size_t t = 0; t < expected.size(); ++t) {
    TensorSpec ts{expected[t].name, expected[t].shape, {}};
    size_t n = 1;
    for (uint32_t d : ts.shape) n *= d;
    for (size_t i = 0; i < n; ++i) ts.data.push_back(FixtureValue(t, i));
    spec.tensors.push_back(std::move(ts));
  }
  spec.source_spm = std::string("source-spm\0bytes", 16);
  spec.target_spm = "target-spm";
  for (uint32_t i = 0; i < c.vocab_size; ++i) spec.vocab.push_back("piece" + std::to_string(i));
  spec.source_checkpoint_sha256 = std::string(64, 'a');
  spec.source_checkpoint_name = "tiny";
  spec.keep_heads_spec = "";
  spec.source_dtype = "F32";
  return spec;
}

}  // namespace headwise::testing
