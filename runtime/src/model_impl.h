// runtime/src/model_impl.h: the runtime-private state of a loaded headwise::Model.
//
// Built once by Model::Load / LoadFromMemory (model_load.cc) after the file passed the
// structural (format/model_file.h) and semantic (format/model_layout.h) checks; immutable
// afterwards, so any number of Translators on any number of threads may read it at once.
//
// Ownership: `file` owns the mapping when the model was loaded from a path (empty for
// LoadFromMemory, where the caller's buffer must outlive the Model). Every WeightView points
// into that memory. `tokenizer` owns its SentencePiece processors.
//
// Residency (weights held once): a mapped file's pages are resident only while something reads
// them. Load releases each chunk after checksumming it and the metadata once copied out; an
// operator that packs a matrix into its own copy (XNNPACK) releases the matrix's pages after
// packing (FcParams::weight_pages), and so does `int8_packed` for the int8 matrices it packs. Pages read in place at run time (int8 weights, embedding
// rows, weights of the in-place kernels) come back on first access. Releasing never changes
// what a read returns (common/mapped_file.h), so it is safe while other Translators read or
// pack the same pages on other threads: they fault them in again.
#ifndef HEADWISE_RUNTIME_MODEL_IMPL_H_
#define HEADWISE_RUNTIME_MODEL_IMPL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/mapped_file.h"
#include "format/model_config.h"
#include "format/shortlist.h"
#include "headwise/headwise.hpp"
#include "int8_packed_store.h"
#include "tokenizer.h"
#include "weights.h"

namespace headwise {

struct Model::Impl {
  MappedFile file;              // owns the bytes when loaded from a path
  const uint8_t* base = nullptr;  // start of the file image
  size_t size = 0;

  // Drops the whole pages of [p, p + n) from the resident set (MappedFile::ReleasePages);
  // nothing for a model loaded from memory, whose buffer is the caller's.
  void ReleasePages(const void* p, size_t n) const { file.ReleasePages(p, n); }

  ModelConfig config;  // the file's config (format/schema_map.h), checked by model_verify.cc
  ModelInfo info;

  // Embedding matrices [vocab, d_model]; encoder and decoder alias when shared.
  WeightView encoder_embed;
  WeightView decoder_embed;
  // Output projection [vocab, d_model] (the decoder embedding when tied) and its bias [vocab].
  WeightView lm_head;
  WeightView final_logits_bias;

  std::vector<EncoderLayerWeights> encoder_layers;
  std::vector<DecoderLayerWeights> decoder_layers;

  // The vocabulary shortlist (format/shortlist.h), checked at load; the view points into the
  // file's flatbuffer. Unset (has_shortlist false) when the file carries none.
  bool has_shortlist = false;
  ShortlistView shortlist;
  ShortlistStats shortlist_stats;

  // Null when the file carries no tokenizer (source_spm, target_spm and vocab all empty).
  std::unique_ptr<Tokenizer> tokenizer;

  // The packed copies of the int8 matrices the layers' operators read (made when the first
  // Translator creates its operators; int8_packed_store.h). Mutable: a cache of the immutable
  // weights above, thread-safe.
  mutable Int8PackedStore int8_packed;
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_MODEL_IMPL_H_
