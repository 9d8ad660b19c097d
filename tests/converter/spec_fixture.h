// tests/converter/spec_fixture.h: the writer tests' preset of the shared synthetic-model
// builder (tests/support/synthetic_model.h): a small valid ModelSpec with deterministic,
// distinct tensor values (WeightValues::kFixture), gates, a tokenizer and provenance. Tests only.
#ifndef HEADWISE_TESTS_CONVERTER_SPEC_FIXTURE_H_
#define HEADWISE_TESTS_CONVERTER_SPEC_FIXTURE_H_

#include <cstdint>
#include <vector>

#include "format/model_ir.h"
#include "tests/support/synthetic_model.h"

namespace headwise::testing {

// d_model 8, 4 source heads per block (head_dim 2), 2 encoder + 1 decoder layers, vocab 10.
// `kept[i]` gives the kept heads of block i (canonical order); missing entries keep all heads.
// Tensor values: FixtureValue (tests/support/synthetic_model.h).
ModelSpec MakeSpec(const std::vector<std::vector<uint32_t>>& kept = {});

}  // namespace headwise::testing

#endif  // HEADWISE_TESTS_CONVERTER_SPEC_FIXTURE_H_
