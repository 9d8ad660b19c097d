#include "tests/converter/spec_fixture.h"

#include <string>

namespace headwise::testing {

ModelSpec MakeSpec(const std::vector<std::vector<uint32_t>>& kept) {
  SyntheticOptions o;
  o.d_model = 8;
  o.encoder_layers = 2;
  o.decoder_layers = 1;
  o.heads = 4;
  o.encoder_ffn = 16;
  o.decoder_ffn = 12;
  o.vocab = 10;
  o.max_positions = 32;
  o.activation = Activation::kRelu;
  o.pad = o.start = 9;
  o.eos = 0;
  o.unk = 1;
  o.kept = kept;
  o.gates = true;
  o.values = WeightValues::kFixture;
  ModelSpec spec = MakeSyntheticSpec(o);
  spec.source_spm = std::string("source-spm\0bytes", 16);
  spec.target_spm = "target-spm";
  for (uint32_t i = 0; i < o.vocab; ++i) spec.vocab.push_back("piece" + std::to_string(i));
  spec.source_checkpoint_sha256 = std::string(64, 'a');
  spec.source_checkpoint_name = "tiny";
  spec.keep_heads_spec = "";
  spec.source_dtype = "F32";
  return spec;
}

}  // namespace headwise::testing
