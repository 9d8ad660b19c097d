// headwise-translate as scripts see it: exit codes, output aligned with input (also for failing
// lines), --json, --nbest, and streaming (a batch is printed before stdin ends).
// Runs the built binary on the models the api.make_test_model fixture writes.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "headwise/headwise.hpp"

namespace {

const std::string kBin = HW_TRANSLATE_BIN;
const std::string kModel = std::string(HW_API_MODEL_DIR) + "/tiny.hwm";
const std::string kNoTokenizer = std::string(HW_API_MODEL_DIR) + "/no_tokenizer.hwm";

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) lines.push_back(line);
  return lines;
}

// Runs headwise-translate with `args` and `input` on stdin (through files: no pipe deadlocks).
CliRun Translate(const std::vector<std::string>& args, const std::string& input = "") {
  char dir_template[] = "/tmp/hw_cli_XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string in_path = dir + "/in", out_path = dir + "/out", err_path = dir + "/err";
  std::ofstream(in_path, std::ios::binary) << input;
  const pid_t pid = fork();
  if (pid == 0) {
    const int in = open(in_path.c_str(), O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(kBin.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(kBin.c_str(), argv.data());
    _exit(127);
  }
  CliRun r;
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(out_path);
  r.err = Slurp(err_path);
  std::remove(in_path.c_str());
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  rmdir(dir.c_str());
  return r;
}

// The translation the library gives for one line (greedy, the CLI's default limits).
std::string LibraryTranslation(const std::string& line) {
  auto model = headwise::Model::Load(kModel);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return "<load failed>";
  auto t = headwise::Translator::Create(*model, headwise::TranslatorLimits{});
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return "<create failed>";
  auto out = (*t)->Translate({line}, headwise::SearchOptions{});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? (*out)[0][0].text : "<translate failed>";
}

TEST(Cli, HelpAndVersionExitZero) {
  const CliRun help = Translate({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("Usage: headwise-translate -m MODEL.hwm"), std::string::npos);
  EXPECT_NE(help.out.find("Exit status"), std::string::npos);
  const CliRun version = Translate({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out, std::string("headwise-translate ") + headwise::Version() + "\n");
}

// --verbose names the precision and why; tiny.fp16.hwm is tiny.hwm's weights in F16. Here the
// f16 path is whatever this CPU allows (the qemu CPU-model runs in tests/platforms insist).
TEST(Cli, VerboseNamesThePrecision) {
  const CliRun f32 = Translate({"-m", kModel, "--verbose", "Open the file."});
  EXPECT_EQ(f32.code, 0) << f32.err;
  EXPECT_NE(f32.err.find("headwise-translate: precision f32: the model's weights are F32"),
            std::string::npos)
      << f32.err;
  const std::string fp16_model = std::string(HW_API_MODEL_DIR) + "/tiny.fp16.hwm";
  const CliRun off = Translate({"-m", fp16_model, "--verbose", "--fp16", "off", "Open the file."});
  EXPECT_EQ(off.code, 0) << off.err;
  EXPECT_NE(off.err.find("precision f32: fp16_compute is off"), std::string::npos) << off.err;
  const CliRun req = Translate({"-m", fp16_model, "--verbose", "--fp16=require", "Open the file."});
  if (req.code == 0) {
    EXPECT_NE(req.err.find("precision f16:"), std::string::npos) << req.err;
  } else {
    EXPECT_EQ(req.code, 3) << req.err;
    EXPECT_NE(req.err.find("BACKEND"), std::string::npos) << req.err;
    EXPECT_NE(req.err.find("no fp16 arithmetic here"), std::string::npos) << req.err;
  }
}

// --verbose also names the kernel each weight format runs: the same line as
// Translator::kernel_paths() for the same model on this CPU (the qemu CPU-model runs in
// tests/platforms insist on the family, e.g. "kernels int8: neon-dotprod" on a Cortex-A76).
TEST(Cli, VerboseNamesTheKernels) {
  for (const char* name : {"/tiny.hwm", "/tiny.int8.hwm"}) {
    const std::string model = std::string(HW_API_MODEL_DIR) + name;
    auto loaded = headwise::Model::Load(model);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    headwise::TranslatorLimits limits;
    auto tr = headwise::Translator::Create(*loaded, limits);
    ASSERT_TRUE(tr.ok()) << tr.status().ToString();
    const std::string want = "headwise-translate: kernels " + (*tr)->kernel_paths() + "\n";
    EXPECT_NE((*tr)->kernel_paths().find(std::string(name) == "/tiny.hwm" ? "fp32: " : "int8: "),
              std::string::npos)
        << (*tr)->kernel_paths();
    const CliRun run = Translate({"-m", model, "--verbose", "Open the file."});
    EXPECT_EQ(run.code, 0) << run.err;
    EXPECT_NE(run.err.find(want), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("headwise-translate: batch lanes 1\n"), std::string::npos) << run.err;
  }
  // int8 reads its weights in place everywhere: two threads give two lanes by default.
  const CliRun lanes = Translate({"-m", std::string(HW_API_MODEL_DIR) + "/tiny.int8.hwm",
                                  "--verbose", "--threads", "2", "Open the file."});
  EXPECT_EQ(lanes.code, 0) << lanes.err;
  EXPECT_NE(lanes.err.find("headwise-translate: batch lanes 2\n"), std::string::npos) << lanes.err;
}

TEST(Cli, UsageErrorsExitTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {"-m", kModel, "--frobnicate"},
      {"-m", kModel, "--beam", "0"},
      {"-m", kModel, "--beam", "two"},
      {"-m", kModel, "--beam"},
      {"-m", kModel, "--beam=3x"},
      {"-m", kModel, "--beam", "2", "--nbest", "3"},
      {"-m", kModel, "--length-penalty", "nan"},
      {"-m", kModel, "--beam-stop", "early"},
      {"-m", kModel, "--threads", "-1"},
      {"-m", kModel, "--batch", "99999999999"},
      {"-m", kModel, "--batch-tokens", "-1"},
      {"-m", kModel, "--window", "0"},
      {"-m", kModel, "--fp16", "on"},
      {"-m", kModel, "--batch-lanes", "-1"},
      {"-m", kModel, "--threads", "2", "--batch-lanes", "3", "hello"},  // more lanes than threads
      {"-m", kModel, "--fp16", "require", "hello"},  // an F32 model: nothing to require
      {"-m", kModel, "--beam", "2", "--nbest", "2", "--split-sentences"},
      {"-m", kModel, "--prefix", "a", "--prefix-file", "/dev/null", "hello"},
      {"-m", kModel, "--prefix", "a", "--split-sentences", "hello"},
      {"-m", kModel, "--prefix-file", "/nonexistent/prefixes.txt", "hello"},
      {"-m", kModel, "--min-len", "-1"},
      {"-m", kModel, "--min-len", "8", "--max-len", "8", "hello"},
      {"-m", kModel, "--min-len", "100000", "hello"},  // over the default maximum length
      {"-m", kModel, "--temperature", "0.5", "hello"},  // without --sample
      {"-m", kModel, "--seed", "3", "hello"},
      {"-m", kModel, "--sample", "--beam", "2", "hello"},
      {"-m", kModel, "--sample", "--top-k", "-1", "hello"},
      {"-m", kModel, "--sample", "--top-p", "0", "hello"},
      {"-m", kModel, "--sample", "--top-p", "1.5", "hello"},
      {"-m", kModel, "--sample", "--temperature", "0", "hello"},
      {"-m", kModel, "--sample", "--seed", "-1", "hello"},
      {"-m", kModel, "--sample", "--seed", "18446744073709551616", "hello"},  // 2^64
      {"hello"},  // no model
  };
  for (const auto& args : bad) {
    const CliRun r = Translate(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.code, 2) << joined << "\n" << r.err;
    EXPECT_NE(r.err.find("headwise-translate: "), std::string::npos) << joined;
    EXPECT_TRUE(r.out.empty()) << joined;
  }
  // A limit the model cannot serve: more target positions than it has.
  const CliRun too_long = Translate({"-m", kModel, "--max-len", "100000", "hello"});
  EXPECT_EQ(too_long.code, 2) << too_long.err;
}

TEST(Cli, ModelThatCannotBeLoadedExitsThree) {
  const CliRun missing = Translate({"-m", "/nonexistent/model.hwm", "hello"});
  EXPECT_EQ(missing.code, 3);
  EXPECT_NE(missing.err.find("/nonexistent/model.hwm"), std::string::npos) << missing.err;

  char path[] = "/tmp/hw_cli_corrupt_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string junk(4096, '\x5a');
  ASSERT_EQ(write(fd, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
  close(fd);
  const CliRun corrupt = Translate({"-m", path, "hello"});
  std::remove(path);
  EXPECT_EQ(corrupt.code, 3) << corrupt.err;

  const CliRun no_tokenizer = Translate({"-m", kNoTokenizer, "hello"});
  EXPECT_EQ(no_tokenizer.code, 3);
  EXPECT_NE(no_tokenizer.err.find("model has no tokenizer"), std::string::npos) << no_tokenizer.err;
}

TEST(Cli, TranslatesArgumentsAndStdinAlike) {
  const CliRun args = Translate({"-m", kModel, "Open the file.", "", "Read."});
  ASSERT_EQ(args.code, 0) << args.err;
  const CliRun stdin_run = Translate({"-m", kModel, "--no-verify"}, "Open the file.\n\nRead.\n");
  ASSERT_EQ(stdin_run.code, 0) << stdin_run.err;
  EXPECT_EQ(args.out, stdin_run.out);
  const std::vector<std::string> lines = Lines(args.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], LibraryTranslation("Open the file."));
  EXPECT_EQ(lines[1], "");
  EXPECT_EQ(lines[2], LibraryTranslation("Read."));
  // Text that looks like a flag goes after "--".
  const CliRun dashed = Translate({"-m", kModel, "--", "--beam"});
  EXPECT_EQ(dashed.code, 0) << dashed.err;
  EXPECT_EQ(Lines(dashed.out).size(), 1u);
}

TEST(Cli, FailingLinesExitOneAndKeepOutputAligned) {
  std::string words;
  for (int i = 0; i < 300; ++i) words += "cat ";
  const std::string input = "Open the file.\n"
                            "caf\xC3\x28\n"
                            "\n" +
                            words + "\n" +
                            "Read.\r\n";  // CRLF
  const CliRun r = Translate({"-m", kModel, "--batch", "2"}, input);
  EXPECT_EQ(r.code, 1) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  EXPECT_EQ(lines[0], LibraryTranslation("Open the file."));
  EXPECT_EQ(lines[1], "");
  EXPECT_EQ(lines[2], "");
  EXPECT_EQ(lines[3], "");
  EXPECT_EQ(lines[4], LibraryTranslation("Read."));
  EXPECT_NE(r.err.find("headwise-translate: line 2: INVALID_UTF8: invalid UTF-8 at byte offset 3"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("headwise-translate: line 4: INPUT_TOO_LONG: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("source tokens (EOS included) exceed --max-input-len 256"), std::string::npos)
      << r.err;
  EXPECT_EQ(Lines(r.err).size(), 2u) << r.err;
}

TEST(Cli, JsonGivesOneObjectPerLine) {
  const std::string input = "\xEF\xBB\xBFOpen the file.\n\xFF\n   \nThe cat sat on the mat.\n";
  const CliRun r = Translate({"-m", kModel, "--json", "--beam", "3", "--nbest", "2"}, input);
  EXPECT_EQ(r.code, 1) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  std::vector<nlohmann::json> objects;
  for (const auto& line : lines) {
    objects.push_back(nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false));
    ASSERT_FALSE(objects.back().is_discarded()) << line;
  }
  for (size_t i = 0; i < objects.size(); ++i) EXPECT_EQ(objects[i]["line"], i + 1);
  EXPECT_EQ(objects[0]["input"], "Open the file.");  // byte order mark removed
  ASSERT_EQ(objects[0]["translations"].size(), 2u);
  EXPECT_TRUE(objects[0]["translations"][0]["text"].is_string());
  EXPECT_TRUE(objects[0]["translations"][0]["score"].is_number());
  EXPECT_GE(objects[0]["translations"][0]["score"].get<double>(),
            objects[0]["translations"][1]["score"].get<double>());
  EXPECT_TRUE(objects[0]["translations"][0]["finished"].is_boolean());
  EXPECT_GE(objects[0]["timing"]["batch_ms"].get<double>(), 0.0);
  // Lines 1 and 4 shared a model batch; the blank line 3 ran none; all four lines were one
  // window (one library call).
  EXPECT_EQ(objects[0]["timing"]["batch_lines"], 2);
  EXPECT_EQ(objects[0]["timing"]["batch"], 0);
  EXPECT_EQ(objects[3]["timing"]["batch"], 0);
  EXPECT_EQ(objects[3]["timing"]["batch_ms"], objects[0]["timing"]["batch_ms"]);
  EXPECT_TRUE(objects[2]["timing"]["batch"].is_null());
  EXPECT_EQ(objects[2]["timing"]["batch_lines"], 0);
  EXPECT_EQ(objects[2]["timing"]["batch_ms"], 0.0);
  for (size_t i : {size_t{0}, size_t{2}, size_t{3}}) {
    EXPECT_EQ(objects[i]["timing"]["window"], 0);
    EXPECT_EQ(objects[i]["timing"]["window_lines"], 4);
    EXPECT_GE(objects[i]["timing"]["window_ms"].get<double>(),
              objects[0]["timing"]["batch_ms"].get<double>());
  }

  EXPECT_EQ(objects[1]["input"], "\xEF\xBF\xBD");  // the invalid byte, replaced for JSON
  EXPECT_EQ(objects[1]["error"]["code"], "INVALID_UTF8");
  EXPECT_FALSE(objects[1].contains("translations"));

  ASSERT_EQ(objects[2]["translations"].size(), 1u);
  EXPECT_EQ(objects[2]["translations"][0]["text"], "");
  EXPECT_EQ(objects[3]["translations"].size(), 2u);
}

TEST(Cli, NBestRowsCarryTheInputIndex) {
  const CliRun r = Translate({"-m", kModel, "--beam", "3", "--nbest", "3"}, "Open the file.\n\xC3\nRead.\n");
  EXPECT_EQ(r.code, 1) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 6u) << r.out;  // 3 + none for the failed line + 3
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(lines[i].rfind("0 ||| ", 0), 0u) << lines[i];
  for (size_t i = 3; i < 6; ++i) EXPECT_EQ(lines[i].rfind("2 ||| ", 0), 0u) << lines[i];
}

TEST(Cli, BatchSizeDoesNotChangeTheOutput) {
  std::string input;
  for (const char* s : {"Open the file.", "Where is the train station?", "", "Read.",
                        "The children play in the garden.", "Press the button to continue.",
                        "It is late, and the shops are closed."}) {
    input += std::string(s) + "\n";
  }
  const CliRun one = Translate({"-m", kModel, "--batch", "1"}, input);
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(Lines(one.out).size(), 7u);
  // Sorted windows smaller and larger than the input, line and token budgets, threads.
  const std::vector<std::vector<std::string>> variants = {
      {"--batch", "3", "--threads", "2"},
      {"--batch", "3", "--threads", "2", "--spin-workers"},
      {"--batch", "3", "--threads", "2", "--batch-lanes", "1"},
      {"--batch", "4", "--threads", "3", "--batch-lanes", "0"},
      {"--batch", "64"},
      {"--batch", "3", "--window", "4"},
      {"--batch", "4", "--batch-tokens", "16"},
      {"--batch", "2", "--window", "1"},
  };
  for (const auto& v : variants) {
    std::vector<std::string> args = {"-m", kModel};
    args.insert(args.end(), v.begin(), v.end());
    const CliRun r = Translate(args, input);
    ASSERT_EQ(r.code, 0) << v[1] << " " << r.err;
    EXPECT_EQ(r.out, one.out) << v[0] << " " << v[1];
  }
}

// --json timing adds up per batch and per window: the lines that name a batch number are as
// many as its batch_lines and share its batch_ms; windows hold --window input lines; a window's
// wall time covers its batches.
TEST(Cli, JsonTimingSumsPerBatchAndWindow) {
  std::string input;
  for (const char* s : {"Open the file.", "Where is the train station?", "", "Read.",
                        "The children play in the garden.", "Press the button to continue.",
                        "It is late, and the shops are closed.", "Yes"}) {
    input += std::string(s) + "\n";
  }
  const CliRun r = Translate({"-m", kModel, "--json", "--batch", "2", "--window", "5"}, input);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 8u);
  std::map<int, std::vector<nlohmann::json>> by_batch;
  std::map<int, double> window_ms, batch_sum;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto j = nlohmann::json::parse(lines[i]);
    ASSERT_EQ(j["line"], i + 1);
    const auto& t = j["timing"];
    EXPECT_EQ(t["window"], i < 5 ? 0 : 1);
    EXPECT_EQ(t["window_lines"], i < 5 ? 5 : 3);
    window_ms[t["window"].get<int>()] = t["window_ms"].get<double>();
    if (i == 2) {  // the blank line
      EXPECT_TRUE(t["batch"].is_null());
      continue;
    }
    by_batch[t["batch"].get<int>()].push_back(t);
  }
  ASSERT_EQ(by_batch.size(), 4u);  // 4 + 3 translated lines in batches of at most 2
  int expect_id = 0;
  for (const auto& [id, group] : by_batch) {
    EXPECT_EQ(id, expect_id++);
    EXPECT_EQ(group.size(), group[0]["batch_lines"].get<size_t>()) << "batch " << id;
    EXPECT_LE(group.size(), 2u);
    for (const auto& t : group) {
      EXPECT_EQ(t["batch_ms"], group[0]["batch_ms"]);
      EXPECT_EQ(t["window"], group[0]["window"]) << "a batch never spans two windows";
    }
    batch_sum[group[0]["window"].get<int>()] += group[0]["batch_ms"].get<double>();
  }
  for (const auto& [w, ms] : window_ms) EXPECT_GE(ms, batch_sum[w]) << "window " << w;
}

TEST(Cli, SplitSentencesJoinsTheSentencesTranslations) {
  const std::vector<std::string> paragraphs = {"Open the file. The cat sat on the mat.",
                                               "Where?", "",
                                               "Thank you very much for your help!  It is late."};
  std::string input;
  for (const auto& p : paragraphs) input += p + "\n";
  const CliRun split = Translate({"-m", kModel, "--split-sentences", "--batch", "2"}, input);
  ASSERT_EQ(split.code, 0) << split.err;
  // Each sentence on its own line, translated without splitting.
  const CliRun alone = Translate({"-m", kModel},
                                 "Open the file.\nThe cat sat on the mat.\nWhere?\n"
                                 "Thank you very much for your help!\nIt is late.\n");
  ASSERT_EQ(alone.code, 0) << alone.err;
  const std::vector<std::string> s = Lines(split.out), a = Lines(alone.out);
  ASSERT_EQ(s.size(), 4u);
  ASSERT_EQ(a.size(), 5u);
  // Joined by the text between the sentences; a sentence translated to nothing is left out.
  const auto join = [](const std::string& x, const std::string& between, const std::string& y) {
    return x.empty() ? y : y.empty() ? x : x + between + y;
  };
  EXPECT_EQ(s[0], join(a[0], " ", a[1]));
  EXPECT_EQ(s[1], a[2]);
  EXPECT_EQ(s[2], "");
  EXPECT_EQ(s[3], join(a[3], "  ", a[4]));  // the two spaces between the sentences kept
  EXPECT_FALSE(a[3].empty() || a[4].empty()) << "the two-space separator goes untested";
  // Without it the paragraphs translate whole, and differently.
  const CliRun whole = Translate({"-m", kModel, "--batch", "2"}, input);
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(Lines(whole.out)[0], s[0]);

  // --json: a line's batches as arrays, one entry per batch its sentences ran in; every
  // sentence counted once over the batches.
  const CliRun j = Translate({"-m", kModel, "--split-sentences", "--json", "--batch", "2"}, input);
  ASSERT_EQ(j.code, 0) << j.err;
  const std::vector<std::string> objects = Lines(j.out);
  ASSERT_EQ(objects.size(), 4u);
  std::map<int, size_t> batch_lines;
  for (size_t i = 0; i < objects.size(); ++i) {
    const auto o = nlohmann::json::parse(objects[i]);
    EXPECT_EQ(o["translations"][0]["text"], s[i]);
    const auto& t = o["timing"];
    ASSERT_TRUE(t["batch"].is_array() && t["batch_ms"].is_array() && t["batch_lines"].is_array());
    EXPECT_EQ(t["batch"].size(), t["batch_ms"].size());
    EXPECT_EQ(t["batch"].size(), t["batch_lines"].size());
    if (i == 2) {
      EXPECT_TRUE(t["batch"].empty());  // the blank line
    }
    for (size_t k = 0; k < t["batch"].size(); ++k) {
      batch_lines[t["batch"][k].get<int>()] = t["batch_lines"][k].get<size_t>();
    }
  }
  size_t sentences = 0;
  for (const auto& [id, n] : batch_lines) sentences += n;
  EXPECT_EQ(sentences, 5u);
  EXPECT_EQ(batch_lines.size(), 3u);  // 5 sentences in batches of at most 2
}

// --prefix and --prefix-file: what the library gives with the same prefixes (hypotheses begin
// with them), "prefix" in JSON, a line the file has no prefix for fails alone, and a file with
// more lines than the input fails the run after every line was written.
TEST(Cli, PrefixesForceTheTranslationsStart) {
  auto model = headwise::Model::Load(kModel);
  ASSERT_TRUE(model.ok());
  auto t = headwise::Translator::Create(*model, headwise::TranslatorLimits{});
  ASSERT_TRUE(t.ok());
  const std::vector<std::string> input = {"Open the file.", "Where?", "The cat sat on the mat."};
  const std::vector<std::string> prefixes = {"te", "", "ab"};
  auto want = (*t)->Translate(input, headwise::SearchOptions{}, {}, prefixes);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  EXPECT_EQ((*want)[0][0].text.rfind("te", 0), 0u) << (*want)[0][0].text;
  EXPECT_EQ((*want)[2][0].text.rfind("ab", 0), 0u) << (*want)[2][0].text;

  char dir_template[] = "/tmp/hw_prefix_XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string file = dir + "/prefixes.txt";
  std::ofstream(file) << "te\n\nab\n";
  const std::string text = input[0] + "\n" + input[1] + "\n" + input[2] + "\n";
  const CliRun each = Translate({"-m", kModel, "--prefix-file", file}, text);
  ASSERT_EQ(each.code, 0) << each.err;
  const std::vector<std::string> got = Lines(each.out);
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(got[i], (*want)[i][0].text) << "line " << i;

  const CliRun json = Translate({"-m", kModel, "--prefix-file", file, "--json"}, text);
  ASSERT_EQ(json.code, 0) << json.err;
  const std::vector<std::string> objects = Lines(json.out);
  ASSERT_EQ(objects.size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(objects[2])["prefix"], "ab");

  // One prefix for every line.
  auto same = (*t)->Translate(input, headwise::SearchOptions{}, {}, {"te", "te", "te"});
  ASSERT_TRUE(same.ok());
  const CliRun every = Translate({"-m", kModel, "--prefix", "te"}, text);
  ASSERT_EQ(every.code, 0) << every.err;
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(Lines(every.out)[i], (*same)[i][0].text);

  // A blank line with a prefix fails alone, named by its line number.
  const CliRun blank = Translate({"-m", kModel, "--prefix", "te"}, "Open the file.\n\nWhere?\n");
  EXPECT_EQ(blank.code, 1);
  ASSERT_EQ(Lines(blank.out).size(), 3u);
  EXPECT_EQ(Lines(blank.out)[0], (*same)[0][0].text);
  EXPECT_NE(blank.err.find("line 2: INVALID_ARGUMENT: the line is blank but its target prefix "
                           "is not"),
            std::string::npos)
      << blank.err;

  // The file runs out: the last line fails alone, the output stays aligned.
  std::ofstream(file) << "te\n\n";
  const CliRun short_file = Translate({"-m", kModel, "--prefix-file", file}, text);
  EXPECT_EQ(short_file.code, 1);
  ASSERT_EQ(Lines(short_file.out).size(), 3u);
  EXPECT_EQ(Lines(short_file.out)[0], (*want)[0][0].text);
  EXPECT_EQ(Lines(short_file.out)[2], "");
  EXPECT_NE(short_file.err.find("line 3: INVALID_ARGUMENT: --prefix-file " + file +
                                " has no line 3"),
            std::string::npos)
      << short_file.err;
  // More prefixes than input lines: every line translated, then exit 1.
  std::ofstream(file) << "te\n\nab\nextra\n";
  const CliRun long_file = Translate({"-m", kModel, "--prefix-file", file}, text);
  EXPECT_EQ(long_file.code, 1);
  EXPECT_EQ(Lines(long_file.out), got);
  EXPECT_NE(long_file.err.find("has more lines than the input (3)"), std::string::npos)
      << long_file.err;
  std::remove(file.c_str());
  rmdir(dir.c_str());
}

// --sample, --top-k, --top-p, --temperature, --seed and --min-len give what the C++ API gives
// with the same SearchOptions, whatever --batch; a flag of the four without --sample is named.
TEST(Cli, SamplingAndMinLengthGiveTheApisResults) {
  auto model = headwise::Model::Load(kModel);
  ASSERT_TRUE(model.ok());
  auto t = headwise::Translator::Create(*model, headwise::TranslatorLimits{});
  ASSERT_TRUE(t.ok());
  const std::vector<std::string> input = {"Open the file.", "Where?", "The cat sat on the mat."};
  const std::string text = input[0] + "\n" + input[1] + "\n" + input[2] + "\n";
  headwise::SearchOptions so;
  so.sample = true;
  so.top_k = 6;
  so.top_p = 0.95f;
  so.temperature = 1.4f;
  so.seed = 18446744073709551615ull;
  so.min_length = 3;
  auto want = (*t)->Translate(input, so);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (const char* batch : {"1", "8"}) {
    const CliRun r = Translate({"-m", kModel, "--batch", batch, "--sample", "--top-k", "6",
                                "--top-p", "0.95", "--temperature", "1.4", "--seed",
                                "18446744073709551615", "--min-len", "3"},
                               text);
    ASSERT_EQ(r.code, 0) << r.err;
    const std::vector<std::string> got = Lines(r.out);
    ASSERT_EQ(got.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(got[i], (*want)[i][0].text) << "line " << i;
  }
  headwise::SearchOptions beam;
  beam.beam_size = 2;
  beam.min_length = 4;
  auto want_beam = (*t)->Translate(input, beam);
  ASSERT_TRUE(want_beam.ok());
  const CliRun r = Translate({"-m", kModel, "--beam", "2", "--min-len", "4"}, text);
  ASSERT_EQ(r.code, 0) << r.err;
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(Lines(r.out)[i], (*want_beam)[i][0].text) << "line " << i;
  const CliRun lone = Translate({"-m", kModel, "--top-p", "0.9", "hello"});
  EXPECT_EQ(lone.code, 2);
  EXPECT_NE(lone.err.find("--top-p applies only to sampling: add --sample"), std::string::npos)
      << lone.err;
}

TEST(Cli, StreamsStdinBatchByBatch) {
  // One line in, one line out, while stdin is still open: the tool does not wait for EOF.
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    close(to_child[1]);
    close(from_child[0]);
    execl(kBin.c_str(), kBin.c_str(), "-m", kModel.c_str(), "--batch", "1", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  const std::string line = "Open the file.\n";
  ASSERT_EQ(write(to_child[1], line.data(), line.size()), static_cast<ssize_t>(line.size()));
  pollfd p{from_child[0], POLLIN, 0};
  const int ready = poll(&p, 1, 60000);
  EXPECT_EQ(ready, 1) << "no output within 60 s while stdin stayed open";
  std::string got;
  if (ready == 1) {
    char buf[4096];
    const ssize_t n = read(from_child[0], buf, sizeof buf);
    if (n > 0) got.assign(buf, static_cast<size_t>(n));
  }
  close(to_child[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  close(from_child[0]);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(got, LibraryTranslation("Open the file.") + "\n");
}

}  // namespace
