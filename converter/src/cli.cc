#include "converter/src/cli.h"

#include <optional>

#include "converter/src/convert.h"
#include "converter/src/inspect.h"
#include "headwise/status.hpp"

namespace headwise::convert {
namespace {

constexpr char kUsage[] =
    R"(Usage:
  headwise-convert CHECKPOINT_DIR -o MODEL.hwm [--keep-heads SPEC] [--weights FORMAT]
                   [--gate-rule hard|continuous] [--analysis FILE | --no-analysis]
                   [--shortlist FILE] [--force]
  headwise-convert inspect MODEL.hwm [--json]
  headwise-convert --help | --version

Converts a Hugging Face MarianMT checkpoint directory (config.json, model.safetensors,
vocab.json, source.spm, target.spm; optional per-block head gates
<block>.head_gate.log_alpha) into a headwise model file. Heads whose gate is closed
are removed (see --gate-rule). Everything is validated before anything is written, the
output is written atomically, and the checkpoint directory is never modified.
A checkpoint with pytorch_model.bin only: the error message gives the command that
converts it to model.safetensors.

Options:
  -o, --output PATH   the model file to write; not inside the checkpoint directory
  --keep-heads SPEC   choose the kept heads instead of the gates. SPEC is a file, or the
                      spec itself:  ENTRY[;ENTRY...]   with  ENTRY = KIND.LAYERS=HEADS
                        KIND    enc | dec | cross | *   (encoder self-, decoder self-,
                                decoder cross-attention, or all three)
                        LAYERS  N | N-M | *
                        HEADS   all | none | (empty = none) | N,N-M,...
                      e.g. 'enc.0=0,3,5;enc.1=;dec.2=all;cross.*=0-3'. Later entries win;
                      blocks no entry names follow their gates. In a file, newlines also
                      separate entries and '#' starts a comment.
  --gate-rule RULE    the test-time rule of the gates (default: config.json's
                      headwise_gate_rule, hard when absent): hard keeps the heads with
                      log_alpha > 0 unscaled; continuous (the reference code's gate)
                      computes g = clamp(sigmoid(log_alpha) * 1.2 - 0.1, 0, 1), removes
                      the heads with g = 0 and multiplies each kept head's out_proj
                      columns by g. Not applied under --keep-heads. inspect shows it.
  --weights FORMAT    how weight matrices are stored: fp32 (default), fp16 (half the
                      size), or int8 (a quarter: per-output-channel scales, symmetric).
                      Biases and LayerNorm parameters stay fp32. README.md ("Weight
                      formats") says how each executes and what it costs in quality.
  --analysis FILE     store the per-head analysis of FILE (the analysis.json that
                      `headwise-train analyze` writes: LRP relevance, confidence, Michel
                      importance and roles of every source head, closed ones too). Default:
                      CHECKPOINT_DIR/analysis.json when it exists. It must describe this
                      checkpoint (same blocks and heads, same model.safetensors hash).
  --no-analysis       store no analysis even if the checkpoint has one
  --shortlist FILE    store the vocabulary shortlist of FILE (what `headwise-train
                      shortlist` writes for this checkpoint's vocabulary: the most
                      frequent target pieces and, per source piece, the target pieces
                      that co-occur with it). The runtime then computes the output layer
                      only over the pieces a batch's source lines allow (headwise-translate
                      --no-shortlist turns it off). It must be made for this vocabulary.
  --force             overwrite an existing output file
  --json              (inspect) print the report as JSON
  -h, --help          this text
  --version           the converter version

inspect verifies a model file (structure, layout, checksum) and prints its config, the
heads kept per block with indices and gate values, the per-head analysis when the file
has one, the vocabulary shortlist's sizes when it has one, tensor count and bytes,
tokenizer sizes and provenance.

Exit status:
  0  success
  1  invalid or unreadable input (checkpoint or model file), output exists without
     --force, output would overwrite an input, or the output could not be written
  2  usage error: unknown option, missing or extra argument, an unknown --weights
     format or --gate-rule, or a --keep-heads spec that is malformed or does not fit the checkpoint
)";

int ExitCodeFor(const Status& status) {
  return status.code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitInvalidInput;
}

int UsageError(std::ostream& err, const std::string& message) {
  err << "headwise-convert: " << message << "\nTry 'headwise-convert --help'.\n";
  return kExitUsage;
}

// "--name=value" or "--name value"; returns false when `args[i]` is not `name`.
bool OptionValue(const std::vector<std::string>& args, size_t* i, const std::string& name,
                 std::optional<std::string>* value, bool* missing) {
  const std::string& a = args[*i];
  if (a == name) {
    if (*i + 1 >= args.size()) {
      *missing = true;
      return true;
    }
    *value = args[++*i];
    return true;
  }
  if (a.compare(0, name.size() + 1, name + "=") == 0) {
    *value = a.substr(name.size() + 1);
    return true;
  }
  return false;
}

int RunInspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::optional<std::string> path;
  bool as_json = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--json") {
      as_json = true;
    } else if (!args[i].empty() && args[i][0] == '-' && args[i] != "-") {
      return UsageError(err, "inspect: unknown option '" + args[i] + "'");
    } else if (path) {
      return UsageError(err, "inspect: expected one model file, found also '" + args[i] + "'");
    } else {
      path = args[i];
    }
  }
  if (!path) return UsageError(err, "inspect: missing MODEL.hwm");
  Result<nlohmann::json> report = InspectModelFile(*path);
  if (!report.ok()) {
    err << "headwise-convert inspect: " << report.status().ToString() << "\n";
    return kExitInvalidInput;
  }
  out << (as_json ? report->dump(2) + "\n" : FormatInspectText(*report));
  return kExitOk;
}

