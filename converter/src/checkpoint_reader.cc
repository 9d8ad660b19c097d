#include "converter/src/checkpoint_reader.h"

#include <sys/stat.h>

#include "converter/src/sha256.h"

namespace headwise::convert {
namespace {

bool IsRegularFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string LastComponent(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Result<std::string> ReadRequired(const std::string& directory, const char* file,
                                 const char* what) {
  const std::string path = directory + "/" + file;
  if (!IsRegularFile(path)) {
    return InvalidCheckpoint(directory + ": missing " + file + " (" + what + ")");
  }
  return ReadFileToString(path);
}

}  // namespace

std::string PytorchConversionHint(const std::string& directory) {
  return directory + ": found " + kPytorchWeightsFile + " but no " + kWeightsFile +
         "; headwise-convert reads safetensors only (no Python pickle). Convert it once, from "
         "the headwise repository root, with Debian's python3-torch:\n"
         "  /usr/bin/python3 -c \"import sys, torch; sys.path.insert(0, 'trainer'); "
         "from headwise_trainer.model.safetensors_io import write_file; "
         "write_file(sys.argv[1] + '/model.safetensors', "
         "torch.load(sys.argv[1] + '/pytorch_model.bin', map_location='cpu'))\" '" +
         directory + "'";
}

Result<Checkpoint> ReadCheckpoint(const std::string& directory) {
  struct stat st {};
  if (::stat(directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return InvalidCheckpoint(directory + ": not a checkpoint directory (no such directory)");
  }
  Checkpoint c;
  c.directory = directory;
  c.name = LastComponent(directory);

  HW_ASSIGN_OR_RETURN(std::string config_text,
                      ReadRequired(directory, kConfigFile, "the Hugging Face MarianConfig"));
  HW_ASSIGN_OR_RETURN(c.config,
                      ParseMarianConfig(config_text, directory + "/" + kConfigFile));
  HW_ASSIGN_OR_RETURN(c.gate_rule,
                      ParseGateRuleKey(config_text, directory + "/" + kConfigFile));

  const std::string weights_path = directory + "/" + kWeightsFile;
  if (!IsRegularFile(weights_path)) {
    if (IsRegularFile(directory + "/" + kPytorchWeightsFile)) {
      return InvalidCheckpoint(PytorchConversionHint(directory));
    }
    return InvalidCheckpoint(directory + ": missing " + kWeightsFile + " (the weights)");
  }
  HW_ASSIGN_OR_RETURN(std::string vocab_text,
                      ReadRequired(directory, kVocabFile, "the piece -> id vocabulary"));
  HW_ASSIGN_OR_RETURN(c.vocab, ParseVocabJson(vocab_text, c.config.vocab_size,
                                              directory + "/" + kVocabFile));
  HW_ASSIGN_OR_RETURN(c.source_spm, ReadRequired(directory, kSourceSpmFile,
                                                 "the source SentencePiece model"));
  HW_ASSIGN_OR_RETURN(c.target_spm, ReadRequired(directory, kTargetSpmFile,
                                                 "the target SentencePiece model"));
  for (const auto& [file, blob] : {std::pair<const char*, const std::string*>{kSourceSpmFile, &c.source_spm},
                                   {kTargetSpmFile, &c.target_spm}}) {
    if (blob->empty()) return InvalidCheckpoint(directory + "/" + file + ": empty file");
  }

  HW_ASSIGN_OR_RETURN(c.weights_file, MappedFile::Open(weights_path));
  HW_ASSIGN_OR_RETURN(c.weights, ParseSafetensors(c.weights_file.data(), c.weights_file.size(),
                                                  weights_path));
  c.weights_sha256 = Sha256Hex(c.weights_file.data(), c.weights_file.size());
  return c;
}

}  // namespace headwise::convert
