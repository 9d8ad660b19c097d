// Writes the seed corpora committed under fuzz/corpus/<target>/ (small, valid or nearly valid
// inputs that start each fuzzer deep inside its parser). Rerun after a format change:
//   cmake --build build/f --target fuzz_make_seeds && build/f/fuzz/fuzz_make_seeds fuzz/corpus
// Deterministic: the same build writes the same bytes.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "converter/src/shortlist_reader.h"
#include "tests/api/test_model.h"
#include "tests/converter/checkpoint_fixture.h"
#include "tests/runtime/test_model.h"

namespace {

namespace fs = std::filesystem;
using namespace headwise;

void Write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
}

void Write(const fs::path& path, const std::vector<uint8_t>& bytes) {
  Write(path, std::string(bytes.begin(), bytes.end()));
}

// A SentencePiece model without a normalization table (identity), so it stays a few KB.
std::string SmallSpm(const std::string& dir, const std::string& language) {
  const std::string prefix = dir + "/" + language;
  {
    std::ofstream corpus(prefix + ".txt");
    for (const std::string& line : testing::Corpus(language)) corpus << line << '\n';
  }
  // Relative paths: the proto records its training arguments, and the seeds must not depend
  // on the temporary directory's name.
  const std::string cmd = "cd '" + dir + "' && " + HW_SPM_TRAIN + " --input=" + language +
                          ".txt --model_prefix=" + language +
                          " --vocab_size=64 --model_type=unigram --hard_vocab_limit=false"
                          " --normalization_rule_name=identity --character_coverage=1.0"
                          " --num_threads=1 --random_seed=1 >/dev/null 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
    std::fprintf(stderr, "spm_train failed: %s\n", cmd.c_str());
    std::exit(1);
  }
  return testing::ReadAll(prefix + ".model");
}

testing::ModelOptions Small() {
  testing::ModelOptions o;
  o.d_model = 8;
  o.encoder_layers = 1;
  o.decoder_layers = 1;
  o.heads = 2;
  o.encoder_ffn = 4;
  o.decoder_ffn = 4;
  o.vocab = 7;
  o.pad = 6;
  o.start = 6;
  o.max_positions = 8;
  o.kept = {{1}, {0, 1}, {}};
  return o;
}

void ModelSeeds(const fs::path& out) {
  Write(out / "small.hwm", testing::Serialize(testing::MakeSpec(Small())));

  testing::ModelOptions separate = Small();
  separate.share_embeddings = false;
  separate.tie_embeddings = false;
  separate.activation = Activation::kGelu;
  separate.scale_embedding = false;
  Write(out / "separate_embeddings.hwm", testing::Serialize(testing::MakeSpec(separate)));

  // Marian ids: </s> 0, <unk> 1, <pad> last (Small() says 6); the rest a few common pieces.
  testing::ScratchDir dir;
  ModelSpec spec = testing::MakeSpec(Small());
  spec.source_spm = SmallSpm(dir.path(), "en");
  spec.target_spm = SmallSpm(dir.path(), "de");
  spec.vocab = {"</s>", "<unk>", "\xE2\x96\x81" "the", "\xE2\x96\x81" "die", "e", "s", "<pad>"};
  Write(out / "tokenizer.hwm", testing::Serialize(spec));

  // A vocabulary shortlist (3 frequent ids, 2 per source id) on the small model.
  ModelSpec shortlist = testing::MakeSpec(Small());
  shortlist.shortlist = testing::MakeSyntheticShortlist(7, 3, 2, 1);
  Write(out / "shortlist.hwm", testing::Serialize(shortlist));
}

void CheckpointSeeds(const fs::path& out) {
  const testing::CheckpointFixture ckpt = testing::MakeCheckpoint();
  testing::ScratchDir dir;
  ckpt.Write(dir.path());
  for (const char* name : {"config.json", "model.safetensors", "vocab.json"}) {
    Write(out / name, testing::ReadAll(dir / name));
  }
  std::vector<testing::FixtureTensor> small = {
      {"a.weight", {2, 3}, {1, 2, 3, 4, 5, 6}, "F32"},
      {"b.bias", {3}, {0.5f, -1, 2}, "F16"},
      {"c.gate", {1, 2}, {0.25f, -8}, "BF16"},
      {"empty", {0, 4}, {}, "F32"}};
  Write(out / "small.safetensors", testing::SerializeSafetensors(small, {{"format", "pt"}}));
  Write(out / "vocab8.json",
        std::string(R"({"</s>": 0, "<unk>": 1, "a": 2, "b": 3, "c": 4, "d": 5, "e": 6, "<pad>": 7})"));
  // A shortlist file for vocab8.json's pieces (checkpoint_reader_fuzzer.cc parses it so).
  const std::vector<std::string> pieces = {"</s>", "<unk>", "a", "b", "c", "d", "e", "<pad>"};
  Write(out / "shortlist.tsv",
        "headwise-shortlist\t1\nvocab_size\t8\nvocab_sha256\t" +
            convert::ShortlistVocabHash(pieces) +
            "\ndescription\tseed\nfrequent\t2 3\nsource\t2\t4 5\nsource\t6\t6 2 3\n");
}

void TextSeeds(const fs::path& out) {
  const std::vector<std::pair<const char*, std::string>> texts = {
      {"plain.txt", "Open the file."},
      {"lines.txt", "Close the window and save the document.\n\nWhere is the train station?\n   \nRead."},
      {"german.txt", "Schlie\xC3\x9F" "e das Fenster und speichere das Dokument."},
      {"unicode.txt", "caf\xC3\xA9 \xE2\x82\xAC 42 \xF0\x9F\x98\x80 \xE3\x80\x80\xC2\xA0" "end"},
      {"controls.txt", std::string("Open\tthe\x01" "file.\x7F\r\n\x00x", 20)},
      {"invalid_utf8.txt", "ok\xC3\x28 bad \xED\xA0\x80 surrogate \xF4\x90\x80\x80"},
      {"specials.txt", "</s> <unk> <pad> \xE2\x96\x81 tokens as text"},
      {"long.txt", std::string(300, 'a') + " " + std::string(40, 'b')},
      {"empty.txt", ""}};
  for (const auto& [name, text] : texts) Write(out / name, text);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR   (writes CORPUS_DIR/<target>/...)\n", argv[0]);
    return 2;
  }
  const fs::path root(argv[1]);
  ModelSeeds(root / "model_loader");
  CheckpointSeeds(root / "checkpoint_reader");
  TextSeeds(root / "text_input");
  return 0;
}
