// runtime/src/model_describe.h: the descriptive part of ModelInfo (headwise.hpp), read from a
// model that BindModel accepted: the gate values and per-head analysis of each attention block,
// the analysis source, the provenance, the format version and the weight format. Nothing here
// is needed to translate; it is what `headwise-convert inspect` shows, for API users. The file
// is read through format/schema_map.h (NotesFromSchema, WeightFormatFromSchema), as inspect
// reads it.
//
// Errors: kInvalidModel when a block's gates or analysis do not have one entry per source head
// in source order (NotesFromSchema's rules, inspect's), naming the block.
#ifndef HEADWISE_RUNTIME_MODEL_DESCRIBE_H_
#define HEADWISE_RUNTIME_MODEL_DESCRIBE_H_

#include <vector>

#include "format/model_layout.h"
#include "headwise/headwise.hpp"
#include "headwise_generated.h"

namespace headwise {

// `blocks` are BlocksFromSchema(m)'s; `info` already holds one AttentionBlockInfo per block, in
// the same order.
Status DescribeModel(const schema::Model& m, const std::vector<BlockLayout>& blocks,
                     ModelInfo* info);

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_MODEL_DESCRIBE_H_
