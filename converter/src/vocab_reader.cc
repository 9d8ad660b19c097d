#include "converter/src/vocab_reader.h"

#include "converter/src/json_util.h"

namespace headwise::convert {

Result<Vocab> ParseVocabJson(std::string_view json_text, uint32_t vocab_size,
                             const std::string& where) {
  HW_ASSIGN_OR_RETURN(nlohmann::json root, ParseJsonStrict(json_text, where));
  if (!root.is_object()) {
    return InvalidCheckpoint(where + ": expected a JSON object piece -> id, found " +
                             JsonTypeName(root));
  }
  if (root.size() != vocab_size) {
    return InvalidCheckpoint(where + ": expected " + std::to_string(vocab_size) +
                             " pieces (config vocab_size), found " + std::to_string(root.size()));
  }
  Vocab vocab;
  vocab.pieces.resize(vocab_size);
  std::vector<bool> seen(vocab_size, false);
  for (const auto& [piece, id_value] : root.items()) {
    int64_t id = 0;
    if (!JsonToInt(id_value, 0, static_cast<int64_t>(vocab_size) - 1, &id)) {
      return InvalidCheckpoint(where + ": piece '" + piece + "': expected an id in [0, " +
                               std::to_string(vocab_size) + "), found " + id_value.dump());
    }
    const auto i = static_cast<size_t>(id);
    if (seen[i]) {
      return InvalidCheckpoint(where + ": id " + std::to_string(id) + " is given to both '" +
                               vocab.pieces[i] + "' and '" + piece + "'");
    }
    seen[i] = true;
    vocab.pieces[i] = piece;
  }
  // vocab_size distinct ids in [0, vocab_size): every id is covered.
  if (!root.contains("<unk>")) {
    return InvalidCheckpoint(where + ": expected a piece \"<unk>\" (the unknown-piece id), "
                             "found none");
  }
  vocab.unk_id = static_cast<int32_t>(root["<unk>"].get<int64_t>());
  return vocab;
}

}  // namespace headwise::convert
