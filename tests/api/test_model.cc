#include "tests/api/test_model.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "format/weight_format.h"

#ifndef HW_SPM_TRAIN
#error "HW_SPM_TRAIN (path of spm_train) must be defined by the build"
#endif

namespace headwise::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

const std::vector<std::string>& Corpus(const std::string& language) {
  static const std::vector<std::string> en = {
      "Open the file.",
      "Close the window and save the document.",
      "The cat sat on the mat.",
      "Where is the train station?",
      "I would like a cup of coffee, please.",
      "The weather is nice today.",
      "Read the manual before you start the machine.",
      "She writes a letter to her friend.",
      "We are going to the market tomorrow morning.",
      "This sentence is a little longer than the others in this small corpus.",
      "Numbers like 42 and 2024 appear in text too.",
      "Press the button to continue.",
      "The children play in the garden.",
      "My brother lives in a big city.",
      "Please translate this text into German.",
      "The book is on the table next to the lamp.",
      "It is late, and the shops are closed.",
      "Can you help me with my homework?",
      "The red car is faster than the blue one.",
      "Thank you very much for your help!",
  };
  static const std::vector<std::string> de = {
      "Öffne die Datei.",
      "Schließe das Fenster und speichere das Dokument.",
      "Die Katze saß auf der Matte.",
      "Wo ist der Bahnhof?",
      "Ich hätte gerne eine Tasse Kaffee, bitte.",
      "Das Wetter ist heute schön.",
      "Lies das Handbuch, bevor du die Maschine startest.",
      "Sie schreibt einen Brief an ihre Freundin.",
      "Wir gehen morgen früh auf den Markt.",
      "Dieser Satz ist etwas länger als die anderen in diesem kleinen Korpus.",
      "Zahlen wie 42 und 2024 kommen auch im Text vor.",
      "Drücke die Taste, um fortzufahren.",
      "Die Kinder spielen im Garten.",
      "Mein Bruder wohnt in einer großen Stadt.",
      "Bitte übersetze diesen Text ins Deutsche.",
      "Das Buch liegt auf dem Tisch neben der Lampe.",
      "Es ist spät, und die Geschäfte sind geschlossen.",
      "Kannst du mir bei meinen Hausaufgaben helfen?",
      "Das rote Auto ist schneller als das blaue.",
      "Vielen Dank für deine Hilfe!",
  };
  return language == "de" ? de : en;
}

Result<Spm> TrainSpm(const std::string& dir, const std::string& language, int vocab_size,
                     bool byte_fallback) {
  const std::string prefix = dir + "/" + language + (byte_fallback ? "_bytes" : "");
  const std::string corpus = prefix + ".txt";
  {
    std::ofstream out(corpus);
    for (const auto& line : Corpus(language)) out << line << '\n';
    if (!out) return IoError("cannot write " + corpus);
  }
  const std::string log = prefix + ".log";
  const std::string cmd = std::string("'") + HW_SPM_TRAIN + "' --input='" + corpus +
                          "' --model_prefix='" + prefix + "' --vocab_size=" +
                          std::to_string(vocab_size) +
                          " --model_type=unigram --character_coverage=1.0"
                          " --hard_vocab_limit=false --num_threads=1 --random_seed=1" +
                          (byte_fallback ? " --byte_fallback=true" : "") + " > '" + log +
                          "' 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
    return IoError("spm_train failed (" + cmd + "):\n" + ReadAll(log));
  }
  Spm spm;
  spm.proto = ReadAll(prefix + ".model");
  if (spm.proto.empty()) return IoError("spm_train wrote no " + prefix + ".model");
  std::ifstream vocab(prefix + ".vocab");
  std::string line;
  while (std::getline(vocab, line)) {
    const std::string piece = line.substr(0, line.find('\t'));
    if (piece == "<unk>" || piece == "<s>" || piece == "</s>") continue;
    spm.pieces.push_back(piece);
  }
  return spm;
}

std::vector<std::string> MarianVocab(const Spm& source, const Spm& target,
                                     const std::vector<std::string>& extra) {
  std::vector<std::string> vocab = {"</s>", "<unk>"};
  std::set<std::string> seen(vocab.begin(), vocab.end());
  for (const auto* list : {&source.pieces, &target.pieces, &extra}) {
    for (const auto& p : *list) {
      if (seen.insert(p).second) vocab.push_back(p);
    }
  }
  vocab.push_back("<pad>");
  return vocab;
}

ModelSpec RandomModelSpec(const Spm* source, const Spm* target, uint32_t seed,
                          uint32_t max_position_embeddings) {
  std::vector<std::string> vocab;
  if (source != nullptr && target != nullptr) vocab = MarianVocab(*source, *target);
  SyntheticOptions o;
  o.vocab = vocab.empty() ? 40 : static_cast<uint32_t>(vocab.size());
  o.max_positions = max_position_embeddings;
  o.activation = Activation::kRelu;
  o.eos = kEos;
  o.unk = kUnk;
  o.pad = o.start = static_cast<int32_t>(o.vocab - 1);
  // Canonical order: encoder self 0, 1; decoder self 0, 1; decoder cross 0, 1.
  o.kept = {{0, 2}, {0, 1, 2, 3}, {1}, {0, 3}, {}, {2, 3}};
  o.values = WeightValues::kNormal;
  o.seed = seed;
  o.eos_bias = 5.0f;
  ModelSpec spec = MakeSyntheticSpec(o);
  if (!vocab.empty()) {
    spec.source_spm = source->proto;
    spec.target_spm = target->proto;
    spec.vocab = std::move(vocab);
  }
  spec.source_checkpoint_sha256 = std::string(64, '0');
  spec.source_checkpoint_name = "tests/api random model";
  spec.source_dtype = "F32";
  return spec;
}

ScratchDir::ScratchDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/hw_api_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (const char* d = mkdtemp(buf.data())) path_ = d;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

Status WriteStandardModels(const std::string& dir) {
  HW_ASSIGN_OR_RETURN(const Spm en, TrainSpm(dir, "en", 120));
  HW_ASSIGN_OR_RETURN(const Spm de, TrainSpm(dir, "de", 120));
  AtomicWriteOptions overwrite;
  overwrite.overwrite = true;
  HW_RETURN_IF_ERROR(WriteModelFile(RandomModelSpec(&en, &de), dir + "/tiny.hwm", overwrite));
  // The same model with F16 weight matrices (the fp16 compute path: tests/platforms).
  ModelSpec fp16 = RandomModelSpec(&en, &de);
  ApplyWeightFormat(WeightFormat::kF16, &fp16);
  HW_RETURN_IF_ERROR(WriteModelFile(fp16, dir + "/tiny.fp16.hwm", overwrite));
  // And with I8 weight matrices (the int8 kernels: --verbose names the family, tests/platforms).
  ModelSpec int8 = RandomModelSpec(&en, &de);
  ApplyWeightFormat(WeightFormat::kI8, &int8);
  HW_RETURN_IF_ERROR(WriteModelFile(int8, dir + "/tiny.int8.hwm", overwrite));
  return WriteModelFile(RandomModelSpec(nullptr, nullptr), dir + "/no_tokenizer.hwm",
                        overwrite);
}

}  // namespace headwise::testing
