// converter/src/inspect.h: `headwise-convert inspect MODEL.hwm [--json]`.
//
// Reads a model file, verifies it (format/model_file.h: identifier, size prefix, flatbuffers
// Verifier, version, bounds, checksum; then the layout rules of format/model_layout.h: blocks
// in canonical order and every tensor's name and shape; the shortlist's rules,
// format/shortlist.h), and describes it as a JSON document:
//   {"file", "file_bytes", "format_version",
//    "config": {d_model, encoder_layers, ..., "activation": "swish", ...},
//    "attention": [{"block", "kind", "layer", "num_heads", "original_num_heads", "head_dim",
//                   "kept_heads": [...], "gate_log_alpha": [...],
//                   "analysis": [] or one per SOURCE head: {"head", "kept", "relevance",
//                               "confidence", "michel" (numbers, null = not computed),
//                               "roles": [...]}}, ...],
//    "gate_rule": null (no gates) or "hard" / "continuous" (Provenance.gate_rule),
//    "analysis": null or {"relevance_rule", "data", "analysis_sha256"},
//    "heads": {"kept", "total"},
//    "shortlist": null or {"frequent", "sources", "longest", "entries", "description"}
//                 (the vocabulary shortlist: frequent pieces, source pieces with a list, the
//                 longest list, list entries in all; format/shortlist.h),
//    "tensors": {"count", "bytes"},
//    "data": {"offset", "size", "checksum", "checksum_ok"},
//    "tokenizer": {"source_spm_bytes", "target_spm_bytes", "vocab_size"},
//    "provenance": {"source_checkpoint_sha256", "source_checkpoint_name", "converter_version",
//                   "keep_heads_spec", "source_dtype"}}
// Errors: kIoError (unreadable), kInvalidModel / kUnsupportedVersion / kChecksumMismatch.
#ifndef HEADWISE_CONVERTER_INSPECT_H_
#define HEADWISE_CONVERTER_INSPECT_H_

#include <nlohmann/json.hpp>

#include <string>

#include "headwise/status.hpp"

namespace headwise::convert {

Result<nlohmann::json> InspectModelFile(const std::string& path);

// The same report as readable text (one screen plus one line per attention block).
std::string FormatInspectText(const nlohmann::json& report);

}  // namespace headwise::convert

#endif  // HEADWISE_CONVERTER_INSPECT_H_
