// runtime/src/int8_packed_store.h: the packed copies of a Model's int8 weight matrices
// (kernels/int8_packed.h), made once per Model on first use and shared by every Translator and
// batch lane of it.
//
// Used where the dispatched int8 family has a packed kernel (kernels::Int8PackedKernelHere():
// avx512-vnni and avx2; not amx, whose tiles read the row-major rows) and the Model maps its file:
// packing a matrix releases its pages of the mapping (MappedFile::ReleasePages), so its weights
// are held once, in the packed layout. A model loaded from memory (the caller's buffer) is never
// packed: both copies would stay. Whoever reads single rows of a matrix that may be packed (the
// embedding lookups of a table tied to lm_head, the shortlist's gather of lm_head rows) reads
// them from the packed copy (Find; kernels::EmbedTokensI8Packed, GatherInt8VnniPacked), so its
// pages stay released.
//
// Thread-safe: Translators on several threads may be created from one Model at once. Owned by
// Model::Impl (a mutable member: the packed copies are a cache of the immutable weights); the
// pointers it returns live as long as the Model.
#ifndef HEADWISE_RUNTIME_INT8_PACKED_STORE_H_
#define HEADWISE_RUNTIME_INT8_PACKED_STORE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "common/mapped_file.h"

namespace headwise {

class Int8PackedStore {
 public:
  // True when this process packs int8 weights (the dispatched int8 family has a packed kernel).
  static bool PacksHere();

  // The packed copy of the row-major w [n, k] that `file` maps, made and its pages released on
  // the first call for w; nullptr when !PacksHere() or `file` maps nothing (a model loaded
  // from memory). A later call for w must give the same n and k.
  const uint8_t* Get(const int8_t* w, size_t n, size_t k, const MappedFile& file);

  // The packed copy of w made earlier, or nullptr.
  const uint8_t* Find(const int8_t* w) const;

  // Bytes of the packed copies made so far.
  size_t bytes() const;

 private:
  mutable std::mutex mu_;
  std::map<const int8_t*, std::unique_ptr<uint8_t[]>> packed_;
  size_t bytes_ = 0;
};

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_INT8_PACKED_STORE_H_
