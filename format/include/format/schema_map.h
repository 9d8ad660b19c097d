// format/schema_map.h: the one place that translates between the generated schema types
// (schema/headwise.fbs, headwise_generated.h) and the format library's own (model_types.h,
// model_config.h, model_layout.h). The writer (model_writer.cc) maps to the schema, the
// runtime's loader (runtime/src/model_verify.cc) and `headwise-convert inspect` map from it.
//
// Including this header needs headwise::schema (it includes the generated code); the
// libraries that read or write files link it PRIVATE, public headers never include it.
// Errors: kInvalidModel naming the block or field and the value found.
#ifndef HEADWISE_FORMAT_SCHEMA_MAP_H_
#define HEADWISE_FORMAT_SCHEMA_MAP_H_

#include <vector>

#include "format/model_config.h"
#include "format/model_layout.h"
#include "format/model_types.h"
#include "headwise/status.hpp"
#include "headwise_generated.h"

namespace headwise {

// Schema -> format. A value outside this build's enum is an error.
Result<DType> FromSchema(schema::DType t);
Result<Activation> FromSchema(schema::Activation a);
Result<AttentionKind> FromSchema(schema::AttentionKind k);

// Format -> schema.
schema::DType ToSchema(DType t);
schema::Activation ToSchema(Activation a);
schema::AttentionKind ToSchema(AttentionKind k);

// The file's config (every field, the activation checked). The layout rules are
// ValidateLayout's (model_layout.h); the runtime's own limits are its own.
Result<ModelConfig> ConfigFromSchema(const schema::ModelConfig& c);

// The file's attention blocks in file order (empty when the vector is absent; ValidateLayout
// then reports the count). Errors: a missing block, an unknown kind.
Result<std::vector<BlockLayout>> BlocksFromSchema(const schema::Model& m);

}  // namespace headwise

#endif  // HEADWISE_FORMAT_SCHEMA_MAP_H_
