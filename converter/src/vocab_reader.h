// converter/src/vocab_reader.h: reads an OPUS-MT vocab.json (an object piece -> model id).
//
// The ids must be exactly 0..vocab_size-1, each once, and a piece "<unk>" must exist (its id
// is the model's unk id). Errors (kInvalidCheckpoint) name `where`, the piece or id, and what
// was expected and found.
#ifndef HEADWISE_CONVERTER_VOCAB_READER_H_
#define HEADWISE_CONVERTER_VOCAB_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "headwise/status.hpp"

namespace headwise::convert {

struct Vocab {
  std::vector<std::string> pieces;  // pieces[id]
  int32_t unk_id = 0;
};

Result<Vocab> ParseVocabJson(std::string_view json_text, uint32_t vocab_size,
                             const std::string& where);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_VOCAB_READER_H_
