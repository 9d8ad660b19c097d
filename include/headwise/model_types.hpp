// headwise/model_types.hpp: the names of a model's parts that every layer shares: the C++ API
// (headwise.hpp includes this header), the runtime, the converter and the .hwm format library.
#ifndef HEADWISE_MODEL_TYPES_HPP_
#define HEADWISE_MODEL_TYPES_HPP_

namespace headwise {

// Kind of an attention block. The values are those of schema AttentionKind.
enum class AttentionKind { kEncoderSelf = 0, kDecoderSelf = 1, kDecoderCross = 2 };

}  // namespace headwise

#endif  // HEADWISE_MODEL_TYPES_HPP_