int RunConvert(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ConvertOptions options;
  std::optional<std::string> checkpoint, output, keep_heads, weights, analysis, gate_rule,
      shortlist;
  for (size_t i = 0; i < args.size(); ++i) {
    bool missing = false;
    if (OptionValue(args, &i, "-o", &output, &missing) ||
        OptionValue(args, &i, "--output", &output, &missing) ||
        OptionValue(args, &i, "--keep-heads", &keep_heads, &missing) ||
        OptionValue(args, &i, "--weights", &weights, &missing) ||
        OptionValue(args, &i, "--gate-rule", &gate_rule, &missing) ||
        OptionValue(args, &i, "--analysis", &analysis, &missing) ||
        OptionValue(args, &i, "--shortlist", &shortlist, &missing)) {
      if (missing) return UsageError(err, "option '" + args[i] + "' needs a value");
    } else if (args[i] == "--force") {
      options.force = true;
    } else if (args[i] == "--no-analysis") {
      options.no_analysis = true;
    } else if (!args[i].empty() && args[i][0] == '-') {
      return UsageError(err, "unknown option '" + args[i] + "'");
    } else if (checkpoint) {
      return UsageError(err, "expected one CHECKPOINT_DIR, found also '" + args[i] + "'");
    } else {
      checkpoint = args[i];
    }
  }
  if (!checkpoint) return UsageError(err, "missing CHECKPOINT_DIR");
  if (!output || output->empty()) return UsageError(err, "missing -o MODEL.hwm");
  options.checkpoint_dir = *checkpoint;
  options.output_path = *output;
  options.keep_heads = keep_heads;
  options.analysis = analysis;
  options.shortlist = shortlist;
  if (analysis && options.no_analysis) {
    return UsageError(err, "--analysis and --no-analysis exclude each other");
  }
  if (weights && !ParseWeightFormat(*weights, &options.weights)) {
    return UsageError(err, "--weights: expected fp32, fp16 or int8, found '" + *weights + "'");
  }

  if (gate_rule) {
    GateRule rule;
    if (!ParseGateRule(*gate_rule, &rule)) {
      return UsageError(err, "--gate-rule: expected hard or continuous, found '" + *gate_rule +
                                 "'");
    }
    options.gate_rule = rule;
  }

  Result<ConvertSummary> summary = ConvertCheckpoint(options);
  if (!summary.ok()) {
    err << "headwise-convert: " << summary.status().ToString() << "\n"
        << "headwise-convert: nothing was written\n";
    return ExitCodeFor(summary.status());
  }
  out << FormatConvertSummary(*summary);
  return kExitOk;
}

}  // namespace

const char* ConvertUsage() { return kUsage; }

int RunConvertCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    err << kUsage;
    return kExitUsage;
  }
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      out << kUsage;
      return kExitOk;
    }
  }
  if (args.size() == 1 && args[0] == "--version") {
    out << "headwise-convert " << HEADWISE_VERSION << "\n";
    return kExitOk;
  }
  if (args[0] == "inspect") return RunInspect(args, out, err);
  return RunConvert(args, out, err);
}

}  // namespace headwise::convert
