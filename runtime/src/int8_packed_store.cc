#include "int8_packed_store.h"

#include "kernels/int8_packed.h"

namespace headwise {

bool Int8PackedStore::PacksHere() { return kernels::Int8PackedKernelHere().gemm != nullptr; }

const uint8_t* Int8PackedStore::Get(const int8_t* w, size_t n, size_t k, const MappedFile& file) {
  if (!PacksHere() || file.size() == 0) return nullptr;
  const std::lock_guard<std::mutex> lock(mu_);
  auto it = packed_.find(w);
  if (it != packed_.end()) return it->second.get();
  const size_t bytes = kernels::Int8VnniPackedBytes(n, k);
  auto copy = std::make_unique<uint8_t[]>(bytes);
  kernels::PackInt8Vnni(w, n, k, copy.get());
  file.ReleasePages(w, n * k);
  bytes_ += bytes;
  return packed_.emplace(w, std::move(copy)).first->second.get();
}

const uint8_t* Int8PackedStore::Find(const int8_t* w) const {
  const std::lock_guard<std::mutex> lock(mu_);
  auto it = packed_.find(w);
  return it == packed_.end() ? nullptr : it->second.get();
}

size_t Int8PackedStore::bytes() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

}  // namespace headwise
