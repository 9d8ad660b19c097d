// common/checksum.h: FNV-1a 64, the checksum of the .hwm data segment.
#ifndef HEADWISE_COMMON_CHECKSUM_H_
#define HEADWISE_COMMON_CHECKSUM_H_

#include <cstddef>
#include <cstdint>

namespace headwise {

inline constexpr uint64_t kFnv1a64Init = 0xcbf29ce484222325ULL;

// Continues an FNV-1a 64 hash over `size` bytes; pass kFnv1a64Init to start.
uint64_t Fnv1a64(const void* data, size_t size, uint64_t hash = kFnv1a64Init);

}  // namespace headwise

#endif  // HEADWISE_COMMON_CHECKSUM_H_
