// runtime/src/model_describe.h: the descriptive part of ModelInfo (headwise.hpp), read from a
// model that BindModel accepted: the gate values and per-head analysis of each attention block,
// the analysis source, the provenance, the format version and the weight format. Nothing here
// is needed to translate; it is what `headwise-convert inspect` shows, for API users.
//
// Errors: kInvalidModel when a block's gates or analysis do not have one entry per source head
// in source order (the same rules as `headwise-convert inspect`), naming the block.
#ifndef HEADWISE_RUNTIME_MODEL_DESCRIBE_H_
#define HEADWISE_RUNTIME_MODEL_DESCRIBE_H_

#include "headwise/headwise.hpp"
#include "headwise_generated.h"

namespace headwise {

// `info` already holds one AttentionBlockInfo per m.attention() entry, in the same order.
Status DescribeModel(const schema::Model& m, ModelInfo* info);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_MODEL_DESCRIBE_H_
