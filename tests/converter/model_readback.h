// tests/converter/model_readback.h: reads a written .hwm back for assertions: verified with
// format/model_file.h (checksum included), tensors decoded to floats by name. Tests only.
#ifndef HEADWISE_TESTS_CONVERTER_MODEL_READBACK_H_
#define HEADWISE_TESTS_CONVERTER_MODEL_READBACK_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "headwise/status.hpp"

namespace headwise::testing {

struct ReadBackTensor {
  std::vector<uint32_t> shape;
  std::vector<float> values;  // decoded: F16 widened, I8 times its row scale
  int dtype = 0;              // schema::DType
  std::vector<float> scales;  // I8 row scales
};

struct ReadBackBlock {
  int kind = 0;
  uint32_t layer = 0;
  uint32_t num_heads = 0;
  std::vector<uint32_t> kept_heads;
  std::vector<float> gate_log_alpha;
};

struct ReadBackModel {
  std::map<std::string, ReadBackTensor> tensors;
  std::vector<ReadBackBlock> blocks;
  std::vector<std::string> vocab;
  std::string source_spm, target_spm;
  int32_t unk_token_id = -1;
  std::string keep_heads_spec, source_dtype, source_sha256, source_name, converter_version;
  std::string gate_rule;  // Provenance.gate_rule as stored ("" when absent)
};

Result<ReadBackModel> ReadBack(const std::string& path);

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_CONVERTER_MODEL_READBACK_H_
