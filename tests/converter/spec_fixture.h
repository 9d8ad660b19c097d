// tests/converter/spec_fixture.h: a small valid ModelSpec with deterministic, distinct tensor
// values, for writer tests. Tests only.
#ifndef HEADWISE_TESTS_CONVERTER_SPEC_FIXTURE_H_
#define HEADWISE_TESTS_CONVERTER_SPEC_FIXTURE_H_

#include <cstdint>
#include <vector>

#include "format/model_writer.h"

namespace headwise::testing {

// d_model 8, 4 source heads per block (head_dim 2), 2 encoder + 1 decoder layers, vocab 10.
// `kept[i]` gives the kept heads of block i (canonical order); missing entries keep all heads.
ModelSpec MakeSpec(const std::vector<std::vector<uint32_t>>& kept = {});

// The value the fixture stores at flat index `i` of the tensor numbered `tensor_index` in
// ExpectedTensors order: distinct across tensors and indices, exactly representable.
float FixtureValue(size_t tensor_index, size_t i);

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_CONVERTER_SPEC_FIXTURE_H_
