// converter/src/checkpoint_reader.h: reads a checkpoint directory in the Hugging Face MarianMT
// layout (issue 2): config.json, model.safetensors, vocab.json, source.spm, target.spm, all
// required. A directory with pytorch_model.bin instead of model.safetensors is refused with
// the command that converts it (headwise reads no pickle files).
//
// Nothing in the directory is modified. Errors: kInvalidCheckpoint naming the file and what
// was expected and found; kIoError for unreadable files.
//
// Ownership: Checkpoint owns the mapping of model.safetensors; `weights` points into it and is
// valid while the Checkpoint lives (moving a Checkpoint keeps the mapping).
#ifndef HEADWISE_CONVERTER_CHECKPOINT_READER_H_
#define HEADWISE_CONVERTER_CHECKPOINT_READER_H_

#include <string>

#include "common/mapped_file.h"
#include "converter/src/config_reader.h"
#include "converter/src/safetensors_reader.h"
#include "converter/src/vocab_reader.h"
#include "headwise/status.hpp"

namespace headwise::convert {

inline constexpr char kConfigFile[] = "config.json";
inline constexpr char kWeightsFile[] = "model.safetensors";
inline constexpr char kVocabFile[] = "vocab.json";
inline constexpr char kSourceSpmFile[] = "source.spm";
inline constexpr char kTargetSpmFile[] = "target.spm";
inline constexpr char kPytorchWeightsFile[] = "pytorch_model.bin";

struct Checkpoint {
  std::string directory;  // as given
  std::string name;       // the directory's last path component
  ModelConfig config;
  GateRule gate_rule = GateRule::kHard;  // config.json headwise_gate_rule
  Vocab vocab;
  std::string source_spm;
  std::string target_spm;
  MappedFile weights_file;
  SafetensorsContents weights;
  std::string weights_sha256;  // of model.safetensors, hex
};

Result<Checkpoint> ReadCheckpoint(const std::string& directory);

// The message for a directory that holds pytorch_model.bin but no model.safetensors.
std::string PytorchConversionHint(const std::string& directory);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_CHECKPOINT_READER_H_
