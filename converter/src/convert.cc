#include "converter/src/convert.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <sys/stat.h>

#include "common/atomic_file.h"
#include "format/model_file.h"
#include "converter/src/analysis_reader.h"
#include "converter/src/checkpoint_reader.h"
#include "converter/src/checkpoint_to_spec.h"
#include "converter/src/keep_heads.h"
#include "format/model_writer.h"
#include "format/weight_format.h"
#include "converter/src/output_path.h"
#include "converter/src/shortlist_reader.h"
#include "headwise_generated.h"

namespace headwise::convert {
namespace {

std::string Bytes(uint64_t n) {
  char buf[32];
  if (n < 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / (1024.0 * 1024.0));
  }
  return buf;
}

std::vector<std::string> InputFiles(const ConvertOptions& o) {
  std::vector<std::string> files;
  for (const char* f : {kConfigFile, kWeightsFile, kVocabFile, kSourceSpmFile, kTargetSpmFile,
                        kPytorchWeightsFile}) {
    files.push_back(o.checkpoint_dir + "/" + f);
  }
  if (o.keep_heads) files.push_back(*o.keep_heads);
  if (o.analysis) files.push_back(*o.analysis);
  if (o.shortlist) files.push_back(*o.shortlist);
  files.push_back(o.checkpoint_dir + "/" + kAnalysisFile);
  return files;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The analysis file to store: --analysis, else CHECKPOINT_DIR/analysis.json if present.
std::optional<std::string> AnalysisPath(const ConvertOptions& o) {
  if (o.no_analysis) return std::nullopt;
  if (o.analysis) return o.analysis;
  const std::string implicit = o.checkpoint_dir + "/" + kAnalysisFile;
  if (FileExists(implicit)) return implicit;
  return std::nullopt;
}

}  // namespace

Result<ConvertSummary> ConvertCheckpoint(const ConvertOptions& o) {
  HW_RETURN_IF_ERROR(CheckOutputPath(o.output_path, o.checkpoint_dir, InputFiles(o), o.force));

  std::optional<KeepHeadsSpec> keep_heads;
  if (o.keep_heads) {
    HW_ASSIGN_OR_RETURN(std::string text, KeepHeadsArgumentText(*o.keep_heads));
    Result<KeepHeadsSpec> parsed = ParseKeepHeadsSpec(text);
    if (!parsed.ok() && text == *o.keep_heads && text.find('=') == std::string::npos) {
      return InvalidArgument("--keep-heads '" + text + "' is neither a file nor an inline spec "
                             "(" + parsed.status().message() + ")");
    }
    HW_ASSIGN_OR_RETURN(keep_heads, std::move(parsed));
  }
  HW_ASSIGN_OR_RETURN(Checkpoint checkpoint, ReadCheckpoint(o.checkpoint_dir));
  HW_ASSIGN_OR_RETURN(ModelSpec spec,
                      CheckpointToSpec(checkpoint, keep_heads ? &*keep_heads : nullptr,
                                       o.gate_rule));
  const std::optional<std::string> analysis_path = AnalysisPath(o);
  if (analysis_path) {
    HW_ASSIGN_OR_RETURN(HeadAnalysisFile analysis,
                        ReadHeadAnalysis(*analysis_path, spec.blocks,
                                         spec.source_checkpoint_sha256));
    spec.head_analysis = std::move(analysis.blocks);
    spec.analysis_info = std::move(analysis.info);
  }
  if (o.shortlist) {
    HW_ASSIGN_OR_RETURN(spec.shortlist, ReadShortlist(*o.shortlist, spec.vocab));
  }
  ApplyWeightFormat(o.weights, &spec);
  HW_ASSIGN_OR_RETURN(std::vector<uint8_t> image, SerializeModel(spec));

  // The image must pass the same structural checks the runtime runs at load.
  Result<ModelFileView> view = VerifyModelFile(image.data(), image.size(), true);
  if (!view.ok()) {
    return InternalError("the converter produced a file its own verifier rejects: " +
                         view.status().ToString());
  }
  AtomicWriteOptions write_options;
  write_options.overwrite = o.force;
  HW_RETURN_IF_ERROR(WriteFileAtomically(o.output_path, {{image.data(), image.size()}},
                                         write_options));

  ConvertSummary s;
  s.checkpoint_name = checkpoint.name;
  s.output_path = o.output_path;
  s.config = spec.config;
  s.blocks = spec.blocks;
  s.tensor_count = spec.tensors.size();
  s.file_bytes = image.size();
  s.data_bytes = view->data_size;
  s.data_checksum = view->model->data_checksum();
  s.source_dtype = spec.source_dtype;
  s.weights = WeightFormatName(o.weights);
  s.source_sha256 = spec.source_checkpoint_sha256;
  s.keep_heads_spec = spec.keep_heads_spec;
  s.has_gates = !spec.gate_log_alpha.empty();
  s.gate_rule = spec.gate_rule;
  s.vocab_size = spec.vocab.size();
  if (analysis_path) {
    s.analysis_path = *analysis_path;
    s.analysis_info = spec.analysis_info;
  }
  if (o.shortlist) {
    s.shortlist_path = *o.shortlist;
    HW_ASSIGN_OR_RETURN(const ShortlistStats stats,
                        CheckShortlist(ViewOf(spec.shortlist, spec.config.vocab_size),
                                       ErrorCode::kInternal));
    s.shortlist_frequent = spec.shortlist.frequent.size();
    s.shortlist_sources = stats.sources;
    s.shortlist_longest = stats.longest;
    s.shortlist_entries = spec.shortlist.targets.size();
  }
  return s;
}

std::string FormatConvertSummary(const ConvertSummary& s) {
  std::ostringstream out;
  const ModelConfig& l = s.config;
  out << "headwise-convert: " << s.checkpoint_name << " -> " << s.output_path << "\n";
  out << "  config   d_model " << l.d_model << ", layers " << l.encoder_layers << " enc / "
      << l.decoder_layers << " dec, heads " << l.encoder_attention_heads << " enc / "
      << l.decoder_attention_heads << " dec, ffn " << l.encoder_ffn_dim << " / "
      << l.decoder_ffn_dim << ", " << ActivationName(l.activation) << ", vocab " << l.vocab_size
      << (l.share_encoder_decoder_embeddings ? ", shared" : ", unshared") << " embeddings"
      << (l.tie_word_embeddings ? " (tied)" : " (untied)") << "\n";
  out << "  heads kept per layer"
      << (!s.keep_heads_spec.empty() ? " (--keep-heads)"
          : !s.has_gates             ? " (no gates: all)"
          : s.gate_rule == GateRule::kContinuous
              ? " (from the gates, continuous rule: gates folded into out_proj)"
              : " (from the gates, hard rule)")
      << ":\n";
  out << "    layer          ";
  const uint32_t max_layers = std::max(l.encoder_layers, l.decoder_layers);
  for (uint32_t i = 0; i < max_layers; ++i) {
    char cell[16];
    std::snprintf(cell, sizeof cell, "%4u", i);
    out << cell;
  }
  out << "\n";
  size_t kept = 0, total = 0;
  const char* const kRowNames[] = {"encoder self ", "decoder self ", "decoder cross"};
  for (int kind = 0; kind < 3; ++kind) {
    out << "    " << kRowNames[kind] << "  ";
    uint32_t source_heads = 0;
    for (const BlockLayout& b : s.blocks) {
      if (static_cast<int>(b.kind) != kind) continue;
      char cell[16];
      std::snprintf(cell, sizeof cell, "%4u", b.num_heads);
      out << cell;
      kept += b.num_heads;
      total += b.original_num_heads;
      source_heads = b.original_num_heads;
    }
    out << "   (of " << source_heads << ")\n";
  }
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.1f%%", total ? 100.0 * static_cast<double>(kept) / static_cast<double>(total) : 0.0);
  out << "  heads    " << kept << " of " << total << " kept (" << pct << ")\n";
  out << "  tensors  " << s.tensor_count << ", " << Bytes(s.data_bytes) << ", weights "
      << s.weights << " (source " << s.source_dtype << "); vocab " << s.vocab_size
      << " pieces\n";
  char checksum[24];
  std::snprintf(checksum, sizeof checksum, "0x%016llx",
                static_cast<unsigned long long>(s.data_checksum));
  out << "  file     " << Bytes(s.file_bytes) << " (" << s.file_bytes << " bytes), data checksum "
      << checksum << " (FNV-1a 64)\n";
  out << "  source   model.safetensors sha256 " << s.source_sha256 << "\n";
  if (s.analysis_path.empty()) {
    out << "  analysis none (no analysis.json in the checkpoint, or --no-analysis)\n";
  } else {
    out << "  analysis per-head relevance, confidence, Michel importance and roles from "
        << s.analysis_path << " (" << (s.analysis_info.relevance_rule.empty()
                                           ? std::string("rule not stated")
                                           : s.analysis_info.relevance_rule)
        << (s.analysis_info.data.empty() ? "" : "; " + s.analysis_info.data) << ")\n";
  }
  if (s.shortlist_path.empty()) {
    out << "  shortlist none (no --shortlist)\n";
  } else {
    out << "  shortlist " << s.shortlist_frequent << " frequent pieces, lists for "
        << s.shortlist_sources << " source pieces (longest " << s.shortlist_longest << ", "
        << s.shortlist_entries << " entries) from " << s.shortlist_path << "\n";
  }
  return out.str();
}

}  // namespace headwise::convert
